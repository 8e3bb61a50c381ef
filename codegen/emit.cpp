#include "codegen/emit.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <system_error>

#include <nlohmann/json.hpp>

#include "dagsim/core/error.h"

namespace dash::codegen {

namespace fs = std::filesystem;

namespace {

constexpr char const* kManifest = "manifest.json";

nlohmann::json manifest_entry(KernelSpec const& spec, std::string const& file) {
  // The spec without its tables: the manifest is for people and the build, the .spec.json has all.
  nlohmann::json entry = nlohmann::json::parse(to_json(spec));
  auto& form = entry["form"];
  form = nlohmann::json{{"name", spec.form.name},
                        {"work", spec.form.work.kind},
                        {"q_order", spec.form.q_order.kind},
                        {"dq_rank", spec.form.dq_rank.kind},
                        {"dkv_rank", spec.form.dkv_rank.kind}};
  entry["file"] = file;
  entry["spec_hash"] = spec_hash(spec);
  return entry;
}

std::vector<std::string> manifest_files(fs::path const& manifest) {
  std::ifstream in(manifest);
  if (!in) return {};
  std::stringstream text;
  text << in.rdbuf();
  std::vector<std::string> files;
  try {
    auto const doc = nlohmann::json::parse(text.str());
    for (auto const& name : doc.at("files")) files.push_back(name.get<std::string>());
  } catch (nlohmann::json::exception const& e) {
    user_error("{} is not a dash manifest: {}", manifest.string(), e.what());
  }
  return files;
}

}  // namespace

std::vector<GeneratedFile> generate_files(std::vector<KernelSpec> const& specs,
                                          TemplateSource const& source) {
  std::vector<GeneratedFile> files;
  nlohmann::json kernels = nlohmann::json::array();
  std::set<std::string> names;
  for (auto const& spec : specs) {
    std::string const base = spec_name(spec);
    if (!names.insert(base).second) user_error("two specializations are both named {}", base);
    files.push_back({base + ".cu", generate_source(spec, source)});
    files.push_back({base + ".spec.json", to_json(spec) + "\n"});
    kernels.push_back(manifest_entry(spec, base + ".cu"));
  }
  std::sort(kernels.begin(), kernels.end(),
            [](auto const& a, auto const& b) { return a["file"] < b["file"]; });
  nlohmann::json listed = nlohmann::json::array();
  std::vector<std::string> all;
  for (auto const& file : files) all.push_back(file.name);
  all.emplace_back(kManifest);
  std::sort(all.begin(), all.end());
  for (auto const& name : all) listed.push_back(name);
  nlohmann::json const manifest{{"generator", "dash generate"},
                                {"format_version", 2},
                                {"template", source.name},
                                {"template_hash", hex64(fnv1a64(source.text))},
                                {"protocol_hash", protocol_hash()},
                                {"kernels", kernels},
                                {"files", listed}};
  files.push_back({kManifest, manifest.dump(2) + "\n"});
  std::sort(files.begin(), files.end(),
            [](GeneratedFile const& a, GeneratedFile const& b) { return a.name < b.name; });
  return files;
}

void write_generated(std::string const& dir, std::vector<GeneratedFile> const& files) {
  fs::path const target = fs::absolute(fs::path(dir)).lexically_normal();
  std::error_code ec;
  if (fs::exists(target, ec) && !fs::is_directory(target, ec)) {
    user_error("--out {}: exists and is not a directory", dir);
  }
  // Read the old manifest first: a malformed one stops us before anything is written.
  std::vector<std::string> const old_files = manifest_files(target / kManifest);
  fs::path const parent = target.parent_path();
  if (!fs::is_directory(parent, ec)) user_error("--out {}: parent directory does not exist", dir);

  fs::path temp;
  for (int attempt = 0;; ++attempt) {
    temp = parent / fmt::format(".{}.dash-tmp-{}", target.filename().string(), attempt);
    if (fs::create_directory(temp, ec)) break;
    if (ec || attempt > 1000) user_error("--out {}: cannot create a temporary directory", dir);
  }
  try {
    for (auto const& file : files) {
      std::ofstream out(temp / file.name, std::ios::binary);
      out << file.text;
      out.close();
      if (!out) user_error("--out {}: cannot write {}", dir, file.name);
    }
  } catch (...) {
    fs::remove_all(temp, ec);
    throw;
  }
  fs::create_directories(target, ec);
  if (ec) {
    fs::remove_all(temp, ec);
    user_error("--out {}: cannot create the directory", dir);
  }
  std::set<std::string> keep;
  for (auto const& file : files) {
    keep.insert(file.name);
    fs::rename(temp / file.name, target / file.name, ec);  // atomic per file, same file system
    if (ec) user_error("--out {}: cannot move {} into place: {}", dir, file.name, ec.message());
  }
  fs::remove_all(temp, ec);
  for (auto const& stale : old_files) {
    // Only plain names an earlier run of ours wrote, never a path out of the directory.
    if (keep.count(stale) == 0 && fs::path(stale).filename() == fs::path(stale)) {
      fs::remove(target / stale, ec);
    }
  }
}

}  // namespace dash::codegen
