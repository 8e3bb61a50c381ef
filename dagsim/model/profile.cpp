#include "dagsim/model/profile.h"

#include <algorithm>
#include <cstdint>
#include <iterator>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dagsim/core/error.h"
#include "dagsim/core/json_input.h"

namespace dash::sim {
namespace {

using json = nlohmann::json;

constexpr char const* kFormat = "dash-machine-profile";
constexpr int kVersion = 1;
constexpr int kMaxDepth = 4;
constexpr std::uintmax_t kMaxFileBytes = std::uintmax_t{1} << 20;
constexpr std::size_t kMaxText = 4096;
constexpr std::size_t kMaxName = 64;

json const& member(json const& object, char const* key, std::string const& path) {
  auto const it = object.find(key);
  if (it == object.end()) user_error("{}: missing \"{}\"", path, key);
  return *it;
}

void only_keys(json const& object, std::initializer_list<char const*> keys,
               std::string const& path) {
  for (auto const& [key, value] : object.items()) {
    if (std::none_of(keys.begin(), keys.end(), [&](char const* k) { return key == k; })) {
      user_error("{}: unknown key {}", path, json_quoted(key.substr(0, kMaxName)));
    }
  }
}

std::int64_t integer(json const& object, char const* key, std::string const& path, std::int64_t lo,
                     std::int64_t hi) {
  json const& v = member(object, key, path);
  if (!v.is_number_integer()) user_error("{}.{}: expected an integer", path, key);
  std::int64_t const x =
      v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(hi)
          ? hi + 1
          : v.get<std::int64_t>();
  if (x < lo || x > hi) user_error("{}.{}: {} is outside {}..{}", path, key, v.dump(), lo, hi);
  return x;
}

std::string text(json const& object, char const* key, std::string const& path, std::size_t max) {
  json const& v = member(object, key, path);
  if (!v.is_string()) user_error("{}.{}: expected a string", path, key);
  std::string const& s = v.get_ref<std::string const&>();
  if (s.size() > max)
    user_error("{}.{}: string of {} bytes is longer than {}", path, key, s.size(), max);
  return s;
}

bool plain_name(std::string const& name) {
  return !name.empty() && name.size() <= kMaxName &&
         std::all_of(name.begin(), name.end(),
                     [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); });
}

}  // namespace

KernelRates const* MachineProfile::rates_for(std::string_view family) const {
  auto const it = std::find_if(families.begin(), families.end(),
                               [&](FamilyRates const& f) { return f.family == family; });
  return it == families.end() ? nullptr : &it->rates;
}

