// The template rewriter on tiny inline CUDA inputs (plain and policy-struct templates), compared
// after clang-format, with negative cases.
#include <string>

#include <catch2/catch.hpp>
#include <clang/Format/Format.h>
#include <clang/Tooling/Core/Replacement.h>

#include "codegen/rewriter.h"
#include "dagsim/core/error.h"

namespace cg = dash::codegen;

namespace {

// Not a real file: the parse runs on the in-memory text mapped at this path.
constexpr char const* kPath = "/tmp/dash_codegen_inline/template.cu";

std::string formatted(std::string const& code) {
  auto const style = clang::format::getLLVMStyle();
  auto const edits = clang::format::reformat(
      style, code, {clang::tooling::Range(0, static_cast<unsigned>(code.size()))});
  auto result = clang::tooling::applyAllReplacements(code, edits);
  REQUIRE(static_cast<bool>(result));
  return *result;
}

cg::TemplateScan scan(std::string const& source) {
  return cg::scan_template(source, kPath, cg::template_parse_args(kPath));
}

std::string const kTemplate = R"cu(
struct Item { int batch; int kv_tile; };
namespace {
[[clang::annotate("dash::constant")]] constexpr int kHeadDim = 0;
[[clang::annotate("dash::constant")]] constexpr int kTiles{4};
constexpr int kOther = 3;
[[clang::annotate("dash::hook")]] __device__ inline int q_tile_at(int const* table, Item const& item, int t) {
  return table[item.kv_tile * kTiles + t];
}
__device__ inline int untouched(int x) { return x + kOther; }
}  // namespace
__global__ void kernel(int const* table, int* out) {
  Item item{0, static_cast<int>(threadIdx.x)};
  out[threadIdx.x] = q_tile_at(table, item, kHeadDim) + untouched(1);
}
)cu";

}  // namespace

TEST_CASE("scan finds annotated hooks with their parameters and constants", "[codegen][cpu]") {
  auto const sites = scan(kTemplate);
  REQUIRE(sites.hooks.size() == 1);
  CHECK(sites.hooks[0].name == "q_tile_at");
  CHECK(sites.hooks[0].return_type == "int");
  CHECK(sites.hooks[0].params == std::vector<std::string>{"table", "item", "t"});
  CHECK(kTemplate.substr(sites.hooks[0].body_offset, 1) == "{");
  CHECK(kTemplate.substr(sites.hooks[0].body_offset + sites.hooks[0].body_length - 1, 1) == "}");
  REQUIRE(sites.constants.size() == 2);
  CHECK(sites.constants[0].name == "kHeadDim");
  CHECK(sites.constants[0].list_init == false);
  CHECK(sites.constants[1].name == "kTiles");
  CHECK(sites.constants[1].list_init == true);
}

TEST_CASE("rules replace hook bodies and constant initializers, nothing else", "[codegen][cpu]") {
  auto const sites = scan(kTemplate);
  std::vector<cg::RewriteRule> const rules{
      cg::replace_hook_body("q_tile_at", "{ (void)table; return item.kv_tile + t; }"),
      cg::set_constant("kHeadDim", "128"), cg::set_constant("kTiles", "7")};
  CHECK(rules[0].name == "hook:q_tile_at");
  CHECK(rules[1].name == "constant:kHeadDim");
  std::string const out = cg::apply_rules(kTemplate, sites, rules, "// prelude\n");
  std::string const expected = "// prelude\n" + std::string(R"cu(
struct Item { int batch; int kv_tile; };
namespace {
[[clang::annotate("dash::constant")]] constexpr int kHeadDim = 128;
[[clang::annotate("dash::constant")]] constexpr int kTiles{7};
constexpr int kOther = 3;
[[clang::annotate("dash::hook")]] __device__ inline int q_tile_at(int const* table, Item const& item, int t) {
  (void)table;
  return item.kv_tile + t;
}
__device__ inline int untouched(int x) { return x + kOther; }
}  // namespace
__global__ void kernel(int const* table, int* out) {
  Item item{0, static_cast<int>(threadIdx.x)};
  out[threadIdx.x] = q_tile_at(table, item, kHeadDim) + untouched(1);
}
)cu");
  CHECK(formatted(out) == formatted(expected));
  // The output is itself a template the rewriter accepts: it still parses, hooks still marked.
  auto const again = scan(out);
  REQUIRE(again.hooks.size() == 1);
  CHECK(again.constants.size() == 2);
}

