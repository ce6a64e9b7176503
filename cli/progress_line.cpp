#include "progress_line.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <fmt/format.h>

namespace winnow::cli {

ProgressLine::ProgressLine(std::size_t total, std::string what, bool quiet, Unit unit,
                           std::string stage)
    : enabled_(!quiet && ::isatty(STDERR_FILENO) == 1),
      unit_(unit),
      total_(total),
      what_(std::move(what)),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {
  set_stage(stage);
}

ProgressLine::~ProgressLine() {
  finish();
}

void ProgressLine::update(std::size_t done, std::size_t things) {
  if (done == done_ && things == things_ && done_ > 0) return;  // nothing new to show
  done_ = done;
  things_ = things;
  if (!enabled_ || finished_) return;
  const auto now = std::chrono::steady_clock::now();
  // Steps are few and may be long: each is drawn as it starts.
  if (unit_ != Unit::Steps && done_ < total_ && now - last_draw_ < std::chrono::milliseconds(200))
    return;
  last_draw_ = now;
  draw();
}

void ProgressLine::set_stage(const std::string& stage) {
  stage_ = stage.empty() ? std::string() : stage + ": ";
}

void ProgressLine::finish() {
  if (!enabled_ || finished_) return;
  if (done_ < total_ || total_ == 0) draw();  // the total was drawn by update
  std::fputs("\n", stderr);
  finished_ = true;
}

void add_quiet_option(CLI::App& command, bool& quiet) {
  command.add_flag("--quiet,-q", quiet,
                   "no progress line on stderr (it is drawn only when stderr is a terminal)");
}

std::string format_eta(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "--:--";
  const auto s = static_cast<long long>(std::llround(seconds));
  if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
  return fmt::format("{}:{:02}", s / 60, s % 60);
}

void ProgressLine::draw() {
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double done = static_cast<double>(done_);
  const double rate = seconds > 0 ? done / seconds : 0.0;
  const double percent = total_ > 0 ? 100.0 * done / static_cast<double>(total_) : 100.0;
  const double left = rate > 0 ? (static_cast<double>(total_) - done) / rate : NAN;
  const std::string eta = done_ >= total_ ? "0:00" : format_eta(left);
  // \r back to the start of the line, \033[K clears what a longer line left.
  if (unit_ == Unit::Steps) {
    fmt::print(stderr, "\r{}{} of {} {}, {:.1f} s\033[K", stage_, std::min(done_ + 1, total_),
               total_, what_, seconds);
  } else if (unit_ == Unit::Bytes) {
    constexpr double kMB = 1e6;
    const double things_rate = seconds > 0 ? static_cast<double>(things_) / seconds : 0.0;
    fmt::print(stderr, "\r{}{:.0f}% of {:.1f} MB, {:.1f} MB/s, ETA {}, {} {} ({:.0f}/s)\033[K",
               stage_, percent, static_cast<double>(total_) / kMB, rate / kMB, eta, things_, what_,
               things_rate);
  } else {
    fmt::print(stderr, "\r{}{} / {} {} ({:.0f}%), {:.0f} {}/s, ETA {}\033[K", stage_, done_, total_,
               what_, percent, rate, what_, eta);
  }
  std::fflush(stderr);
}

}  // namespace winnow::cli
