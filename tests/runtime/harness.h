#pragma once
// Test harness for the GPU tests: seeded random inputs, device tensors poisoned before each run,
// simple schedules, and the error rule (ours vs exact within 2x of low-precision-reference vs exact).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "dagsim/core/problem.h"
#include "dagsim/core/schedule.h"
#include "dagsim/core/splitmix.h"
#include "dagsim/core/tile_index.h"
#include "device_fill.h"
#include "runtime/attention.h"
#include "runtime/reference.h"

namespace dash::rt::test {

/// The kernel families that run on the current device: every GPU test runs for each.
inline std::vector<KernelFamily> device_families() { return runnable_families(); }

/// splitmix64 (dagsim/core/splitmix.h): our own generator, same stream on every platform.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() { return sim::splitmix64(state_); }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  float normal() {                                                             // Box-Muller
    double const u1 = 1.0 - uniform();
    double const u2 = uniform();
    return static_cast<float>(std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2));
  }
  int below(int n) { return static_cast<int>(next() % static_cast<std::uint64_t>(n)); }

 private:
  std::uint64_t state_;
};

/// Fresh random inputs, rounded to the dtype (never zeros).
inline AttentionInputs random_inputs(sim::Problem const& p, DType dtype, std::uint64_t seed) {
  Rng rng(seed);
  auto fill = [&](std::size_t n) {
    std::vector<float> v(n);
    for (auto& x : v) x = round_to(rng.normal(), dtype);
    return v;
  };
  AttentionInputs in;
  std::size_t const nq = static_cast<std::size_t>(p.total_q()) * p.q_heads * p.head_dim;
  std::size_t const nk = static_cast<std::size_t>(p.total_k()) * p.kv_heads * p.head_dim;
  in.q = fill(nq);
  in.k = fill(nk);
  in.v = fill(nk);
  in.dout = fill(nq);
  return in;
}

/// Device tensors of one problem, packed (total, heads, d) = contiguous (b, s, h, d).
class DeviceTensors {
 public:
  DeviceTensors(sim::Problem const& p, DType dtype) : p_(p), dtype_(dtype) {
    nq_ = static_cast<std::size_t>(p.total_q()) * p.q_heads * p.head_dim;
    nk_ = static_cast<std::size_t>(p.total_k()) * p.kv_heads * p.head_dim;
    for (auto* x : {&q_, &o_, &do_, &dq_}) *x = alloc(nq_ * 2);
    for (auto* x : {&k_, &v_, &dk_, &dv_}) *x = alloc(nk_ * 2);
    lse_ = alloc(static_cast<std::size_t>(p.total_q()) * p.q_heads * sizeof(float));
  }
  ~DeviceTensors() {
    for (void* x : {q_, k_, v_, o_, do_, dq_, dk_, dv_, lse_}) cudaFree(x);
  }
  DeviceTensors(DeviceTensors const&) = delete;
  DeviceTensors& operator=(DeviceTensors const&) = delete;