TEST_CASE("a function template hook is edited once, not once per instantiation", "[codegen][cpu]") {
  std::string const source = R"cu(
template <int N>
[[clang::annotate("dash::hook")]] __device__ int scaled(int x) { return N * x; }
__global__ void kernel(int* out) { out[0] = scaled<2>(1) + scaled<3>(1); }
)cu";
  auto const sites = scan(source);
  REQUIRE(sites.hooks.size() == 1);
  std::string const out =
      cg::apply_rules(source, sites, {cg::replace_hook_body("scaled", "{ return x; }")}, "");
  CHECK(out.find("return N * x;") == std::string::npos);
  CHECK(out.find("{ return x; }") != std::string::npos);
}

TEST_CASE("rewriter rejects a rule whose hook or constant is missing", "[codegen][cpu]") {
  auto const sites = scan(kTemplate);
  auto const body = cg::replace_hook_body("q_tile_at", "{ return 0; }");
  CHECK_THROWS_WITH(
      cg::apply_rules(kTemplate, sites, {body, cg::replace_hook_body("dq_rank", "{ return 0; }")},
                      ""),
      Catch::Contains("the template has no hook 'dq_rank'"));
  CHECK_THROWS_WITH(cg::apply_rules(kTemplate, sites, {body, cg::set_constant("kNope", "1")}, ""),
                    Catch::Contains("no constant 'kNope'"));
  // A hook without a rule would keep its generic body: refused.
  CHECK_THROWS_WITH(cg::apply_rules(kTemplate, sites, {cg::set_constant("kHeadDim", "64")}, ""),
                    Catch::Contains("hook 'q_tile_at' has no specialization"));
  CHECK_THROWS_WITH(cg::apply_rules(kTemplate, sites, {body, body}, ""),
                    Catch::Contains("given twice"));
}

TEST_CASE("rewriter rejects a hook or constant annotated twice", "[codegen][cpu]") {
  std::string const source = R"cu(
[[clang::annotate("dash::hook")]] __device__ int h(int x) { return x; }
[[clang::annotate("dash::hook")]] __device__ int h(float x) { return 2; }
[[clang::annotate("dash::constant")]] constexpr int kA = 1;
namespace other { [[clang::annotate("dash::constant")]] constexpr int kA = 2; }
)cu";
  auto const sites = scan(source);
  CHECK(sites.hooks.size() == 2);
  CHECK_THROWS_WITH(cg::apply_rules(source, sites, {cg::replace_hook_body("h", "{ return 0; }")}, ""),
                    Catch::Contains("hook 'h' is defined twice"));
  auto one_hook = sites;
  one_hook.hooks.pop_back();
  CHECK_THROWS_WITH(
      cg::apply_rules(source, one_hook, {cg::replace_hook_body("h", "{ return 0; }")}, ""),
      Catch::Contains("constant 'kA' is declared twice"));
}

TEST_CASE("a template that does not parse is rejected with its first error", "[codegen][cpu]") {
  // The AST recovers from this error and the hook would still match: the run must fail anyway.
  std::string const source = R"cu(
[[clang::annotate("dash::hook")]] __device__ int h(int x) { return x; }
__device__ int broken(int x) { return x + undeclared_name; }
)cu";
  CHECK_THROWS_AS(scan(source), dash::UserError);
  CHECK_THROWS_WITH(scan(source), Catch::Contains("does not parse") &&
                                      Catch::Contains("template.cu:3:") &&
                                      Catch::Contains("undeclared_name"));
  CHECK_THROWS_WITH(scan("__device__ int f( {"), Catch::Contains("does not parse"));
}

TEST_CASE("a constant must be constexpr", "[codegen][cpu]") {
  std::string const source = R"cu(
[[clang::annotate("dash::constant")]] const int kNotConstexpr = 1;
)cu";
  CHECK_THROWS_WITH(scan(source), Catch::Contains("'kNotConstexpr' must be constexpr"));
}

