#include "codegen/verify.h"

#include <fmt/format.h>

#include "dagsim/core/error.h"

namespace dash::codegen {

namespace {
#include "codegen/forms.inc"

int item_id(KernelSpec const& spec, WorkCoord const& c) {
  return (c.batch * spec.q_heads + c.head) * spec.kv_tiles + c.kv_tile;
}
}  // namespace

std::array<int, 10> lockstep_fields(KernelSpec const& spec, ScheduleForm const& form) {
  int const work_kind = form.work.kind == WorkKind::kPaired ? 1 : 0;
  DASH_ASSERT(form.work.kind == WorkKind::kPaired || form.work.kind == WorkKind::kStrided);
  int const q_kind = form.q_order.kind == QOrderKind::kAscending    ? 0
                     : form.q_order.kind == QOrderKind::kDescending ? 1
                                                                    : 2;
  DASH_ASSERT(q_kind != 2 || form.q_order.kind == QOrderKind::kRotate);
  return {work_kind,           form.work.head_fastest, form.work.reverse,
          spec.grid,           spec.kv_tiles,          spec.q_heads,
          form.dq_rank.unit_steps, q_kind,             form.q_order.mult,
          form.q_order.offset};
}

std::array<int, 7> waves_fields(KernelSpec const& spec, ScheduleForm const& form) {
  DASH_ASSERT(form.dq_rank.kind == RankKind::kWaves && !form.q_lo.empty());
  RankForm const& r = form.dq_rank;
  return {spec.grid, spec.kv_tiles, spec.q_heads, r.modulus, form.q_lo[0], r.mult, r.offset};
}

std::optional<WorkCoord> eval_work(KernelSpec const& spec, WorkForm const& work, int cta, int k) {
  WorkCoord c;
  int found = 0;
  if (work.kind == WorkKind::kStrided) {
    int const items = spec.batch * spec.q_heads * spec.kv_tiles;
    found = dash_cf_work_strided(cta, k, spec.grid, items, spec.kv_tiles, spec.q_heads,
                                 work.head_fastest, work.reverse, &c.batch, &c.head, &c.kv_tile);
  } else if (work.kind == WorkKind::kPaired) {
    found = dash_cf_work_paired(cta, k, spec.grid, spec.batch, spec.kv_tiles, spec.q_heads,
                                &c.batch, &c.head, &c.kv_tile);
  } else {
    DASH_ASSERT(work.kind == WorkKind::kTable);
    DASH_ASSERT(static_cast<int>(work.begin.size()) == spec.grid + 1);
    found = dash_cf_work_table(cta, k, spec.grid, work.begin.data(), work.items.data(),
                               spec.kv_tiles, spec.q_heads, &c.batch, &c.head, &c.kv_tile);
  }
  if (found == 0) return std::nullopt;
  return c;
}

int eval_q_tile(KernelSpec const& spec, ScheduleForm const& form, WorkCoord item, int t) {
  QOrderForm const& q = form.q_order;
  int const lo = form.q_lo[item.kv_tile];
  int const hi = form.q_hi[item.kv_tile];
  if (q.kind == QOrderKind::kAscending) return dash_cf_q_ascending(lo, t);
  if (q.kind == QOrderKind::kDescending) return dash_cf_q_descending(hi, t);
  if (q.kind == QOrderKind::kRotate)
    return dash_cf_q_rotate(lo, hi, item.kv_tile, q.mult, q.offset, t);
  DASH_ASSERT(q.kind == QOrderKind::kTable);
  return dash_cf_q_table(q.item_row.data(), q.row_begin.data(), q.rows.data(),
                         item_id(spec, item), t);
}

int eval_dq_rank(KernelSpec const& spec, ScheduleForm const& form, int batch, int head, int q_tile,
                 int kv_tile) {
  RankForm const& r = form.dq_rank;
  if (r.kind == RankKind::kAscending) return dash_cf_rank_ascending(form.kv_lo[q_tile], kv_tile);
  if (r.kind == RankKind::kDescending) return dash_cf_rank_descending(form.kv_hi[q_tile], kv_tile);
  if (r.kind == RankKind::kRotate) {
    return dash_cf_rank_rotate(q_tile, kv_tile, r.mult, r.offset, r.modulus, r.div);
  }
  if (r.kind == RankKind::kWaves) {
    auto const f = waves_fields(spec, form);
    return dash_cf_rank_waves(f[0], f[1], f[2], f[3], f[4], f[5], f[6], batch, head, q_tile,
                              kv_tile);
  }
  if (r.kind == RankKind::kLockstep) {
    auto const f = lockstep_fields(spec, form);
    DashCfLockstep const a{f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9],
                          form.q_lo.data(), form.q_hi.data()};
    return dash_cf_rank_lockstep(a, form.kv_lo[q_tile], form.kv_hi[q_tile], batch, head, q_tile,
                                kv_tile);
  }
  DASH_ASSERT(r.kind == RankKind::kTable);
  int const dq = (batch * spec.q_heads + head) * spec.q_tiles + q_tile;
  return dash_cf_rank_table(r.tile_row.data(), r.rows.data(), spec.kv_tiles, dq, kv_tile);
}

