#pragma once
// Files in tests: a file's whole text, and a scratch folder of a test's own that goes away with it.
#include <unistd.h>

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>

#include <fmt/format.h>

namespace dash::test {

namespace fs = std::filesystem;

/// The bytes of `path`; empty if it cannot be read.
inline std::string slurp(fs::path const& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// A folder of its own under the temp directory, removed at the end.
struct Scratch {
  fs::path dir;
  Scratch() {
    static int counter = 0;
    dir = fs::temp_directory_path() / fmt::format("dash_test_{}_{}", ::getpid(), counter++);
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  Scratch(Scratch const&) = delete;
  Scratch& operator=(Scratch const&) = delete;
  [[nodiscard]] std::string path(std::string const& name) const { return (dir / name).string(); }
  [[nodiscard]] std::string operator/(std::string const& name) const { return path(name); }
  /// Writes `text` to `name` and returns its path.
  [[nodiscard]] std::string write(std::string const& name, std::string const& text) const {
    std::ofstream(dir / name, std::ios::binary) << text;
    return path(name);
  }
  [[nodiscard]] std::size_t entries() const {
    std::size_t n = 0;
    for ([[maybe_unused]] auto const& e : fs::directory_iterator(dir)) ++n;
    return n;
  }
};

}  // namespace dash::test
