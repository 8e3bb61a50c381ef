#include "codegen/rewriter.h"

#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include <clang/AST/ASTContext.h>
#include <clang/AST/Attr.h>
#include <clang/ASTMatchers/ASTMatchFinder.h>
#include <clang/ASTMatchers/ASTMatchers.h>
#include <clang/Basic/Diagnostic.h>
#include <clang/Basic/SourceManager.h>
#include <clang/Lex/Lexer.h>
#include <clang/Tooling/CompilationDatabase.h>
#include <clang/Tooling/Core/Replacement.h>
#include <clang/Tooling/Tooling.h>
#include <llvm/ADT/SmallString.h>

#include "dagsim/core/error.h"

namespace dash::codegen {

namespace am = clang::ast_matchers;

namespace {

constexpr char const* kHookAnnotation = "dash::hook";
constexpr char const* kConstantAnnotation = "dash::constant";
constexpr char const* kPolicyAnnotation = "dash::policy";
// Replacements need a path; the offsets are what count.
constexpr char const* kFile = "template.cu";

bool has_annotation(clang::Decl const& decl, llvm::StringRef annotation) {
  for (auto const* attr : decl.specific_attrs<clang::AnnotateAttr>()) {
    if (attr->getAnnotation() == annotation) return true;
  }
  return false;
}

/// Keeps the first error (clang keeps going after one; the first is the cause).
class FirstErrorConsumer : public clang::DiagnosticConsumer {
 public:
  void HandleDiagnostic(clang::DiagnosticsEngine::Level level,
                        clang::Diagnostic const& info) override {
    clang::DiagnosticConsumer::HandleDiagnostic(level, info);
    if (level < clang::DiagnosticsEngine::Error || !first_.empty()) return;
    llvm::SmallString<256> text;
    info.FormatDiagnostic(text);
    std::string where = "<unknown>";
    if (info.hasSourceManager() && info.getLocation().isValid()) {
      auto const presumed = info.getSourceManager().getPresumedLoc(info.getLocation());
      if (presumed.isValid()) {
        where = fmt::format("{}:{}:{}",
                            std::filesystem::path(presumed.getFilename()).filename().string(),
                            presumed.getLine(), presumed.getColumn());
      }
    }
    first_ = fmt::format("{}: {}", where, text.str().str());
  }
  [[nodiscard]] std::string const& first() const { return first_; }

 private:
  std::string first_;
};

class SiteCollector : public am::MatchFinder::MatchCallback {
 public:
  explicit SiteCollector(TemplateScan& scan) : scan_(scan) {}

  void run(am::MatchFinder::MatchResult const& result) override {
    auto const& sm = *result.SourceManager;
    auto const& lang = result.Context->getLangOpts();
    if (auto const* fn = result.Nodes.getNodeAs<clang::FunctionDecl>("hook")) {
      if (!has_annotation(*fn, kHookAnnotation) || !fn->hasBody()) return;
      // Function templates match once per instantiation; the written body is what we edit.
      if (!seen_.insert(fn->getBody()->getBeginLoc().getRawEncoding()).second) return;
      HookSite site;
      site.name = fn->getNameAsString();
      site.return_type = clang::Lexer::getSourceText(
                             clang::CharSourceRange::getTokenRange(fn->getReturnTypeSourceRange()),
                             sm, lang)
                             .str();
      for (auto const* param : fn->parameters()) site.params.push_back(param->getNameAsString());
      clang::tooling::Replacement const range(
          sm, clang::CharSourceRange::getTokenRange(fn->getBody()->getSourceRange()), "", lang);
      site.body_offset = range.getOffset();
      site.body_length = range.getLength();
      scan_.hooks.push_back(std::move(site));
    } else if (auto const* var = result.Nodes.getNodeAs<clang::VarDecl>("constant")) {
      if (!has_annotation(*var, kConstantAnnotation)) return;
      if (!seen_.insert(var->getLocation().getRawEncoding()).second) return;
      if (!var->isConstexpr() || var->getInit() == nullptr) {
        // No throwing through LLVM's frames (built without exceptions): report after run().
        if (error_.empty()) {
          error_ = fmt::format("template constant '{}' must be constexpr with an initializer",
                               var->getNameAsString());
        }
        return;
      }
      ConstantSite site;
      site.name = var->getNameAsString();
      site.type = var->getType().getUnqualifiedType().getAsString();
      site.list_init = var->getInitStyle() == clang::VarDecl::ListInit;
      clang::tooling::Replacement const range(
          sm, clang::CharSourceRange::getTokenRange(var->getInit()->getSourceRange()), "", lang);
      site.init_offset = range.getOffset();
      site.init_length = range.getLength();
      scan_.constants.push_back(std::move(site));
    } else if (auto const* record = result.Nodes.getNodeAs<clang::CXXRecordDecl>("policy")) {
      if (!has_annotation(*record, kPolicyAnnotation)) return;
      if (!seen_.insert(record->getLocation().getRawEncoding()).second) return;
      PolicySite site;
      site.name = record->getNameAsString();
      clang::tooling::Replacement const name(
          sm, clang::CharSourceRange::getTokenRange(record->getLocation()), "", lang);
      site.name_offset = name.getOffset();
      site.name_length = name.getLength();
      clang::tooling::Replacement const whole(
          sm,
          clang::CharSourceRange::getTokenRange(record->getBeginLoc(),
                                                record->getBraceRange().getEnd()),
          "", lang);
      site.offset = whole.getOffset();
      site.length = whole.getLength();
      scan_.policies.push_back(std::move(site));
    }
  }
  [[nodiscard]] std::string const& error() const { return error_; }

