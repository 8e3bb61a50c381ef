// GPU tests: forward and backward against references, on every mask, dtype, head_dim, GQA and
// varlen; every validated schedule (random ones too) gives correct gradients; bitwise determinism
// over repeated runs with concurrent work; refusals of bad input.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <regex>
#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <sys/wait.h>

#include "dagsim/core/error.h"
#include "dagsim/core/machine.h"
#include "dagsim/core/strategies.h"
#include "dagsim/model/cost_model.h"
#include "dagsim/model/validate.h"
#include "harness.h"
#include "runtime/attention_test_access.h"
#include "runtime/registry.h"

namespace dash::rt::test {
namespace {

struct Case {
  std::string name;
  sim::Problem problem;
  DType dtype;
};

sim::Problem make_problem(int batch, int hq, int hk, int sq, int sk, int d, sim::Mask mask) {
  sim::Problem p;
  p.batch = batch;
  p.q_heads = hq;
  p.kv_heads = hk;
  p.seqlen_q = sq;
  p.seqlen_k = sk;
  p.head_dim = d;
  p.tile_m = family_tile_m(KernelFamily::kSm80, d);  // every family has these tiles (family.h)
  p.tile_n = family_tile_n(KernelFamily::kSm80);
  p.mask = mask;
  return p;
}

sim::Mask causal() { return sim::Mask{sim::MaskKind::kCausal, 0, 0}; }
sim::Mask full() { return sim::Mask{}; }
sim::Mask window(int l, int r) { return sim::Mask{sim::MaskKind::kWindow, l, r}; }

std::vector<Case> small_cases() {
  std::vector<Case> cases;
  cases.push_back({"d64 bf16 full 256x256 b2 h2", make_problem(2, 2, 2, 256, 256, 64, full()), DType::kBf16});
  cases.push_back({"d128 bf16 causal 200x333", make_problem(1, 2, 2, 200, 333, 128, causal()), DType::kBf16});
  cases.push_back({"d128 fp16 window(70,20) 300x300", make_problem(1, 2, 2, 300, 300, 128, window(70, 20)), DType::kFp16});
  cases.push_back({"d64 fp16 causal 384x128 (rows seeing nothing)", make_problem(1, 1, 1, 384, 128, 64, causal()), DType::kFp16});
  cases.push_back({"d128 bf16 GQA 4/2 full 190x190", make_problem(1, 4, 2, 190, 190, 128, full()), DType::kBf16});
  cases.push_back({"d64 bf16 MQA 4/1 causal 257x257", make_problem(2, 4, 1, 257, 257, 64, causal()), DType::kBf16});
  sim::Problem varlen = make_problem(3, 2, 2, 0, 0, 128, causal());
  varlen.seqlens_q = {100, 257, 64};
  varlen.seqlens_k = {130, 64, 300};
  cases.push_back({"d128 bf16 varlen causal", varlen, DType::kBf16});
  sim::Problem varlen_gqa = make_problem(2, 4, 2, 0, 0, 64, window(40, 0));
  varlen_gqa.seqlens_q = {150, 77};
  varlen_gqa.seqlens_k = {150, 260};
  cases.push_back({"d64 fp16 varlen GQA window(40,0)", varlen_gqa, DType::kFp16});
  return cases;
}

float scale_of(sim::Problem const& p) { return 1.f / std::sqrt(static_cast<float>(p.head_dim)); }

/// Forward then backward with `schedule`, outputs poisoned first; compares with the references.
/// The backward runs twice: the second starts from the accumulators the first left full, so a dQ
/// tile that neither the preprocess zeroed nor a first contribution overwrote shows.
void run_and_check(KernelFamily family, Case const& c, sim::Schedule const& schedule, Reduction reduction,
                   AttentionInputs const& in, AttentionOutputs const& exact, AttentionOutputs const& low,
                   bool check_forward) {
  Attention attn(c.problem, c.dtype, scale_of(c.problem));
  attn.set_schedule(schedule, KernelChoice::kAuto, family);
  REQUIRE(attn.family() == family);
  // Whether the call zeroes dQ's accumulator, as the model (and so `dash fidelity`) counts it.
  CHECK(attn.zeroes_dq(reduction) == sim::zeroes_dq(c.problem, reduction == Reduction::kDeterministic,
                                                    family_traits(family).dq_first_claims));
  DeviceTensors dev(c.problem, c.dtype);
  dev.upload(in);
  dev.poison_forward(nullptr);
  attn.forward(dev.tensors(), nullptr);
  attn.backward(dev.tensors(), reduction, nullptr);
  dev.poison_backward(nullptr);
  attn.backward(dev.tensors(), reduction, nullptr);
  DASH_CUDA_CHECK(cudaDeviceSynchronize());
  INFO(family_name(family) << " / " << c.name << " / schedule " << schedule.strategy << " / "
              << (reduction == Reduction::kDeterministic ? "deterministic" : "atomic"));
  if (check_forward) {
    check_close("O", compare(dev.o(), low.o, exact.o), c.dtype);
    auto const lse = dev.lse();
    double worst = 0;
    for (std::size_t i = 0; i < lse.size(); ++i) {
      if (std::isinf(exact.lse[i])) {
        CHECK(std::isinf(lse[i]));
      } else {
        worst = std::max(worst, static_cast<double>(std::fabs(lse[i] - exact.lse[i])));
      }
    }
    INFO("LSE max err " << worst);
    CHECK(worst < 2e-2);
  }
  check_close("dQ", compare(dev.dq(), low.dq, exact.dq), c.dtype);
  check_close("dK", compare(dev.dk(), low.dk, exact.dk), c.dtype);
  check_close("dV", compare(dev.dv(), low.dv, exact.dv), c.dtype);
}

/// Each case on fresh random inputs (seeds after `seed`) against the fp32 GPU reference, every
/// family the device runs, each of `strategies` made for the H200's SMs.
void check_against_gpu_reference(std::vector<Case> const& cases, std::uint64_t seed,
                                 std::vector<char const*> const& strategies, Reduction reduction,
                                 bool check_forward) {
  for (auto const& c : cases) {
    AttentionInputs const in = random_inputs(c.problem, c.dtype, ++seed);
    AttentionOutputs const exact = reference_gpu(c.problem, scale_of(c.problem), in, RefPrecision::kExact, c.dtype);
    AttentionOutputs const low = reference_gpu(c.problem, scale_of(c.problem), in, RefPrecision::kLow, c.dtype);
    for (KernelFamily f : device_families()) {
      for (char const* name : strategies) {
        run_and_check(f, c, sim::make_strategy(name, c.problem, sim::machine_preset("h200")), reduction, in, exact,
                      low, check_forward);
      }
    }
  }
}

}  // namespace

TEST_CASE("forward and backward match the fp64 CPU reference", "[gpu]") {
  std::uint64_t seed = 1;
  for (auto const& c : small_cases()) {
    AttentionInputs const in = random_inputs(c.problem, c.dtype, ++seed);
    AttentionOutputs const exact = reference_cpu(c.problem, scale_of(c.problem), in, RefPrecision::kExact, c.dtype);
    AttentionOutputs const low = reference_cpu(c.problem, scale_of(c.problem), in, RefPrecision::kLow, c.dtype);
    for (KernelFamily f : device_families()) {
      run_and_check(f, c, simple_schedule(c.problem, false, sim::LaunchModel::kPersistent), Reduction::kDeterministic,
                    in, exact, low, true);
      run_and_check(f, c, simple_schedule(c.problem, true, sim::LaunchModel::kDynamic), Reduction::kDeterministic, in,
                    exact, low, false);
      run_and_check(f, c, simple_schedule(c.problem, true, sim::LaunchModel::kPersistent, 3),
                    Reduction::kDeterministic, in, exact, low, false);
      run_and_check(f, c, simple_schedule(c.problem, false, sim::LaunchModel::kPersistent), Reduction::kAtomic, in,
                    exact, low, false);
    }
  }
}

// Small enough for compute-sanitizer (scripts/gpu.sh sanitize runs memcheck, racecheck and
// synccheck on this test alone): every family, both head dims, a mask, varlen, both reductions, and
// the sm90 family's 80-row Q tile.
TEST_CASE("sanitizer cases: small backward passes of every family", "[gpu][sanitize]") {
  std::vector<Case> cases;
  cases.push_back({"d128 bf16 causal 200x333", make_problem(1, 2, 2, 200, 333, 128, causal()), DType::kBf16});
  cases.push_back({"d64 fp16 full 256 b2 GQA 2/1", make_problem(2, 2, 1, 256, 256, 64, full()), DType::kFp16});
  sim::Problem varlen = make_problem(2, 2, 2, 0, 0, 128, window(50, 10));
  varlen.seqlens_q = {130, 67};
  varlen.seqlens_k = {90, 200};
  cases.push_back({"d128 bf16 varlen window(50,10)", varlen, DType::kBf16});
  // The sm90 family's 80-row Q tile (head dim 128): dS stored transposed, dQ^T, one dQ buffer, the
  // transposed tile-major layout and its postprocess; a cut tile and a varlen batch. Run by the
  // families that have the tile (family_has_tiles).
  sim::Problem full80 = make_problem(1, 2, 2, 250, 250, 128, full());
  full80.tile_m = 80;
  cases.push_back({"d128 bf16 full 250x250 tile 80", full80, DType::kBf16});
  sim::Problem varlen80 = make_problem(2, 2, 2, 0, 0, 128, full());
  varlen80.tile_m = 80;
  varlen80.seqlens_q = {170, 61};
  varlen80.seqlens_k = {90, 200};
  cases.push_back({"d128 fp16 varlen full tile 80", varlen80, DType::kFp16});
  std::uint64_t seed = 500;
  for (auto const& c : cases) {
    AttentionInputs const in = random_inputs(c.problem, c.dtype, ++seed);
    AttentionOutputs const exact = reference_cpu(c.problem, scale_of(c.problem), in, RefPrecision::kExact, c.dtype);
    AttentionOutputs const low = reference_cpu(c.problem, scale_of(c.problem), in, RefPrecision::kLow, c.dtype);
    for (KernelFamily f : device_families()) {
      if (!family_has_tiles(f, c.problem.head_dim, c.problem.tile_m, c.problem.tile_n)) continue;
      for (Reduction r : {Reduction::kDeterministic, Reduction::kAtomic}) {
        run_and_check(f, c, simple_schedule(c.problem, true, sim::LaunchModel::kPersistent, 2), r, in, exact, low,
                      false);
      }
    }
  }
}

TEST_CASE("large shapes match the fp32 GPU reference", "[gpu]") {
  std::vector<Case> cases;
  cases.push_back({"d128 bf16 full 2048 h2", make_problem(1, 2, 2, 2048, 2048, 128, full()), DType::kBf16});
  cases.push_back({"d64 bf16 causal 2000 h4 GQA 4/2", make_problem(1, 4, 2, 2000, 2000, 64, causal()), DType::kBf16});
  cases.push_back({"d128 fp16 causal 1536x1100", make_problem(1, 2, 2, 1536, 1100, 128, causal()), DType::kFp16});
  check_against_gpu_reference(cases, 100, {"descending"}, Reduction::kDeterministic, true);
}

TEST_CASE("without tickets, lock-step orders on larger shapes match the fp32 GPU reference", "[gpu]") {
  // fa3 and descending walk every KV tile of a head over the same Q tiles in step: up to 16 CTAs
  // reach one dQ tile at once, the case where the sm90 family's first claim (one store, the rest
  // wait and add) is contended most.
  std::vector<Case> cases;
  cases.push_back({"d128 bf16 causal 2048 b2 h8", make_problem(2, 8, 8, 2048, 2048, 128, causal()), DType::kBf16});
  cases.push_back({"d128 bf16 full 2048 h8", make_problem(1, 8, 8, 2048, 2048, 128, full()), DType::kBf16});
  cases.push_back({"d64 fp16 causal 2048 b2 h8 GQA 8/2", make_problem(2, 8, 2, 2048, 2048, 64, causal()), DType::kFp16});
  check_against_gpu_reference(cases, 300, {"fa3", "descending"}, Reduction::kAtomic, false);
}

TEST_CASE("every validated schedule gives correct gradients, random ones too", "[gpu]") {
  Rng rng(4242);
  std::vector<Case> cases;
  cases.push_back({"d64 bf16 causal GQA 4/2 500", make_problem(1, 4, 2, 500, 500, 64, causal()), DType::kBf16});
  cases.push_back({"d128 bf16 full 300x700", make_problem(2, 1, 1, 300, 700, 128, full()), DType::kBf16});
  int ran = 0;
  for (auto const& c : cases) {
    AttentionInputs const in = random_inputs(c.problem, c.dtype, rng.next());
    AttentionOutputs const exact = reference_cpu(c.problem, scale_of(c.problem), in, RefPrecision::kExact, c.dtype);
    AttentionOutputs const low = reference_cpu(c.problem, scale_of(c.problem), in, RefPrecision::kLow, c.dtype);
    // Named strategies on machines of several sizes (odd SM counts included).
    for (int sms : {132, 7, 3}) {
      for (auto const& name : sim::strategy_names()) {
        sim::Schedule s;
        try {
          s = sim::make_strategy(name, c.problem, sim::machine_with_sms(sms));
        } catch (UserError const&) {
          continue;  // the strategy refuses this problem (documented premise)
        }
        for (KernelFamily f : device_families()) run_and_check(f, c, s, Reduction::kDeterministic, in, exact, low, false);
        ++ran;
      }
    }
    // Random schedules: random Q orders, random CTA counts, lock-step ranks; validated.
    for (int trial = 0; trial < 8; ++trial) {
      sim::Schedule s = simple_schedule(c.problem, false, sim::LaunchModel::kPersistent, 1 + rng.below(9));
      for (auto& cta : s.ctas) {
        for (auto& item : cta.items) {
          for (std::size_t x = item.q_order.size(); x > 1; --x) {
            std::swap(item.q_order[x - 1], item.q_order[static_cast<std::size_t>(rng.below(static_cast<int>(x)))]);
          }
        }
      }
      sim::assign_lockstep_ranks(c.problem, s);
      s.strategy = "random-" + std::to_string(trial);
      sim::validate(c.problem, sim::machine_with_sms(132), s);
      for (KernelFamily f : device_families()) run_and_check(f, c, s, Reduction::kDeterministic, in, exact, low, false);
      ++ran;
    }
  }
  CHECK(ran >= 20);
}

namespace {

/// Runs the backward `runs` times with concurrent work on another stream; returns how many runs
/// differed bitwise from the first.
int count_differing_runs(KernelFamily family, sim::Problem const& p, sim::Schedule const& s, Reduction reduction,
                         int runs) {
  DType const dtype = DType::kBf16;
  Attention attn(p, dtype, scale_of(p));
  attn.set_schedule(s, KernelChoice::kAuto, family);
  DeviceTensors dev(p, dtype);
  dev.upload(random_inputs(p, dtype, 77));
  attn.forward(dev.tensors(), nullptr);
  // Concurrent load: another problem's forward and backward on a second stream.
  sim::Problem const other = make_problem(1, 4, 4, 1024, 1024, 64, full());
  Attention noise(other, dtype, scale_of(other));
  noise.set_schedule(simple_schedule(other, false, sim::LaunchModel::kDynamic));
  DeviceTensors noise_dev(other, dtype);
  noise_dev.upload(random_inputs(other, dtype, 78));
  cudaStream_t main_stream = nullptr;
  cudaStream_t side = nullptr;
  DASH_CUDA_CHECK(cudaStreamCreateWithFlags(&main_stream, cudaStreamNonBlocking));
  DASH_CUDA_CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  noise.forward(noise_dev.tensors(), side);
  std::vector<std::uint16_t> first;
  int differing = 0;
  for (int r = 0; r < runs; ++r) {
    if (r % 2 == 1) noise.backward(noise_dev.tensors(), Reduction::kAtomic, side);
    dev.poison_backward(main_stream);
    attn.backward(dev.tensors(), reduction, main_stream);
    DASH_CUDA_CHECK(cudaStreamSynchronize(main_stream));
    auto bits = dev.grad_bits();
    if (r == 0) {
      first = std::move(bits);
    } else if (bits != first) {
      ++differing;
    }
  }
  DASH_CUDA_CHECK(cudaDeviceSynchronize());
  cudaStreamDestroy(main_stream);
  cudaStreamDestroy(side);
  return differing;
}

}  // namespace

TEST_CASE("deterministic backward is bitwise repeatable; atomic is not", "[gpu]") {
  std::vector<sim::Problem> problems = {make_problem(2, 4, 4, 1024, 1024, 128, full()),
                                        make_problem(1, 8, 2, 1024, 1024, 64, causal())};
  for (KernelFamily f : device_families()) {
    char const* fam = family_name(f).data();  // "sm80", "sm90": NUL-terminated literals
    for (auto const& p : problems) {
      int strategies = 0;
      for (auto const& name : sim::strategy_names()) {
        sim::Schedule s;
        try {
          s = sim::make_strategy(name, p, sim::machine_preset("h200"));
        } catch (UserError const&) {
          continue;
        }
        INFO(fam << " strategy " << name << ", head_dim " << p.head_dim << ", " << sim::to_string(p.mask));
        int const differing = count_differing_runs(f, p, s, Reduction::kDeterministic, 100);
        std::printf("determinism: %s %-16s d%d %-7s 100 runs, %d differ\n", fam, name.c_str(), p.head_dim,
                    sim::to_string(p.mask).c_str(), differing);
        CHECK(differing == 0);
        ++strategies;
      }
      CHECK(strategies >= 3);
      // The same test must be able to fail: unordered atomics change bits from run to run.
      int const atomic_differing = count_differing_runs(
          f, p, sim::make_strategy("fa3", p, sim::machine_preset("h200")), Reduction::kAtomic, 100);
      std::printf("determinism: %s atomic (fa3) d%d %-7s 100 runs, %d differ\n", fam, p.head_dim,
                  sim::to_string(p.mask).c_str(), atomic_differing);
      CHECK(atomic_differing > 0);
    }
  }
}

TEST_CASE("the sm90 family's 80-row Q tile at head dim 128 matches the references and repeats bit for bit",
          "[gpu]") {
  auto const fams = device_families();
  if (std::find(fams.begin(), fams.end(), KernelFamily::kSm90) == fams.end()) return;
  auto const tile80 = [](sim::Problem p) {
    p.tile_m = 80;
    return p;
  };
  std::vector<Case> cases;
  cases.push_back({"d128 bf16 full 300x300 (cut tiles)", tile80(make_problem(1, 2, 2, 300, 300, 128, full())), DType::kBf16});
  cases.push_back({"d128 fp16 full 256 b2 h2", tile80(make_problem(2, 2, 2, 256, 256, 128, full())), DType::kFp16});
  cases.push_back({"d128 bf16 GQA 4/2 full 190x190", tile80(make_problem(1, 4, 2, 190, 190, 128, full())), DType::kBf16});
  cases.push_back({"d128 bf16 causal 200x333", tile80(make_problem(1, 2, 2, 200, 333, 128, causal())), DType::kBf16});
  cases.push_back({"d128 fp16 window(70,20) 300x300", tile80(make_problem(1, 2, 2, 300, 300, 128, window(70, 20))),
                   DType::kFp16});
  sim::Problem varlen = tile80(make_problem(3, 2, 2, 0, 0, 128, full()));
  varlen.seqlens_q = {100, 257, 64};
  varlen.seqlens_k = {130, 64, 300};
  cases.push_back({"d128 bf16 varlen full", varlen, DType::kBf16});
  std::uint64_t seed = 800;
  for (auto const& c : cases) {
    AttentionInputs const in = random_inputs(c.problem, c.dtype, ++seed);
    AttentionOutputs const exact = reference_cpu(c.problem, scale_of(c.problem), in, RefPrecision::kExact, c.dtype);
    AttentionOutputs const low = reference_cpu(c.problem, scale_of(c.problem), in, RefPrecision::kLow, c.dtype);
    run_and_check(KernelFamily::kSm90, c, simple_schedule(c.problem, false, sim::LaunchModel::kPersistent),
                  Reduction::kDeterministic, in, exact, low, false);
    run_and_check(KernelFamily::kSm90, c, simple_schedule(c.problem, true, sim::LaunchModel::kPersistent, 3),
                  Reduction::kDeterministic, in, exact, low, false);
    run_and_check(KernelFamily::kSm90, c, simple_schedule(c.problem, false, sim::LaunchModel::kPersistent),
                  Reduction::kAtomic, in, exact, low, false);
  }
  sim::Problem const big = tile80(make_problem(2, 4, 4, 1024, 1024, 128, full()));
  for (auto const& name : {"symmetric-shift", "fa3"}) {
    int const differing = count_differing_runs(KernelFamily::kSm90, big,
                                               sim::make_strategy(name, big, sim::machine_preset("h200")),
                                               Reduction::kDeterministic, 30);
    std::printf("determinism: sm90 tile 80 %s d128 full 30 runs, %d differ\n", name, differing);
    CHECK(differing == 0);
  }
  // The portable family has no such tile: refused.
  if (std::find(fams.begin(), fams.end(), KernelFamily::kSm80) != fams.end()) {
    Attention attn(cases[0].problem, DType::kBf16, scale_of(cases[0].problem));
    CHECK_THROWS_AS(attn.set_schedule(simple_schedule(cases[0].problem, false, sim::LaunchModel::kPersistent),
                                      KernelChoice::kAuto, KernelFamily::kSm80),
                    UserError);
  }
}

TEST_CASE("one object from two host threads on two streams: its backwards take turns", "[gpu]") {
  sim::Problem const p = make_problem(1, 8, 8, 2048, 2048, 128, causal());
  DType const dtype = DType::kBf16;
  for (KernelFamily f : device_families()) {
    INFO(family_name(f));
    Attention attn(p, dtype, scale_of(p));
    attn.set_schedule(sim::make_strategy("symmetric-shift", p, sim::machine_preset("h200")), KernelChoice::kAuto, f);
    DeviceTensors a(p, dtype);
    DeviceTensors b(p, dtype);
    a.upload(random_inputs(p, dtype, 91));
    b.upload(random_inputs(p, dtype, 92));
    attn.forward(a.tensors(), nullptr);
    attn.forward(b.tensors(), nullptr);
    // Reference: one after the other on one stream.
    attn.backward(a.tensors(), Reduction::kDeterministic, nullptr);
    DASH_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<std::uint16_t> const ref_a = a.grad_bits();
    attn.backward(b.tensors(), Reduction::kDeterministic, nullptr);
    DASH_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<std::uint16_t> const ref_b = b.grad_bits();
    REQUIRE(ref_a != ref_b);
    cudaStream_t sa = nullptr;
    cudaStream_t sb = nullptr;
    DASH_CUDA_CHECK(cudaStreamCreateWithFlags(&sa, cudaStreamNonBlocking));
    DASH_CUDA_CHECK(cudaStreamCreateWithFlags(&sb, cudaStreamNonBlocking));
    int wrong = 0;
    for (int round = 0; round < 20; ++round) {
      a.poison_backward(sa);
      b.poison_backward(sb);
      DASH_CUDA_CHECK(cudaDeviceSynchronize());
      std::atomic<bool> failed{false};
      auto run = [&](DeviceTensors& t, cudaStream_t stream) {
        try {
          attn.backward(t.tensors(), Reduction::kDeterministic, stream);
        } catch (std::exception const&) {
          failed.store(true);
        }
      };
      std::thread ta(run, std::ref(a), sa);
      std::thread tb(run, std::ref(b), sb);
      ta.join();
      tb.join();
      DASH_CUDA_CHECK(cudaDeviceSynchronize());
      REQUIRE(!failed.load());
      wrong += a.grad_bits() != ref_a || b.grad_bits() != ref_b ? 1 : 0;
    }
    std::printf("one object, two threads and streams: %s 20 rounds, %d differ from one stream's\n",
                family_name(f).data(), wrong);
    CHECK(wrong == 0);
    cudaStreamDestroy(sa);
    cudaStreamDestroy(sb);
  }
}

// A trap ends the CUDA context of its process, so each family's expired wait runs in a child: this
// binary, the hidden case below, one family per child.
TEST_CASE("an expired ticket wait stops the kernel with a TicketTimeout naming it", "[gpu]") {
  // popen runs a shell: /proc/self/exe must be resolved here, in this process.
  std::string const self = std::filesystem::read_symlink("/proc/self/exe").string();
  for (KernelFamily f : device_families()) {
    std::string const cmd =
        "DASH_WATCHDOG_TEST_FAMILY=" + std::string(family_name(f)) + " '" + self + "' '[watchdog-child]' 2>&1";
    FILE* pipe = popen(cmd.c_str(), "r");
    REQUIRE(pipe != nullptr);
    std::string out;
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
    int const status = pclose(pipe);
    INFO(family_name(f) << " child:\n" << out);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK(out.find("watchdog child: TicketTimeout: ticket wait expired") != std::string::npos);
    std::printf("watchdog: %s: %s\n", family_name(f).data(), out.find("All tests passed") != std::string::npos ? "child passed" : "child FAILED");
  }
}

TEST_CASE("watchdog child: one rank corrupted past validation", "[.][watchdog-child]") {
  char const* name = std::getenv("DASH_WATCHDOG_TEST_FAMILY");
  REQUIRE(name != nullptr);
  std::optional<KernelFamily> const family = parse_family(name);
  REQUIRE(family.has_value());
  sim::Problem const p = make_problem(1, 2, 2, 512, 512, 128, full());
  Attention attn(p, DType::kBf16, scale_of(p));
  attn.set_schedule(simple_schedule(p, false, sim::LaunchModel::kPersistent), KernelChoice::kGeneric, *family);
  CHECK_THROWS_AS(attn.set_ticket_timeout(std::chrono::milliseconds(0)), UserError);
  attn.set_ticket_timeout(std::chrono::milliseconds(200));
  // The first step of the table now waits for a rank no contribution brings: the schedule cannot
  // finish, and every later contribution to its dQ tile waits too.
  int const corrupt = 1 << 20;
  int const was = AttentionTestAccess::set_dq_rank(attn, 0, corrupt);
  CHECK(was != corrupt);
  DeviceTensors dev(p, DType::kBf16);
  dev.upload(random_inputs(p, DType::kBf16, 77));
  attn.forward(dev.tensors(), nullptr);
  auto const start = std::chrono::steady_clock::now();
  attn.backward(dev.tensors(), Reduction::kDeterministic, nullptr);
  try {
    DASH_CUDA_CHECK(cudaDeviceSynchronize());
    FAIL("the backward finished");
  } catch (TicketTimeout const& e) {
    std::string const what = e.what();
    std::printf("watchdog child: TicketTimeout: %s\n", what.c_str());
    std::smatch m;
    REQUIRE(std::regex_search(what, m, std::regex(R"(CTA (\d+) waited (\d+\.\d+) s for dQ tile (\d+) to reach rank (\d+) \(it reads (\d+)\))")));
    CHECK(std::stod(m[2]) >= 0.2);
    CHECK(std::stoi(m[4]) != std::stoi(m[5]));  // it waited for a rank the ticket never reached
  }
  double const seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(seconds < 20.0);
}

// More than 32767 Q tiles along one sequence (docs/model.md, "Limits"): a 16-bit tile index or
// rank would wrap there. 32769 tiles of 64 query rows on 300 keys (3 KV tiles, the last one cut),
// both families, against the fp32 GPU reference. Hidden ([.][big]: about 170 s on the H200, most of
// it the naive reference's per-key threads); scripts/gpu.sh runs it in its tests stage.
TEST_CASE("more than 32767 Q tiles along one sequence match the fp32 GPU reference", "[gpu][.][big]") {
  Case const c{"d128 bf16 full 2097216x300", make_problem(1, 1, 1, 32769 * 64, 300, 128, full()), DType::kBf16};
  REQUIRE(c.problem.q_tiles(0) > 32767);
  AttentionInputs const in = random_inputs(c.problem, c.dtype, 32769);
  AttentionOutputs const exact = reference_gpu(c.problem, scale_of(c.problem), in, RefPrecision::kExact, c.dtype);
  AttentionOutputs const low = reference_gpu(c.problem, scale_of(c.problem), in, RefPrecision::kLow, c.dtype);
  for (KernelFamily f : device_families()) {
    run_and_check(f, c, sim::make_strategy("fa3", c.problem, sim::machine_preset("h200")), Reduction::kDeterministic,
                  in, exact, low, true);
  }
}

// Offsets past 2^31 elements (docs/model.md, "Limits"): 257 sequences of 4096 rows x 16 heads x
// 128, 2^23 elements each, so every tensor holds more than 2^31 elements and sequence 256 starts at
// element 2^31. Each sequence's O, dQ, dK and dV must equal, bit for bit, those of the same
// sequence run alone: fa3's order (docs/design.md) adds each dQ tile's partials in KV order in both
// problems. Sequences 0, 255 (ending at 2^31) and 256 (starting there) are compared; an offset
// computed in 32 bits would send 256 elsewhere.
TEST_CASE("tensors past 2^31 elements: each sequence as when run alone, bit for bit", "[gpu]") {
  sim::Problem const big = make_problem(257, 16, 16, 4096, 4096, 128, full());
  sim::Problem const one = make_problem(1, 16, 16, 4096, 4096, 128, full());
  std::int64_t const elements = big.total_q() * big.q_heads * big.head_dim;
  REQUIRE(elements > (std::int64_t{1} << 31));
  // Eight bf16 tensors, the fp32 dQ accumulator and the one-sequence problem's.
  auto const need = static_cast<std::size_t>(elements) * (8 * 2 + 4) + (std::size_t{1} << 30);
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  DASH_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (free_bytes < need) {
    WARN("skipped: needs " << need / (1u << 30) << " GiB of GPU memory, " << free_bytes / (1u << 30) << " free");
    return;
  }
  DeviceTensors dev(big, DType::kBf16);
  dev.fill_inputs_on_device(2031);
  DeviceTensors dev1(one, DType::kBf16);
  sim::Machine const h200 = sim::machine_preset("h200");
  for (KernelFamily f : device_families()) {
    {
      Attention attn(big, DType::kBf16, scale_of(big));
      attn.set_schedule(sim::make_strategy("fa3", big, h200), KernelChoice::kAuto, f);
      REQUIRE(attn.family() == f);
      dev.poison_forward(nullptr);
      attn.forward(dev.tensors(), nullptr);
      dev.poison_backward(nullptr);
      attn.backward(dev.tensors(), Reduction::kDeterministic, nullptr);
      DASH_CUDA_CHECK(cudaDeviceSynchronize());
    }
    Attention attn1(one, DType::kBf16, scale_of(one));
    attn1.set_schedule(sim::make_strategy("fa3", one, h200), KernelChoice::kAuto, f);
    for (int b : {0, 255, 256}) {
      dev1.copy_inputs_of_sequence(dev, b);
      dev1.poison_forward(nullptr);
      attn1.forward(dev1.tensors(), nullptr);
      dev1.poison_backward(nullptr);
      attn1.backward(dev1.tensors(), Reduction::kDeterministic, nullptr);
      DASH_CUDA_CHECK(cudaDeviceSynchronize());
      std::vector<std::uint16_t> const alone = dev1.output_bits_of_sequence(0);
      std::vector<std::uint16_t> const in_big = dev.output_bits_of_sequence(b);
      std::size_t differ = 0;
      for (std::size_t i = 0; i < alone.size(); ++i) differ += alone[i] != in_big[i] ? 1 : 0;
      // Poisoned outputs are NaN: a sequence the kernels never wrote cannot match its run alone.
      std::printf("big: %s sequence %d of 257 (%lld elements per tensor): %zu of %zu output values differ\n",
                  family_name(f).data(), b, static_cast<long long>(elements), differ, alone.size());
      INFO(family_name(f) << " sequence " << b);
      CHECK(differ == 0);
    }
  }
}

TEST_CASE("bad input is refused with a UserError", "[gpu]") {
  sim::Problem p = make_problem(1, 2, 2, 256, 256, 128, full());
  SECTION("head_dim other than 64 and 128") {
    p.head_dim = 96;
    CHECK_THROWS_AS(Attention(p, DType::kBf16, 0.1f), UserError);
  }
  SECTION("tiles other than the kernel's") {
    p.tile_n = 64;
    CHECK_THROWS_AS(Attention(p, DType::kBf16, 0.1f), UserError);
  }
  SECTION("head_dim 64 with the 64-row Q tiles of head_dim 128") {
    sim::Problem d64 = make_problem(1, 2, 2, 256, 256, 64, full());
    CHECK_NOTHROW(Attention(d64, DType::kBf16, 0.1f));
    d64.tile_m = 64;
    CHECK_THROWS_AS(Attention(d64, DType::kBf16, 0.1f), UserError);
  }
  SECTION("an invalid schedule (a step missing)") {
    Attention attn(p, DType::kBf16, 0.1f);
    sim::Schedule s = simple_schedule(p, false, sim::LaunchModel::kPersistent);
    s.ctas[0].items[0].q_order.pop_back();
    CHECK_THROWS_AS(attn.set_schedule(s), UserError);
  }
  SECTION("a persistent grid larger than the GPU can hold") {
    sim::Problem big = make_problem(8, 16, 16, 1024, 1024, 128, full());
    Attention attn(big, DType::kBf16, 0.1f);
    CHECK_THROWS_AS(attn.set_schedule(simple_schedule(big, false, sim::LaunchModel::kPersistent)), UserError);
  }
  SECTION("a family this GPU does not run") {
    Attention attn(p, DType::kBf16, 0.1f);
    std::vector<KernelFamily> const runs = device_families();
    for (KernelFamily f : kAllFamilies) {
      if (std::find(runs.begin(), runs.end(), f) != runs.end()) continue;
      CHECK_THROWS_AS(attn.set_schedule(simple_schedule(p, false, sim::LaunchModel::kPersistent),
                                        KernelChoice::kAuto, f),
                      UserError);
    }
  }
  SECTION("backward before a schedule") {
    Attention attn(p, DType::kBf16, 0.1f);
    DeviceTensors dev(p, DType::kBf16);
    CHECK_THROWS_AS(attn.backward(dev.tensors(), Reduction::kDeterministic, nullptr), UserError);
  }
}

TEST_CASE("registry: generic kernels for both head dims and dtypes, specializations by key", "[gpu]") {
  for (int d : {64, 128}) {
    for (DType t : {DType::kBf16, DType::kFp16}) {
      for (KernelFamily f : kAllFamilies) {
        KernelKey key{d, family_tile_m(f, d), family_tile_n(f), kMaskCausal, t, 12345, f};
        BwdKernel const k = find_bwd_kernel(key);
        CHECK(k.key.schedule_hash == 0);
        CHECK(k.key.head_dim == d);
        CHECK(k.key.family == f);
        CHECK(k.launch != nullptr);
      }
    }
  }
  KernelKey bad{96, 64, 128, -1, DType::kBf16, 0};
  CHECK_THROWS_AS(find_bwd_kernel(bad), UserError);
  sim::Problem const p = make_problem(1, 1, 1, 128, 128, 64, full());
  sim::Schedule const a = simple_schedule(p, false, sim::LaunchModel::kPersistent);
  sim::Schedule const b = simple_schedule(p, true, sim::LaunchModel::kPersistent);
  CHECK(schedule_hash(a) == schedule_hash(a));
  CHECK(schedule_hash(a) != schedule_hash(simple_schedule(p, false, sim::LaunchModel::kDynamic)));
  CHECK(schedule_hash(a) != 0);
  (void)b;
}

}  // namespace dash::rt::test
