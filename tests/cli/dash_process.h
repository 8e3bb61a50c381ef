#pragma once
// Running the dash binary from the CLI tests: its exit code, stdout and stderr.
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "tests/scratch.h"

namespace dash::test {

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
