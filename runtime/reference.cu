// Naive fp32 GPU reference (one thread per row / column): slow, obviously correct, for shapes
// too large for the fp64 CPU reference.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "runtime/cuda_check.h"
#include "runtime/device_buffer.h"
#include "runtime/reference.h"

namespace dash::rt {
namespace {

constexpr int kMaxD = 128;

struct RefParams {
  int batch, hq, hk, d, total_q, total_k;
  int const* cu_q;
  int const* cu_k;
  int mask_kind, left, right;
  float scale;
  int low;    // round intermediates
  int dtype;  // 0 bf16, 1 fp16
  float const *q, *k, *v, *dout;
  float *o, *lse, *dq, *dk, *dv, *dsum;
};

__device__ float rnd(RefParams const& p, float x) {
  if (!p.low) return x;
  return p.dtype == 0 ? __bfloat162float(__float2bfloat16_rn(x)) : __half2float(__float2half_rn(x));
}

__device__ bool sees(RefParams const& p, int lq, int lk, int r, int c) {
  // 64-bit: a window side may be any int (unbounded sides are written as huge ones).
  long long const diag = static_cast<long long>(r) + lk - lq;
  if (p.mask_kind == kMaskFull) return true;
  if (p.mask_kind == kMaskCausal) return c <= diag;
  return c >= diag - p.left && c <= diag + p.right;
}

__device__ int batch_of(int const* cu, int batch, int row) {
  int b = 0;
  while (b + 1 < batch && cu[b + 1] <= row) ++b;
  return b;
}

__device__ float score(RefParams const& p, float const* qr, float const* kr) {
  float acc = 0.f;
  for (int x = 0; x < p.d; ++x) acc += qr[x] * kr[x];
  return rnd(p, acc * p.scale);
}

// Per (q row, head): LSE, O, dsum, dQ.
__global__ void ref_rows(RefParams p) {
  int const idx = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (idx >= p.total_q * p.hq) return;
  int const row = idx / p.hq;
  int const h = idx % p.hq;
  int const kh = h / (p.hq / p.hk);
  int const b = batch_of(p.cu_q, p.batch, row);
  int const lq = p.cu_q[b + 1] - p.cu_q[b];
  int const lk = p.cu_k[b + 1] - p.cu_k[b];
  int const r = row - p.cu_q[b];
  float const* qr = p.q + (std::int64_t{row} * p.hq + h) * p.d;
  float const* dor = p.dout + (std::int64_t{row} * p.hq + h) * p.d;
  auto krow = [&](int c) { return p.k + (std::int64_t{p.cu_k[b] + c} * p.hk + kh) * p.d; };
  auto vrow = [&](int c) { return p.v + (std::int64_t{p.cu_k[b] + c} * p.hk + kh) * p.d; };
  float mx = -INFINITY;
  for (int c = 0; c < lk; ++c) {
    if (sees(p, lq, lk, r, c)) mx = fmaxf(mx, score(p, qr, krow(c)));
  }
  float* orow = p.o + (std::int64_t{row} * p.hq + h) * p.d;
  float* dqrow = p.dq + (std::int64_t{row} * p.hq + h) * p.d;
  if (mx == -INFINITY) {
    for (int x = 0; x < p.d; ++x) orow[x] = dqrow[x] = 0.f;
    p.lse[std::int64_t{h} * p.total_q + row] = INFINITY;
    p.dsum[std::int64_t{h} * p.total_q + row] = 0.f;
    return;
  }
  float sum = 0.f;
  for (int c = 0; c < lk; ++c) {
    if (sees(p, lq, lk, r, c)) sum += expf(score(p, qr, krow(c)) - mx);
  }
  float const lse = mx + logf(sum);
  p.lse[std::int64_t{h} * p.total_q + row] = lse;
  float o[kMaxD];
  for (int x = 0; x < p.d; ++x) o[x] = 0.f;
  for (int c = 0; c < lk; ++c) {
    if (!sees(p, lq, lk, r, c)) continue;
    float const pc = rnd(p, expf(score(p, qr, krow(c)) - lse));
    float const* vr = vrow(c);
    for (int x = 0; x < p.d; ++x) o[x] += pc * vr[x];
  }
  float dsum = 0.f;
  for (int x = 0; x < p.d; ++x) {
    o[x] = rnd(p, o[x]);
    orow[x] = o[x];
    dsum += dor[x] * o[x];
  }
  p.dsum[std::int64_t{h} * p.total_q + row] = dsum;
  float dq[kMaxD];
  for (int x = 0; x < p.d; ++x) dq[x] = 0.f;
  for (int c = 0; c < lk; ++c) {
    if (!sees(p, lq, lk, r, c)) continue;
    float const pc = rnd(p, expf(score(p, qr, krow(c)) - lse));
    float const* vr = vrow(c);
    float dp = 0.f;
    for (int x = 0; x < p.d; ++x) dp += dor[x] * vr[x];
    float const ds = rnd(p, pc * (rnd(p, dp) - dsum));
    float const* kr = krow(c);
    for (int x = 0; x < p.d; ++x) dq[x] += ds * kr[x];
  }
  for (int x = 0; x < p.d; ++x) dqrow[x] = rnd(p, dq[x] * p.scale);
}

// Per (k row, kv head): dK, dV over every q head of the group and every row that sees it.
__global__ void ref_cols(RefParams p) {
  int const idx = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (idx >= p.total_k * p.hk) return;
  int const row = idx / p.hk;
  int const kh = idx % p.hk;
  int const b = batch_of(p.cu_k, p.batch, row);
  int const lq = p.cu_q[b + 1] - p.cu_q[b];
  int const lk = p.cu_k[b + 1] - p.cu_k[b];
  int const c = row - p.cu_k[b];
  int const group = p.hq / p.hk;
  float const* kr = p.k + (std::int64_t{row} * p.hk + kh) * p.d;
  float const* vr = p.v + (std::int64_t{row} * p.hk + kh) * p.d;
  float dk[kMaxD];
  float dv[kMaxD];
  for (int x = 0; x < p.d; ++x) dk[x] = dv[x] = 0.f;
  for (int h = kh * group; h < (kh + 1) * group; ++h) {
    for (int r = 0; r < lq; ++r) {
      if (!sees(p, lq, lk, r, c)) continue;
      int const qrow = p.cu_q[b] + r;
      float const* qr = p.q + (std::int64_t{qrow} * p.hq + h) * p.d;
      float const* dor = p.dout + (std::int64_t{qrow} * p.hq + h) * p.d;
      float const lse = p.lse[std::int64_t{h} * p.total_q + qrow];
      float const pc = rnd(p, expf(score(p, qr, kr) - lse));
      float dp = 0.f;
      for (int x = 0; x < p.d; ++x) dp += dor[x] * vr[x];
      float const ds = rnd(p, pc * (rnd(p, dp) - p.dsum[std::int64_t{h} * p.total_q + qrow]));
      for (int x = 0; x < p.d; ++x) {
        dv[x] += pc * dor[x];
        dk[x] += ds * qr[x];
      }
    }
  }
  for (int x = 0; x < p.d; ++x) {
    p.dk[(std::int64_t{row} * p.hk + kh) * p.d + x] = rnd(p, dk[x] * p.scale);
    p.dv[(std::int64_t{row} * p.hk + kh) * p.d + x] = rnd(p, dv[x]);
  }
}

template <typename T>
void put(DeviceBuffer const& b, std::vector<T> const& v) {
  DASH_CUDA_CHECK(cudaMemcpy(b.as<void>(), v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
}
void get(std::vector<float>& v, DeviceBuffer const& b) {
  DASH_CUDA_CHECK(cudaMemcpy(v.data(), b.as<void>(), v.size() * sizeof(float), cudaMemcpyDeviceToHost));
}

}  // namespace

AttentionOutputs reference_gpu(sim::Problem const& prob, float scale, AttentionInputs const& in,
                               RefPrecision precision, DType dtype) {
  std::vector<int> cu_q(prob.batch + 1, 0);
  std::vector<int> cu_k(prob.batch + 1, 0);
  for (int b = 0; b < prob.batch; ++b) {
    cu_q[b + 1] = cu_q[b] + prob.len_q(b);
    cu_k[b + 1] = cu_k[b] + prob.len_k(b);
  }
  RefParams p{};
  p.batch = prob.batch;
  p.hq = prob.q_heads;
  p.hk = prob.kv_heads;
  p.d = prob.head_dim;
  p.total_q = cu_q.back();
  p.total_k = cu_k.back();
  p.mask_kind = static_cast<int>(prob.mask.kind);
  p.left = prob.mask.left;
  p.right = prob.mask.right;
  p.scale = scale;
  p.low = precision == RefPrecision::kLow ? 1 : 0;
  p.dtype = dtype == DType::kBf16 ? 0 : 1;
  std::size_t const nq = in.q.size() * sizeof(float);
  std::size_t const nk = in.k.size() * sizeof(float);
  std::size_t const nstat = std::size_t(p.total_q) * p.hq * sizeof(float);
  // At least 4 bytes each, so that an empty array still has an address.
  auto buf = [](std::size_t bytes) { return DeviceBuffer(std::max<std::size_t>(bytes, 4)); };
  DeviceBuffer const bcq = buf(cu_q.size() * sizeof(int)), bck = buf(cu_k.size() * sizeof(int));
  DeviceBuffer const bq = buf(nq), bk = buf(nk), bv = buf(nk), bdo = buf(nq), bo = buf(nq), bdq = buf(nq),
                     bdk = buf(nk), bdv = buf(nk), blse = buf(nstat), bds = buf(nstat);
  put(bcq, cu_q);
  put(bck, cu_k);
  put(bq, in.q);
  put(bk, in.k);
  put(bv, in.v);
  put(bdo, in.dout);
  p.cu_q = bcq.as<int>();
  p.cu_k = bck.as<int>();
  p.q = bq.as<float>();
  p.k = bk.as<float>();
  p.v = bv.as<float>();
  p.dout = bdo.as<float>();
  p.o = bo.as<float>();
  p.dq = bdq.as<float>();
  p.dk = bdk.as<float>();
  p.dv = bdv.as<float>();
  p.lse = blse.as<float>();
  p.dsum = bds.as<float>();
  int const rows = p.total_q * p.hq;
  int const cols = p.total_k * p.hk;
  ref_rows<<<(rows + 127) / 128, 128>>>(p);
  DASH_CUDA_CHECK_LAUNCH();
  ref_cols<<<(cols + 127) / 128, 128>>>(p);
  DASH_CUDA_CHECK_LAUNCH();
  DASH_CUDA_CHECK(cudaDeviceSynchronize());
  AttentionOutputs out;
  out.o.resize(in.q.size());
  out.dq.resize(in.q.size());
  out.dk.resize(in.k.size());
  out.dv.resize(in.k.size());
  out.lse.resize(std::size_t(p.total_q) * p.hq);
  get(out.o, bo);
  get(out.dq, bdq);
  get(out.dk, bdk);
  get(out.dv, bdv);
  get(out.lse, blse);
  return out;
}

}  // namespace dash::rt
