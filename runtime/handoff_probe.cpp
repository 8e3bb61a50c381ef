#include "runtime/handoff_probe.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "dagsim/core/error.h"
#include "runtime/cuda_check.h"
#include "runtime/device_buffer.h"
#include "runtime/handoff_kernel.h"
#include "runtime/smem_opt_in.h"

namespace dash::rt {

sim::HandoffMatrix probe_handoff(int rounds) {
  if (rounds < 1 || rounds > kHandoffMaxRounds)
    user_error("probe: rounds must be in 1..{}, got {}", kHandoffMaxRounds, rounds);
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    (void)cudaGetLastError();
    user_error("probe needs a GPU: none is visible");
  }
  int device = 0;
  DASH_CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  DASH_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  int const ctas = prop.multiProcessorCount;
  if (prop.sharedMemPerBlockOptin < static_cast<std::size_t>(kHandoffSmem) || ctas < 2) {
    user_error(
        "probe: this GPU ({}, {} SMs, {} KB of shared memory per block) cannot run one probe CTA "
        "per SM",
        prop.name, ctas, prop.sharedMemPerBlockOptin / 1024);
  }
  opt_in_dynamic_smem(handoff_kernel_address(), kHandoffSmem);
  int per_sm = 0;
  DASH_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, handoff_kernel_address(),
                                                                32, kHandoffSmem));
  if (per_sm != 1)
    user_error("probe: {} CTAs of the probe fit an SM of this GPU, expected 1", per_sm);

  std::size_t const n = static_cast<std::size_t>(ctas);
  DeviceBuffer buf(3 * sizeof(int) + n * sizeof(int) + n * sizeof(long long) +
                   2 * sizeof(long long));
  auto* base = buf.as<unsigned char>();
  HandoffProbeState s{};
  s.result = reinterpret_cast<long long*>(base);
  s.clock = s.result + n;
  s.arrived = reinterpret_cast<int*>(s.clock + 2);
  s.ticket = s.arrived + 1;
  s.failed = s.arrived + 2;
  s.smid = s.arrived + 3;

  sim::HandoffMatrix m;
  m.sms = ctas;
  m.rounds = rounds;
  m.device = prop.name;
  m.one_way.assign(n * n, 0);
  std::vector<int> smid(n);
  std::vector<long long> row(n);
  long long cycles = 0;
  long long ns = 0;
  auto launch = [&](int pinger_smid) {
    DASH_CUDA_CHECK(cudaMemset(s.arrived, 0, 3 * sizeof(int)));
    DASH_CUDA_CHECK(cudaMemset(s.result, 0, n * sizeof(long long)));
    launch_handoff(s, ctas, pinger_smid, rounds);
    DASH_CUDA_CHECK(cudaDeviceSynchronize());
    int failed = 0;
    DASH_CUDA_CHECK(cudaMemcpy(&failed, s.failed, sizeof(int), cudaMemcpyDeviceToHost));
    if (failed != 0) {
      user_error(
          "probe: a wait exceeded {} s: the GPU did not hold one CTA on each of its {} SMs at once "
          "(is another process using it?)",
          kHandoffTimeoutNs / 1'000'000'000ULL, ctas);
    }
    DASH_CUDA_CHECK(cudaMemcpy(smid.data(), s.smid, n * sizeof(int), cudaMemcpyDeviceToHost));
  };
  // Rows by SM id: the pinger is the CTA on SM ids[a] (whichever CTA the hardware put there), and
  // each entry goes to the column of the SM its CTA ran on in that launch.
  launch(-1);
  std::vector<int> ids(smid);
  std::sort(ids.begin(), ids.end());
  if (std::adjacent_find(ids.begin(), ids.end()) != ids.end())
    user_error("probe: two CTAs on one SM");
  m.smid = ids;
  auto index_of = [&](int id) {
    return static_cast<std::size_t>(std::lower_bound(ids.begin(), ids.end(), id) - ids.begin());
  };
  for (std::size_t a = 0; a < n; ++a) {
    launch(ids[a]);
    std::vector<int> sorted(smid);
    std::sort(sorted.begin(), sorted.end());
    if (sorted != ids) user_error("probe: the GPU's SMs changed between launches");
    DASH_CUDA_CHECK(
        cudaMemcpy(row.data(), s.result, n * sizeof(long long), cudaMemcpyDeviceToHost));
    long long span[2] = {0, 0};
    DASH_CUDA_CHECK(cudaMemcpy(span, s.clock, sizeof(span), cudaMemcpyDeviceToHost));
    cycles += span[0];
    ns += span[1];
    for (std::size_t k = 0; k < n; ++k) {
      if (smid[k] == ids[a]) continue;
      if (row[k] <= 0)
        user_error("probe: no latency measured from SM {} to SM {}", ids[a], smid[k]);
      m.one_way[a * n + index_of(smid[k])] = row[k];
    }
  }
  m.clock_mhz = ns > 0 ? static_cast<double>(cycles) * 1000.0 / static_cast<double>(ns) : 0.0;
  return m;
}

}  // namespace dash::rt