  void upload(AttentionInputs const& in) {
    put(q_, in.q);
    put(k_, in.k);
    put(v_, in.v);
    put(do_, in.dout);
  }
  /// NaN in every output element (0xffff is a NaN in bf16 and fp16, 0xffffffff in fp32).
  void poison_forward(cudaStream_t s) {
    DASH_CUDA_CHECK(cudaMemsetAsync(o_, 0xff, nq_ * 2, s));
    DASH_CUDA_CHECK(cudaMemsetAsync(lse_, 0xff, static_cast<std::size_t>(p_.total_q()) * p_.q_heads * 4, s));
  }
  void poison_backward(cudaStream_t s) {
    DASH_CUDA_CHECK(cudaMemsetAsync(dq_, 0xff, nq_ * 2, s));
    DASH_CUDA_CHECK(cudaMemsetAsync(dk_, 0xff, nk_ * 2, s));
    DASH_CUDA_CHECK(cudaMemsetAsync(dv_, 0xff, nk_ * 2, s));
  }
  [[nodiscard]] AttentionTensors tensors() const {
    bool const varlen = !p_.seqlens_q.empty();
    int const sq = varlen ? 0 : p_.seqlen_q;
    int const sk = varlen ? 0 : p_.seqlen_k;
    AttentionTensors t;
    t.q = contiguous_tensor(q_, sq, p_.q_heads, p_.head_dim);
    t.o = contiguous_tensor(o_, sq, p_.q_heads, p_.head_dim);
    t.dout = contiguous_tensor(do_, sq, p_.q_heads, p_.head_dim);
    t.dq = contiguous_tensor(dq_, sq, p_.q_heads, p_.head_dim);
    t.k = contiguous_tensor(k_, sk, p_.kv_heads, p_.head_dim);
    t.v = contiguous_tensor(v_, sk, p_.kv_heads, p_.head_dim);
    t.dk = contiguous_tensor(dk_, sk, p_.kv_heads, p_.head_dim);
    t.dv = contiguous_tensor(dv_, sk, p_.kv_heads, p_.head_dim);
    t.lse = static_cast<float*>(lse_);
    return t;
  }
  [[nodiscard]] std::vector<float> o() const { return get(o_, nq_); }
  [[nodiscard]] std::vector<float> dq() const { return get(dq_, nq_); }
  [[nodiscard]] std::vector<float> dk() const { return get(dk_, nk_); }
  [[nodiscard]] std::vector<float> dv() const { return get(dv_, nk_); }
  [[nodiscard]] std::vector<float> lse() const {
    std::vector<float> v(static_cast<std::size_t>(p_.total_q()) * p_.q_heads);
    DASH_CUDA_CHECK(cudaMemcpy(v.data(), lse_, v.size() * 4, cudaMemcpyDeviceToHost));
    return v;
  }
  /// Q, K, V and dO filled on the GPU (fill_random_device): for problems too large to fill from the host.
  void fill_inputs_on_device(std::uint64_t seed) {
    fill_random_device(q_, static_cast<std::int64_t>(nq_), dtype_, seed, nullptr);
    fill_random_device(k_, static_cast<std::int64_t>(nk_), dtype_, seed + 1, nullptr);
    fill_random_device(v_, static_cast<std::int64_t>(nk_), dtype_, seed + 2, nullptr);
    fill_random_device(do_, static_cast<std::int64_t>(nq_), dtype_, seed + 3, nullptr);
  }
  /// Fixed-length problems: this (one-sequence) problem's Q, K, V, dO set to sequence `b` of
  /// `from`, a problem of the same shape but more sequences.
  void copy_inputs_of_sequence(DeviceTensors const& from, int b) {
    auto const at = [](void* base, std::size_t bytes) { return static_cast<unsigned char*>(base) + bytes; };
    std::size_t const bq = nq_ * 2;
    std::size_t const bk = nk_ * 2;
    auto const ub = static_cast<std::size_t>(b);
    DASH_CUDA_CHECK(cudaMemcpy(q_, at(from.q_, ub * bq), bq, cudaMemcpyDeviceToDevice));
    DASH_CUDA_CHECK(cudaMemcpy(k_, at(from.k_, ub * bk), bk, cudaMemcpyDeviceToDevice));
    DASH_CUDA_CHECK(cudaMemcpy(v_, at(from.v_, ub * bk), bk, cudaMemcpyDeviceToDevice));
    DASH_CUDA_CHECK(cudaMemcpy(do_, at(from.do_, ub * bq), bq, cudaMemcpyDeviceToDevice));
  }
  /// Fixed-length problems: the raw bits of O, dQ, dK and dV of sequence `b`, one after the other.
  [[nodiscard]] std::vector<std::uint16_t> output_bits_of_sequence(int b) const {
    auto const batch = static_cast<std::size_t>(p_.batch);
    std::size_t const per_q = nq_ / batch;
    std::size_t const per_k = nk_ / batch;
    auto const ub = static_cast<std::size_t>(b);
    std::vector<std::uint16_t> v(2 * per_q + 2 * per_k);
    std::size_t pos = 0;
    for (auto const& [src, per] : {std::pair{o_, per_q}, {dq_, per_q}, {dk_, per_k}, {dv_, per_k}}) {
      DASH_CUDA_CHECK(cudaMemcpy(v.data() + pos, static_cast<std::uint16_t const*>(src) + ub * per, per * 2,
                                 cudaMemcpyDeviceToHost));
      pos += per;
    }
    return v;
  }
  /// Raw bytes of dq, dk, dv: for bitwise comparisons.
  [[nodiscard]] std::vector<std::uint16_t> grad_bits() const {
    std::vector<std::uint16_t> v(2 * nq_ + 0);
    v.resize(nq_ + 2 * nk_);
    DASH_CUDA_CHECK(cudaMemcpy(v.data(), dq_, nq_ * 2, cudaMemcpyDeviceToHost));
    DASH_CUDA_CHECK(cudaMemcpy(v.data() + nq_, dk_, nk_ * 2, cudaMemcpyDeviceToHost));
    DASH_CUDA_CHECK(cudaMemcpy(v.data() + nq_ + nk_, dv_, nk_ * 2, cudaMemcpyDeviceToHost));
    return v;
  }

