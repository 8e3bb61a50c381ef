#include "dagsim/trace.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace dash::sim {
namespace {

std::string json_string(std::string const& text) {
  return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string xml_escape(std::string const& text) {
  std::string out;
  out.reserve(text.size());
  for (char const ch : text) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default:
        // Control characters are not allowed in XML 1.0 text.
        if (static_cast<unsigned char>(ch) >= 0x20 || ch == '\t') out += ch;
    }
  }
  return out;
}

char kind_letter(NodeKind kind) {
  switch (kind) {
    case NodeKind::kCompute: return 'C';
    case NodeKind::kReduce: return 'R';
    case NodeKind::kReduceKv: return 'K';
  }
  return '?';
}

std::string label(NodeKind kind, int batch, int head, int q_tile, int kv_tile) {
  if (kind == NodeKind::kReduceKv) return fmt::format("K b{} h{} j{}", batch, head, kv_tile);
  return fmt::format("{} b{} h{} i{} j{}", kind_letter(kind), batch, head, q_tile, kv_tile);
}

struct Interval {
  Cycles start;
  Cycles finish;
};

// A CTA whose reductions run on a writer warp overlaps them with its compute; those get their own
// track so every track's slices nest properly (Perfetto requires it of "X" events).
std::vector<bool> needs_writer_track(std::vector<Slice> const& slices, int ctas) {
  std::vector<std::vector<Interval>> per_cta(static_cast<std::size_t>(ctas));
  for (auto const& s : slices) {
    per_cta[static_cast<std::size_t>(s.cta)].push_back({std::min(s.ready, s.start), s.finish});
  }
  std::vector<bool> writer(static_cast<std::size_t>(ctas), false);
  for (std::size_t c = 0; c < per_cta.size(); ++c) {
    auto& list = per_cta[c];
    std::sort(list.begin(), list.end(),
              [](Interval a, Interval b) { return a.start < b.start || (a.start == b.start && a.finish < b.finish); });
    for (std::size_t k = 1; k < list.size() && !writer[c]; ++k) {
      writer[c] = list[k].start < list[k - 1].finish;
    }
  }
  return writer;
}

// ---- SVG -----------------------------------------------------------------------------------

constexpr int kMaxRows = 132;
constexpr double kPlotWidth = 1200.0;
constexpr double kLeft = 120.0;
constexpr double kTop = 56.0;
constexpr double kRowHeight = 12.0;
constexpr double kMainBand = 8.0;    // compute and wait
constexpr double kReduceBand = 3.0;  // reductions, under the compute they may overlap
constexpr char const* kComputeColor = "#4c78a8";
constexpr char const* kReduceColor = "#54a24b";
constexpr char const* kWaitColor = "#e45756";

/// The first of 1, 2, 5 x 10^k that gives at most ~8 ticks.
Cycles tick_step(Cycles span) {
  Cycles step = 1;
  while (true) {
    for (Cycles const m : {Cycles{1}, Cycles{2}, Cycles{5}}) {
      if (span / (step * m) <= 8) return step * m;
    }
    step *= 10;
  }
}

std::string short_cycles(Cycles value) {
  if (value != 0 && value % 1'000'000'000 == 0) return fmt::format("{}G", value / 1'000'000'000);
  if (value != 0 && value % 1'000'000 == 0) return fmt::format("{}M", value / 1'000'000);
  if (value != 0 && value % 1'000 == 0) return fmt::format("{}k", value / 1'000);
  return fmt::format("{}", value);
}

struct Rows {
  int count = 0;
  std::vector<std::string> labels;
  // Row of a slice: by CTA when they fit, else by SM (grouped when even SMs do not fit).
  bool by_cta = true;
  int sms = 1;
  [[nodiscard]] int row_of(Slice const& s) const {
    if (by_cta) return s.cta;
    if (sms <= kMaxRows) return s.sm;
    return static_cast<int>(std::int64_t{s.sm} * kMaxRows / sms);
  }
};

Rows plan_rows(SimResult const& result, int sms) {
  Rows rows;
  rows.sms = std::max(sms, 1);
  int const ctas = static_cast<int>(result.ctas.size());
  if (ctas <= kMaxRows) {
    rows.count = ctas;
    for (int c = 0; c < ctas; ++c) {
      rows.labels.push_back(fmt::format("CTA {} (SM {})", c, result.ctas[static_cast<std::size_t>(c)].sm));
    }
    return rows;
  }
  rows.by_cta = false;
  if (rows.sms <= kMaxRows) {
    rows.count = rows.sms;
    for (int m = 0; m < rows.sms; ++m) rows.labels.push_back(fmt::format("SM {}", m));
    return rows;
  }
  rows.count = kMaxRows;
  for (int r = 0; r < kMaxRows; ++r) {
    // SMs m with floor(m * rows / sms) == r.
    int const first = static_cast<int>((std::int64_t{r} * rows.sms + kMaxRows - 1) / kMaxRows);
    int const last = static_cast<int>((std::int64_t{r + 1} * rows.sms + kMaxRows - 1) / kMaxRows) - 1;
    rows.labels.push_back(fmt::format("SMs {}-{}", first, last));
  }
  return rows;
}

