#include "codegen/lower.h"

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <vector>

#include "codegen/kernel_target.h"
#include "codegen/specialize.h"
#include "codegen/verify.h"
#include "dagsim/core/error.h"
#include "dagsim/core/rank_order.h"
#include "dagsim/model/validate.h"
#include "runtime/kernels/family_model.h"

namespace dash::codegen {

namespace {

// Tables are embedded as source text: beyond this a generated file stops being reviewable or fast
// to compile, and int offsets could overflow.
constexpr std::size_t kMaxTableEntries = std::size_t{1} << 22;

QOrderForm q_form(QOrderKind kind) {
  QOrderForm q;
  q.kind = kind;
  return q;
}

RankForm rank_form(RankKind kind) {
  RankForm r;
  r.kind = kind;
  return r;
}

int mod(int a, int m) { return ((a % m) + m) % m; }

/// Rows deduplicated in order of first appearance (deterministic).
struct RowPool {
  std::map<std::vector<int>, int> index;
  std::vector<std::vector<int>> rows;
  int add(std::vector<int> const& row) {
    auto const [it, inserted] = index.emplace(row, static_cast<int>(rows.size()));
    if (inserted) rows.push_back(row);
    return it->second;
  }
};

KernelSpec spec_header(sim::Problem const& problem, sim::Machine const& machine,
                       sim::Schedule const& schedule, std::string const& dtype) {
  KernelSpec spec;
  spec.gpu = machine.name;
  spec.sms = machine.sms;
  spec.batch = problem.batch;
  spec.q_heads = problem.q_heads;
  spec.kv_heads = problem.kv_heads;
  spec.seqlen_q = problem.seqlen_q;
  spec.seqlen_k = problem.seqlen_k;
  spec.head_dim = problem.head_dim;
  spec.tile_m = problem.tile_m;
  spec.tile_n = problem.tile_n;
  spec.q_tiles = problem.q_tiles(0);
  spec.kv_tiles = problem.kv_tiles(0);
  spec.mask = problem.mask.kind;
  if (problem.mask.kind == sim::MaskKind::kWindow) {
    spec.window_left = problem.mask.left;
    spec.window_right = problem.mask.right;
  }
  spec.dtype = *rt::parse_dtype(dtype);  // checked by lower()
  spec.launch = schedule.launch;
  spec.grid = static_cast<int>(schedule.ctas.size());
  spec.strategy = schedule.strategy;
  spec.schedule_hash = hex64(sim::schedule_hash(schedule));
  return spec;
}

/// Visible ranges; returns false when some KV tile's Q tiles (or a Q tile's KV tiles) are not
/// contiguous, which no closed form here can follow.
bool fill_ranges(sim::Problem const& problem, ScheduleForm& form) {
  int const m = problem.q_tiles(0);
  int const n = problem.kv_tiles(0);
  form.q_lo.assign(n, 0);
  form.q_hi.assign(n, -1);
  form.kv_lo.assign(m, 0);
  form.kv_hi.assign(m, -1);
  std::vector<int> q_count(n, 0), kv_count(m, 0);
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      if (!problem.is_visible(0, i, j)) continue;
      if (q_count[j]++ == 0) form.q_lo[j] = i;
      form.q_hi[j] = i;
      if (kv_count[i]++ == 0) form.kv_lo[i] = j;
      form.kv_hi[i] = j;
    }
  }
  bool contiguous = true;
  for (int j = 0; j < n; ++j) contiguous = contiguous && q_count[j] == form.q_hi[j] - form.q_lo[j] + 1;
  for (int i = 0; i < m; ++i) contiguous = contiguous && kv_count[i] == form.kv_hi[i] - form.kv_lo[i] + 1;
  return contiguous;
}

WorkForm work_table(KernelSpec const& spec, sim::Schedule const& schedule) {
  WorkForm work;
  work.kind = WorkKind::kTable;
  work.begin.push_back(0);
  for (auto const& cta : schedule.ctas) {
    for (auto const& item : cta.items) {
      work.items.push_back((item.batch * spec.q_heads + item.head) * spec.kv_tiles + item.kv_tile);
    }
    work.begin.push_back(static_cast<int>(work.items.size()));
  }
  return work;
}