 private:
  TemplateScan& scan_;
  std::string error_;
  std::set<std::uint64_t> seen_;
};

}  // namespace

std::vector<std::string> template_parse_args(std::string const& path) {
  namespace fs = std::filesystem;
  fs::path const dir = fs::absolute(fs::path(path)).parent_path();
  // The flags that parse a CUDA 13 kernel with clang 22 (docs/codegen.md): one side (device),
  // one arch, the matching resource dir. clang cannot read this CUDA's version (no version.json)
  // and would then lower <<<...>>> to the pre-9.2 cudaConfigureCall: name the SDK version.
  // No carets: the first error becomes our one line, clang's "N errors generated" stays quiet.
  return {"-x",
          "cuda",
          "--cuda-gpu-arch=sm_90a",
          "--cuda-path=/usr/local/cuda",
          "-nocudalib",
          "--cuda-device-only",
          "-std=c++20",
          "-isystem",
          "/usr/local/cuda/include/cccl",
          "-Wno-unknown-cuda-version",
          "-Xclang",
          "-target-sdk-version=13.0",
          "-fno-caret-diagnostics",
          "-resource-dir",
          DASH_CLANG_RESOURCE_DIR,
          "-I" + dir.string(),
          "-I" + dir.parent_path().string(),
          // The policy template sits two levels down (runtime/schedule/) and includes the protocol
          // by its path from the source tree's root.
          "-I" DASH_SOURCE_DIR};
}

TemplateScan scan_template(std::string const& source, std::string const& path,
                           std::vector<std::string> const& args) {
  std::string const file = std::filesystem::absolute(std::filesystem::path(path)).string();
  clang::tooling::FixedCompilationDatabase const database(".", args);
  clang::tooling::ClangTool tool(database, {file});
  tool.mapVirtualFile(file, source);
  FirstErrorConsumer diagnostics;
  tool.setDiagnosticConsumer(&diagnostics);
  tool.setPrintErrorMessage(false);

  TemplateScan scan;
  SiteCollector collector(scan);
  am::MatchFinder finder;
  finder.addMatcher(am::functionDecl(am::isExpansionInMainFile(), am::isDefinition(),
                                     am::hasAttr(clang::attr::Annotate))
                        .bind("hook"),
                    &collector);
  finder.addMatcher(
      am::varDecl(am::isExpansionInMainFile(), am::hasAttr(clang::attr::Annotate)).bind("constant"),
      &collector);
  finder.addMatcher(am::cxxRecordDecl(am::isExpansionInMainFile(), am::isDefinition(),
                                      am::hasAttr(clang::attr::Annotate))
                        .bind("policy"),
                    &collector);
  int const status = tool.run(clang::tooling::newFrontendActionFactory(&finder).get());
  if (status != 0) {
    // Matching continues on a recovered AST after errors: never trust that scan.
    user_error("template {} does not parse: {}", std::filesystem::path(path).filename().string(),
               diagnostics.first().empty() ? std::string("clang failed") : diagnostics.first());
  }
  if (!collector.error().empty()) user_error("{}", collector.error());
  return scan;
}

RewriteRule replace_hook_body(std::string const& hook, std::string body) {
  return RewriteRule{"hook:" + hook, RewriteRule::Target::kHookBody, hook, std::move(body)};
}

RewriteRule set_constant(std::string const& constant, std::string init) {
  return RewriteRule{"constant:" + constant, RewriteRule::Target::kConstantInit, constant,
                     std::move(init)};
}

namespace {

/// Every rule as a replacement in `source`, checked against the scan (apply_rules' contract).
clang::tooling::Replacements replacements_of(TemplateScan const& scan,
                                             std::vector<RewriteRule> const& rules) {
  std::map<std::string, HookSite const*> hooks;
  for (auto const& hook : scan.hooks) {
    if (!hooks.emplace(hook.name, &hook).second) {
      user_error("template hook '{}' is defined twice", hook.name);
    }
  }
  std::map<std::string, ConstantSite const*> constants;
  for (auto const& constant : scan.constants) {
    if (!constants.emplace(constant.name, &constant).second) {
      user_error("template constant '{}' is declared twice", constant.name);
    }
  }
  clang::tooling::Replacements replacements;
  std::set<std::string> applied;
  std::set<std::string> rewritten_hooks;
  for (auto const& rule : rules) {
    if (!applied.insert(rule.name).second) user_error("rule {} given twice", rule.name);
    unsigned offset = 0;
    unsigned length = 0;
    std::string text = rule.replacement;
    if (rule.target == RewriteRule::Target::kHookBody) {
      auto const it = hooks.find(rule.decl);
      if (it == hooks.end()) user_error("rule {}: the template has no hook '{}'", rule.name, rule.decl);
      offset = it->second->body_offset;
      length = it->second->body_length;
      rewritten_hooks.insert(rule.decl);
    } else {
      auto const it = constants.find(rule.decl);
      if (it == constants.end()) {
        user_error("rule {}: the template has no constant '{}'", rule.name, rule.decl);
      }
      offset = it->second->init_offset;
      length = it->second->init_length;
      if (it->second->list_init) text = "{" + text + "}";
    }
    if (auto error = replacements.add(clang::tooling::Replacement(kFile, offset, length, text))) {
      user_error("rule {} overlaps another edit: {}", rule.name, llvm::toString(std::move(error)));
    }
  }
  for (auto const& [name, site] : hooks) {
    if (rewritten_hooks.count(name) == 0) {
      user_error("template hook '{}' has no specialization (it would keep its generic body)", name);
    }
  }
  return replacements;
}

std::string applied(std::string const& source, clang::tooling::Replacements const& replacements) {
  auto rewritten = clang::tooling::applyAllReplacements(source, replacements);
  if (!rewritten) user_error("rewrite failed: {}", llvm::toString(rewritten.takeError()));
  return *rewritten;
}

}  // namespace

std::string apply_rules(std::string const& source, TemplateScan const& scan,
                        std::vector<RewriteRule> const& rules, std::string const& prelude) {
  return prelude + applied(source, replacements_of(scan, rules));
}

std::string rewrite_policy(std::string const& source, TemplateScan const& scan,
                           std::vector<RewriteRule> const& rules, std::string const& name) {
  if (scan.policies.empty()) {
    user_error(
        "the template has no policy (a struct marked [[clang::annotate(\"dash::policy\")]])");
  }
  if (scan.policies.size() > 1) {
    user_error("the template has {} policies ('{}', '{}'); one is expected", scan.policies.size(),
               scan.policies[0].name, scan.policies[1].name);
  }
  PolicySite const& policy = scan.policies.front();
  auto inside = [&](unsigned offset) {
    return offset >= policy.offset && offset < policy.offset + policy.length;
  };
  for (auto const& hook : scan.hooks) {
    if (!inside(hook.body_offset)) {
      user_error("template hook '{}' is not a member of the policy '{}'", hook.name, policy.name);
    }
  }
  for (auto const& constant : scan.constants) {
    if (!inside(constant.init_offset)) {
      user_error("template constant '{}' is not a member of the policy '{}'", constant.name,
                 policy.name);
    }
  }
  clang::tooling::Replacements replacements = replacements_of(scan, rules);
  if (auto error = replacements.add(
          clang::tooling::Replacement(kFile, policy.name_offset, policy.name_length, name))) {
    user_error("the policy's name overlaps another edit: {}", llvm::toString(std::move(error)));
  }
  unsigned const begin = replacements.getShiftedCodePosition(policy.offset);
  unsigned const end = replacements.getShiftedCodePosition(policy.offset + policy.length);
  return applied(source, replacements).substr(begin, end - begin);
}

}  // namespace dash::codegen