struct Pixels {
  double x0;
  double x1;
};

/// Sorts and merges intervals whose gap is under half a pixel; a lone sliver keeps a minimum
/// width so it stays visible.
std::vector<Pixels> merge(std::vector<Pixels> list) {
  std::sort(list.begin(), list.end(), [](Pixels a, Pixels b) { return a.x0 < b.x0; });
  std::vector<Pixels> merged;
  for (auto const& p : list) {
    if (!merged.empty() && p.x0 <= merged.back().x1 + 0.5) {
      merged.back().x1 = std::max(merged.back().x1, p.x1);
    } else {
      merged.push_back(p);
    }
  }
  for (auto& p : merged) p.x1 = std::max(p.x1, p.x0 + 0.5);
  return merged;
}

void append_rects(std::string& out, char const* color, std::vector<std::vector<Pixels>> const& rows,
                  double band_offset, double band_height) {
  fmt::format_to(std::back_inserter(out), "<g fill=\"{}\">\n", color);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    double const y = kTop + static_cast<double>(r) * kRowHeight + band_offset;
    for (auto const& p : merge(rows[r])) {
      fmt::format_to(std::back_inserter(out), "<rect x=\"{:.1f}\" y=\"{:.0f}\" width=\"{:.1f}\" height=\"{:.0f}\"/>\n",
                     kLeft + p.x0, y, p.x1 - p.x0, band_height);
    }
  }
  out += "</g>\n";
}

}  // namespace

std::string node_label(Node const& node) {
  return label(node.kind, node.batch, node.head, node.q_tile, node.kv_tile);
}

std::string slice_label(Slice const& slice) {
  return label(slice.kind, slice.batch, slice.head, slice.q_tile, slice.kv_tile);
}

std::string to_chrome_trace(SimResult const& result, std::string const& title) {
  std::vector<Slice> const slices = result.slices();
  int const ctas = static_cast<int>(result.ctas.size());
  std::vector<bool> const writer = needs_writer_track(slices, ctas);
  std::string out;
  out.reserve(slices.size() * 170 + static_cast<std::size_t>(ctas) * 200 + 512);
  fmt::format_to(std::back_inserter(out),
                 "{{\"displayTimeUnit\":\"ns\",\"otherData\":{{\"title\":{},\"time_unit\":\"model "
                 "cycles shown as microseconds\",\"makespan_cycles\":{}}},\n\"traceEvents\":[\n",
                 json_string(title), result.makespan);
  fmt::format_to(std::back_inserter(out),
                 "{{\"ph\":\"M\",\"pid\":0,\"name\":\"process_name\",\"args\":{{\"name\":{}}}}}",
                 json_string(title));
  // Writer tracks get tids after all CTAs; sort indices keep each next to its CTA.
  for (int c = 0; c < ctas; ++c) {
    int const sm = result.ctas[static_cast<std::size_t>(c)].sm;
    fmt::format_to(std::back_inserter(out),
                   ",\n{{\"ph\":\"M\",\"pid\":0,\"tid\":{0},\"name\":\"thread_name\",\"args\":{{\"name\":"
                   "\"CTA {0} (SM {1})\"}}}},\n{{\"ph\":\"M\",\"pid\":0,\"tid\":{0},\"name\":"
                   "\"thread_sort_index\",\"args\":{{\"sort_index\":{2}}}}}",
                   c, sm, 2 * c);
    if (writer[static_cast<std::size_t>(c)]) {
      fmt::format_to(std::back_inserter(out),
                     ",\n{{\"ph\":\"M\",\"pid\":0,\"tid\":{0},\"name\":\"thread_name\",\"args\":{{"
                     "\"name\":\"CTA {1} (SM {2}) dQ writer\"}}}},\n{{\"ph\":\"M\",\"pid\":0,\"tid\":{0},"
                     "\"name\":\"thread_sort_index\",\"args\":{{\"sort_index\":{3}}}}}",
                     ctas + c, c, sm, 2 * c + 1);
    }
  }
  for (auto const& s : slices) {
    bool const on_writer = s.kind != NodeKind::kCompute && writer[static_cast<std::size_t>(s.cta)];
    int const tid = on_writer ? ctas + s.cta : s.cta;
    std::string const name = slice_label(s);
    char const* category = s.kind == NodeKind::kCompute ? "compute" : "reduce";
    if (s.start > s.ready) {
      fmt::format_to(std::back_inserter(out),
                     ",\n{{\"ph\":\"X\",\"pid\":0,\"tid\":{},\"name\":\"wait\",\"cat\":\"wait\","
                     "\"ts\":{},\"dur\":{},\"args\":{{\"for\":\"{}\"}}}}",
                     tid, s.ready, s.start - s.ready, name);
    }
    fmt::format_to(std::back_inserter(out),
                   ",\n{{\"ph\":\"X\",\"pid\":0,\"tid\":{},\"name\":\"{}\",\"cat\":\"{}\",\"ts\":{},"
                   "\"dur\":{},\"args\":{{\"sm\":{}}}}}",
                   tid, name, category, s.start, s.finish - s.start, s.sm);
  }
  out += "\n]}\n";
  return out;
}

