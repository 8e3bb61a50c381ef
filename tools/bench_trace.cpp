#include "tools/bench_trace.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "dagsim/core/error.h"

namespace dash::cli {

KernelTrace decode_trace(rt::RawTrace const& raw, sim::Schedule const& schedule) {
  int const ctas = static_cast<int>(schedule.ctas.size());
  if (raw.ctas != ctas) user_error("trace: {} CTAs recorded, the schedule has {}", raw.ctas, ctas);
  std::int64_t const region = rt::trace_region_slots(raw.steps, raw.items);
  if (raw.steps < 0 || raw.items < 0 ||
      static_cast<std::int64_t>(raw.slots.size()) != region * ctas) {
    user_error("trace: {} slots do not hold {} regions of {} steps and {} items", raw.slots.size(),
               ctas, raw.steps, raw.items);
  }
  struct Clock {
    std::int64_t g0, c0;
    double ns_per_cycle;
  };
  std::vector<Clock> clocks;
  std::int64_t base = std::numeric_limits<std::int64_t>::max();
  std::int64_t end = std::numeric_limits<std::int64_t>::min();
  for (int c = 0; c < ctas; ++c) {
    std::int64_t const* r = raw.slots.data() + region * c;
    std::int64_t const g0 = r[rt::kTraceStartNs];
    std::int64_t const c0 = r[rt::kTraceStartClock];
    std::int64_t const g1 = r[rt::kTraceEndNs];
    std::int64_t const c1 = r[rt::kTraceEndClock];
    if (g0 <= 0 || c0 <= 0 || g1 < g0 || c1 <= c0) {
      user_error(
          "trace: CTA {} did not record its start and end (was the kernel built with "
          "DASH_KERNEL_TRACE?)",
          c);
    }
    // A CTA shorter than the timer's resolution has no measurable rate: take 1 ns per cycle
    // rather than 0 (its stamps then still order correctly).
    double const rate = g1 > g0 ? static_cast<double>(g1 - g0) / static_cast<double>(c1 - c0) : 1.0;
    clocks.push_back({g0, c0, rate});
    base = std::min(base, g0);
    end = std::max(end, g1);
  }
  KernelTrace out;
  out.span_ns = end - base;
  out.ctas.resize(static_cast<std::size_t>(ctas));
  for (int c = 0; c < ctas; ++c) {
    std::int64_t const* r = raw.slots.data() + region * c;
    Clock const& k = clocks[static_cast<std::size_t>(c)];
    auto ns = [&](std::int64_t cycles, char const* what, int index) {
      if (cycles <= 0)
        user_error("trace: CTA {} recorded no {} stamp for {} {}", c, what, what, index);
      return k.g0 - base + std::llround(static_cast<double>(cycles - k.c0) * k.ns_per_cycle);
    };
    CtaTrace& cta = out.ctas[static_cast<std::size_t>(c)];
    cta.sm = static_cast<int>(r[rt::kTraceSm]);
    auto const& items = schedule.ctas[static_cast<std::size_t>(c)].items;
    std::int64_t steps = 0;
    for (auto const& item : items) steps += static_cast<std::int64_t>(item.q_order.size());
    if (steps > raw.steps || static_cast<std::int64_t>(items.size()) > raw.items) {
      user_error("trace: CTA {} runs {} steps and {} items, the record has room for {} and {}", c,
                 steps, items.size(), raw.steps, raw.items);
    }
    for (int n = 0; n < steps; ++n) {
      TraceStep s;
      for (int e = 0; e < rt::kStepStamps; ++e)
        s.at[e] = ns(r[rt::trace_step_slot(raw.steps, n, e)], "step", n);
      // The leader's four stamps are in program order, as are the writer's three, and the writer
      // takes a partial only once it was handed over.
      bool const ordered = s.at[rt::kStepEntry] <= s.at[rt::kStepLoaded] &&
                           s.at[rt::kStepLoaded] <= s.at[rt::kStepStaging] &&
                           s.at[rt::kStepStaging] <= s.at[rt::kStepStaged] &&
                           s.at[rt::kStepTaken] <= s.at[rt::kStepAcquired] &&
                           s.at[rt::kStepAcquired] <= s.at[rt::kStepDone];
      if (!ordered) user_error("trace: CTA {} step {}: stamps out of order", c, n);
      cta.steps.push_back(s);
    }
    for (int i = 0; i < static_cast<int>(items.size()); ++i) {
      TraceItem it;
      for (int e = 0; e < rt::kItemStamps; ++e)
        it.at[e] = ns(r[rt::trace_item_slot(raw.steps, i, e)], "item", i);
      it.steps = static_cast<int>(items[static_cast<std::size_t>(i)].q_order.size());
      if (it.at[rt::kItemWait] > it.at[rt::kItemStart] ||
          it.at[rt::kItemStart] > it.at[rt::kItemEnd]) {
        user_error("trace: CTA {} item {}: stamps out of order", c, i);
      }
      cta.items.push_back(it);
    }
  }
  return out;
}

sim::Timeline measured_timeline(KernelTrace const& trace, sim::Schedule const& schedule,
                                double cycles_per_ns) {
  DASH_ASSERT(trace.ctas.size() == schedule.ctas.size());
  DASH_ASSERT(cycles_per_ns > 0);
  auto cycles = [&](std::int64_t ns) {
    return static_cast<sim::Cycles>(std::llround(static_cast<double>(ns) * cycles_per_ns));
  };
  sim::Timeline t;
  t.time_unit = "SM cycles (measured)";
  t.makespan = cycles(trace.span_ns);
  for (std::size_t c = 0; c < trace.ctas.size(); ++c) {
    CtaTrace const& cta = trace.ctas[c];
    t.cta_sms.push_back(cta.sm);
    std::size_t n = 0;
    // Where the CTA's previous step handed its partial over (at first: where the CTA asked for its
    // first item): a work item's first compute slice starts there, as the model's does, so that
    // the item's cost beyond its steps (CostModel::item) is in it.
    std::int64_t previous = cta.items.empty() ? 0 : cta.items.front().at[rt::kItemWait];
    for (auto const& item : schedule.ctas[c].items) {
      bool first = true;
      for (int i : item.q_order) {
        TraceStep const& s = cta.steps[n++];
        sim::Slice compute;
        compute.cta = static_cast<int>(c);
        compute.sm = cta.sm;
        compute.kind = sim::NodeKind::kCompute;
        compute.batch = item.batch;
        compute.head = item.head;
        compute.q_tile = i;
        compute.kv_tile = item.kv_tile;
        compute.ready = cycles(first ? previous : s.at[rt::kStepEntry]);
        compute.start = cycles(first ? previous : s.at[rt::kStepLoaded]);
        compute.finish = cycles(s.at[rt::kStepStaged]);
        previous = s.at[rt::kStepStaged];
        first = false;
        sim::Slice reduce = compute;
        reduce.kind = sim::NodeKind::kReduce;
        reduce.ready = cycles(s.at[rt::kStepTaken]);
        reduce.start = cycles(s.at[rt::kStepAcquired]);
        reduce.finish = cycles(s.at[rt::kStepDone]);
        t.slices.push_back(compute);
        t.slices.push_back(reduce);
      }
    }
  }
  return t;
}

TraceSummary summarize(KernelTrace const& trace) {
  TraceSummary s;
  s.span_ns = static_cast<double>(trace.span_ns);
  double compute = 0, load = 0, buffer = 0, lag = 0, ticket = 0, reduce = 0, gap = 0;
  double end = 0, kv = 0, first = 0;
  std::int64_t gaps = 0;
  for (CtaTrace const& cta : trace.ctas) {
    for (TraceStep const& st : cta.steps) {
      auto d = [&](int a, int b) { return static_cast<double>(st.at[b] - st.at[a]); };
      compute += d(rt::kStepLoaded, rt::kStepStaging);
      load += d(rt::kStepEntry, rt::kStepLoaded);
      buffer += d(rt::kStepStaging, rt::kStepStaged);
      lag += std::max(0.0, d(rt::kStepStaged, rt::kStepTaken));
      ticket += d(rt::kStepTaken, rt::kStepAcquired);
      reduce += d(rt::kStepAcquired, rt::kStepDone);
    }
    s.steps += static_cast<std::int64_t>(cta.steps.size());
    s.items += static_cast<std::int64_t>(cta.items.size());
    // Item boundaries: the previous non-empty item's last partial handed over to this item's
    // first loads in hand.
    std::size_t n = 0;
    TraceItem const* previous = nullptr;
    std::int64_t last_staged = -1;
    for (TraceItem const& item : cta.items) {
      if (item.steps == 0) continue;
      if (previous != nullptr) {
        std::int64_t const loaded = cta.steps[n].at[rt::kStepLoaded];
        gap += static_cast<double>(loaded - last_staged);
        end += static_cast<double>(previous->at[rt::kItemEnd] - last_staged);
        kv += static_cast<double>(item.at[rt::kItemStart] - item.at[rt::kItemWait]);
        first += static_cast<double>(loaded - item.at[rt::kItemStart]);
        ++gaps;
      }
      n += static_cast<std::size_t>(item.steps);
      last_staged = cta.steps[n - 1].at[rt::kStepStaged];
      previous = &item;
    }
  }
  double const steps = static_cast<double>(std::max<std::int64_t>(s.steps, 1));
  s.compute_ns = compute / steps;
  s.load_wait_ns = load / steps;
  s.buffer_wait_ns = buffer / steps;
  s.writer_lag_ns = lag / steps;
  s.ticket_wait_ns = ticket / steps;
  s.reduce_ns = reduce / steps;
  double const boundaries = static_cast<double>(std::max<std::int64_t>(gaps, 1));
  s.item_gap_ns = gap / boundaries;
  s.item_end_ns = end / boundaries;
  s.item_kv_ns = kv / boundaries;
  s.item_first_ns = first / boundaries;
  double const area = static_cast<double>(trace.ctas.size()) * s.span_ns;
  s.busy = area > 0 ? compute / area : 0.0;
  return s;
}

std::string format_summary(TraceSummary const& s) {
  return fmt::format(
      "trace: {} steps, {} items, {:.1f} us; per step (ns): compute {:.0f}, waiting for loads "
      "{:.0f}, for a dQ "
      "buffer {:.0f}; writer: lag {:.0f}, ticket wait {:.0f}, add {:.0f}; between items {:.0f} ns "
      "(dK/dV out {:.0f}, K/V wait {:.0f}, first loads {:.0f}); compute busy {:.1f}%\n",
      s.steps, s.items, s.span_ns / 1000.0, s.compute_ns, s.load_wait_ns, s.buffer_wait_ns,
      s.writer_lag_ns, s.ticket_wait_ns, s.reduce_ns, s.item_gap_ns, s.item_end_ns, s.item_kv_ns,
      s.item_first_ns, 100.0 * s.busy);
}

}  // namespace dash::cli