QOrderForm q_table(KernelSpec const& spec, sim::Schedule const& schedule) {
  QOrderForm q;
  q.kind = QOrderKind::kTable;
  int const items = spec.batch * spec.q_heads * spec.kv_tiles;
  std::vector<std::vector<int> const*> walk(items, nullptr);
  for (auto const& cta : schedule.ctas) {
    for (auto const& item : cta.items) {
      walk[(item.batch * spec.q_heads + item.head) * spec.kv_tiles + item.kv_tile] = &item.q_order;
    }
  }
  RowPool pool;
  static std::vector<int> const kEmpty;
  q.item_row.reserve(items);
  for (auto const* row : walk) q.item_row.push_back(pool.add(row != nullptr ? *row : kEmpty));
  q.row_begin.push_back(0);
  for (auto const& row : pool.rows) {
    q.rows.insert(q.rows.end(), row.begin(), row.end());
    q.row_begin.push_back(static_cast<int>(q.rows.size()));
  }
  return q;
}

RankForm rank_table(std::vector<std::vector<int>> const& order, int row_len) {
  RankForm r;
  r.kind = RankKind::kTable;
  RowPool pool;
  for (auto const& contributors : order) {
    // A row covers one block of row_len contributors: a dQ tile's KV tiles (0 .. kv_tiles - 1),
    // a GQA dK/dV tile's q heads (kv head x group ..), indexed within the block.
    int const base = contributors.empty() ? 0 : contributors.front() / row_len * row_len;
    std::vector<int> row(row_len, -1);
    sim::scatter_ranks(contributors, base, row);
    r.tile_row.push_back(pool.add(row));
  }
  for (auto const& row : pool.rows) r.rows.insert(r.rows.end(), row.begin(), row.end());
  return r;
}

WorkForm closed_work(KernelSpec const& spec, sim::Schedule const& schedule) {
  for (int const head_fastest : {0, 1}) {
    for (int const reverse : {0, 1}) {
      WorkForm work;
      work.kind = WorkKind::kStrided;
      work.head_fastest = head_fastest;
      work.reverse = reverse;
      if (work_mismatch(spec, work, schedule).empty()) return work;
    }
  }
  // symmetric-shift: pairs (p, n-1-p) per head dealt round-robin.
  if (spec.kv_tiles % 2 == 0) {
    WorkForm work;
    work.kind = WorkKind::kPaired;
    if (work_mismatch(spec, work, schedule).empty()) return work;
  }
  return work_table(spec, schedule);
}

/// Rotate parameters read off the walks of KV tiles 0 and 1; verification decides if they hold.
QOrderForm rotate_guess(ScheduleForm const& form, sim::Schedule const& schedule) {
  QOrderForm q;
  q.kind = QOrderKind::kRotate;
  std::vector<int> first(form.q_lo.size(), -1);
  for (auto const& cta : schedule.ctas) {
    for (auto const& item : cta.items) {
      if (!item.q_order.empty() && first[item.kv_tile] < 0) first[item.kv_tile] = item.q_order[0];
    }
  }
  if (first.empty() || first[0] < 0) return q;
  q.offset = first[0] - form.q_lo[0];
  if (first.size() > 1 && first[1] >= 0) {
    q.mult = mod(first[1] - form.q_lo[1] - q.offset, form.q_hi[1] - form.q_lo[1] + 1);
  }
  return q;
}

/// Lock-step ranks counted in the hook: offered when the work and the Q order are closed forms and
/// the first unit's length can stand for all (verification decides whether it does).
std::optional<RankForm> lockstep_guess(ScheduleForm const& form, sim::Schedule const& schedule) {
  bool const work_closed =
      form.work.kind == WorkKind::kStrided || form.work.kind == WorkKind::kPaired;
  bool const q_closed = form.q_order.kind == QOrderKind::kAscending ||
                        form.q_order.kind == QOrderKind::kDescending ||
                        form.q_order.kind == QOrderKind::kRotate;
  if (!work_closed || !q_closed || schedule.launch != sim::LaunchModel::kPersistent) {
    return std::nullopt;
  }
  // Positions are ints on the device: every CTA's steps must fit one.
  std::int64_t steps = 0;
  for (auto const& cta : schedule.ctas) {
    for (auto const& item : cta.items) steps += static_cast<std::int64_t>(item.q_order.size());
  }
  if (steps > std::numeric_limits<int>::max() / 2) return std::nullopt;
  auto const& first = schedule.ctas.front().items;
  std::size_t const per_unit = form.work.kind == WorkKind::kPaired ? 2 : 1;
  if (first.size() < per_unit) return std::nullopt;
  RankForm r = rank_form(RankKind::kLockstep);
  for (std::size_t n = 0; n < per_unit; ++n) {
    r.unit_steps += static_cast<int>(first[n].q_order.size());
  }
  return r;
}

