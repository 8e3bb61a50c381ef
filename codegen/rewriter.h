#pragma once
// The template rewriter on Clang libTooling. scan_template() parses a CUDA source (device side,
// sm_90a) and finds the schedule policy ([[clang::annotate("dash::policy")]] struct definition),
// its hooks ([[clang::annotate("dash::hook")]] function definitions) and problem constants
// ([[clang::annotate("dash::constant")]] constexpr variables). Each edit is a named RewriteRule
// built by a pure function; apply_rules() and rewrite_policy() apply them as clang::tooling
// replacements, refusing a rule whose target is missing or duplicated and a hook left unrewritten.
#include <string>
#include <vector>

namespace dash::codegen {

struct HookSite {
  std::string name;
  std::string return_type;          ///< as spelled in the source
  std::vector<std::string> params;  ///< parameter names, in order
  unsigned body_offset = 0;         ///< byte range of the body, braces included
  unsigned body_length = 0;
};

struct ConstantSite {
  std::string name;
  std::string type;      ///< as clang prints it
  bool list_init = false;  ///< `T name{init}`: the replacement keeps the braces
  unsigned init_offset = 0;
  unsigned init_length = 0;
};

/// A struct whose static members are the hooks and constants (runtime/schedule/protocol.cuh).
struct PolicySite {
  std::string name;
  unsigned name_offset = 0;  ///< byte range of the name in `struct [[...]] Name {`
  unsigned name_length = 0;
  unsigned offset = 0;  ///< byte range from `struct` to the closing brace
  unsigned length = 0;
};

struct TemplateScan {
  std::vector<HookSite> hooks;  ///< in source order; duplicates kept (apply_rules rejects them)
  std::vector<ConstantSite> constants;
  std::vector<PolicySite> policies;  ///< rewrite_policy needs exactly one
};

/// Clang arguments for a device-side parse of `path` (include paths: next to it, its parent and
/// the source tree's root).
std::vector<std::string> template_parse_args(std::string const& path);

/// Parses `source` as if it were the file `path`. Throws UserError with the first diagnostic
/// when the parse has any error (ClangTool::run non-zero), even if the AST recovered.
TemplateScan scan_template(std::string const& source, std::string const& path,
                           std::vector<std::string> const& args);

struct RewriteRule {
  enum class Target { kHookBody, kConstantInit };
  std::string name;  ///< "hook:<function>" or "constant:<variable>"
  Target target = Target::kHookBody;
  std::string decl;         ///< the function or variable it edits
  std::string replacement;  ///< a whole body (with braces) or an initializer expression
};

/// The body of hook `hook` becomes `body` (a compound statement, braces included).
RewriteRule replace_hook_body(std::string const& hook, std::string body);
/// The initializer of constant `constant` becomes `init`.
RewriteRule set_constant(std::string const& constant, std::string init);

/// Applies every rule to `source`, prefixed by `prelude`. Throws UserError when a rule's target is
/// missing, a hook or constant is annotated twice, two rules target one declaration, or a hook of
/// the template has no rule (it would keep its generic body).
std::string apply_rules(std::string const& source, TemplateScan const& scan,
                        std::vector<RewriteRule> const& rules, std::string const& prelude);

/// The one policy struct of `source`, from `struct` to its closing brace, with every rule applied
/// (as apply_rules checks them) and its name replaced by `name`: what a generated file embeds
/// instead of the whole template. Throws UserError when the template has no policy or several,
/// or when a hook or constant lies outside it (it would be lost, or keep its generic value).
std::string rewrite_policy(std::string const& source, TemplateScan const& scan,
                           std::vector<RewriteRule> const& rules, std::string const& name);

}  // namespace dash::codegen
