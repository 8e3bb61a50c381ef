#pragma once
// Ticket hand-off latency between SMs, as `dash probe` measures it on the GPU: a matrix of one-way
// latencies (half a ping-pong round trip through one ticket word, polled the way the kernels poll
// their tickets), summarized into what the cost model takes (one latency L, docs/model.md) and
// what it does not take yet (two groups of SMs with faster hand-offs within than across).
#include <cstdint>
#include <string>
#include <vector>

namespace dash::sim {

/// Round trips per SM pair a probe takes at most (its kernel keeps them to take their median).
inline constexpr int kMaxHandoffRounds = 256;

/// A measured matrix: `one_way[a * sms + b]`, cycles of SM a's clock from a's release of the
/// ticket to b's seeing it (half the median round trip); the diagonal and pairs not measured are 0.
struct HandoffMatrix {
  int sms = 0;
  std::vector<int> smid;  ///< the hardware SM id of each row (%smid)
  std::vector<std::int64_t> one_way;
  int rounds = 0;        ///< round trips per pair (the median of them is kept)
  double clock_mhz = 0;  ///< SM clock during the probe (clock64 against %globaltimer)
  std::string device;
};

struct HandoffSummary {
  std::int64_t pairs = 0;  ///< measured (ordered) pairs
  std::int64_t min = 0, median = 0, max = 0;
  /// The SMs split in two groups such that a hand-off within a group is faster than one across
  /// (on the H100 and H200: the two L2 partitions), per row 0 or 1; all 0 when no split makes the
  /// pairs across at least 10% slower than those within.
  std::vector<int> group;
  int group1_sms = 0;
  /// Median one-way latency of the pairs within group 0, within group 1 and across (0 where a
  /// class has no pair).
  std::int64_t within0 = 0, within1 = 0, across = 0;
};

/// Throws UserError on a malformed matrix (size, negative entries, fewer than two SMs, no pair).
HandoffSummary summarize(HandoffMatrix const& m);

/// The matrix of a `dash probe --json` document (its fields "sms", "smid", "one_way_cycles",
/// "rounds", "clock_mhz", "device"; the summary fields are ignored). Never trusts the text: any
/// defect is one UserError.
HandoffMatrix handoff_from_json(std::string const& text);
/// The file at `path` (at most 32 MiB), its path in every error.
HandoffMatrix read_handoff_file(std::string const& path);

}  // namespace dash::sim