int eval_dkv_rank(KernelSpec const& spec, ScheduleForm const& form, int batch, int q_head,
                  int kv_tile) {
  RankForm const& r = form.dkv_rank;
  int const group = spec.q_heads / spec.kv_heads;
  if (r.kind == RankKind::kAscending) return dash_cf_dkv_ascending(q_head, group);
  if (r.kind == RankKind::kDescending) return dash_cf_dkv_descending(q_head, group);
  DASH_ASSERT(r.kind == RankKind::kTable);
  int const dkv = (batch * spec.kv_heads + q_head / group) * spec.kv_tiles + kv_tile;
  return dash_cf_dkv_table(r.tile_row.data(), r.rows.data(), group, dkv, q_head);
}

std::string work_mismatch(KernelSpec const& spec, WorkForm const& work,
                          sim::Schedule const& schedule) {
  if (static_cast<int>(schedule.ctas.size()) != spec.grid) {
    return fmt::format("grid {} != {} CTAs", spec.grid, schedule.ctas.size());
  }
  for (int c = 0; c < spec.grid; ++c) {
    auto const& items = schedule.ctas[c].items;
    int const n = static_cast<int>(items.size());
    // One past the end too: the hook must say "no more work" exactly there.
    for (int k = 0; k <= n; ++k) {
      auto const got = eval_work(spec, work, c, k);
      if (k == n) {
        if (got) return fmt::format("CTA {} gets an extra item {}", c, k);
        break;
      }
      WorkCoord const want{items[k].batch, items[k].head, items[k].kv_tile};
      if (!got || !(*got == want)) {
        return fmt::format("CTA {} item {}: expected (b={}, h={}, j={})", c, k, want.batch,
                           want.head, want.kv_tile);
      }
    }
  }
  return {};
}

std::string q_order_mismatch(KernelSpec const& spec, ScheduleForm const& form,
                             sim::Schedule const& schedule) {
  for (auto const& cta : schedule.ctas) {
    for (auto const& item : cta.items) {
      WorkCoord const c{item.batch, item.head, item.kv_tile};
      int const lo = form.q_lo[item.kv_tile];
      int const hi = form.q_hi[item.kv_tile];
      // The kernel walks hi - lo + 1 steps: the schedule must visit exactly that many.
      int const steps = hi >= lo ? hi - lo + 1 : 0;
      if (static_cast<int>(item.q_order.size()) != steps) {
        return fmt::format("item (b={}, h={}, j={}) has {} steps, the mask gives {}", c.batch,
                           c.head, c.kv_tile, item.q_order.size(), steps);
      }
      for (int t = 0; t < steps; ++t) {
        if (eval_q_tile(spec, form, c, t) != item.q_order[t]) {
          return fmt::format("item (b={}, h={}, j={}) step {}: expected Q tile {}", c.batch,
                             c.head, c.kv_tile, t, item.q_order[t]);
        }
      }
    }
  }
  return {};
}

std::string dq_rank_mismatch(KernelSpec const& spec, ScheduleForm const& form,
                             sim::Schedule const& schedule) {
  int const tiles = spec.batch * spec.q_heads * spec.q_tiles;
  if (static_cast<int>(schedule.dq_order.size()) != tiles) return "dq_order size";
  for (int dq = 0; dq < tiles; ++dq) {
    int const i = dq % spec.q_tiles;
    int const h = (dq / spec.q_tiles) % spec.q_heads;
    int const b = dq / (spec.q_tiles * spec.q_heads);
    auto const& order = schedule.dq_order[dq];
    for (int rank = 0; rank < static_cast<int>(order.size()); ++rank) {
      if (eval_dq_rank(spec, form, b, h, i, order[rank]) != rank) {
        return fmt::format("dQ tile (b={}, h={}, i={}): KV tile {} should have rank {}", b, h, i,
                           order[rank], rank);
      }
    }
  }
  return {};
}

std::string dkv_rank_mismatch(KernelSpec const& spec, ScheduleForm const& form,
                              sim::Schedule const& schedule) {
  if (form.dkv_rank.kind == RankKind::kNone) {
    return schedule.dkv_order.empty() ? std::string{} : "schedule has dK/dV ranks";
  }
  int const group = spec.q_heads / spec.kv_heads;
  int const tiles = spec.batch * spec.kv_heads * spec.kv_tiles;
  if (static_cast<int>(schedule.dkv_order.size()) != tiles) return "dkv_order size";
  for (int dkv = 0; dkv < tiles; ++dkv) {
    int const j = dkv % spec.kv_tiles;
    int const b = dkv / (spec.kv_tiles * spec.kv_heads);
    auto const& order = schedule.dkv_order[dkv];
    for (int rank = 0; rank < static_cast<int>(order.size()); ++rank) {
      if (eval_dkv_rank(spec, form, b, order[rank], j) != rank) {
        return fmt::format("dK/dV tile (b={}, kvh={}, j={}): q head {} should have rank {}", b,
                           (dkv / spec.kv_tiles) % spec.kv_heads, j, order[rank], rank);
      }
    }
    if (static_cast<int>(order.size()) != group) return "dkv_order row size";
  }
  return {};
}

std::string form_mismatch(KernelSpec const& spec, sim::Schedule const& schedule) {
  for (auto const& why : {work_mismatch(spec, spec.form.work, schedule),
                          q_order_mismatch(spec, spec.form, schedule),
                          dq_rank_mismatch(spec, spec.form, schedule),
                          dkv_rank_mismatch(spec, spec.form, schedule)}) {
    if (!why.empty()) return why;
  }
  return {};
}

}  // namespace dash::codegen
