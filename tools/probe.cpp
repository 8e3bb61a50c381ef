// dash probe: the ticket hand-off latency between every pair of SMs of the GPU (runtime/
// handoff_probe.h), summarized, and optionally written into a machine profile as the cost model's
// hand-off latency L (docs/model.md, "Machine profiles").
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dagsim/core/error.h"
#include "dagsim/core/schedule_io.h"
#include "dagsim/model/handoff.h"
#include "dagsim/model/profile.h"
#include "runtime/kernels/family_model.h"
#include "tools/commands.h"
#include "tools/options.h"
#if DASH_HAVE_CUDA
#include "runtime/handoff_probe.h"
#endif

namespace dash::cli {
namespace {

/// What a probe adds to a family's `source` in --out (everything from it on is the probe's).
constexpr char const* kProbeNote = "; latency from dash probe ";

struct ProbeOptions {
  int rounds = 32;
  std::string profile;  ///< the base of --out (default: the built-in one)
  std::string out;
  std::string gpu;     ///< the profile's gpu name (default: the base profile's)
  std::string matrix;  ///< a recorded matrix (--json of an earlier probe) instead of the GPU
  bool json = false;
};

sim::HandoffMatrix measure(int rounds) {
#if DASH_HAVE_CUDA
  return rt::probe_handoff(rounds);
#else
  (void)rounds;
  user_error(
      "probe needs a GPU and the CUDA runtime; this dash was built without CUDA (no nvcc at "
      "configure time)");
#endif
}

void run_probe(CLI::App const& sub, ProbeOptions const& o) {
  if (o.rounds < 1 || o.rounds > sim::kMaxHandoffRounds) {
    user_error("--rounds must be in 1..{}, got {}", sim::kMaxHandoffRounds, o.rounds);
  }
  if (sub.count("--out") > 0) check_writable(o.out, "--out");
  sim::MachineProfile profile = sub.count("--profile") > 0
                                    ? sim::read_profile_file(o.profile, rt::kFamilyNames)
                                    : sim::builtin_profile();
  sim::HandoffMatrix const m =
      sub.count("--matrix") > 0 ? sim::read_handoff_file(o.matrix) : measure(o.rounds);
  sim::HandoffSummary const s = sim::summarize(m);

  if (sub.count("--out") > 0) {
    std::string const source = fmt::format(
        "{} on {} ({} SMs, {:.0f} MHz): median one-way ticket hand-off of {} SM pairs, {} round "
        "trips each (two groups of {} and {} SMs: within {} / {}, across {} cycles)",
        utc_now("%Y-%m-%d"), m.device, m.sms, m.clock_mhz, s.pairs, m.rounds, m.sms - s.group1_sms,
        s.group1_sms, s.within0, s.within1, s.across);
    for (auto& f : profile.families) {
      f.rates.latency = s.median;
      // An earlier probe's note is replaced, not added to.
      std::size_t const earlier = f.source.find(kProbeNote);
      if (earlier != std::string::npos) f.source.erase(earlier);
      f.source += kProbeNote + source;
    }
    if (sub.count("--gpu") > 0) profile.gpu = o.gpu;
    profile.sms = m.sms;
    profile.clock_mhz = static_cast<int>(std::lround(m.clock_mhz));
    // Only a profile the other subcommands take is written (a latency or clock out of the
    // profile's ranges, a name too long: one error instead).
    std::string const text = sim::to_json(profile);
    (void)sim::profile_from_json(text, rt::kFamilyNames);
    sim::write_file_atomic(o.out, text);
  }

  if (o.json) {
    nlohmann::json j{{"device", m.device},   {"sms", m.sms},
                     {"rounds", m.rounds},   {"clock_mhz", m.clock_mhz},
                     {"smid", m.smid},       {"one_way_cycles", m.one_way},
                     {"pairs", s.pairs},     {"min", s.min},
                     {"median", s.median},   {"max", s.max},
                     {"group", s.group},     {"group1_sms", s.group1_sms},
                     {"within0", s.within0}, {"within1", s.within1},
                     {"across", s.across}};
    std::puts(j.dump(1).c_str());
    return;
  }
  std::printf("device        %s, %d SMs, SM clock %.0f MHz during the probe\n", m.device.c_str(),
              m.sms, m.clock_mhz);
  std::printf("pairs         %lld measured, %d round trips each (median kept)\n",
              static_cast<long long>(s.pairs), m.rounds);
  std::printf("one-way       min %lld, median %lld, max %lld cycles\n",
              static_cast<long long>(s.min), static_cast<long long>(s.median),
              static_cast<long long>(s.max));
  if (s.group1_sms > 0) {
    std::printf("groups        %d and %d SMs, hand-offs faster within a group than across\n",
                m.sms - s.group1_sms, s.group1_sms);
    std::printf("by class      within %lld / %lld, across %lld cycles (medians)\n",
                static_cast<long long>(s.within0), static_cast<long long>(s.within1),
                static_cast<long long>(s.across));
    std::string ids;
    for (std::size_t a = 0; a < s.group.size(); ++a) {
      if (s.group[a] == 1) ids += (ids.empty() ? "" : ",") + std::to_string(m.smid[a]);
    }
    std::printf("group 1       SM ids %s\n", ids.c_str());
  } else {
    std::puts("groups        one (no split makes hand-offs across 10% slower than within)");
  }
  if (sub.count("--out") > 0)
    std::printf("profile       %s (latency = %lld)\n", o.out.c_str(),
                static_cast<long long>(s.median));
}

}  // namespace

void setup_probe(CLI::App& app) {
  auto opts = std::make_shared<ProbeOptions>();
  auto* sub = app.add_subcommand("probe",
                                 "measure the ticket hand-off latency between every pair of SMs "
                                 "(GPU); write it into a machine profile");
  sub->add_option("--rounds", opts->rounds, "round trips per SM pair, the median kept (1..256)")
      ->capture_default_str();
  sub->add_option("--profile", opts->profile,
                  "the profile --out starts from (default: the built-in one)");
  sub->add_option(
      "--out", opts->out,
      "write the profile with every family's latency set to the measured median (atomically)");
  sub->add_option("--gpu", opts->gpu, "the gpu name --out records (default: the base profile's)");
  sub->add_option("--matrix", opts->matrix,
                  "summarize a recorded matrix (an earlier probe's --json) instead of measuring "
                  "(no GPU needed)");
  sub->add_flag("--json", opts->json, "print JSON (the whole matrix) instead of a table");
  sub->callback([sub, opts] { run_probe(*sub, *opts); });
}

}  // namespace dash::cli
