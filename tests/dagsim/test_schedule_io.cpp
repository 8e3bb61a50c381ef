#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dagsim/core/error.h"
#include "dagsim/core/json_input.h"
#include "dagsim/core/schedule_io.h"
#include "dagsim/core/splitmix.h"
#include "dagsim/core/strategies.h"
#include "dagsim/core/tile_index.h"
#include "tests/scratch.h"

namespace {

using dash::UserError;
using nlohmann::json;
using namespace dash::sim;

// splitmix64: the tests' own seeded generator (std distributions differ between libraries).
struct Rng {
  std::uint64_t state;
  std::uint64_t next() { return splitmix64(state); }
  int below(int n) { return static_cast<int>(next() % static_cast<std::uint64_t>(n)); }
  template <typename T>
  void shuffle(std::vector<T>& v) {
    for (std::size_t k = v.size(); k > 1; --k) {
      std::swap(v[k - 1], v[static_cast<std::size_t>(below(static_cast<int>(k)))]);
    }
  }
};

Problem small_problem() {
  Problem p;
  p.batch = 1;
  p.q_heads = 2;
  p.kv_heads = 2;
  p.seqlen_q = 256;
  p.seqlen_k = 256;
  p.tile_m = 64;
  p.tile_n = 128;
  p.mask = Mask{MaskKind::kCausal, 0, 0};
  return p;
}

/// A random schedule that covers every visible step once: items dealt to random CTAs in random
/// order, random Q orders, random ranks. (Validity beyond coverage is not I/O's business.)
ScheduleDocument random_document(Problem const& p, int sms, LaunchModel launch,
                                 std::uint64_t seed) {
  Rng rng{seed};
  TileIndex const index(p);
  ScheduleDocument doc;
  doc.problem = p;
  doc.machine = Machine{"test", sms};
  doc.schedule.strategy = "random";
  doc.schedule.launch = launch;
  std::vector<int> items(static_cast<std::size_t>(index.num_items()));
  for (std::size_t k = 0; k < items.size(); ++k) items[k] = static_cast<int>(k);
  rng.shuffle(items);
  int const ctas = launch == LaunchModel::kDynamic ? index.num_items() : 1 + rng.below(sms);
  doc.schedule.ctas.resize(static_cast<std::size_t>(ctas));
  doc.schedule.dq_order.resize(static_cast<std::size_t>(index.num_dq_tiles()));
  for (std::size_t k = 0; k < items.size(); ++k) {
    ItemKey const key = index.item_key(items[k]);
    WorkItem item{key.batch, key.head, key.tile, p.visible_q_tiles(key.batch, key.tile)};
    rng.shuffle(item.q_order);
    for (int const i : item.q_order) {
      doc.schedule.dq_order[static_cast<std::size_t>(index.dq_id(key.batch, key.head, i))]
          .push_back(key.tile);
    }
    std::size_t const cta =
        launch == LaunchModel::kDynamic ? k : static_cast<std::size_t>(rng.below(ctas));
    doc.schedule.ctas[cta].items.push_back(std::move(item));
  }
  for (auto& order : doc.schedule.dq_order) rng.shuffle(order);
  if (p.is_gqa()) {
    doc.schedule.dkv_order.resize(static_cast<std::size_t>(index.num_dkv_tiles()));
    for (int t = 0; t < index.num_dkv_tiles(); ++t) {
      int const kvh = index.dkv_key(t).head;
      auto& order = doc.schedule.dkv_order[static_cast<std::size_t>(t)];
      for (int h = 0; h < p.group_size(); ++h) order.push_back(kvh * p.group_size() + h);
      rng.shuffle(order);
    }
  }
  return doc;
}

void check_round_trip(ScheduleDocument const& doc) {
  std::string const text = to_json(doc);
  ScheduleDocument const back = schedule_from_json(text);
  CHECK(back.problem == doc.problem);
  CHECK(back.machine == doc.machine);
  CHECK(back.schedule == doc.schedule);
  CHECK(to_json(back) == text);  // stable: byte-identical for equal schedules
}

std::string error_of(std::string const& text) {
  try {
    (void)schedule_from_json(text);
  } catch (UserError const& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("schedule_io: random schedules round-trip byte-identically", "[schedule_io]") {
  std::vector<Problem> problems;
  problems.push_back(small_problem());
  Problem full = small_problem();
  full.mask = Mask{};
  full.seqlen_q = 448;  // odd tile count, seqlen_q != seqlen_k
  problems.push_back(full);
  Problem gqa = small_problem();
  gqa.q_heads = 6;
  gqa.kv_heads = 2;
  gqa.mask = Mask{MaskKind::kWindow, 100, 30};
  problems.push_back(gqa);
  Problem varlen = small_problem();
  varlen.batch = 3;
  varlen.seqlens_q = {64, 300, 1000};
  varlen.seqlens_k = {128, 300, 700};
  problems.push_back(varlen);
  std::uint64_t seed = 1;
  for (auto const& p : problems) {
    for (auto const launch : {LaunchModel::kPersistent, LaunchModel::kDynamic}) {
      for (int rep = 0; rep < 5; ++rep) check_round_trip(random_document(p, 7, launch, seed++));
    }
  }
}

TEST_CASE("schedule_io: every named strategy round-trips", "[schedule_io]") {
  Problem p = small_problem();
  p.q_heads = 4;
  p.seqlen_q = p.seqlen_k = 1024;
  for (auto const& mask : {Mask{}, Mask{MaskKind::kCausal, 0, 0}}) {
    p.mask = mask;
    for (auto const& name : strategy_names()) {
      Machine const machine{"sm16", 16};
      Schedule schedule;
      try {
        schedule = make_strategy(name, p, machine);
      } catch (UserError const&) {
        continue;  // a strategy may refuse a problem outside its premise
      }
      INFO(name << " " << to_string(mask));
      check_round_trip(ScheduleDocument{p, machine, schedule});
    }
  }
}

TEST_CASE("schedule_io: equal documents print identically, different ones do not",
          "[schedule_io]") {
  auto const a = random_document(small_problem(), 5, LaunchModel::kPersistent, 42);
  auto const b = random_document(small_problem(), 5, LaunchModel::kPersistent, 42);
  auto const c = random_document(small_problem(), 5, LaunchModel::kPersistent, 43);
  CHECK(to_json(a) == to_json(b));
  CHECK(to_json(a) != to_json(c));
  auto const parsed = json::parse(to_json(a));
  CHECK(parsed["version"] == "dash.schedule/1");
  CHECK(parsed["problem"]["mask"] == "causal");
  CHECK(parsed["machine"]["sms"] == 5);
  CHECK(parsed["launch"] == "persistent");
}

TEST_CASE("schedule_io: malformed and adversarial documents are UserErrors naming the path",
          "[schedule_io]") {
  ScheduleDocument const doc = random_document(small_problem(), 4, LaunchModel::kPersistent, 7);
  json const good = json::parse(to_json(doc));
  // The first CTA with at least one item carrying at least two Q tiles.
  std::size_t c0 = 0;
  while (good["ctas"][c0]["items"].empty() || good["ctas"][c0]["items"][0]["q"].size() < 2) ++c0;
  std::string const item = fmt::format("ctas[{}].items[0]", c0);

  struct Case {
    char const* what;
    std::string text;
    std::string expected;  // substring of the message
  };
  auto edit = [&](auto&& change) {
    json j = good;
    change(j);
    return j.dump();
  };
  std::vector<Case> const cases = {
      {"empty", "", "malformed JSON"},
      {"truncated", to_json(doc).substr(0, 200), "malformed JSON"},
      {"not an object", "[1, 2, 3]", "document: expected an object"},
      {"garbage", "{\"version\": dash}", "malformed JSON"},
      {"deep nesting", std::string(100000, '[') + std::string(100000, ']'), "nested deeper"},
      {"unknown version", edit([](json& j) { j["version"] = "dash.schedule/9"; }),
       "version: unsupported 'dash.schedule/9'"},
      {"version missing", edit([](json& j) { j.erase("version"); }), "missing key 'version'"},
      {"unknown key", edit([](json& j) { j["extra"] = 1; }), "unknown key 'extra'"},
      {"q not an integer", edit([&](json& j) { j["ctas"][c0]["items"][0]["q"][1] = "x"; }),
       item + ".q[1]: expected an integer"},
      {"q fractional", edit([&](json& j) { j["ctas"][c0]["items"][0]["q"][0] = 1.5; }),
       item + ".q[0]: expected an integer, got a fractional number"},
      {"q negative", edit([&](json& j) { j["ctas"][c0]["items"][0]["q"][0] = -1; }),
       item + ".q[0]: -1 is out of range"},
      {"q huge",
       edit([&](json& j) { j["ctas"][c0]["items"][0]["q"][0] = 18446744073709551615ULL; }),
       item + ".q[0]: 18446744073709551615 is out of range"},
      {"q beyond tiles", edit([&](json& j) { j["ctas"][c0]["items"][0]["q"][0] = 4; }),
       item + ".q[0]: 4 is out of range 0..3"},
      {"q too long", edit([&](json& j) {
         j["ctas"][c0]["items"][0]["q"] = json::array({0, 1, 2, 3, 0});
       }),
       item + ".q: 5 entries, at most 4"},
      {"kv tile out of range", edit([&](json& j) { j["ctas"][c0]["items"][0]["j"] = 2; }),
       item + ".j: 2 is out of range 0..1"},
      {"head out of range", edit([&](json& j) { j["ctas"][c0]["items"][0]["h"] = 2; }),
       item + ".h: 2 is out of range 0..1"},
      {"item not an object", edit([&](json& j) { j["ctas"][c0]["items"][0] = 3; }),
       item + ": expected an object, got number"},
      {"item key missing", edit([&](json& j) { j["ctas"][c0]["items"][0].erase("q"); }),
       item + ": missing key 'q'"},
      {"ctas not an array", edit([](json& j) { j["ctas"] = json::object(); }),
       "ctas: expected an array"},
      {"more CTAs than SMs", edit([](json& j) {
         for (int k = 0; k < 5; ++k) j["ctas"].push_back({{"items", json::array()}});
       }),
       "ctas: "},
      {"too many items", edit([&](json& j) {
         json const one = j["ctas"][c0]["items"][0];
         j["ctas"] = json::array({{{"items", {one, one, one}}}, {{"items", {one, one}}}});
       }),
       "ctas[1].items: more work items than the problem has (4)"},
      {"dq_order wrong size", edit([](json& j) { j["dq_order"].erase(0); }),
       "dq_order: expected 8 entries"},
      {"dq_order bad rank", edit([](json& j) { j["dq_order"][3][0] = 9; }),
       "dq_order[3][0]: 9 is out of range"},
      {"dkv_order without GQA",
       edit([](json& j) { j["dkv_order"] = json::array({json::array({0})}); }),
       "dkv_order: 1 entries, at most 0"},
      {"integer beyond 64 bits", edit([](json& j) { j["problem"]["batch"] = 1e19; }),
       "problem.batch: expected an integer, got a number beyond the integer range"},
      {"batch zero", edit([](json& j) { j["problem"]["batch"] = 0; }),
       "problem.batch: 0 is out of range"},
      {"batch huge", edit([](json& j) { j["problem"]["batch"] = 1LL << 40; }),
       "problem.batch: 1099511627776 is out of range"},
      {"bad tile", edit([](json& j) { j["problem"]["tile_m"] = 60; }),
       "problem: tiles must be multiples of 16"},
      {"too many steps", edit([](json& j) {
         j["problem"]["seqlen_q"] = 1 << 24;
         j["problem"]["seqlen_k"] = 1 << 24;
       }),
       "problem: problem has"},
      {"bad mask", edit([](json& j) { j["problem"]["mask"] = "diagonal"; }),
       "problem.mask: unknown mask 'diagonal'"},
      {"varlen wrong length", edit([](json& j) {
         j["problem"]["seqlens_q"] = json::array({64, 64});
       }),
       "problem.seqlens_q: 2 entries, at most 1"},
      {"sms zero", edit([](json& j) { j["machine"]["sms"] = 0; }),
       "machine.sms: 0 is out of range 1..4096"},
      {"bad launch", edit([](json& j) { j["launch"] = "eager"; }),
       "launch: unknown launch model 'eager'"},
      {"launch not a string", edit([](json& j) { j["launch"] = true; }),
       "launch: expected a string, got boolean"},
      {"long strategy", edit([](json& j) { j["strategy"] = std::string(10000, 'a'); }),
       "strategy: string of 10000 bytes"},
  };
  for (auto const& c : cases) {
    INFO(c.what);
    std::string const message = error_of(c.text);
    INFO(message);
    CHECK(message.find(c.expected) != std::string::npos);
    CHECK(message.find('\n') == std::string::npos);
  }
  // The unmodified document still parses: the cases fail for their own reason.
  CHECK(error_of(good.dump()) == "(no error)");
}

TEST_CASE("schedule_io: a key given twice in one object is refused, wherever it is", "[schedule_io]") {
  ScheduleDocument const doc = random_document(small_problem(), 4, LaunchModel::kPersistent, 7);
  std::string const text = json::parse(to_json(doc)).dump();
  REQUIRE(error_of(text) == "(no error)");
  auto with = [&](std::string const& anchor, std::string const& extra) {
    std::size_t const at = text.find(anchor);
    REQUIRE(at != std::string::npos);
    std::string t = text;
    t.insert(at + anchor.size(), extra);
    return t;
  };
  // At the top level: a second "launch" (nlohmann keeps the last one; the format refuses both).
  std::string const top = with("{", "\"launch\":\"persistent\",");
  CHECK(error_of(top) == "malformed JSON: duplicate key \"launch\" in one object");
  // Nested: inside "machine".
  std::string const nested = with("\"machine\":{", "\"sms\":4,");
  CHECK(error_of(nested) == "malformed JSON: duplicate key \"sms\" in one object");
  // A key with a newline and 10000 bytes still makes one short line.
  std::string const odd = with("{", "\"a\\n" + std::string(10000, 'b') + "\":1,\"a\\n" + std::string(10000, 'b') + "\":2,");
  std::string const message = error_of(odd);
  CHECK(message.rfind("malformed JSON: duplicate key", 0) == 0);
  CHECK(message.find('\n') == std::string::npos);
  CHECK(message.size() < 400);
  // The same key in different objects is fine (every CTA object has "items").
  CHECK(text.find("\"items\"") != text.rfind("\"items\""));
}

TEST_CASE("schedule_io: GQA dK/dV ranks are checked against the group", "[schedule_io]") {
  Problem p = small_problem();
  p.q_heads = 4;
  p.kv_heads = 2;
  auto const doc = random_document(p, 3, LaunchModel::kPersistent, 11);
  json j = json::parse(to_json(doc));
  // dK/dV tile 0 belongs to kv head 0, whose group is q heads 0 and 1.
  j["dkv_order"][0][0] = 2;
  CHECK_THAT(error_of(j.dump()), Catch::Contains("dkv_order[0][0]: 2 is out of range 0..1"));
  j.erase("dkv_order");
  CHECK_THAT(error_of(j.dump()), Catch::Contains("dkv_order: missing"));
}

TEST_CASE("schedule_io: files are written atomically and read back", "[schedule_io]") {
  dash::test::Scratch const scratch;
  std::filesystem::path const& dir = scratch.dir;
  auto const doc = random_document(small_problem(), 4, LaunchModel::kPersistent, 3);
  std::string const path = (dir / "s.json").string();
  write_schedule_file(path, doc);
  CHECK(read_schedule_file(path).schedule == doc.schedule);
  // A directory that does not exist: a UserError and no file, no temp file left behind.
  std::string const bad = (dir / "missing" / "s.json").string();
  CHECK_THROWS_AS(write_schedule_file(bad, doc), UserError);
  CHECK_FALSE(std::filesystem::exists(dir / "missing"));
  CHECK(scratch.entries() == 1);
  // Reading: a missing file, a directory, a file that is not JSON — each names the path.
  CHECK_THROWS_WITH(read_schedule_file((dir / "nope.json").string()), Catch::Contains("nope.json"));
  CHECK_THROWS_WITH(read_schedule_file(dir.string()), Catch::Contains("not a regular file"));
  {
    std::ofstream out(dir / "bad.json");
    out << "{\"version\": ";
  }
  CHECK_THROWS_WITH(read_schedule_file((dir / "bad.json").string()),
                    Catch::Contains("bad.json: malformed JSON"));
}

TEST_CASE("user JSON: the strict reader builds what nlohmann's parser builds, and refuses what it must",
          "[schedule_io]") {
  std::string const mixed =
      R"({"a": [1, -2, 3.5, 18446744073709551615, "x", true, false, null, {"b": {"c": []}}], "d": {}, "e": "\u00e9"})";
  CHECK(parse_user_json(mixed, 6) == json::parse(mixed));
  // A long array of objects, as in a kernel trace (the reader stays linear in its length).
  std::string big = "{\"traceEvents\": [";
  for (int i = 0; i < 100000; ++i) big += fmt::format("{}{{\"ph\": \"X\", \"ts\": {}, \"args\": {{\"k\": [{}]}}}}", i > 0 ? "," : "", i, i);
  big += "]}";
  json const parsed = parse_user_json(big, 6);
  REQUIRE(parsed["traceEvents"].size() == 100000);
  CHECK(parsed == json::parse(big));
  // Depth: values at depth 3 pass a cap of 3, one level more does not.
  CHECK_NOTHROW(parse_user_json("[[[1]]]", 3));
  CHECK_THROWS_WITH(parse_user_json("[[[[1]]]]", 3), Catch::Contains("nested deeper than 3"));
  // A key twice in one object is refused; the same key in two objects is not.
  CHECK_NOTHROW(parse_user_json(R"([{"k": 1}, {"k": 2}])", 4));
  CHECK_THROWS_WITH(parse_user_json(R"({"o": {"k": 1, "k": 2}})", 4), Catch::Contains("duplicate key \"k\""));
  CHECK_THROWS_WITH(parse_user_json(R"({"k": 1,})", 4), Catch::Contains("malformed JSON: parse error"));
  CHECK_THROWS_WITH(parse_user_json("[1] 2", 4), Catch::Contains("malformed JSON"));
  CHECK_THROWS_AS(parse_user_json("", 4), UserError);
}