MachineProfile profile_from_json(std::string const& text_in,
                                 std::span<std::string_view const> families) {
  json const root = parse_user_json(text_in, kMaxDepth);
  std::string const path = "profile";
  if (!root.is_object()) user_error("{}: expected a JSON object", path);
  only_keys(root, {"format", "version", "gpu", "sms", "clock_mhz", "source", "families"}, path);
  if (text(root, "format", path, kMaxName) != kFormat) {
    user_error("{}.format: expected \"{}\"", path, kFormat);
  }
  if (integer(root, "version", path, 0, 1'000'000) != kVersion) {
    user_error("{}.version: this dash reads version {}", path, kVersion);
  }
  MachineProfile p;
  p.gpu = text(root, "gpu", path, kMaxName);
  p.sms = static_cast<int>(integer(root, "sms", path, 1, 4096));
  p.clock_mhz = static_cast<int>(integer(root, "clock_mhz", path, 1, 100'000));
  p.source = text(root, "source", path, kMaxText);
  json const& fams = member(root, "families", path);
  if (!fams.is_object() || fams.empty())
    user_error("{}.families: expected an object of at least one family", path);
  for (auto const& [name, entry] : fams.items()) {
    std::string const fpath =
        fmt::format("{}.families.{}", path, json_quoted(name.substr(0, kMaxName)));
    if (!plain_name(name)) user_error("{}: a family name is lower-case letters and digits", fpath);
    if (!families.empty() && std::find(families.begin(), families.end(), name) == families.end()) {
      std::string known;
      for (auto f : families) known += fmt::format("{}{}", known.empty() ? "" : ", ", f);
      user_error("{}: unknown kernel family (expected {})", fpath, known);
    }
    if (!entry.is_object()) user_error("{}: expected an object", fpath);
    only_keys(entry,
              {"flops_per_cycle", "reduce_bytes_per_cycle", "latency", "dq_buffer", "item_cycles",
               "prepost_bytes_per_cycle", "hbm_bytes_per_cycle", "l2_bytes", "flops_per_cycle_by_head_dim",
               "source"},
              fpath);
    FamilyRates f;
    f.family = name;
    f.rates.flops_per_cycle =
        static_cast<int>(integer(entry, "flops_per_cycle", fpath, 1, 1'000'000));
    f.rates.reduce_bytes_per_cycle =
        static_cast<int>(integer(entry, "reduce_bytes_per_cycle", fpath, 1, 1'000'000));
    f.rates.latency = integer(entry, "latency", fpath, 0, 1'000'000'000);
    f.rates.dq_buffer = static_cast<int>(integer(entry, "dq_buffer", fpath, 0, 64));
    f.rates.item_cycles = integer(entry, "item_cycles", fpath, 0, 1'000'000'000);
    f.rates.prepost_bytes_per_cycle =
        static_cast<int>(integer(entry, "prepost_bytes_per_cycle", fpath, 0, 1'000'000));
    // The memory floor's two (optional: a profile without them has no floor).
    if (entry.contains("hbm_bytes_per_cycle") || entry.contains("l2_bytes")) {
      f.rates.hbm_bytes_per_cycle = integer(entry, "hbm_bytes_per_cycle", fpath, 1, 1'000'000'000);
      f.rates.l2_bytes = integer(entry, "l2_bytes", fpath, 0, std::int64_t{1} << 40);
    }
    // F per head dim (optional): {"64": 1999, "128": 2315}, head dims 1..1024 in decimal.
    if (entry.contains("flops_per_cycle_by_head_dim")) {
      std::string const dpath = fpath + ".flops_per_cycle_by_head_dim";
      json const& by = entry["flops_per_cycle_by_head_dim"];
      if (!by.is_object()) user_error("{}: expected an object", dpath);
      for (auto const& [key, value] : by.items()) {
        std::string const shown = json_quoted(key.substr(0, kMaxName));
        bool const digits = !key.empty() && key.size() <= 4 && key.front() != '0' &&
                            std::all_of(key.begin(), key.end(), [](char c) { return c >= '0' && c <= '9'; });
        int const d = digits ? std::stoi(key) : 0;
        if (d < 1 || d > 1024) user_error("{}: {} is not a head dimension (1..1024)", dpath, shown);
        f.rates.flops_by_head_dim.push_back(
            {d, static_cast<int>(integer(by, key.c_str(), dpath, 1, 1'000'000))});
      }
      std::sort(f.rates.flops_by_head_dim.begin(), f.rates.flops_by_head_dim.end(),
                [](HeadDimFlops const& a, HeadDimFlops const& b) { return a.head_dim < b.head_dim; });
    }
    f.source = text(entry, "source", fpath, kMaxText);
    p.families.push_back(std::move(f));
  }
  return p;
}

namespace {

/// The "flops_per_cycle_by_head_dim" line of a family (with its newline), or nothing.
std::string by_head_dim(KernelRates const& r) {
  if (r.flops_by_head_dim.empty()) return {};
  std::string out = "      \"flops_per_cycle_by_head_dim\": {";
  for (std::size_t k = 0; k < r.flops_by_head_dim.size(); ++k) {
    fmt::format_to(std::back_inserter(out), "{}\"{}\": {}", k > 0 ? ", " : "", r.flops_by_head_dim[k].head_dim,
                   r.flops_by_head_dim[k].flops_per_cycle);
  }
  return out + "},\n";
}

}  // namespace

std::string to_json(MachineProfile const& profile) {
  // Families in name order, as profile_from_json returns them.
  MachineProfile p = profile;
  std::sort(p.families.begin(), p.families.end(),
            [](FamilyRates const& a, FamilyRates const& b) { return a.family < b.family; });
  std::string out;
  fmt::format_to(std::back_inserter(out),
                 "{{\n  \"format\": \"{}\",\n  \"version\": {},\n  \"gpu\": {},\n  \"sms\": {},\n  "
                 "\"clock_mhz\": {},\n"
                 "  \"source\": {},\n  \"families\": {{",
                 kFormat, kVersion, json_quoted(p.gpu), p.sms, p.clock_mhz, json_quoted(p.source));
  for (std::size_t k = 0; k < p.families.size(); ++k) {
    FamilyRates const& f = p.families[k];
    fmt::format_to(
        std::back_inserter(out),
        "{}\n    {}: {{\n      \"flops_per_cycle\": {},\n{}      \"reduce_bytes_per_cycle\": {},\n"
        "      \"latency\": {},\n      \"dq_buffer\": {},\n      \"item_cycles\": {},\n"
        "      \"prepost_bytes_per_cycle\": {},\n{}      \"source\": {}\n    }}",
        k > 0 ? "," : "", json_quoted(f.family), f.rates.flops_per_cycle, by_head_dim(f.rates),
        f.rates.reduce_bytes_per_cycle, f.rates.latency, f.rates.dq_buffer, f.rates.item_cycles,
        f.rates.prepost_bytes_per_cycle,
        f.rates.hbm_bytes_per_cycle > 0
            ? fmt::format("      \"hbm_bytes_per_cycle\": {},\n      \"l2_bytes\": {},\n",
                          f.rates.hbm_bytes_per_cycle, f.rates.l2_bytes)
            : std::string(),
        json_quoted(f.source));
  }
  out += "\n  }\n}\n";
  return out;
}

nlohmann::json rates_to_json(KernelRates const& r) {
  return {{"flops_per_cycle", r.flops_per_cycle},
          {"reduce_bytes_per_cycle", r.reduce_bytes_per_cycle},
          {"latency", r.latency},
          {"dq_buffer", r.dq_buffer},
          {"item_cycles", r.item_cycles},
          {"prepost_bytes_per_cycle", r.prepost_bytes_per_cycle},
          {"hbm_bytes_per_cycle", r.hbm_bytes_per_cycle},
          {"l2_bytes", r.l2_bytes},
          {"flops_per_cycle_by_head_dim", [&] {
             nlohmann::json by = nlohmann::json::object();
             for (auto const& e : r.flops_by_head_dim) by[std::to_string(e.head_dim)] = e.flops_per_cycle;
             return by;
           }()}};
}

std::string rates_line(KernelRates const& r) {
  std::string const floor = r.hbm_bytes_per_cycle > 0
                                ? fmt::format(", memory floor {} B/cycle over {} MiB of L2", r.hbm_bytes_per_cycle,
                                              r.l2_bytes / (1 << 20))
                                : std::string(", no memory floor");
  std::string by;
  for (auto const& e : r.flops_by_head_dim) {
    by += fmt::format("{}d{} {}", by.empty() ? " (" : ", ", e.head_dim, e.flops_per_cycle);
  }
  if (!by.empty()) by += ")";
  return fmt::format("F {}{}, B {}, L {}, k {}, o {}, pre/post {} B/cycle{}", r.flops_per_cycle, by,
                     r.reduce_bytes_per_cycle, r.latency, r.dq_buffer, r.item_cycles, r.prepost_bytes_per_cycle,
                     floor);
}

MachineProfile read_profile_file(std::string const& path,
                                 std::span<std::string_view const> families) {
  return read_user_document(path, "profile", kMaxFileBytes,
                            [&](std::string const& text) { return profile_from_json(text, families); });
}

MachineProfile const& builtin_profile() {
  // profiles/h200.json, embedded by CMake (dagsim/CMakeLists.txt).
  static MachineProfile const profile = profile_from_json(
#include "builtin_profile.inc"
      , {});
  return profile;
}

}  // namespace dash::sim
