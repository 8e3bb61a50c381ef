#include "dagsim/model/trace.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dagsim/core/schedule_io.h"

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
    std::sort(list.begin(), list.end(), [](Interval a, Interval b) {
      return a.start < b.start || (a.start == b.start && a.finish < b.finish);
    });
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
constexpr double kMainBand = 7.0;    // compute, and waits that stall it
constexpr double kReduceBand = 4.0;  // reductions (and the writer warp's waits), under the compute
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

Rows plan_rows(Timeline const& timeline, int sms) {
  Rows rows;
  rows.sms = std::max(sms, 1);
  int const ctas = static_cast<int>(timeline.cta_sms.size());
  if (ctas <= kMaxRows) {
    rows.count = ctas;
    for (int c = 0; c < ctas; ++c) {
      rows.labels.push_back(
          fmt::format("CTA {} (SM {})", c, timeline.cta_sms[static_cast<std::size_t>(c)]));
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
    int const last =
        static_cast<int>((std::int64_t{r + 1} * rows.sms + kMaxRows - 1) / kMaxRows) - 1;
    rows.labels.push_back(fmt::format("SMs {}-{}", first, last));
  }
  return rows;
}

/// Per bin of kBin pixel columns of one row and one kind, the fraction of it that the kind
/// covers. Drawing coverage instead of slices bounds the file by the bin count, whatever the
/// number of steps; bins a few pixels wide keep a steady stream of short slices (reductions
/// every 2-3 pixels) one shaded run instead of a comb of slivers.
class Coverage {
 public:
  explicit Coverage(std::size_t rows) : columns_(rows, std::vector<double>(kColumns, 0.0)) {}

  void add(std::size_t row, double px0, double px1) {
    auto& col = columns_[row];
    double const x0 = std::clamp(px0 / kBin, 0.0, static_cast<double>(kColumns));
    double const x1 = std::clamp(px1 / kBin, x0, static_cast<double>(kColumns));
    auto const first = static_cast<std::size_t>(x0);
    for (std::size_t k = first; k < kColumns && static_cast<double>(k) < x1; ++k) {
      double const lo = std::max(x0, static_cast<double>(k));
      double const hi = std::min(x1, static_cast<double>(k + 1));
      col[k] = std::min(1.0, col[k] + (hi - lo));
    }
  }

  /// Runs of columns at the same shade; any coverage at all shows at least a quarter shade, so
  /// a lone short slice stays visible.
  void append_svg(std::string& out, char const* color, double top, double band_offset,
                  double band_height) const {
    fmt::format_to(std::back_inserter(out), "<g fill=\"{}\">\n", color);
    for (std::size_t r = 0; r < columns_.size(); ++r) {
      double const y = top + static_cast<double>(r) * kRowHeight + band_offset;
      auto level = [&](std::size_t k) {
        double const c = columns_[r][k];
        return c <= 0.0 ? 0 : std::clamp(static_cast<int>(c * 4.0 + 0.999), 1, 4);
      };
      std::size_t k = 0;
      while (k < kColumns) {
        int const l = level(k);
        std::size_t end = k + 1;
        while (end < kColumns && level(end) == l) ++end;
        if (l > 0) {
          fmt::format_to(std::back_inserter(out),
                         "<rect x=\"{:.0f}\" y=\"{:.0f}\" width=\"{}\" height=\"{:.0f}\"{}/>\n",
                         kLeft + static_cast<double>(k) * kBin, y, (end - k) * kBinPx, band_height,
                         l == 4 ? std::string() : fmt::format(" fill-opacity=\"{:.2f}\"", l / 4.0));
        }
        k = end;
      }
    }
    out += "</g>\n";
  }

 private:
  static constexpr std::size_t kBinPx = 4;
  static constexpr double kBin = static_cast<double>(kBinPx);
  static constexpr std::size_t kColumns = static_cast<std::size_t>(kPlotWidth) / kBinPx;
  std::vector<std::vector<double>> columns_;
};

}  // namespace

std::string node_label(Node const& node) {
  return label(node.kind, node.batch, node.head, node.q_tile, node.kv_tile);
}

std::string slice_label(Slice const& slice) {
  return label(slice.kind, slice.batch, slice.head, slice.q_tile, slice.kv_tile);
}

Timeline timeline_of(SimResult const& result) {
  Timeline t;
  t.slices = result.slices();
  for (auto const& c : result.ctas) t.cta_sms.push_back(c.sm);
  t.makespan = result.makespan;
  return t;
}

std::string to_chrome_trace(SimResult const& result, std::string const& title) {
  return to_chrome_trace(timeline_of(result), title);
}

