#include "dagsim/model/simulate.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <queue>
#include <utility>

#include "dagsim/core/error.h"
#include "dagsim/core/large_buffer.h"
#include "dagsim/core/tile_index.h"
#include "dagsim/model/working_set.h"

namespace dash::sim {
namespace {

// Costs come from the user (CLI flags, files): refuse what the model cannot mean.
void check_cost(CostModel const& cost) {
  if (cost.compute < 0 || cost.reduce < 0 || cost.latency < 0 || cost.reduce_kv < 0 ||
      cost.dsmem < 0 || cost.item < 0) {
    user_error(
        "costs must be non-negative (compute {}, reduce {}, latency {}, reduce_kv {}, dsmem {}, "
        "item {})",
        cost.compute, cost.reduce, cost.latency, cost.reduce_kv, cost.dsmem, cost.item);
  }
  if (cost.dq_buffer < 0) user_error("dQ buffer depth must be >= 0, got {}", cost.dq_buffer);
  if (cost.hbm_bytes_per_cycle < 0 || cost.l2_bytes < 0) {
    user_error("the memory floor's HBM bytes per cycle and L2 bytes must be >= 0, got {} and {}",
               cost.hbm_bytes_per_cycle, cost.l2_bytes);
  }
}

/// First node id of every CTA (size ctas + 1), in build_dag's numbering.
std::vector<int> cta_bases(Problem const& problem, Schedule const& schedule) {
  std::vector<int> base(schedule.ctas.size() + 1, 0);
  for (std::size_t c = 0; c < schedule.ctas.size(); ++c) {
    int count = 0;
    for (auto const& item : schedule.ctas[c].items) {
      count += 2 * static_cast<int>(item.q_order.size()) + (problem.is_gqa() ? 1 : 0);
    }
    base[c + 1] = base[c] + count;
  }
  return base;
}

struct CtaTimes {
  std::vector<Cycles> start;
  std::vector<Cycles> finish;
  /// Dynamic launch: the CTA whose finish released each CTA's SM (-1: launched at 0). Recorded in
  /// the order the finishes happen, not rebuilt from the times: two CTAs may finish at the same
  /// time with one depending on the CTA that the other released (zero-cost nodes), and only the
  /// other one can have released it.
  std::vector<int> source;
};

/// Dynamic launch: CTA k >= sms starts at the (k - sms + 1)-th smallest finish among CTAs 0..k-1
/// (list scheduling in launch order, docs/model.md). A CTA's finish depends on other CTAs through
/// rank edges, so the launch times are found by one pass over the DAG (without dispatch edges) in
/// time order, where the m-th CTA to finish releases CTA sms + m - 1. The queue holds at most one
/// entry per CTA (its next node, keyed by start time) plus CTA finishes (keyed by finish time):
/// every node that starts before a finish time is taken before that finish, so CTA finishes are
/// seen in time order. A CTA whose next node needs a node of another CTA that has not been taken
/// yet is parked on it, as in longest_path().
CtaTimes dynamic_launch_times(Dag const& dag, std::vector<int> const& base, int sms) {
  auto const n = dag.nodes.size();
  auto const num_ctas = static_cast<int>(base.size()) - 1;
  CtaTimes times{std::vector<Cycles>(static_cast<std::size_t>(num_ctas), 0),
                 std::vector<Cycles>(static_cast<std::size_t>(num_ctas), -1),
                 std::vector<int>(static_cast<std::size_t>(num_ctas), -1)};
  std::vector<Cycles> finish(n, 0);
  std::vector<char> taken(n, 0);
  std::vector<int> parked_head(n, -1);
  std::vector<int> parked_next(static_cast<std::size_t>(num_ctas), -1);
  std::vector<int> cursor(base.begin(), base.end() - 1);
  using Event = std::pair<Cycles, int>;  // (time, CTA c >= 0: its next node starts; ~c: c finishes)
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
  // Queues CTA c's next node if every predecessor has been taken, else parks c on a missing one.
  auto schedule_next = [&](int c) {
    int const v = cursor[static_cast<std::size_t>(c)];
    auto const u = static_cast<std::size_t>(v);
    Cycles start = times.start[static_cast<std::size_t>(c)];
    for (int e = dag.in_begin[u]; e < dag.in_begin[u + 1]; ++e) {
      Edge const& edge = dag.in_edges[static_cast<std::size_t>(e)];
      auto const from = static_cast<std::size_t>(edge.from);
      if (!taken[from]) {
        parked_next[static_cast<std::size_t>(c)] = parked_head[from];
        parked_head[from] = c;
        return;
      }
      start = std::max(start, finish[from] + edge.latency);
    }
    events.emplace(start, c);
  };
  int next_launch = std::min(sms, num_ctas);
  // A CTA finishing at `now` frees its SM for the next one in launch order; a CTA without nodes
  // finishes as soon as it starts (a loop, not recursion: there may be many of them).
  auto cta_done = [&](int c, Cycles now) {
    for (;;) {
      times.finish[static_cast<std::size_t>(c)] = now;
      if (next_launch >= num_ctas) return;
      int const launched = next_launch++;
      times.start[static_cast<std::size_t>(launched)] = now;
      times.source[static_cast<std::size_t>(launched)] = c;
      if (base[launched] < base[launched + 1]) {
        schedule_next(launched);
        return;
      }
      c = launched;
    }
  };
  for (int c = 0; c < std::min(sms, num_ctas); ++c) {
    if (base[c] < base[c + 1]) schedule_next(c);
  }
  for (int c = 0; c < std::min(sms, num_ctas); ++c) {
    if (base[c] == base[c + 1]) cta_done(c, 0);
  }
  std::size_t processed = 0;
  while (!events.empty()) {
    auto const [now, who] = events.top();
    events.pop();
    if (who < 0) {
      cta_done(~who, now);
      continue;
    }
    int const c = who;
    int const v = cursor[static_cast<std::size_t>(c)]++;
    auto const u = static_cast<std::size_t>(v);
    finish[u] = now + dag.nodes[u].weight;
    taken[u] = 1;
    ++processed;
    for (int w = parked_head[u]; w >= 0;) {
      int const next = parked_next[static_cast<std::size_t>(w)];
      schedule_next(w);
      w = next;
    }
    if (v + 1 < base[c + 1]) {
      schedule_next(c);
    } else {
      events.emplace(finish[u], ~c);
    }
  }
  DASH_ASSERT(processed == n);  // validate() rules out deadlocks
  for (int c = 0; c < num_ctas; ++c) DASH_ASSERT(times.finish[static_cast<std::size_t>(c)] >= 0);
  return times;
}

struct Dispatch {
  std::vector<int> sm;      // per CTA
  std::vector<int> source;  // per CTA: the CTA whose finish freed its SM, or -1
};

/// Which SM each CTA lands on: the first `sms` CTAs on SMs 0.., every later one on the SM of the
/// CTA whose finish released it (the first free SM; among SMs freed at the same time, the one
/// freed first in the order the finishes happen).
Dispatch assign_sms(CtaTimes const& times, int sms) {
  auto const num_ctas = times.start.size();
  Dispatch result{std::vector<int>(num_ctas, 0), std::vector<int>(num_ctas, -1)};
  for (std::size_t c = 0; c < num_ctas; ++c) {
    if (c < static_cast<std::size_t>(sms)) {
      result.sm[c] = static_cast<int>(c);
      continue;
    }
    int const source = times.source[c];
    DASH_ASSERT(source >= 0 && static_cast<std::size_t>(source) < c);
    // Launch times are order statistics of the finishes: the source frees its SM exactly then.
    DASH_ASSERT(times.finish[static_cast<std::size_t>(source)] == times.start[c]);
    result.sm[c] = result.sm[static_cast<std::size_t>(source)];
    result.source[c] = source;
  }
  return result;
}

struct LongestPath {
  std::vector<Cycles> start;
  std::vector<Cycles> finish_;  // start + weight, kept so a rank predecessor costs one cache miss
  [[nodiscard]] Cycles finish(Dag const& /*dag*/, int v) const { return finish_[static_cast<std::size_t>(v)]; }
};

/// Longest path in one topological pass. A CTA's nodes are contiguous and every edge inside a
/// CTA points forward, so each CTA runs down its own nodes in program order; a node whose
/// predecessor on another CTA (rank or dispatch edge) has not been reached yet parks its CTA on that
/// predecessor until the owning CTA passes it. This is Kahn's algorithm with the in-degree counts
/// replaced by that check: a node is evaluated only once all its predecessors are, and no
/// per-node out-edge lists are needed. At most one entry per CTA is parked at any time. Memory
/// traffic is what bounds the speed here (a 262k-step problem has ~0.5M nodes).
LongestPath longest_path(Dag const& dag, std::vector<int> const& base) {
  auto const n = dag.nodes.size();
  auto const num_ctas = static_cast<int>(base.size()) - 1;
  DASH_ASSERT(static_cast<std::size_t>(base.back()) == n);
  LongestPath lp;
  reserve_large(lp.start, n);
  reserve_large(lp.finish_, n);
  lp.start.resize(n);
  lp.finish_.resize(n);
  std::vector<int> cursor(base.begin(), base.end() - 1);  // next node of each CTA
  auto owner = [&](int v) {
    return static_cast<int>(std::upper_bound(base.begin(), base.end(), v) - base.begin()) - 1;
  };
  // CTAs parked on a node, as a chain through the CTAs (a CTA waits on one node at a time).
  std::vector<int> parked_head(n, -1);
  std::vector<int> parked_next(static_cast<std::size_t>(num_ctas), -1);
  std::vector<int> runnable;
  runnable.reserve(static_cast<std::size_t>(num_ctas));
  for (int c = num_ctas - 1; c >= 0; --c) runnable.push_back(c);
  while (!runnable.empty()) {
    int const c = runnable.back();
    runnable.pop_back();
    int v = cursor[static_cast<std::size_t>(c)];
    int const first = base[c];
    int const end = base[c + 1];
    for (; v < end; ++v) {
      auto const u = static_cast<std::size_t>(v);
      Cycles start = 0;
      int blocked_on = -1;
      for (int e = dag.in_begin[u]; e < dag.in_begin[u + 1]; ++e) {
        Edge const& edge = dag.in_edges[static_cast<std::size_t>(e)];
        if (edge.from < first || edge.from >= v) {
          DASH_ASSERT(edge.from < first || edge.from >= end);  // inside a CTA, edges point forward
          if (cursor[static_cast<std::size_t>(owner(edge.from))] <= edge.from) {
            blocked_on = edge.from;
            break;
          }
        }
        start = std::max(start, lp.finish_[static_cast<std::size_t>(edge.from)] + edge.latency);
      }
      if (blocked_on >= 0) {
        parked_next[static_cast<std::size_t>(c)] = parked_head[static_cast<std::size_t>(blocked_on)];
        parked_head[static_cast<std::size_t>(blocked_on)] = c;
        break;
      }
      lp.start[u] = start;
      lp.finish_[u] = start + dag.nodes[u].weight;
      for (int w = parked_head[u]; w >= 0; w = parked_next[static_cast<std::size_t>(w)]) runnable.push_back(w);
    }
    cursor[static_cast<std::size_t>(c)] = v;
  }
  for (int c = 0; c < num_ctas; ++c) DASH_ASSERT(cursor[static_cast<std::size_t>(c)] == base[c + 1]);  // validate() rules out cycles
  return lp;
}

/// The critical path, walked back from the last node to finish: at each node, the first in-edge
/// that set its start.
std::vector<int> critical_path(Dag const& dag, LongestPath const& lp, int last) {
  std::vector<int> path;
  for (int v = last; v >= 0;) {
    path.push_back(v);
    auto const u = static_cast<std::size_t>(v);
    int pred = -1;
    for (int e = dag.in_begin[u]; e < dag.in_begin[u + 1] && pred < 0; ++e) {
      Edge const& edge = dag.in_edges[static_cast<std::size_t>(e)];
      if (lp.finish(dag, edge.from) + edge.latency == lp.start[u]) pred = edge.from;
    }
    v = pred;
  }
  std::reverse(path.begin(), path.end());
  return path;
}

}  // namespace

SimResult simulate(Problem const& problem, Machine const& machine, CostModel const& cost,
                   Schedule const& schedule) {
  check_cost(cost);
  std::vector<int> const base = cta_bases(problem, schedule);
  auto const num_ctas = schedule.ctas.size();
  Dispatch dispatch{std::vector<int>(num_ctas), std::vector<int>(num_ctas, -1)};
  SimResult result;
  CtaTimes times;  // dynamic launch: from the pass in finish-time order, to cross-check below
  if (schedule.launch == LaunchModel::kDynamic) {
    times = dynamic_launch_times(build_dag(problem, cost, schedule), base, machine.sms);
    dispatch = assign_sms(times, machine.sms);
    result.dag = build_dag(problem, cost, schedule, dispatch.source);
  } else {
    DASH_ASSERT(num_ctas <= static_cast<std::size_t>(machine.sms));
    for (std::size_t c = 0; c < num_ctas; ++c) dispatch.sm[c] = static_cast<int>(c);
    result.dag = build_dag(problem, cost, schedule);
  }
  Dag const& dag = result.dag;
  LongestPath lp = longest_path(dag, base);

  result.steps = count_steps(schedule);
  result.live = working_set(problem, schedule, machine.sms);
  if (cost.hbm_bytes_per_cycle > 0) result.memory = memory_floor(problem, schedule, cost, result.live);
  int last = -1;  // the first node to finish last: where the critical path ends

  // Per-CTA split. Lanes: with k == 0 every node of a CTA is on the SM in program order; with
  // k >= 1 the C nodes form the compute lane and R/K the writer lane. A node's `ready` is the
  // finish of the previous node of its lane (and, for R, of its own C): start - ready is what
  // it paid to rank, buffer, K or launch dependencies.
  result.dq_buffer = cost.dq_buffer;
  result.ctas.resize(num_ctas);
  bool const single_lane = cost.dq_buffer == 0;
  for (std::size_t c = 0; c < num_ctas; ++c) {
    CtaStats& stats = result.ctas[c];
    stats.sm = dispatch.sm[c];
    int const source = dispatch.source[c];
    stats.start = source < 0 ? 0 : result.ctas[static_cast<std::size_t>(source)].finish;
    Cycles compute_free = stats.start;
    Cycles writer_free = stats.start;
    for (int v = base[c]; v < base[c + 1]; ++v) {
      auto const u = static_cast<std::size_t>(v);
      Node const& node = dag.nodes[u];
      Cycles const finish = lp.start[u] + node.weight;
      if (last < 0 || finish > result.makespan) {
        result.makespan = finish;
        last = v;
      }
      Cycles ready = 0;
      if (single_lane || node.kind == NodeKind::kCompute) {
        ready = single_lane ? std::max(compute_free, writer_free) : compute_free;
        stats.busy += node.weight;
        stats.waiting += lp.start[u] - ready;
        compute_free = finish;
        if (single_lane) writer_free = compute_free;
      } else {
        ready = writer_free;
        if (node.kind == NodeKind::kReduce) ready = std::max(ready, lp.finish(dag, v - 1));
        writer_free = finish;
      }
      DASH_ASSERT(lp.start[u] >= ready);
    }
    stats.finish = base[c] < base[c + 1] ? lp.finish(dag, base[c + 1] - 1) : stats.start;
    // The launch pass and the longest path over the DAG with dispatch edges must agree.
    DASH_ASSERT(times.finish.empty() || (times.start[c] == stats.start && times.finish[c] == stats.finish));
  }
  if (last >= 0) result.critical_path = critical_path(dag, lp, last);
  for (auto& stats : result.ctas) {
    stats.idle = result.makespan - stats.busy - stats.waiting;
    DASH_ASSERT(stats.idle >= 0);
  }
  result.node_start = std::move(lp.start);
  return result;
}

std::vector<Slice> SimResult::slices() const {
  // `ready` follows the lanes of the time split in simulate(): with k == 0 a node is ready when
  // the previous node of its CTA finished; with k >= 1 a C when the previous C finished, an R when
  // its C and the previous R/K finished, a K when the previous R/K finished.
  std::vector<Slice> out;
  out.reserve(dag.nodes.size());
  bool const single_lane = dq_buffer == 0;
  int cta = -1;
  Cycles compute_free = 0;
  Cycles writer_free = 0;
  for (std::size_t v = 0; v < dag.nodes.size(); ++v) {
    Node const& node = dag.nodes[v];
    auto const c = static_cast<std::size_t>(node.cta);
    if (node.cta != cta) {
      cta = node.cta;
      compute_free = c < ctas.size() ? ctas[c].start : 0;
      writer_free = compute_free;
    }
    Slice slice;
    slice.cta = node.cta;
    slice.sm = c < ctas.size() ? ctas[c].sm : node.cta;
    slice.kind = node.kind;
    slice.batch = node.batch;
    slice.head = node.head;
    slice.q_tile = node.q_tile;
    slice.kv_tile = node.kv_tile;
    slice.start = v < node_start.size() ? node_start[v] : 0;
    slice.finish = slice.start + node.weight;
    if (single_lane) {
      slice.ready = std::max(compute_free, writer_free);
      compute_free = writer_free = slice.finish;
    } else if (node.kind == NodeKind::kCompute) {
      slice.ready = compute_free;
      compute_free = slice.finish;
    } else {
      slice.ready = writer_free;
      if (node.kind == NodeKind::kReduce && v > 0) slice.ready = std::max(slice.ready, out.back().finish);
      writer_free = slice.finish;
    }
    out.push_back(slice);
  }
  return out;
}

double SimResult::utilization(int sms) const {
  if (sms <= 0 || makespan <= 0) return 0.0;
  Cycles busy = 0;
  for (auto const& stats : ctas) busy += stats.busy;
  return static_cast<double>(busy) / (static_cast<double>(sms) * static_cast<double>(makespan));
}

// ---------------------------------------------------------------------------------------------
// Event-driven evaluation. Shares nothing with the DAG code above: CTAs are state machines with a
// compute unit and a writer queue, dQ and dK/dV tiles have ticket counters, events are ordered by
// time. Any disagreement with simulate() is a bug in one of the two.
// ---------------------------------------------------------------------------------------------
namespace {

struct Ticket {
  int next = 0;        // the rank allowed to add next
  Cycles visible = 0;  // when that permission is seen by other SMs
};

struct Step {
  int item = 0;  // index of its item within the CTA
  Cycles cost = 0;
};

struct WriterOp {
  bool kv = false;  // K (dK/dV epilogue) rather than R
  int tile = 0;     // dQ or dK/dV tile id
  int rank = 0;
  int step = 0;     // R: the step whose partial it adds
};

struct CtaMachine {
  std::vector<Step> steps;
  std::vector<WriterOp> writes;
  bool launched = false;
  bool done = false;
  int next_c = 0;   // next step to compute
  int c_done = 0;   // steps computed
  int r_done = 0;   // dQ reductions completed
  int k_done = 0;   // dK/dV reductions completed (= items whose epilogue finished)
  int next_w = 0;   // next writer op
  bool computing = false;
  Cycles compute_end = 0;
  bool writing = false;
  Cycles write_end = 0;
  Cycles last_end = 0;
};

}  // namespace

Cycles simulate_events(Problem const& problem, Machine const& machine, CostModel const& cost,
                       Schedule const& schedule) {
  check_cost(cost);
  TileIndex const index(problem);
  bool const gqa = problem.is_gqa();
  int const group = problem.group_size();
  auto const num_ctas = static_cast<int>(schedule.ctas.size());

  // Who owns each work item, so a released ticket can wake the holder of the next rank.
  std::vector<int> item_cta(static_cast<std::size_t>(index.num_items()), -1);
  std::vector<CtaMachine> ctas(static_cast<std::size_t>(num_ctas));
  for (int c = 0; c < num_ctas; ++c) {
    CtaMachine& m = ctas[static_cast<std::size_t>(c)];
    int item_index = 0;
    for (auto const& item : schedule.ctas[static_cast<std::size_t>(c)].items) {
      item_cta[static_cast<std::size_t>(index.item_id(item.batch, item.head, item.kv_tile))] = c;
      for (std::size_t t = 0; t < item.q_order.size(); ++t) {
        int const i = item.q_order[t];
        int const d = index.dq_id(item.batch, item.head, i);
        auto const& order = schedule.dq_order[static_cast<std::size_t>(d)];
        auto const rank = static_cast<int>(std::find(order.begin(), order.end(), item.kv_tile) - order.begin());
        DASH_ASSERT(rank < static_cast<int>(order.size()));
        m.writes.push_back(WriterOp{false, d, rank, static_cast<int>(m.steps.size())});
        m.steps.push_back(
            Step{item_index, cost.walk_step_cost(problem, item.batch, i, item.kv_tile, t)});
      }
      if (gqa) {
        int const t = index.dkv_id(item.batch, item.head / group, item.kv_tile);
        auto const& order = schedule.dkv_order[static_cast<std::size_t>(t)];
        auto const rank = static_cast<int>(std::find(order.begin(), order.end(), item.head) - order.begin());
        DASH_ASSERT(rank < static_cast<int>(order.size()));
        m.writes.push_back(WriterOp{true, t, rank, -1});
      }
      ++item_index;
    }
  }
  std::vector<Ticket> dq_tickets(static_cast<std::size_t>(index.num_dq_tiles()));
  std::vector<Ticket> dkv_tickets(gqa ? static_cast<std::size_t>(index.num_dkv_tiles()) : 0);

  using Wake = std::pair<Cycles, int>;  // (time, CTA)
  std::priority_queue<Wake, std::vector<Wake>, std::greater<>> wakes;
  int next_launch = 0;
  auto launch = [&](Cycles now) {
    ctas[static_cast<std::size_t>(next_launch)].launched = true;
    ctas[static_cast<std::size_t>(next_launch)].last_end = now;
    wakes.emplace(now, next_launch);
    ++next_launch;
  };
  int const resident = schedule.launch == LaunchModel::kPersistent ? num_ctas : std::min(num_ctas, machine.sms);
  while (next_launch < resident) launch(0);

  // The CTA holding the next rank of a tile whose ticket just moved.
  auto holder = [&](WriterOp const& op, int rank) {
    if (op.kv) {
      auto const& order = schedule.dkv_order[static_cast<std::size_t>(op.tile)];
      if (rank >= static_cast<int>(order.size())) return -1;
      ItemKey const key = index.dkv_key(op.tile);
      return item_cta[static_cast<std::size_t>(index.item_id(key.batch, order[static_cast<std::size_t>(rank)], key.tile))];
    }
    auto const& order = schedule.dq_order[static_cast<std::size_t>(op.tile)];
    if (rank >= static_cast<int>(order.size())) return -1;
    ItemKey const key = index.dq_key(op.tile);
    return item_cta[static_cast<std::size_t>(index.item_id(key.batch, key.head, order[static_cast<std::size_t>(rank)]))];
  };

  Cycles makespan = 0;
  int finished = 0;
  std::int64_t const k = cost.dq_buffer;
  while (!wakes.empty()) {
    auto const [now, c] = wakes.top();
    wakes.pop();
    CtaMachine& m = ctas[static_cast<std::size_t>(c)];
    if (!m.launched || m.done) continue;
    bool progress = true;
    while (progress) {
      progress = false;
      if (m.computing && m.compute_end <= now) {
        m.computing = false;
        ++m.c_done;
        progress = true;
      }
      if (m.writing && m.write_end <= now) {
        m.writing = false;
        WriterOp const& op = m.writes[static_cast<std::size_t>(m.next_w)];
        Ticket& ticket = op.kv ? dkv_tickets[static_cast<std::size_t>(op.tile)] : dq_tickets[static_cast<std::size_t>(op.tile)];
        DASH_ASSERT(!cost.ordered || ticket.next == op.rank);
        ticket.next = op.rank + 1;
        ticket.visible = m.write_end + cost.latency;
        int const next_holder = holder(op, op.rank + 1);
        if (next_holder >= 0) wakes.emplace(ticket.visible, next_holder);
        if (op.kv) {
          ++m.k_done;
        } else {
          ++m.r_done;
        }
        ++m.next_w;
        progress = true;
      }
      if (!m.writing && m.next_w < static_cast<int>(m.writes.size())) {
        WriterOp const& op = m.writes[static_cast<std::size_t>(m.next_w)];
        Ticket const& ticket = op.kv ? dkv_tickets[static_cast<std::size_t>(op.tile)] : dq_tickets[static_cast<std::size_t>(op.tile)];
        // The writer queue is in program order, so K(item) follows every R of its item.
        bool const partial_ready = op.kv || m.c_done > op.step;
        bool const turn = !cost.ordered || (ticket.next == op.rank && ticket.visible <= now);
        if (partial_ready && turn) {
          m.writing = true;
          m.write_end = now + (op.kv ? cost.reduce_kv : cost.reduce);
          m.last_end = std::max(m.last_end, m.write_end);
          wakes.emplace(m.write_end, c);
          progress = true;
        }
      }
      if (!m.computing && m.next_c < static_cast<int>(m.steps.size())) {
        Step const& step = m.steps[static_cast<std::size_t>(m.next_c)];
        bool const buffer_free = m.r_done >= m.next_c - k;                 // R(t-k-1) has drained
        bool const epilogues_done = !gqa || m.k_done >= step.item;         // previous items' K done
        if (buffer_free && epilogues_done) {
          m.computing = true;
          m.compute_end = now + step.cost;
          m.last_end = std::max(m.last_end, m.compute_end);
          wakes.emplace(m.compute_end, c);
          ++m.next_c;
          progress = true;
        }
      }
    }
    bool const all_done = !m.computing && !m.writing && m.c_done == static_cast<int>(m.steps.size()) &&
                          m.next_w == static_cast<int>(m.writes.size());
    if (all_done) {
      m.done = true;
      ++finished;
      makespan = std::max(makespan, m.last_end);
      // Dynamic launch: the freed SM takes the next CTA in launch order.
      if (next_launch < num_ctas) launch(m.last_end);
    }
  }
  DASH_ASSERT(finished == num_ctas);  // validate() rules out deadlocks
  return makespan;
}

}  // namespace dash::sim
