// The `winnow` program of this build run as a user runs it, for the CLI tests.
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <string>

#include <catch2/catch.hpp>

namespace winnow::test {

// Debian's dataset-fashion-mnist: its 10,000 test images and labels, as
// `winnow import-idx`'s two arguments.
inline const std::string kFashionTestIdx =
    "/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz "
    "/usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz";

// Runs `winnow ARGS > OUT 2> ERR` (ERR empty: stderr into OUT too) under a
// 120 s timeout; REQUIREs a normal exit and returns its code.
inline int run_cli(const std::string& args, const std::string& out, const std::string& err = "") {
  const std::string command = "timeout 120 " + std::string(WINNOW_CLI_PATH) + " " + args + " > " +
                              out + (err.empty() ? std::string(" 2>&1") : " 2> " + err);
  INFO(command);
  const int status = std::system(command.c_str());
  REQUIRE(WIFEXITED(status));
  return WEXITSTATUS(status);
}

}  // namespace winnow::test
