#include "dagsim/model/handoff.h"

#include <algorithm>
#include <cstddef>

#include "dagsim/core/error.h"
#include "dagsim/core/json_input.h"
#include "dagsim/core/median.h"

namespace dash::sim {

HandoffSummary summarize(HandoffMatrix const& m) {
  if (m.sms < 2) user_error("hand-off matrix: needs at least 2 SMs, got {}", m.sms);
  auto const n = static_cast<std::size_t>(m.sms);
  if (m.one_way.size() != n * n) {
    user_error("hand-off matrix: {} entries for {} SMs (expected {})", m.one_way.size(), m.sms,
               n * n);
  }
  if (m.smid.size() != n) user_error("hand-off matrix: {} SM ids for {} SMs", m.smid.size(), m.sms);
  {
    std::vector<int> ids(m.smid);
    std::sort(ids.begin(), ids.end());
    if (std::adjacent_find(ids.begin(), ids.end()) != ids.end())
      user_error("hand-off matrix: an SM id appears twice");
  }
  HandoffSummary s;
  std::vector<std::int64_t> all;
  for (std::size_t a = 0; a < n; ++a) {
    for (std::size_t b = 0; b < n; ++b) {
      std::int64_t const v = m.one_way[a * n + b];
      if (v < 0) user_error("hand-off matrix: negative latency {} at ({}, {})", v, a, b);
      if (a == b || v == 0) continue;
      all.push_back(v);
    }
  }
  if (all.empty()) user_error("hand-off matrix: no pair was measured");
  s.pairs = static_cast<std::int64_t>(all.size());
  s.min = *std::min_element(all.begin(), all.end());
  s.max = *std::max_element(all.begin(), all.end());
  s.median = upper_median(all);

  // Two groups by the pairs (both directions of a pair averaged): from a split at the median
  // latency to the first SM, each SM in turn joins the group its median latency to is lower,
  // until none moves (at most 100 passes: deterministic).
  auto pair = [&](std::size_t a, std::size_t b) -> double {
    std::int64_t const x = m.one_way[a * n + b];
    std::int64_t const y = m.one_way[b * n + a];
    if (x > 0 && y > 0) return 0.5 * static_cast<double>(x + y);
    return static_cast<double>(std::max(x, y));  // 0: not measured either way
  };
  std::vector<int> g(n, 0);
  {
    std::vector<double> to_first;
    for (std::size_t b = 1; b < n; ++b) {
      if (pair(0, b) > 0) to_first.push_back(pair(0, b));
    }
    // At or above their (upper) median: with two groups of about equal size, the first of the
    // other group's latencies; one stray latency moves it little.
    std::sort(to_first.begin(), to_first.end());
    double const cut = to_first.empty() ? 0.0 : to_first[to_first.size() / 2];
    for (std::size_t b = 1; b < n; ++b) g[b] = pair(0, b) > 0 && pair(0, b) >= cut ? 1 : 0;
  }
  // Medians, not means: one stray entry does not move an SM.
  for (int pass = 0; pass < 100; ++pass) {
    bool moved = false;
    for (std::size_t a = 0; a < n; ++a) {
      std::vector<double> to[2];
      for (std::size_t b = 0; b < n; ++b) {
        double const v = a == b ? 0.0 : pair(a, b);
        if (v > 0) to[g[b]].push_back(v);
      }
      if (to[0].empty() || to[1].empty()) continue;
      for (auto& v : to)
        std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
      int const want = to[1][to[1].size() / 2] < to[0][to[0].size() / 2] ? 1 : 0;
      if (want != g[a]) {
        g[a] = want;
        moved = true;
      }
    }
    if (!moved) break;
  }
  if (g[0] == 1) {  // the first SM's group is group 0
    for (int& x : g) x = 1 - x;
  }
  std::vector<std::int64_t> classes[3];  // within 0, within 1, across
  for (std::size_t a = 0; a < n; ++a) {
    for (std::size_t b = 0; b < n; ++b) {
      std::int64_t const v = m.one_way[a * n + b];
      if (a == b || v == 0) continue;
      classes[g[a] != g[b] ? 2 : g[a]].push_back(v);
    }
  }
  std::vector<std::int64_t> within(classes[0]);
  within.insert(within.end(), classes[1].begin(), classes[1].end());
  bool const split =
      !classes[2].empty() && !within.empty() &&
      static_cast<double>(upper_median(classes[2])) >= 1.1 * static_cast<double>(upper_median(within));
  if (split) {
    s.group = g;
    s.within0 = upper_median(classes[0]);
    s.within1 = upper_median(classes[1]);
    s.across = upper_median(classes[2]);
  } else {
    s.group.assign(n, 0);
    s.within0 = s.median;
  }
  s.group1_sms = static_cast<int>(std::count(s.group.begin(), s.group.end(), 1));
  return s;
}

HandoffMatrix handoff_from_json(std::string const& text) {
  nlohmann::json const j = parse_user_json(text, 4);
  if (!j.is_object()) user_error("a probe matrix must be a JSON object");
  auto integer = [&](char const* key, std::int64_t lo, std::int64_t hi) {
    if (!j.contains(key) || !j[key].is_number_integer())
      user_error("probe matrix: \"{}\" must be an integer", key);
    auto const v = j[key].get<std::int64_t>();
    if (v < lo || v > hi)
      user_error("probe matrix: \"{}\" must be in {}..{}, got {}", key, lo, hi, v);
    return v;
  };
  HandoffMatrix m;
  m.sms = static_cast<int>(integer("sms", 2, 1024));
  m.rounds = static_cast<int>(integer("rounds", 1, kMaxHandoffRounds));
  if (!j.contains("clock_mhz") || !j["clock_mhz"].is_number() || j["clock_mhz"].get<double>() < 0 ||
      j["clock_mhz"].get<double>() > 100000) {
    user_error("probe matrix: \"clock_mhz\" must be a number in 0..100000");
  }
  m.clock_mhz = j["clock_mhz"].get<double>();
  if (!j.contains("device") || !j["device"].is_string())
    user_error("probe matrix: \"device\" must be a string");
  m.device = j["device"].get<std::string>().substr(0, 256);
  auto const n = static_cast<std::size_t>(m.sms);
  auto ints = [&](char const* key, std::size_t count, std::int64_t lo, std::int64_t hi) {
    if (!j.contains(key) || !j[key].is_array() || j[key].size() != count) {
      user_error("probe matrix: \"{}\" must be an array of {} integers", key, count);
    }
    std::vector<std::int64_t> out;
    out.reserve(count);
    for (auto const& v : j[key]) {
      if (!v.is_number_integer() || v.get<std::int64_t>() < lo || v.get<std::int64_t>() > hi) {
        user_error("probe matrix: \"{}\" holds an entry that is not an integer in {}..{}", key, lo,
                   hi);
      }
      out.push_back(v.get<std::int64_t>());
    }
    return out;
  };
  for (std::int64_t const id : ints("smid", n, 0, 1 << 20)) m.smid.push_back(static_cast<int>(id));
  m.one_way = ints("one_way_cycles", n * n, 0, std::int64_t{1} << 40);
  return m;
}

HandoffMatrix read_handoff_file(std::string const& path) {
  return read_user_document(path, "probe matrix", std::uintmax_t{32} << 20,
                            [](std::string const& text) { return handoff_from_json(text); });
}

}  // namespace dash::sim