 private:
  static void* alloc(std::size_t bytes) {
    void* p = nullptr;
    DASH_CUDA_CHECK(cudaMalloc(&p, bytes));
    return p;
  }
  void put(void* dst, std::vector<float> const& v) const {
    std::vector<std::uint16_t> bits(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) bits[i] = to_bits(v[i], dtype_);
    DASH_CUDA_CHECK(cudaMemcpy(dst, bits.data(), bits.size() * 2, cudaMemcpyHostToDevice));
  }
  [[nodiscard]] std::vector<float> get(void* src, std::size_t n) const {
    std::vector<std::uint16_t> bits(n);
    DASH_CUDA_CHECK(cudaMemcpy(bits.data(), src, n * 2, cudaMemcpyDeviceToHost));
    std::vector<float> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = from_bits(bits[i], dtype_);
    return v;
  }

  sim::Problem p_;
  DType dtype_;
  std::size_t nq_ = 0, nk_ = 0;
  void *q_ = nullptr, *k_ = nullptr, *v_ = nullptr, *o_ = nullptr, *do_ = nullptr, *dq_ = nullptr,
       *dk_ = nullptr, *dv_ = nullptr, *lse_ = nullptr;
};

/// A schedule built here (independent of the strategies module): one work item per visible KV
/// tile, Q ascending or descending, items dealt round-robin over `ctas` CTAs (0 = one per item),
/// dQ ranks by KV ascending, dK/dV ranks by q head ascending. Deadlock-free: every wait goes to an
/// item of smaller index, and each CTA runs its items in increasing index order.
inline sim::Schedule simple_schedule(sim::Problem const& p, bool descending, sim::LaunchModel launch,
                                     int ctas = 0) {
  sim::TileIndex const index(p);
  std::vector<sim::WorkItem> items;
  for (int b = 0; b < p.batch; ++b) {
    for (int h = 0; h < p.q_heads; ++h) {
      for (int j = 0; j < p.kv_tiles(b); ++j) {
        sim::WorkItem item{b, h, j, p.visible_q_tiles(b, j)};
        if (descending) std::reverse(item.q_order.begin(), item.q_order.end());
        // Under GQA an item that sees nothing still holds a rank in its dK/dV chain.
        if (!item.q_order.empty() || p.is_gqa()) items.push_back(item);
      }
    }
  }
  sim::Schedule s;
  s.strategy = descending ? "test-descending" : "test-ascending";
  s.launch = launch;
  int const n = (launch == sim::LaunchModel::kDynamic || ctas == 0) ? static_cast<int>(items.size()) : ctas;
  s.ctas.resize(static_cast<std::size_t>(n));
  for (std::size_t x = 0; x < items.size(); ++x) s.ctas[x % static_cast<std::size_t>(n)].items.push_back(items[x]);
  s.dq_order.resize(static_cast<std::size_t>(index.num_dq_tiles()));
  for (int id = 0; id < index.num_dq_tiles(); ++id) {
    sim::ItemKey const key = index.dq_key(id);
    s.dq_order[id] = p.visible_kv_tiles(key.batch, key.tile);
  }
  if (p.is_gqa()) {
    s.dkv_order.resize(static_cast<std::size_t>(index.num_dkv_tiles()));
    for (int id = 0; id < index.num_dkv_tiles(); ++id) {
      sim::ItemKey const key = index.dkv_key(id);
      for (int g = 0; g < p.group_size(); ++g) s.dkv_order[id].push_back(key.head * p.group_size() + g);
    }
  }
  return s;
}

struct ErrorReport {
  double ours = 0;   ///< max |ours - exact|
  double low = 0;    ///< max |low-precision reference - exact|
  double scale = 0;  ///< max |exact|
  bool finite = true;
};

inline ErrorReport compare(std::vector<float> const& ours, std::vector<float> const& low,
                           std::vector<float> const& exact) {
  ErrorReport r;
  REQUIRE(ours.size() == exact.size());
  for (std::size_t i = 0; i < exact.size(); ++i) {
    if (!std::isfinite(ours[i])) {
      r.finite = false;
      continue;
    }
    r.ours = std::max(r.ours, static_cast<double>(std::fabs(ours[i] - exact[i])));
    r.low = std::max(r.low, static_cast<double>(std::fabs(low[i] - exact[i])));
    r.scale = std::max(r.scale, static_cast<double>(std::fabs(exact[i])));
  }
  return r;
}

/// FlashAttention's rule: within twice the error of the same math done in low precision, plus a
/// floor of a few low-precision ulps of the largest value (for outputs the low reference happens
/// to round exactly).
inline void check_close(char const* what, ErrorReport const& r, DType dtype) {
  double const ulp = dtype == DType::kBf16 ? 0x1.0p-8 : 0x1.0p-11;
  INFO(what << ": max err " << r.ours << ", low-precision reference err " << r.low << ", max |ref| "
            << r.scale);
  CHECK(r.finite);
  CHECK(r.ours <= 2.0 * r.low + 2.0 * ulp * r.scale + 1e-6);
}

}  // namespace dash::rt::test
