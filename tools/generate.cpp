// dash generate: lower a validated schedule to a KernelSpec and specialize the schedule policy
// template with Clang libTooling for a kernel family's kernel; one .cu per specialization plus a
// manifest in --out DIR.
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "dagsim/core/error.h"
#include "tools/commands.h"
#include "tools/options.h"

#if DASH_HAVE_CODEGEN
#include "codegen/default_set.h"
#include "codegen/emit.h"
#include "codegen/kernel_target.h"
#include "codegen/lower.h"
#include "codegen/specialize.h"
#endif

namespace dash::cli {
namespace {

struct GenerateOptions {
  CommonOptions common;
  std::string out;
  std::string template_path;
  std::string dtype = "bf16";
  bool default_set = false;
  bool wave_ranks = true;
};

#if DASH_HAVE_CODEGEN
codegen::TemplateSource read_template(std::string const& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) user_error("--template {}: cannot read the file", path);
  std::stringstream text;
  text << in.rdbuf();
  return {codegen::template_display_name(path), path, text.str()};
}

/// --kernel: auto is the default family (rt::kDefaultFamily, the one `--kernel auto` runs on the
/// GPUs it supports); the default set takes every family instead.
rt::KernelFamily generate_family(GenerateOptions const& o) {
  return model_family(o.common);
}

codegen::LowerOptions lower_options(GenerateOptions const& o, rt::KernelFamily family) {
  codegen::LowerOptions options;
  options.wave_ranks = o.wave_ranks;
  options.family = family;
  return options;
}

std::vector<codegen::KernelSpec> default_set_specs(GenerateOptions const& o) {
  // The set is fixed so that generated/ is reproducible: shape flags would silently change it.
  for (auto const& flag : o.common.given) {
    if (flag != "template" && flag != "out" && flag != "default-set" && flag != "dtype" &&
        flag != "wave-ranks" && flag != "kernel") {
      user_error("--default-set takes no --{} (the set is fixed: see docs/codegen.md)", flag);
    }
  }
  // Every family unless --kernel names one: each family's generic kernel is the baseline its
  // specializations must equal.
  std::vector<rt::KernelFamily> families(std::begin(rt::kAllFamilies), std::end(rt::kAllFamilies));
  if (auto const named = kernel_family(o.common)) families = {*named};
  std::vector<codegen::KernelSpec> specs;
  for (rt::KernelFamily const family : families) {
    for (auto const& shape : codegen::default_shapes(family)) {
      sim::Schedule const schedule = codegen::best_named_schedule(
          shape.problem, shape.machine, sim::default_model(shape.problem),
          sim::LaunchModel::kPersistent);
      specs.push_back(codegen::lower(shape.problem, shape.machine, schedule, o.dtype,
                                     lower_options(o, family)));
    }
  }
  return specs;
}

std::vector<codegen::KernelSpec> one_spec(GenerateOptions const& o) {
  Resolved const resolved = resolve(o.common);
  sim::Schedule schedule;
  if (!resolved.document && o.common.strategy == "auto") {
    schedule = codegen::best_named_schedule(resolved.problem, resolved.machine, resolved.cost,
                                            resolved.launch);
  } else {
    schedule = chosen_schedule(o.common, resolved);
  }
  return {codegen::lower(resolved.problem, resolved.machine, schedule, o.dtype,
                         lower_options(o, generate_family(o)))};
}

void run_generate(GenerateOptions const& o) {
  if (o.out.empty()) user_error("--out DIR is required");
  // A family without a kernel header is refused before any schedule is built.
  codegen::kernel_target(generate_family(o));
  codegen::TemplateSource const source = read_template(o.template_path);
  auto const specs = o.default_set ? default_set_specs(o) : one_spec(o);
  // Everything is generated in memory first: an error leaves --out untouched.
  auto const files = codegen::generate_files(specs, source);
  codegen::write_generated(o.out, files);
  for (auto const& spec : specs) {
    std::printf("%s.cu  strategy %s, form %s, spec %s, schedule %s\n",
                codegen::spec_name(spec).c_str(), spec.strategy.c_str(), spec.form.name.c_str(),
                codegen::spec_hash(spec).c_str(), spec.schedule_hash.c_str());
  }
  std::printf("wrote %zu files to %s\n", files.size(), o.out.c_str());
}
#endif

}  // namespace

void setup_generate(CLI::App& app) {
  auto opts = std::make_shared<GenerateOptions>();
  auto* sub = app.add_subcommand(
      "generate", "emit CUDA kernels specialized for a schedule (Clang libTooling on the template)");
  add_common_flags(*sub, opts->common,
                   FlagSet{.strategy = true, .schedule = true, .timeline = false, .kernel = true});
  // --strategy also takes "auto": the named strategy with the smallest simulated makespan.
  if (auto* strategy = sub->get_option_no_throw("--strategy")) {
    strategy->description("named schedule or auto (smallest simulated makespan)");
  }
  sub->add_option("--out", opts->out, "output directory (.cu files, .spec.json, manifest.json)");
#if DASH_HAVE_CODEGEN
  opts->template_path = codegen::default_template_path();
#endif
  sub->add_option("--template", opts->template_path, "schedule policy template")
      ->capture_default_str();
  sub->add_option("--dtype", opts->dtype, "bf16 | fp16")->capture_default_str();
  sub->add_flag("--default-set", opts->default_set,
                "the H200 set checked into generated/ (d64, d128 x full, causal)");
  sub->add_flag("--wave-ranks,!--no-wave-ranks", opts->wave_ranks,
                "closed-form lock-step ranks where they hold (shift, full mask; the default), or "
                "rank tables");
  sub->callback([sub, opts] {
    record_given(*sub, opts->common);
#if DASH_HAVE_CODEGEN
    run_generate(*opts);
#else
    throw UserError("generate needs the code generator: build with clang-22 and libclang-22-dev");
#endif
  });
}

}  // namespace dash::cli
