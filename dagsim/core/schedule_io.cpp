#include "dagsim/core/schedule_io.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <set>
#include <string_view>
#include <system_error>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dagsim/core/error.h"
#include "dagsim/core/json_input.h"
#include "dagsim/core/tile_index.h"

namespace dash::sim {
namespace {

using nlohmann::json;

constexpr std::string_view kVersion = "dash.schedule/1";
// The deepest legal value is a Q tile id: root, ctas, cta, items, item, q, id.
constexpr int kMaxDepth = 8;
// A 2^27-step schedule (validate_problem's limit) prints to well under this.
constexpr std::uintmax_t kMaxFileBytes = std::uintmax_t{1} << 30;
constexpr std::size_t kMaxNameLength = 256;

// ---- writing -------------------------------------------------------------------------------

std::string quoted(std::string const& text) { return json_quoted(text); }

void append_ints(std::string& out, std::vector<int> const& values) {
  out += '[';
  for (std::size_t k = 0; k < values.size(); ++k) {
    if (k > 0) out += ", ";
    fmt::format_to(std::back_inserter(out), "{}", values[k]);
  }
  out += ']';
}

void append_problem(std::string& out, Problem const& p) {
  fmt::format_to(
      std::back_inserter(out),
      "{{\"batch\": {}, \"q_heads\": {}, \"kv_heads\": {}, \"seqlen_q\": {}, "
      "\"seqlen_k\": {}, \"head_dim\": {}, \"tile_m\": {}, \"tile_n\": {}, \"mask\": {}, ",
      p.batch, p.q_heads, p.kv_heads, p.seqlen_q, p.seqlen_k, p.head_dim, p.tile_m, p.tile_n,
      quoted(to_string(p.mask)));
  out += "\"seqlens_q\": ";
  append_ints(out, p.seqlens_q);
  out += ", \"seqlens_k\": ";
  append_ints(out, p.seqlens_k);
  out += '}';
}

// One line per CTA and per reduction target: big schedules stay diffable line by line.
void append_order_lines(std::string& out, std::vector<std::vector<int>> const& order) {
  if (order.empty()) {
    out += "[]";
    return;
  }
  out += "[\n";
  for (std::size_t t = 0; t < order.size(); ++t) {
    out += "    ";
    append_ints(out, order[t]);
    out += t + 1 < order.size() ? ",\n" : "\n";
  }
  out += "  ]";
}

// ---- reading -------------------------------------------------------------------------------

std::string member_path(std::string const& path, std::string_view key) {
  return path.empty() ? std::string(key) : fmt::format("{}.{}", path, key);
}

std::string index_path(std::string const& path, std::size_t index) {
  return fmt::format("{}[{}]", path, index);
}

std::string where(std::string const& path) { return path.empty() ? "document" : path; }

char const* type_name(json const& v) {
  if (v.is_number_float()) {
    // Integers beyond 64 bits are parsed as floats too; say which case it is.
    double const d = v.get<double>();
    return std::fabs(d) >= 9.2e18 ? "a number beyond the integer range" : "a fractional number";
  }
  return v.type_name();
}

void expect_object(json const& v, std::string const& path,
                   std::initializer_list<std::string_view> allowed) {
  if (!v.is_object()) user_error("{}: expected an object, got {}", where(path), type_name(v));
  for (auto const& [key, value] : v.items()) {
    bool known = false;
    for (auto const name : allowed) known = known || key == name;
    if (!known) user_error("{}: unknown key '{}'", where(path), key);
  }
}

json const& required(json const& obj, std::string const& path, std::string_view key) {
  auto const it = obj.find(key);
  if (it == obj.end()) user_error("{}: missing key '{}'", where(path), key);
  return *it;
}

json const* optional(json const& obj, std::string_view key) {
  auto const it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

std::int64_t as_int(json const& v, std::string const& path, std::int64_t lo, std::int64_t hi) {
  if (!v.is_number_integer()) user_error("{}: expected an integer, got {}", path, type_name(v));
  if (v.is_number_unsigned()) {
    // nlohmann stores every non-negative literal as unsigned, so lo matters here too.
    auto const value = v.get<std::uint64_t>();
    if (value > static_cast<std::uint64_t>(hi) ||
        (lo > 0 && value < static_cast<std::uint64_t>(lo))) {
      user_error("{}: {} is out of range {}..{}", path, value, lo, hi);
    }
    return static_cast<std::int64_t>(value);
  }
  auto const value = v.get<std::int64_t>();
  if (value < lo || value > hi) user_error("{}: {} is out of range {}..{}", path, value, lo, hi);
  return value;
}

int as_int32(json const& v, std::string const& path, int lo, int hi) {
  return static_cast<int>(as_int(v, path, lo, hi));
}

std::string as_string(json const& v, std::string const& path) {
  if (!v.is_string()) user_error("{}: expected a string, got {}", path, type_name(v));
  auto const& text = v.get_ref<std::string const&>();
  if (text.size() > kMaxNameLength) {
    user_error("{}: string of {} bytes is longer than {}", path, text.size(), kMaxNameLength);
  }
  return text;
}

json const& as_array(json const& v, std::string const& path, std::size_t max_size) {
  if (!v.is_array()) user_error("{}: expected an array, got {}", path, type_name(v));
  if (v.size() > max_size) {
    user_error("{}: {} entries, at most {} allowed here", path, v.size(), max_size);
  }
  return v;
}

/// Runs `read` and prefixes a UserError from a lower layer (validate_problem, parse_mask) with
/// the JSON path it concerns, unless it already names one.
template <typename Read>
auto at_path(std::string const& path, Read&& read) {
  try {
    return read();
  } catch (UserError const& e) {
    throw UserError(fmt::format("{}: {}", path, e.what()));
  }
}

std::vector<int> read_lengths(json const& v, std::string const& path, int batch) {
  // Empty means "not varlen"; otherwise one length per batch entry.
  as_array(v, path, static_cast<std::size_t>(batch));
  std::vector<int> lengths;
  lengths.reserve(v.size());
  for (std::size_t k = 0; k < v.size(); ++k) {
    lengths.push_back(as_int32(v[k], index_path(path, k), 1, 1 << 24));
  }
  return lengths;
}

Problem read_problem(json const& v, std::string const& path) {
  expect_object(v, path,
                {"batch", "q_heads", "kv_heads", "seqlen_q", "seqlen_k", "head_dim", "tile_m",
                 "tile_n", "mask", "seqlens_q", "seqlens_k"});
  auto int_field = [&](std::string_view key) {
    // Wide enough to let validate_problem give its own precise message; int-safe.
    return as_int32(required(v, path, key), member_path(path, key), 1, 1 << 30);
  };
  Problem p;
  p.batch = int_field("batch");
  p.q_heads = int_field("q_heads");
  p.kv_heads = int_field("kv_heads");
  p.seqlen_q = int_field("seqlen_q");
  p.seqlen_k = int_field("seqlen_k");
  p.head_dim = int_field("head_dim");
  p.tile_m = int_field("tile_m");
  p.tile_n = int_field("tile_n");
  std::string const mask_path = member_path(path, "mask");
  std::string const mask_text = as_string(required(v, path, "mask"), mask_path);
  p.mask = at_path(mask_path, [&] { return parse_mask(mask_text); });
  // Bound the varlen arrays by a sane batch before reading them; validate_problem does the rest.
  if (p.batch > (1 << 16)) {
    user_error("{}: {} is larger than {}", member_path(path, "batch"), p.batch, 1 << 16);
  }
  if (auto const* q = optional(v, "seqlens_q")) {
    p.seqlens_q = read_lengths(*q, member_path(path, "seqlens_q"), p.batch);
  }
  if (auto const* k = optional(v, "seqlens_k")) {
    p.seqlens_k = read_lengths(*k, member_path(path, "seqlens_k"), p.batch);
  }
  at_path(path, [&] {
    validate_problem(p);
    return 0;
  });
  return p;
}

Machine read_machine(json const& v, std::string const& path) {
  expect_object(v, path, {"name", "sms"});
  Machine m;
  m.name = as_string(required(v, path, "name"), member_path(path, "name"));
  m.sms = as_int32(required(v, path, "sms"), member_path(path, "sms"), 1, 4096);
  return m;
}

WorkItem read_item(json const& v, std::string const& path, Problem const& problem) {
  expect_object(v, path, {"b", "h", "j", "q"});
  WorkItem item;
  item.batch = as_int32(required(v, path, "b"), member_path(path, "b"), 0, problem.batch - 1);
  item.head = as_int32(required(v, path, "h"), member_path(path, "h"), 0, problem.q_heads - 1);
  item.kv_tile =
      as_int32(required(v, path, "j"), member_path(path, "j"), 0, problem.kv_tiles(item.batch) - 1);
  std::string const q_path = member_path(path, "q");
  int const q_tiles = problem.q_tiles(item.batch);
  json const& q = as_array(required(v, path, "q"), q_path, static_cast<std::size_t>(q_tiles));
  item.q_order.reserve(q.size());
  for (std::size_t k = 0; k < q.size(); ++k) {
    item.q_order.push_back(as_int32(q[k], index_path(q_path, k), 0, q_tiles - 1));
  }
  return item;
}

std::vector<Cta> read_ctas(json const& v, std::string const& path, Problem const& problem,
                           Machine const& machine, LaunchModel launch, TileIndex const& index) {
  auto const items = static_cast<std::size_t>(index.num_items());
  std::size_t const max_ctas =
      launch == LaunchModel::kPersistent ? static_cast<std::size_t>(machine.sms) : items;
  as_array(v, path, max_ctas);
  std::vector<Cta> ctas(v.size());
  std::size_t total_items = 0;
  for (std::size_t c = 0; c < v.size(); ++c) {
    std::string const cta_path = index_path(path, c);
    expect_object(v[c], cta_path, {"items"});
    std::string const items_path = member_path(cta_path, "items");
    json const& list = as_array(required(v[c], cta_path, "items"), items_path, items);
    total_items += list.size();
    if (total_items > items) {
      user_error("{}: more work items than the problem has ({})", items_path, items);
    }
    ctas[c].items.reserve(list.size());
    for (std::size_t k = 0; k < list.size(); ++k) {
      ctas[c].items.push_back(read_item(list[k], index_path(items_path, k), problem));
    }
  }
  return ctas;
}

std::vector<std::vector<int>> read_dq_order(json const& v, std::string const& path,
                                            TileIndex const& index) {
  auto const tiles = static_cast<std::size_t>(index.num_dq_tiles());
  as_array(v, path, tiles);
  if (v.size() != tiles) {
    user_error("{}: expected {} entries (one per dQ tile), got {}", path, tiles, v.size());
  }
  std::vector<std::vector<int>> order(tiles);
  for (std::size_t t = 0; t < tiles; ++t) {
    std::string const tile_path = index_path(path, t);
    int const kv_tiles = index.kv_tiles(index.dq_key(static_cast<int>(t)).batch);
    json const& ranks = as_array(v[t], tile_path, static_cast<std::size_t>(kv_tiles));
    order[t].reserve(ranks.size());
    for (std::size_t k = 0; k < ranks.size(); ++k) {
      order[t].push_back(as_int32(ranks[k], index_path(tile_path, k), 0, kv_tiles - 1));
    }
  }
  return order;
}

std::vector<std::vector<int>> read_dkv_order(json const* v, std::string const& path,
                                             Problem const& problem, TileIndex const& index) {
  if (!problem.is_gqa()) {
    if (v != nullptr && !as_array(*v, path, 0).empty()) {
      user_error("{}: must be empty when kv_heads == q_heads", path);
    }
    return {};
  }
  if (v == nullptr) user_error("{}: missing (required under GQA/MQA)", path);
  auto const tiles = static_cast<std::size_t>(index.num_dkv_tiles());
  as_array(*v, path, tiles);
  if (v->size() != tiles) {
    user_error("{}: expected {} entries (one per dK/dV tile), got {}", path, tiles, v->size());
  }
  int const group = problem.group_size();
  std::vector<std::vector<int>> order(tiles);
  for (std::size_t t = 0; t < tiles; ++t) {
    std::string const tile_path = index_path(path, t);
    int const kvh = index.dkv_key(static_cast<int>(t)).head;
    json const& ranks = as_array((*v)[t], tile_path, static_cast<std::size_t>(group));
    order[t].reserve(ranks.size());
    for (std::size_t k = 0; k < ranks.size(); ++k) {
      order[t].push_back(
          as_int32(ranks[k], index_path(tile_path, k), kvh * group, (kvh + 1) * group - 1));
    }
  }
  return order;
}

}  // namespace

std::string problem_to_json(Problem const& problem) {
  std::string out;
  append_problem(out, problem);
  return out;
}

Problem problem_from_json(json const& value, std::string const& path) {
  return read_problem(value, path);
}

std::string to_json(ScheduleDocument const& doc) {
  std::string out;
  out.reserve(static_cast<std::size_t>(count_steps(doc.schedule)) * 4 + 4096);
  fmt::format_to(std::back_inserter(out), "{{\n  \"version\": {},\n  \"strategy\": {},\n",
                 quoted(std::string(kVersion)), quoted(doc.schedule.strategy));
  out += "  \"problem\": ";
  append_problem(out, doc.problem);
  fmt::format_to(std::back_inserter(out),
                 ",\n  \"machine\": {{\"name\": {}, \"sms\": {}}},\n  \"launch\": {},\n",
                 quoted(doc.machine.name), doc.machine.sms, quoted(to_string(doc.schedule.launch)));
  out += "  \"ctas\": [";
  auto const& ctas = doc.schedule.ctas;
  for (std::size_t c = 0; c < ctas.size(); ++c) {
    out += c == 0 ? "\n    {\"items\": [" : ",\n    {\"items\": [";
    auto const& items = ctas[c].items;
    for (std::size_t k = 0; k < items.size(); ++k) {
      if (k > 0) out += ", ";
      fmt::format_to(std::back_inserter(out),
                     "{{\"b\": {}, \"h\": {}, \"j\": {}, \"q\": ", items[k].batch, items[k].head,
                     items[k].kv_tile);
      append_ints(out, items[k].q_order);
      out += '}';
    }
    out += "]}";
  }
  out += ctas.empty() ? "],\n" : "\n  ],\n";
  out += "  \"dq_order\": ";
  append_order_lines(out, doc.schedule.dq_order);
  out += ",\n  \"dkv_order\": ";
  append_order_lines(out, doc.schedule.dkv_order);
  out += "\n}\n";
  return out;
}

ScheduleDocument schedule_from_json(std::string const& text) {
  json const root = parse_user_json(text, kMaxDepth);
  expect_object(
      root, "",
      {"version", "strategy", "problem", "machine", "launch", "ctas", "dq_order", "dkv_order"});
  std::string const version = as_string(required(root, "", "version"), "version");
  if (version != kVersion) {
    user_error("version: unsupported '{}' (this build reads {})", version, kVersion);
  }
  ScheduleDocument doc;
  doc.problem = read_problem(required(root, "", "problem"), "problem");
  doc.machine = read_machine(required(root, "", "machine"), "machine");
  Schedule& s = doc.schedule;
  s.strategy = "file";
  if (auto const* strategy = optional(root, "strategy")) {
    s.strategy = as_string(*strategy, "strategy");
  }
  std::string const launch = as_string(required(root, "", "launch"), "launch");
  s.launch = at_path("launch", [&] { return parse_launch(launch); });
  TileIndex const index(doc.problem);
  s.ctas = read_ctas(required(root, "", "ctas"), "ctas", doc.problem, doc.machine, s.launch, index);
  s.dq_order = read_dq_order(required(root, "", "dq_order"), "dq_order", index);
  s.dkv_order = read_dkv_order(optional(root, "dkv_order"), "dkv_order", doc.problem, index);
  return doc;
}

ScheduleDocument read_schedule_file(std::string const& path) {
  return read_user_document(path, "schedule", kMaxFileBytes, schedule_from_json);
}

void write_file_atomic(std::string const& path, std::string const& content) {
  // Temp file in the target's directory (rename is only atomic within one file system).
  std::string temp = path + ".tmp.XXXXXX";
  int const fd = ::mkstemp(temp.data());
  if (fd < 0) user_error("cannot write '{}': {}", path, std::strerror(errno));
  char const* data = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    ssize_t const n = ::write(fd, data, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int const err = errno;
      ::close(fd);
      ::unlink(temp.c_str());
      user_error("cannot write '{}': {}", path, std::strerror(err));
    }
    data += n;
    left -= static_cast<std::size_t>(n);
  }
  // mkstemp creates 0600; a written result should be readable like any other output.
  ::fchmod(fd, 0644);
  if (::close(fd) != 0 || std::rename(temp.c_str(), path.c_str()) != 0) {
    int const err = errno;
    ::unlink(temp.c_str());
    user_error("cannot write '{}': {}", path, std::strerror(err));
  }
}

void write_schedule_file(std::string const& path, ScheduleDocument const& doc) {
  write_file_atomic(path, to_json(doc));
}

}  // namespace dash::sim
