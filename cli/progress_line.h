// ProgressLine: progress of a long command on one line of stderr, rewritten in
// place: done / total, rate and time left (ETA). Drawn only when stderr is a
// terminal and the command was not asked to be quiet (a log file or a pipe
// gets nothing, so scripts see stdout's JSON and stderr's messages only).
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include <CLI/CLI.hpp>

namespace winnow::cli {

class ProgressLine {
 public:
  // What is counted: things (`what` names them, "files"), bytes of an input
  // (`what` names the things read from it, "records", counted beside), or the
  // steps of a command whose steps differ in length (no rate or ETA then, the
  // time elapsed).
  enum class Unit { Items, Bytes, Steps };

  // `stage`, when given, starts the line ("label neighbours: ...").
  ProgressLine(std::size_t total, std::string what, bool quiet = false, Unit unit = Unit::Items,
               std::string stage = {});
  ~ProgressLine();  // ends the line (finish)
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // Redraws at most every 0.2 s (and when the total is reached). `things`:
  // with Unit::Bytes, how many of `what` have been read so far.
  void update(std::size_t done, std::size_t things = 0);
  // Names the stage now running (a command of several steps), drawn by the
  // next update.
  void set_stage(const std::string& stage);
  // Draws the last state and ends the line; later updates draw nothing.
  void finish();

 private:
  void draw();

  bool enabled_;
  bool finished_ = false;
  Unit unit_;
  std::size_t total_;
  std::size_t done_ = 0;
  std::size_t things_ = 0;
  std::string what_;
  std::string stage_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
};

// --quiet: the flag of every command that draws a progress line.
void add_quiet_option(CLI::App& command, bool& quiet);

// "1:05" or "2:03:15"; "--:--" when unknown.
std::string format_eta(double seconds);

}  // namespace winnow::cli
