#include "runtime/reference.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace dash::rt {

std::uint16_t to_bits(float x, DType dtype) {
  if (dtype == DType::kBf16) return static_cast<__nv_bfloat16_raw>(__float2bfloat16_rn(x)).x;
  return static_cast<__half_raw>(__float2half_rn(x)).x;
}

float from_bits(std::uint16_t bits, DType dtype) {
  if (dtype == DType::kBf16) {
    __nv_bfloat16_raw raw;
    raw.x = bits;
    return __bfloat162float(__nv_bfloat16(raw));
  }
  __half_raw raw;
  raw.x = bits;
  return __half2float(__half(raw));
}

namespace {

bool sees(sim::Problem const& p, int b, int r, int c) {
  // 64-bit: a window side may be any int (unbounded sides are written as huge ones).
  std::int64_t const diag = std::int64_t{r} + p.len_k(b) - p.len_q(b);
  switch (p.mask.kind) {
    case sim::MaskKind::kFull: return true;
    case sim::MaskKind::kCausal: return c <= diag;
    case sim::MaskKind::kWindow: return c >= diag - p.mask.left && c <= diag + p.mask.right;
  }
  return true;
}

}  // namespace

AttentionOutputs reference_cpu(sim::Problem const& p, float scale, AttentionInputs const& in,
                               RefPrecision precision, DType dtype) {
  bool const low = precision == RefPrecision::kLow;
  auto rnd = [&](double x) { return low ? static_cast<double>(round_to(static_cast<float>(x), dtype)) : x; };
  int const d = p.head_dim;
  int const hq = p.q_heads;
  int const hk = p.kv_heads;
  int const group = p.group_size();
  int const total_q = static_cast<int>(p.total_q());
  int const total_k = static_cast<int>(p.total_k());
  AttentionOutputs out;
  out.o.assign(static_cast<std::size_t>(total_q) * hq * d, 0.f);
  out.dq.assign(out.o.size(), 0.f);
  out.lse.assign(static_cast<std::size_t>(total_q) * hq, 0.f);
  out.dk.assign(static_cast<std::size_t>(total_k) * hk * d, 0.f);
  out.dv.assign(out.dk.size(), 0.f);
  std::vector<double> dk_acc(out.dk.size(), 0.0);
  std::vector<double> dv_acc(out.dk.size(), 0.0);
  int q0 = 0;
  int k0 = 0;
  for (int b = 0; b < p.batch; ++b) {
    int const lq = p.len_q(b);
    int const lk = p.len_k(b);
    for (int h = 0; h < hq; ++h) {
      int const kh = h / group;
      auto qv = [&](int r, int c) { return static_cast<double>(in.q[((q0 + r) * std::size_t(hq) + h) * d + c]); };
      auto dov = [&](int r, int c) { return static_cast<double>(in.dout[((q0 + r) * std::size_t(hq) + h) * d + c]); };
      auto kv = [&](int r, int c) { return static_cast<double>(in.k[((k0 + r) * std::size_t(hk) + kh) * d + c]); };
      auto vv = [&](int r, int c) { return static_cast<double>(in.v[((k0 + r) * std::size_t(hk) + kh) * d + c]); };
      std::vector<double> P(static_cast<std::size_t>(lq) * lk, 0.0);
      std::vector<double> dS(P.size(), 0.0);
      for (int r = 0; r < lq; ++r) {
        double mx = -std::numeric_limits<double>::infinity();
        std::vector<double> s(lk, 0.0);
        for (int c = 0; c < lk; ++c) {
          if (!sees(p, b, r, c)) {
            s[c] = -std::numeric_limits<double>::infinity();
            continue;
          }
          double acc = 0;
          for (int x = 0; x < d; ++x) acc += qv(r, x) * kv(c, x);
          s[c] = rnd(acc * scale);
          mx = std::max(mx, s[c]);
        }
        std::size_t const row = (q0 + r) * std::size_t(hq) + h;
        if (mx == -std::numeric_limits<double>::infinity()) {  // sees no key: O = 0, LSE = +inf
          out.lse[std::size_t(h) * total_q + q0 + r] = std::numeric_limits<float>::infinity();
          continue;
        }
        double sum = 0;
        for (int c = 0; c < lk; ++c) sum += std::exp(s[c] - mx);
        out.lse[std::size_t(h) * total_q + q0 + r] = static_cast<float>(mx + std::log(sum));
        for (int c = 0; c < lk; ++c) P[std::size_t(r) * lk + c] = rnd(std::exp(s[c] - mx) / sum);
        std::vector<double> o(d, 0.0);
        for (int c = 0; c < lk; ++c) {
          double const pc = P[std::size_t(r) * lk + c];
          if (pc != 0) for (int x = 0; x < d; ++x) o[x] += pc * vv(c, x);
        }
        double dsum = 0;
        for (int x = 0; x < d; ++x) {
          o[x] = rnd(o[x]);
          out.o[row * d + x] = static_cast<float>(o[x]);
          dsum += dov(r, x) * o[x];
        }
        std::vector<double> dq(d, 0.0);
        for (int c = 0; c < lk; ++c) {
          double const pc = P[std::size_t(r) * lk + c];
          if (pc == 0) continue;
          double dp = 0;
          for (int x = 0; x < d; ++x) dp += dov(r, x) * vv(c, x);
          double const ds = rnd(pc * (rnd(dp) - dsum));
          dS[std::size_t(r) * lk + c] = ds;
          for (int x = 0; x < d; ++x) dq[x] += ds * kv(c, x);
        }
        for (int x = 0; x < d; ++x) out.dq[row * d + x] = static_cast<float>(rnd(dq[x] * scale));
      }
      for (int c = 0; c < lk; ++c) {
        std::size_t const krow = (k0 + c) * std::size_t(hk) + kh;
        for (int r = 0; r < lq; ++r) {
          double const pc = P[std::size_t(r) * lk + c];
          double const ds = dS[std::size_t(r) * lk + c];
          if (pc == 0 && ds == 0) continue;
          for (int x = 0; x < d; ++x) {
            dv_acc[krow * d + x] += pc * dov(r, x);
            dk_acc[krow * d + x] += ds * qv(r, x) * scale;
          }
        }
      }
    }
    q0 += lq;
    k0 += lk;
  }
  for (std::size_t x = 0; x < dk_acc.size(); ++x) {
    out.dk[x] = static_cast<float>(rnd(dk_acc[x]));
    out.dv[x] = static_cast<float>(rnd(dv_acc[x]));
  }
  return out;
}

}  // namespace dash::rt
