#pragma once
// Running the dash binary from the CLI tests: its exit code, stdout and stderr; scratch folders.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>

#include <catch2/catch.hpp>
#include <fmt/format.h>

namespace dash::test {

namespace fs = std::filesystem;

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

struct Output {
  int rc = -1;
  std::string out;
  std::string err;
};

/// `dash ARGS` (DASH_BINARY), with `env` (e.g. "CUDA_VISIBLE_DEVICES=") before it.
inline Output run_dash(std::string const& args, std::string const& env = "") {
  Scratch const io;
  std::string const command =
      fmt::format("{} '{}' {} >'{}' 2>'{}'", env, DASH_BINARY, args, io / "out", io / "err");
  int const status = std::system(command.c_str());
  Output o;
  o.rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  o.out = slurp(io.dir / "out");
  o.err = slurp(io.dir / "err");
  return o;
}

/// A refusal: exit code 2, nothing on stdout, one line "dash: error: ..." on stderr that contains
/// `expected`.
inline void check_user_error(Output const& o, std::string const& expected) {
  INFO("stderr: " << o.err);
  CHECK(o.rc == 2);
  CHECK(o.out.empty());
  CHECK(o.err.rfind("dash: error: ", 0) == 0);
  CHECK(std::count(o.err.begin(), o.err.end(), '\n') == 1);
  CHECK(o.err.find(expected) != std::string::npos);
}

}  // namespace dash::test
