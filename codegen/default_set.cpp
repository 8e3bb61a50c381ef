#include "codegen/default_set.h"

#include <filesystem>
#include <optional>

#include "dagsim/core/error.h"
#include "dagsim/core/strategies.h"
#include "dagsim/model/named_run.h"
#include "dagsim/model/simulate.h"
#include "dagsim/model/validate.h"
#include "runtime/kernels/family_model.h"

namespace dash::codegen {

sim::Schedule best_named_schedule(sim::Problem const& problem, sim::Machine const& machine,
                                  sim::CostModel const& cost, sim::LaunchModel launch) {
  return sim::fastest_named(problem, machine, cost, launch).schedule;
}

std::vector<DefaultShape> default_shapes(rt::KernelFamily family) {
  std::vector<DefaultShape> shapes;
  for (int const head_dim : {64, 128}) {
    for (auto const kind : {sim::MaskKind::kFull, sim::MaskKind::kCausal}) {
      sim::Problem problem;
      problem.batch = 1;
      problem.head_dim = head_dim;
      problem.q_heads = problem.kv_heads = 2048 / head_dim;
      problem.seqlen_q = problem.seqlen_k = 8192;
      problem.mask.kind = kind;
      problem.tile_m = rt::default_tile_m(family, head_dim, problem.mask);
      problem.tile_n = rt::family_tile_n(family);
      shapes.push_back({problem, sim::machine_preset("h200")});
    }
  }
  return shapes;
}

std::string default_template_path() { return DASH_SOURCE_DIR "/runtime/schedule/table_policy.cuh"; }

std::string template_display_name(std::string const& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path const full = fs::weakly_canonical(fs::absolute(path), ec);
  fs::path const root = fs::weakly_canonical(fs::path(DASH_SOURCE_DIR), ec);
  fs::path const relative = full.lexically_relative(root);
  if (!relative.empty() && *relative.begin() != "..") return relative.generic_string();
  return fs::path(path).filename().string();
}

}  // namespace dash::codegen