/// Lock-step ranks in closed form (forms.inc, dash_cf_rank_waves): offered for strided work in KV
/// tile order with a rotated Q walk over the same Q tiles for every KV tile, each item one walk,
/// and steps of a head's KV tiles distinct (mult * (kv_tiles - 1) < n). Verification decides.
std::optional<RankForm> waves_guess(ScheduleForm const& form, sim::Schedule const& schedule,
                                    KernelSpec const& spec) {
  if (form.work.kind != WorkKind::kStrided || form.work.head_fastest != 0 ||
      form.work.reverse != 0 || form.q_order.kind != QOrderKind::kRotate ||
      schedule.launch != sim::LaunchModel::kPersistent || !uniform(form.q_lo) ||
      !uniform(form.q_hi)) {
    return std::nullopt;
  }
  int const n = form.q_hi[0] - form.q_lo[0] + 1;
  int const mult = form.q_order.mult;
  if (n < 1 || mult < 1 || static_cast<std::int64_t>(mult) * (spec.kv_tiles - 1) >= n)
    return std::nullopt;
  // Every item walks all n Q tiles (so a wave's unit is n steps long).
  for (auto const& cta : schedule.ctas) {
    for (auto const& item : cta.items) {
      if (static_cast<int>(item.q_order.size()) != n) return std::nullopt;
    }
  }
  // The ids of the units must fit an int on the device.
  if (static_cast<std::int64_t>(spec.batch) * spec.q_heads * spec.kv_tiles + spec.grid >
      std::numeric_limits<int>::max()) {
    return std::nullopt;
  }
  RankForm r = rank_form(RankKind::kWaves);
  r.mult = mult;
  r.offset = form.q_order.offset;
  r.modulus = n;
  return r;
}

ScheduleForm lower_form(KernelSpec const& spec, sim::Problem const& problem,
                        sim::Schedule const& schedule, LowerOptions const& options) {
  ScheduleForm form;
  bool const contiguous = fill_ranges(problem, form);
  form.work = closed_work(spec, schedule);

  std::vector<QOrderForm> q_candidates;
  if (contiguous) {
    q_candidates.push_back(q_form(QOrderKind::kAscending));
    q_candidates.push_back(q_form(QOrderKind::kDescending));
    q_candidates.push_back(rotate_guess(form, schedule));
  }
  form.q_order = q_table(spec, schedule);
  for (auto const& candidate : q_candidates) {
    ScheduleForm trial = form;
    trial.q_order = candidate;
    if (q_order_mismatch(spec, trial, schedule).empty()) {
      form.q_order = candidate;
      break;
    }
  }

  std::vector<RankForm> rank_candidates;
  if (contiguous) {
    rank_candidates.push_back(rank_form(RankKind::kAscending));
    rank_candidates.push_back(rank_form(RankKind::kDescending));
    if (form.q_order.kind == QOrderKind::kRotate) {
      for (int const div : {1, form.q_order.mult}) {
        if (div <= 0) continue;
        RankForm rotate = rank_form(RankKind::kRotate);
        rotate.mult = form.q_order.mult;
        rotate.offset = form.q_order.offset;
        rotate.modulus = spec.q_tiles;
        rotate.div = div;
        rank_candidates.push_back(rotate);
      }
    }
  }
  if (options.wave_ranks) {
    if (auto waves = waves_guess(form, schedule, spec)) rank_candidates.push_back(*waves);
  }
  if (options.count_lockstep) {
    if (auto lockstep = lockstep_guess(form, schedule)) rank_candidates.push_back(*lockstep);
  }
  form.dq_rank = rank_table(schedule.dq_order, spec.kv_tiles);
  for (auto const& candidate : rank_candidates) {
    ScheduleForm trial = form;
    trial.dq_rank = candidate;
    if (dq_rank_mismatch(spec, trial, schedule).empty()) {
      form.dq_rank = candidate;
      break;
    }
  }

  if (problem.is_gqa()) {
    form.dkv_rank = rank_table(schedule.dkv_order, problem.group_size());
    for (RankKind const kind : {RankKind::kAscending, RankKind::kDescending}) {
      ScheduleForm trial = form;
      trial.dkv_rank = rank_form(kind);
      if (dkv_rank_mismatch(spec, trial, schedule).empty()) {
        form.dkv_rank = trial.dkv_rank;
        break;
      }
    }
  } else {
    form.dkv_rank = rank_form(RankKind::kNone);
  }

  bool const any_table =
      form.work.kind == WorkKind::kTable || form.q_order.kind == QOrderKind::kTable ||
      form.dq_rank.kind == RankKind::kTable || form.dkv_rank.kind == RankKind::kTable;
  bool const all_table =
      form.work.kind == WorkKind::kTable && form.q_order.kind == QOrderKind::kTable &&
      form.dq_rank.kind == RankKind::kTable &&
      (form.dkv_rank.kind == RankKind::kTable || form.dkv_rank.kind == RankKind::kNone);
  form.name = all_table ? "table" : any_table ? spec.strategy + "+table" : spec.strategy;
  return form;
}