std::string to_svg_gantt(SimResult const& result, int sms, std::string const& title) {
  std::vector<Slice> const slices = result.slices();
  Rows const rows = plan_rows(result, sms);
  Cycles const span = std::max<Cycles>(result.makespan, 1);
  double const scale = kPlotWidth / static_cast<double>(span);
  auto const n_rows = static_cast<std::size_t>(rows.count);
  std::vector<std::vector<Pixels>> compute(n_rows), reduce(n_rows), wait(n_rows);
  for (auto const& s : slices) {
    int const row = rows.row_of(s);
    if (row < 0 || row >= rows.count) continue;
    auto const r = static_cast<std::size_t>(row);
    Pixels const p{static_cast<double>(s.start) * scale, static_cast<double>(s.finish) * scale};
    (s.kind == NodeKind::kCompute ? compute : reduce)[r].push_back(p);
    if (s.start > s.ready) {
      wait[r].push_back({static_cast<double>(s.ready) * scale, static_cast<double>(s.start) * scale});
    }
  }
  double const plot_bottom = kTop + static_cast<double>(rows.count) * kRowHeight;
  double const width = kLeft + kPlotWidth + 30.0;
  double const height = plot_bottom + 44.0;
  std::string out;
  fmt::format_to(std::back_inserter(out),
                 "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
                 "width=\"{0:.0f}\" height=\"{1:.0f}\" viewBox=\"0 0 {0:.0f} {1:.0f}\" "
                 "font-family=\"sans-serif\" font-size=\"10\">\n"
                 "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
                 "<text x=\"{2:.0f}\" y=\"18\" font-size=\"14\">{3}</text>\n"
                 "<text x=\"{2:.0f}\" y=\"34\">makespan {4} cycles, {5} CTAs, {6} slices</text>\n",
                 width, height, kLeft, xml_escape(title), result.makespan, result.ctas.size(),
                 slices.size());
  // Legend.
  double x = kLeft + kPlotWidth - 300.0;
  for (auto const& [color, name] : {std::pair{kComputeColor, "compute"}, std::pair{kReduceColor, "dQ reduce"},
                                    std::pair{kWaitColor, "wait"}}) {
    fmt::format_to(std::back_inserter(out),
                   "<rect x=\"{:.0f}\" y=\"26\" width=\"10\" height=\"10\" fill=\"{}\"/><text x=\"{:.0f}\" "
                   "y=\"35\">{}</text>\n",
                   x, color, x + 14.0, name);
    x += 90.0;
  }
  // Row labels and guide lines.
  out += "<g fill=\"#333\" text-anchor=\"end\">\n";
  for (int r = 0; r < rows.count; ++r) {
    fmt::format_to(std::back_inserter(out), "<text x=\"{:.0f}\" y=\"{:.0f}\">{}</text>\n", kLeft - 6.0,
                   kTop + r * kRowHeight + kMainBand, xml_escape(rows.labels[static_cast<std::size_t>(r)]));
  }
  out += "</g>\n";
  append_rects(out, kComputeColor, compute, 0.0, kMainBand);
  append_rects(out, kWaitColor, wait, 0.0, kMainBand);
  append_rects(out, kReduceColor, reduce, kMainBand, kReduceBand);
  // Time axis.
  fmt::format_to(std::back_inserter(out),
                 "<g stroke=\"#333\"><line x1=\"{0:.0f}\" y1=\"{1:.0f}\" x2=\"{2:.0f}\" y2=\"{1:.0f}\"/>",
                 kLeft, plot_bottom + 2.0, kLeft + kPlotWidth);
  Cycles const step = tick_step(span);
  for (Cycles t = 0; t <= span; t += step) {
    fmt::format_to(std::back_inserter(out), "<line x1=\"{0:.1f}\" y1=\"{1:.0f}\" x2=\"{0:.1f}\" y2=\"{2:.0f}\"/>",
                   kLeft + static_cast<double>(t) * scale, plot_bottom + 2.0, plot_bottom + 6.0);
  }
  out += "</g>\n<g fill=\"#333\" text-anchor=\"middle\">\n";
  for (Cycles t = 0; t <= span; t += step) {
    fmt::format_to(std::back_inserter(out), "<text x=\"{:.1f}\" y=\"{:.0f}\">{}</text>\n",
                   kLeft + static_cast<double>(t) * scale, plot_bottom + 18.0, short_cycles(t));
  }
  fmt::format_to(std::back_inserter(out), "<text x=\"{:.0f}\" y=\"{:.0f}\">model cycles</text>\n</g>\n",
                 kLeft + kPlotWidth / 2.0, plot_bottom + 34.0);
  out += "</svg>\n";
  return out;
}

}  // namespace dash::sim