std::string to_svg_gantt(SimResult const& result, int sms, std::string const& title) {
  return to_svg_gantt(timeline_of(result), sms, title);
}

std::string to_chrome_trace(Timeline const& timeline, std::string const& title,
                            TraceMeta const* meta) {
  std::vector<Slice> const& slices = timeline.slices;
  int const ctas = static_cast<int>(timeline.cta_sms.size());
  std::vector<bool> const writer = needs_writer_track(slices, ctas);
  std::string out;
  out.reserve(slices.size() * 170 + static_cast<std::size_t>(ctas) * 200 + 512);
  fmt::format_to(std::back_inserter(out),
                 "{{\"displayTimeUnit\":\"ns\",\"otherData\":{{\"title\":{},\"time_unit\":{},"
                 "\"makespan_cycles\":{}",
                 json_string(title), json_string(timeline.time_unit + " shown as microseconds"),
                 timeline.makespan);
  if (meta != nullptr) {
    fmt::format_to(std::back_inserter(out),
                   ",\"problem\":{},\"family\":{},\"sms\":{},\"source\":{}",
                   problem_to_json(meta->problem), json_string(meta->family), meta->sms,
                   json_string(meta->source));
  }
  out += "},\n\"traceEvents\":[\n";
  fmt::format_to(std::back_inserter(out),
                 "{{\"ph\":\"M\",\"pid\":0,\"name\":\"process_name\",\"args\":{{\"name\":{}}}}}",
                 json_string(title));
  // Writer tracks get tids after all CTAs; sort indices keep each next to its CTA.
  for (int c = 0; c < ctas; ++c) {
    int const sm = timeline.cta_sms[static_cast<std::size_t>(c)];
    fmt::format_to(
        std::back_inserter(out),
        ",\n{{\"ph\":\"M\",\"pid\":0,\"tid\":{0},\"name\":\"thread_name\",\"args\":{{\"name\":"
        "\"CTA {0} (SM {1})\"}}}},\n{{\"ph\":\"M\",\"pid\":0,\"tid\":{0},\"name\":"
        "\"thread_sort_index\",\"args\":{{\"sort_index\":{2}}}}}",
        c, sm, 2 * c);
    if (writer[static_cast<std::size_t>(c)]) {
      fmt::format_to(
          std::back_inserter(out),
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
    fmt::format_to(
        std::back_inserter(out),
        ",\n{{\"ph\":\"X\",\"pid\":0,\"tid\":{},\"name\":\"{}\",\"cat\":\"{}\",\"ts\":{},"
        "\"dur\":{}}}",
        tid, name, category, s.start, s.finish - s.start);
  }
  out += "\n]}\n";
  return out;
}

namespace {

/// One chart at vertical offset y0 on a time axis of `span` cycles: its heading, legend, rows and
/// axis. Returns its height.
double append_chart(std::string& out, Timeline const& timeline, int sms, std::string const& title,
                    Cycles span, double y0) {
  std::vector<Slice> const& slices = timeline.slices;
  Rows const rows = plan_rows(timeline, sms);
  span = std::max<Cycles>(span, 1);
  double const scale = kPlotWidth / static_cast<double>(span);
  auto const n_rows = static_cast<std::size_t>(rows.count);
  // A wait on the writer warp does not stall the SM's compute: it goes in the reduce band.
  std::vector<bool> const writer =
      needs_writer_track(slices, static_cast<int>(timeline.cta_sms.size()));
  Coverage compute(n_rows), reduce(n_rows), compute_wait(n_rows), writer_wait(n_rows);
  for (auto const& s : slices) {
    int const row = rows.row_of(s);
    if (row < 0 || row >= rows.count) continue;
    auto const r = static_cast<std::size_t>(row);
    bool const on_writer = s.kind != NodeKind::kCompute && writer[static_cast<std::size_t>(s.cta)];
    (s.kind == NodeKind::kCompute ? compute : reduce)
        .add(r, static_cast<double>(s.start) * scale, static_cast<double>(s.finish) * scale);
    if (s.start > s.ready) {
      (on_writer ? writer_wait : compute_wait)
          .add(r, static_cast<double>(s.ready) * scale, static_cast<double>(s.start) * scale);
    }
  }
  double const top = y0 + kTop;
  double const plot_bottom = top + static_cast<double>(rows.count) * kRowHeight;
  fmt::format_to(std::back_inserter(out),
                 "<g transform=\"translate(0,{:.0f})\">\n"
                 "<text x=\"{:.0f}\" y=\"18\" font-size=\"14\">{}</text>\n"
                 "<text x=\"{:.0f}\" y=\"34\">makespan {} {}, {} CTAs, {} slices</text>\n",
                 y0, kLeft, xml_escape(title), kLeft, timeline.makespan,
                 xml_escape(timeline.time_unit), timeline.cta_sms.size(), slices.size());
  // Legend.
  double x = kLeft + kPlotWidth - 300.0;
  for (auto const& [color, name] :
       {std::pair{kComputeColor, "compute"}, std::pair{kReduceColor, "dQ reduce"},
        std::pair{kWaitColor, "wait"}}) {
    fmt::format_to(
        std::back_inserter(out),
        "<rect x=\"{:.0f}\" y=\"26\" width=\"10\" height=\"10\" fill=\"{}\"/><text x=\"{:.0f}\" "
        "y=\"35\">{}</text>\n",
        x, color, x + 14.0, name);
    x += 90.0;
  }
  out += "</g>\n";
  // Row labels and guide lines.
  out += "<g fill=\"#333\" text-anchor=\"end\">\n";
  for (int r = 0; r < rows.count; ++r) {
    fmt::format_to(std::back_inserter(out), "<text x=\"{:.0f}\" y=\"{:.0f}\">{}</text>\n",
                   kLeft - 6.0, top + r * kRowHeight + kMainBand,
                   xml_escape(rows.labels[static_cast<std::size_t>(r)]));
  }
  out += "</g>\n";
  compute.append_svg(out, kComputeColor, top, 0.0, kMainBand);
  compute_wait.append_svg(out, kWaitColor, top, 0.0, kMainBand);
  writer_wait.append_svg(out, kWaitColor, top, kMainBand, kReduceBand);
  reduce.append_svg(out, kReduceColor, top, kMainBand, kReduceBand);
  // Time axis.
  fmt::format_to(
      std::back_inserter(out),
      "<g stroke=\"#333\"><line x1=\"{0:.0f}\" y1=\"{1:.0f}\" x2=\"{2:.0f}\" y2=\"{1:.0f}\"/>",
      kLeft, plot_bottom + 2.0, kLeft + kPlotWidth);
  Cycles const step = tick_step(span);
  for (Cycles t = 0; t <= span; t += step) {
    fmt::format_to(std::back_inserter(out),
                   "<line x1=\"{0:.1f}\" y1=\"{1:.0f}\" x2=\"{0:.1f}\" y2=\"{2:.0f}\"/>",
                   kLeft + static_cast<double>(t) * scale, plot_bottom + 2.0, plot_bottom + 6.0);
  }
  out += "</g>\n<g fill=\"#333\" text-anchor=\"middle\">\n";
  for (Cycles t = 0; t <= span; t += step) {
    fmt::format_to(std::back_inserter(out), "<text x=\"{:.1f}\" y=\"{:.0f}\">{}</text>\n",
                   kLeft + static_cast<double>(t) * scale, plot_bottom + 18.0, short_cycles(t));
  }
  fmt::format_to(std::back_inserter(out), "<text x=\"{:.0f}\" y=\"{:.0f}\">{}</text>\n</g>\n",
                 kLeft + kPlotWidth / 2.0, plot_bottom + 34.0, xml_escape(timeline.time_unit));
  return plot_bottom + 44.0 - y0;
}

std::string svg_document(std::string const& body, double height) {
  double const width = kLeft + kPlotWidth + 30.0;
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
      "width=\"{0:.0f}\" height=\"{1:.0f}\" viewBox=\"0 0 {0:.0f} {1:.0f}\" "
      "font-family=\"sans-serif\" font-size=\"10\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n{2}</svg>\n",
      width, height, body);
}

}  // namespace

std::string to_svg_gantt(Timeline const& timeline, int sms, std::string const& title) {
  std::string body;
  double const height = append_chart(body, timeline, sms, title, timeline.makespan, 0.0);
  return svg_document(body, height);
}

std::string to_svg_gantt_pair(Timeline const& top, std::string const& top_title,
                              Timeline const& bottom, std::string const& bottom_title, int sms,
                              std::string const& title) {
  Cycles const span = std::max(top.makespan, bottom.makespan);
  std::string body;
  fmt::format_to(std::back_inserter(body),
                 "<text x=\"{:.0f}\" y=\"20\" font-size=\"16\">{}</text>\n", kLeft,
                 xml_escape(title));
  double y = 28.0;
  y += append_chart(body, top, sms, top_title, span, y);
  y += append_chart(body, bottom, sms, bottom_title, span, y);
  return svg_document(body, y);
}

}  // namespace dash::sim