std::size_t table_entries(ScheduleForm const& form) {
  return form.work.items.size() + form.q_order.rows.size() + form.q_order.item_row.size() +
         form.dq_rank.rows.size() + form.dq_rank.tile_row.size() + form.dkv_rank.rows.size() +
         form.dkv_rank.tile_row.size();
}

}  // namespace

ScheduleForm table_form(KernelSpec const& spec, sim::Schedule const& schedule) {
  ScheduleForm form = spec.form;
  form.name = "table";
  form.work = work_table(spec, schedule);
  form.q_order = q_table(spec, schedule);
  form.dq_rank = rank_table(schedule.dq_order, spec.kv_tiles);
  form.dkv_rank = spec.q_heads == spec.kv_heads
                      ? rank_form(RankKind::kNone)
                      : rank_table(schedule.dkv_order, spec.q_heads / spec.kv_heads);
  return form;
}

KernelSpec lower(sim::Problem const& problem, sim::Machine const& machine,
                 sim::Schedule const& schedule, std::string const& dtype,
                 LowerOptions const& options) {
  sim::validate(problem, machine, schedule);
  if (!problem.seqlens_q.empty() || !problem.seqlens_k.empty()) {
    user_error("generate: varlen problems have no specialized kernel (use the generic kernel)");
  }
  if (!rt::parse_dtype(dtype)) {
    user_error("unknown dtype '{}': expected bf16 or fp16", dtype);
  }
  // What the family's kernel instantiates and static_asserts: a spec outside it would compile to
  // a kernel that registers nothing and is never dispatched.
  rt::KernelFamily const family = options.family;
  kernel_target(family);  // refuses a family without a kernel header to generate for
  if (!rt::family_has_head_dim(family, problem.head_dim)) {
    user_error("generate: head-dim {} has no kernel: the template supports 64 and 128", problem.head_dim);
  }
  if (!rt::family_has_tiles(family, problem.head_dim, problem.tile_m, problem.tile_n)) {
    user_error("generate: tiles {}x{} have no kernel: the {} kernels' tiles at head-dim {} are {}", problem.tile_m,
               problem.tile_n, rt::family_name(family), problem.head_dim,
               rt::family_tiles_text(family, problem.head_dim));
  }
  KernelSpec spec = spec_header(problem, machine, schedule, dtype);
  spec.family = family;
  spec.form = lower_form(spec, problem, schedule, options);
  if (table_entries(spec.form) > kMaxTableEntries) {
    user_error("generate: the schedule needs {} table entries (limit {}); use the generic kernel",
               table_entries(spec.form), kMaxTableEntries);
  }
  // Every part was verified on its own; the whole must hold too (tables are built, not checked).
  DASH_ASSERT(form_mismatch(spec, schedule).empty());
  return spec;
}

}  // namespace dash::codegen
