// Built with: nvcc -O2 -arch=sm_90a -cudart static -o smid_map 2026-12-06d-smid-map.cu (not part of the build).
// Where a persistent grid of one CTA per SM lands: blockIdx -> %smid over repeated launches.
#include <cstdio>
#include <cstring>
#include <vector>
__global__ void where(int* out, long long* t) {
  extern __shared__ unsigned char smem[];
  unsigned sm;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  long long g;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g));
  if (threadIdx.x == 0) { out[blockIdx.x] = static_cast<int>(sm); t[blockIdx.x] = g; smem[0] = 1; }
}
int main() {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  int const bytes = 200 * 1024;
  cudaFuncSetAttribute(where, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
  int* d; long long* dt;
  cudaMalloc(&d, sms * sizeof(int)); cudaMalloc(&dt, sms * sizeof(long long));
  std::vector<int> first(sms), cur(sms);
  int same = 0;
  std::vector<std::vector<int>> seen;
  for (int run = 0; run < 50; ++run) {
    where<<<sms, 384, bytes>>>(d, dt);
    cudaMemcpy(cur.data(), d, sms * sizeof(int), cudaMemcpyDeviceToHost);
    bool found = false;
    for (auto const& s : seen) if (s == cur) found = true;
    if (!found) seen.push_back(cur);
    if (run == 0) first = cur; else same += cur == first;
  }
  std::printf("sms %d: %zu distinct blockIdx->smid maps in 50 launches, %d equal to the first\n", sms, seen.size(), same);
  for (size_t k = 0; k < seen.size() && k < 4; ++k) {
    std::printf("map %zu:", k);
    for (int i = 0; i < sms; ++i) std::printf(" %d", seen[k][i]);
    std::printf("\n");
  }
  return 0;
}
