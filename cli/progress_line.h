// ProgressLine: "done / total files, rate" on one line of stderr, rewritten
// in place, only when stderr is a terminal (a log file or a pipe gets
// nothing, so scripts see stdout's JSON and stderr's messages only).
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace winnow::cli {

class ProgressLine {
 public:
  // `what` names the things counted ("files").
  ProgressLine(std::size_t total, std::string what);
  ~ProgressLine();  // ends the line (finish)
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // Redraws at most every 0.2 s (and when the total is reached).
  void update(std::size_t done);
  // Draws the last state and ends the line; later updates draw nothing.
  void finish();

 private:
  void draw();

  bool enabled_;
  bool finished_ = false;
  std::size_t total_;
  std::size_t done_ = 0;
  std::string what_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
};

}  // namespace winnow::cli
