#include "codegen/specialize.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "codegen/forms_text.h"
#include "codegen/kernel_target.h"
#include "codegen/protocol_text.h"
#include "codegen/verify.h"
#include "dagsim/core/error.h"
#include "runtime/mask_code.h"

namespace dash::codegen {

namespace {

// Format 2: the file holds the specialized policy and includes the kernel (format 1 copied it).
constexpr char const* kGenerator = "dash generate (dash::codegen, format 2)";

struct TableType {
  char const* name;
  std::size_t bytes;
};

/// The narrowest integer type that holds every value.
TableType narrowest_type(std::vector<int> const& values) {
  auto const [lo, hi] = std::minmax_element(values.begin(), values.end());
  if (values.empty() || (*lo >= 0 && *hi <= 255)) return {"unsigned char", 1};
  if (*lo >= -128 && *hi <= 127) return {"signed char", 1};
  if (*lo >= 0 && *hi <= 65535) return {"unsigned short", 2};
  if (*lo >= -32768 && *hi <= 32767) return {"short", 2};
  return {"int", 4};
}

/// One table of the schedule form, as the kernel embeds it.
struct Table {
  std::string name;
  std::vector<int> const* values;
  TableType type;
};

/// A table in the narrowest integer type that holds it.
Table narrow_table(std::string name, std::vector<int> const& values) {
  return {std::move(name), &values, narrowest_type(values)};
}

/// A table of int: the lock-step form's DashCfLockstep points at the per-tile ranges as int.
Table int_table(std::string name, std::vector<int> const& values) {
  return {std::move(name), &values, {"int", sizeof(int)}};
}

/// `static STORAGE const TYPE name[N] = {...};`, 16 numbers a line.
std::string table_array(Table const& t, char const* storage) {
  std::vector<int> const& values = *t.values;
  std::string out = fmt::format("static {} const {} {}[{}] = {{", storage, t.type.name, t.name,
                                values.empty() ? 1 : values.size());
  if (values.empty()) out += "0";  // never read; a zero-length array is not C++
  for (std::size_t n = 0; n < values.size(); ++n) {
    if (n % 16 == 0) out += "\n   ";
    out += fmt::format(" {},", values[n]);
  }
  out += "\n};\n";
  return out;
}

/// `name[index]`, or the literal value when every entry is the same (a full mask: every KV tile
/// sees the same Q tiles), so that nvcc folds it: a modulo by a constant tile count, for one,
/// instead of a division by a loaded value.
std::string per_tile(std::string const& name, std::vector<int> const& values,
                     std::string const& index) {
  if (uniform(values)) return fmt::format("{}", values[0]);
  return fmt::format("{}[{}]", name, index);
}

void expect_params(HookSite const& hook, std::size_t count) {
  if (hook.params.size() != count) {
    user_error("template hook '{}' has {} parameters; the schedule protocol has {}", hook.name,
               hook.params.size(), count);
  }
}

std::string next_work_item_body(KernelSpec const& spec, HookSite const& hook) {
  expect_params(hook, 3);
  std::string const& cta = hook.params[1];
  std::string const& k = hook.params[2];
  int const items = spec.batch * spec.q_heads * spec.kv_tiles;
  std::string call;
  if (spec.form.work.kind == WorkKind::kStrided) {
    call = fmt::format("dash_cf_work_strided({}, {}, {}, {}, {}, {}, {}, {}, &b, &h, &j)", cta, k,
                       spec.grid, items, spec.kv_tiles, spec.q_heads, spec.form.work.head_fastest,
                       spec.form.work.reverse);
  } else if (spec.form.work.kind == WorkKind::kPaired) {
    call = fmt::format("dash_cf_work_paired({}, {}, {}, {}, {}, {}, &b, &h, &j)", cta, k, spec.grid,
                       spec.batch, spec.kv_tiles, spec.q_heads);
  } else {
    call = fmt::format(
        "dash_cf_work_table({}, {}, {}, dash_gen_work_begin, dash_gen_work_items, {}, {}, &b, &h, "
        "&j)",
        cta, k, spec.grid, spec.kv_tiles, spec.q_heads);
  }
  return fmt::format(
      "{{\n"
      "  {} item;\n"
      "  int b = 0, h = 0, j = 0;\n"
      "  if ({} == 0) return item;  // batch = -1: none\n"
      "  item.batch = b;\n"
      "  item.head = h;\n"
      "  item.kv_tile = j;\n"
      "  item.num_steps = {} - {} + 1;\n"
      "  // No generic tables here: both indices are the item's id (batch, head, kv tile).\n"
      "  item.step_base = (b * {} + h) * {} + j;\n"
      "  item.index = item.step_base;\n"
      "  return item;\n"
      "}}",
      hook.return_type, call, per_tile("dash_gen_q_hi", spec.form.q_hi, "j"),
      per_tile("dash_gen_q_lo", spec.form.q_lo, "j"), spec.q_heads, spec.kv_tiles);
}

std::string q_tile_at_body(KernelSpec const& spec, HookSite const& hook) {
  expect_params(hook, 3);
  std::string const& item = hook.params[1];
  std::string const& t = hook.params[2];
  QOrderForm const& q = spec.form.q_order;
  std::string const lo = per_tile("dash_gen_q_lo", spec.form.q_lo, item + ".kv_tile");
  std::string const hi = per_tile("dash_gen_q_hi", spec.form.q_hi, item + ".kv_tile");
  std::string expr;
  if (q.kind == QOrderKind::kAscending) {
    expr = fmt::format("dash_cf_q_ascending({}, {})", lo, t);
  } else if (q.kind == QOrderKind::kDescending) {
    expr = fmt::format("dash_cf_q_descending({}, {})", hi, t);
  } else if (q.kind == QOrderKind::kRotate) {
    expr = fmt::format("dash_cf_q_rotate({}, {}, {}.kv_tile, {}, {}, {})", lo, hi, item, q.mult,
                       q.offset, t);
  } else {
    expr = fmt::format(
        "dash_cf_q_table(dash_gen_q_item_row, dash_gen_q_row_begin, dash_gen_q_rows, "
        "{0}.step_base, {1})",
        item, t);
  }
  return fmt::format("{{\n  (void){};\n  return {};\n}}", hook.params[0], expr);
}

std::string dq_rank_body(KernelSpec const& spec, HookSite const& hook) {
  expect_params(hook, 4);
  std::string const& item = hook.params[1];
  std::string const& q_tile = hook.params[3];
  RankForm const& r = spec.form.dq_rank;
  std::string expr;
  if (r.kind == RankKind::kAscending) {
    expr = fmt::format("dash_cf_rank_ascending({}, {}.kv_tile)",
                       per_tile("dash_gen_kv_lo", spec.form.kv_lo, q_tile), item);
  } else if (r.kind == RankKind::kDescending) {
    expr = fmt::format("dash_cf_rank_descending({}, {}.kv_tile)",
                       per_tile("dash_gen_kv_hi", spec.form.kv_hi, q_tile), item);
  } else if (r.kind == RankKind::kRotate) {
    expr = fmt::format("dash_cf_rank_rotate({1}, {0}.kv_tile, {2}, {3}, {4}, {5})", item, q_tile,
                       r.mult, r.offset, r.modulus, r.div);
  } else if (r.kind == RankKind::kWaves) {
    // The arguments come from the list the host check used (verify.h, waves_fields).
    expr = fmt::format("dash_cf_rank_waves({1}, {0}.batch, {0}.head, {2}, {0}.kv_tile)", item,
                       fmt::join(waves_fields(spec, spec.form), ", "), q_tile);
  } else if (r.kind == RankKind::kLockstep) {
    // The arguments come from the list the host check used (verify.h, lockstep_fields).
    auto const f = lockstep_fields(spec, spec.form);
    return fmt::format(
        "{{\n  (void){0};\n  (void){1};\n"
        "  DashCfLockstep const a{{{2}, dash_gen_q_lo, dash_gen_q_hi}};\n"
        "  return dash_cf_rank_lockstep(a, dash_gen_kv_lo[{4}], dash_gen_kv_hi[{4}], {3}.batch, "
        "{3}.head, {4}, {3}.kv_tile);\n}}",
        hook.params[0], hook.params[2], fmt::join(f, ", "), item, q_tile);
  } else {
    expr = fmt::format(
        "dash_cf_rank_table(dash_gen_dq_row, dash_gen_dq_rows, {2}, ({0}.batch * {3} + {0}.head) * "
        "{4} + {1}, {0}.kv_tile)",
        item, q_tile, spec.kv_tiles, spec.q_heads, spec.q_tiles);
  }
  return fmt::format("{{\n  (void){};\n  (void){};\n  return {};\n}}", hook.params[0],
                     hook.params[2], expr);
}

std::string dkv_rank_body(KernelSpec const& spec, HookSite const& hook) {
  expect_params(hook, 2);
  std::string const& item = hook.params[1];
  RankForm const& r = spec.form.dkv_rank;
  int const group = spec.q_heads / spec.kv_heads;
  if (r.kind == RankKind::kNone) {
    return fmt::format(
        "{{\n  (void){};\n  (void){};\n  return 0;  // q_heads == kv_heads: never called\n}}",
        hook.params[0], item);
  }
  std::string expr;
  if (r.kind == RankKind::kAscending) {
    expr = fmt::format("dash_cf_dkv_ascending({}.head, {})", item, group);
  } else if (r.kind == RankKind::kDescending) {
    expr = fmt::format("dash_cf_dkv_descending({}.head, {})", item, group);
  } else {
    expr = fmt::format(
        "dash_cf_dkv_table(dash_gen_dkv_row, dash_gen_dkv_rows, {1}, ({0}.batch * {2} + {0}.head / "
        "{1}) * {3} + {0}.kv_tile, {0}.head)",
        item, group, spec.kv_heads, spec.kv_tiles);
  }
  return fmt::format("{{\n  (void){};\n  return {};\n}}", hook.params[0], expr);
}

/// A hook is a member of the policy struct: its body's lines after the brace indented one level.
std::string member_body(std::string const& body) {
  std::string out;
  for (char const ch : body) {
    out += ch;
    if (ch == '\n') out += "  ";
  }
  return out;
}

std::string describe_form(ScheduleForm const& form) {
  auto const work = form.work.kind == WorkKind::kStrided
                        ? fmt::format("strided (head_fastest={}, reverse={})",
                                      form.work.head_fastest, form.work.reverse)
                        : std::string(to_string(form.work.kind));
  auto const q =
      form.q_order.kind == QOrderKind::kRotate
          ? fmt::format("rotate (mult={}, offset={})", form.q_order.mult, form.q_order.offset)
          : std::string(to_string(form.q_order.kind));
  RankForm const& r = form.dq_rank;
  std::string dq(to_string(r.kind));
  if (r.kind == RankKind::kRotate) {
    dq = fmt::format("rotate (mult={}, offset={}, modulus={}, div={})", r.mult, r.offset, r.modulus,
                     r.div);
  } else if (r.kind == RankKind::kLockstep) {
    dq = fmt::format("lockstep (unit_steps={})", r.unit_steps);
  } else if (r.kind == RankKind::kWaves) {
    dq = fmt::format("waves (n={}, mult={}, offset={})", r.modulus, r.mult, r.offset);
  }
  return fmt::format("work {}; Q order {}; dQ rank {}; dK/dV rank {}", work, q, dq,
                     to_string(form.dkv_rank.kind));
}

}  // namespace

std::string schedule_prelude(KernelSpec const& spec) {
  ScheduleForm const& form = spec.form;
  std::string const forms_version = hex64(fnv1a64(kFormsText)).substr(0, 8);
  std::string out = fmt::format(
      "// ---- Schedule form '{}': {}.\n"
      "// The index arithmetic below (codegen/forms.inc) was evaluated on the host for every CTA,\n"
      "// item, step and rank and reproduces the schedule exactly.\n"
      // External linkage, inline: forms a kernel does not use raise no nvcc warning (#177 would
      // for static or anonymous-namespace functions). The namespace carries the hash of the forms'
      // text, so files from different versions of forms.inc never share a definition.
      "namespace dash_forms_{} {{\n"
      "#define DASH_CF __device__ __forceinline__\n",
      form.name, describe_form(form), forms_version);
  out += kFormsText;
  out += fmt::format(
      "#undef DASH_CF\n}}  // namespace dash_forms_{0}\nusing namespace dash_forms_{0};\n\n",
      forms_version);
  // A per-tile table is emitted only where a hook reads it: uniform ones are literals (per_tile),
  // except for the lock-step form, which takes the Q bounds by pointer.
  std::vector<Table> tables;
  bool const lockstep = form.dq_rank.kind == RankKind::kLockstep;
  if (lockstep || !uniform(form.q_lo)) tables.push_back(int_table("dash_gen_q_lo", form.q_lo));
  if (lockstep || !uniform(form.q_hi)) tables.push_back(int_table("dash_gen_q_hi", form.q_hi));
  if (lockstep || (form.dq_rank.kind == RankKind::kAscending && !uniform(form.kv_lo))) {
    tables.push_back(int_table("dash_gen_kv_lo", form.kv_lo));
  }
  if (lockstep || (form.dq_rank.kind == RankKind::kDescending && !uniform(form.kv_hi))) {
    tables.push_back(int_table("dash_gen_kv_hi", form.kv_hi));
  }
  if (form.work.kind == WorkKind::kTable) {
    tables.push_back(narrow_table("dash_gen_work_begin", form.work.begin));
    tables.push_back(narrow_table("dash_gen_work_items", form.work.items));
  }
  if (form.q_order.kind == QOrderKind::kTable) {
    tables.push_back(narrow_table("dash_gen_q_item_row", form.q_order.item_row));
    tables.push_back(narrow_table("dash_gen_q_row_begin", form.q_order.row_begin));
    tables.push_back(narrow_table("dash_gen_q_rows", form.q_order.rows));
  }
  if (form.dq_rank.kind == RankKind::kTable) {
    tables.push_back(narrow_table("dash_gen_dq_row", form.dq_rank.tile_row));
    tables.push_back(narrow_table("dash_gen_dq_rows", form.dq_rank.rows));
  }
  if (form.dkv_rank.kind == RankKind::kTable) {
    tables.push_back(narrow_table("dash_gen_dkv_row", form.dkv_rank.tile_row));
    tables.push_back(narrow_table("dash_gen_dkv_rows", form.dkv_rank.rows));
  }
  std::size_t bytes = 0;
  for (auto const& t : tables) bytes += t.values->size() * t.type.bytes;
  bool const constant = bytes <= kConstantTableBytes;
  if (!tables.empty()) {
    out +=
        fmt::format("// Tables: {} bytes in {} memory.\n", bytes, constant ? "constant" : "global");
  }
  char const* storage = constant ? "__constant__" : "__device__";
  for (auto const& t : tables) out += table_array(t, storage);
  out += "// ---- End of the schedule form; the specialized policy follows.\n\n";
  return out;
}

std::vector<RewriteRule> hook_rules(KernelSpec const& spec, std::vector<HookSite> const& hooks) {
  std::vector<RewriteRule> rules;
  for (auto const& hook : hooks) {
    std::string body;
    if (hook.name == "next_work_item") {
      body = next_work_item_body(spec, hook);
    } else if (hook.name == "q_tile_at") {
      body = q_tile_at_body(spec, hook);
    } else if (hook.name == "dq_rank") {
      body = dq_rank_body(spec, hook);
    } else if (hook.name == "dkv_rank") {
      body = dkv_rank_body(spec, hook);
    } else {
      user_error("template hook '{}' is not part of the schedule protocol", hook.name);
    }
    rules.push_back(replace_hook_body(hook.name, member_body(body)));
  }
  // A protocol hook the template does not mark would keep its generic, table-reading body.
  for (char const* name : {"next_work_item", "q_tile_at", "dq_rank", "dkv_rank"}) {
    bool const found = std::any_of(hooks.begin(), hooks.end(),
                                   [&](HookSite const& hook) { return hook.name == name; });
    if (!found) user_error("the template has no hook '{}' (docs/schedule-protocol.md)", name);
  }
  return rules;
}

std::vector<RewriteRule> constant_rules(KernelSpec const& spec) {
  int const dtype = static_cast<int>(spec.dtype);
  int const mask = rt::mask_code(spec.mask);
  return {set_constant("kHeadDim", std::to_string(spec.head_dim)),
          set_constant("kDType", std::to_string(dtype)),
          set_constant("kMaskKind", std::to_string(mask)),
          set_constant("kTileM", std::to_string(spec.tile_m)),
          set_constant("kTileN", std::to_string(spec.tile_n)),
          set_constant("kScheduleHash", "0x" + spec.schedule_hash + "ULL")};
}

std::string policy_name(KernelSpec const& spec) { return "SchedulePolicy_" + spec.schedule_hash; }

std::string banner(KernelSpec const& spec, TemplateSource const& source) {
  KernelTarget const target = kernel_target(spec.family);
  // Hashes of what the file is made of (the policy template and the protocol); the kernel it
  // includes is named, not hashed, so that editing the kernel leaves generated/ as it is.
  return fmt::format(
      "// Generated by {}. DO NOT EDIT: regenerate (scripts/regenerate.sh).\n"
      "// spec hash:     {}\n"
      "// schedule hash: {}\n"
      "// template:      {} (fnv1a64 {})\n"
      "// protocol:      {} (fnv1a64 {})\n"
      "// kernel:        {} ({}), d{} {} {}, b{} h{}/{} s{}x{}, tiles {}x{}\n"
      "// schedule:      {} on {} ({} SMs), {} launch, grid {}, form '{}'\n\n",
      kGenerator, spec_hash(spec), spec.schedule_hash, source.name, hex64(fnv1a64(source.text)),
      kProtocolPath, protocol_hash(), rt::family_name(spec.family), target.header, spec.head_dim,
      sim::to_string(spec.mask), rt::to_string(spec.dtype), spec.batch, spec.q_heads, spec.kv_heads,
      spec.seqlen_q, spec.seqlen_k, spec.tile_m, spec.tile_n, spec.strategy, spec.gpu, spec.sms,
      sim::to_string(spec.launch), spec.grid, spec.form.name);
}

std::string protocol_hash() { return hex64(fnv1a64(kProtocolText)); }

std::string generate_source(KernelSpec const& spec, TemplateSource const& source) {
  KernelTarget const target = kernel_target(spec.family);
  TemplateScan const scan =
      scan_template(source.text, source.path, template_parse_args(source.path));
  std::vector<RewriteRule> rules = hook_rules(spec, scan.hooks);
  for (auto& rule : constant_rules(spec)) rules.push_back(std::move(rule));
  std::string const name = policy_name(spec);
  std::string const policy = rewrite_policy(source.text, scan, rules, name);
  // The policy's own namespace is dash::rt (where the protocol's types are); an anonymous one
  // inside keeps each file's policy, and so its kernel instantiation, private to the file.
  return fmt::format(
      "{}#include \"{}\"\n\n{}"
      "namespace dash::rt {{\nnamespace {{\n\n{};\nstatic_assert(BwdSchedule<{}>);\n\n"
      "}}  // namespace\n}}  // namespace dash::rt\n\n"
      "#include \"{}\"\n\n{}",
      banner(spec, source), kProtocolPath, schedule_prelude(spec), policy, name, target.header,
      registration_line(target, name));
}

}  // namespace dash::codegen
