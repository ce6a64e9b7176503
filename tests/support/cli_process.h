// The `winnow` CLI as a child process, for tests that run the real binary
// (WINNOW_CLI_PATH): stdout and stderr go to files of a test directory.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace winnow::test {

// Polls `done` every 20 ms for up to `seconds`; true once it holds.
inline bool poll_until(const std::function<bool()>& done, double seconds = 60.0) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < until) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

inline std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class CliProcess {
 public:
  CliProcess(const std::filesystem::path& dir, std::vector<std::string> args,
             const std::string& tag)
      : out_(dir / (tag + ".out")), err_(dir / (tag + ".err")) {
    args.insert(args.begin(), WINNOW_CLI_PATH);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int rc = posix_spawn(&pid_, WINNOW_CLI_PATH, &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) throw std::runtime_error("cannot start " + std::string(WINNOW_CLI_PATH));
  }
  ~CliProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  CliProcess(const CliProcess&) = delete;
  CliProcess& operator=(const CliProcess&) = delete;

  // Signals the process while it runs (never pid -1: every process of the user).
  void signal(int sig) {
    if (pid_ > 0) ::kill(pid_, sig);
  }
  // The exit code (128 + signal when killed), or nullopt after `seconds`;
  // the same code again once the process has ended.
  std::optional<int> wait(double seconds = 300.0) {
    if (pid_ <= 0) return exit_code_;
    int status = 0;
    if (!poll_until([&] { return ::wait4(pid_, &status, WNOHANG, &usage_) == pid_; }, seconds)) {
      return std::nullopt;
    }
    pid_ = -1;
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return exit_code_;
  }
  // Peak resident memory of the finished process, in KiB.
  long max_rss_kib() const { return usage_.ru_maxrss; }
  std::string out() const { return slurp(out_); }
  std::string err() const { return slurp(err_); }

 private:
  pid_t pid_ = -1;
  std::optional<int> exit_code_;  // once it has ended
  struct rusage usage_ {};
  std::filesystem::path out_, err_;
};

}  // namespace winnow::test