namespace {

std::string const kPolicyTemplate = R"cu(
struct Item { int batch; int kv_tile; };
struct [[clang::annotate("dash::policy")]] Policy {
  [[clang::annotate("dash::constant")]] static constexpr int kTiles = 4;
  [[clang::annotate("dash::hook")]] static __device__ int q_tile_at(int const* table, Item const& item, int t) {
    return table[item.kv_tile * kTiles + t];
  }
};
__global__ void kernel(int const* table, int* out) {
  out[threadIdx.x] = Policy::q_tile_at(table, Item{0, static_cast<int>(threadIdx.x)}, Policy::kTiles);
}
)cu";

}  // namespace

TEST_CASE("rewrite_policy returns the policy struct alone, rewritten and renamed",
          "[codegen][cpu]") {
  auto const sites = scan(kPolicyTemplate);
  REQUIRE(sites.policies.size() == 1);
  CHECK(sites.policies[0].name == "Policy");
  CHECK(kPolicyTemplate.substr(sites.policies[0].name_offset, sites.policies[0].name_length) ==
        "Policy");
  CHECK(kPolicyTemplate.substr(sites.policies[0].offset, 6) == "struct");
  std::vector<cg::RewriteRule> const rules{
      cg::replace_hook_body("q_tile_at", "{ (void)table; return item.kv_tile + t; }"),
      cg::set_constant("kTiles", "7")};
  std::string const out = cg::rewrite_policy(kPolicyTemplate, sites, rules, "Specialized");
  std::string const expected = R"cu(struct [[clang::annotate("dash::policy")]] Specialized {
  [[clang::annotate("dash::constant")]] static constexpr int kTiles = 7;
  [[clang::annotate("dash::hook")]] static __device__ int q_tile_at(int const* table, Item const& item, int t) {
    (void)table;
    return item.kv_tile + t;
  }
})cu";
  CHECK(formatted(out) == formatted(expected));
  // The whole-file rewrite of the same rules keeps the kernel and the old name.
  std::string const whole = cg::apply_rules(kPolicyTemplate, sites, rules, "");
  CHECK(whole.find("struct [[clang::annotate(\"dash::policy\")]] Policy {") != std::string::npos);
  CHECK(whole.find("__global__") != std::string::npos);
}

TEST_CASE("rewrite_policy needs one policy holding every hook and constant", "[codegen][cpu]") {
  auto const none = scan(kTemplate);
  CHECK(none.policies.empty());
  auto const rules = std::vector<cg::RewriteRule>{
      cg::replace_hook_body("q_tile_at", "{ return 0; }"), cg::set_constant("kHeadDim", "64"),
      cg::set_constant("kTiles", "1")};
  CHECK_THROWS_WITH(cg::rewrite_policy(kTemplate, none, rules, "P"),
                    Catch::Contains("the template has no policy"));

  std::string const two = kPolicyTemplate + R"cu(
struct [[clang::annotate("dash::policy")]] Other {};
)cu";
  CHECK_THROWS_WITH(cg::rewrite_policy(two, scan(two), {rules[0], rules[2]}, "P"),
                    Catch::Contains("2 policies ('Policy', 'Other')"));

  // A hook or a constant outside the policy would be lost from the generated file.
  std::string const stray = kPolicyTemplate + R"cu(
[[clang::annotate("dash::hook")]] __device__ int dq_rank(int x) { return x; }
)cu";
  CHECK_THROWS_WITH(
      cg::rewrite_policy(stray, scan(stray),
                         {rules[0], rules[2], cg::replace_hook_body("dq_rank", "{ return 0; }")},
                         "P"),
      Catch::Contains("hook 'dq_rank' is not a member of the policy 'Policy'"));
  std::string const loose = kPolicyTemplate + R"cu(
[[clang::annotate("dash::constant")]] constexpr int kLoose = 1;
)cu";
  CHECK_THROWS_WITH(
      cg::rewrite_policy(loose, scan(loose), {rules[0], rules[2], cg::set_constant("kLoose", "2")},
                         "P"),
      Catch::Contains("constant 'kLoose' is not a member of the policy 'Policy'"));
}
