#include "progress_line.h"

#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>

namespace winnow::cli {

ProgressLine::ProgressLine(std::size_t total, std::string what)
    : enabled_(::isatty(STDERR_FILENO) == 1),
      total_(total),
      what_(std::move(what)),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

ProgressLine::~ProgressLine() {
  finish();
}

void ProgressLine::update(std::size_t done) {
  if (done == done_ && done_ > 0) return;  // nothing new to show
  done_ = done;
  if (!enabled_ || finished_) return;
  const auto now = std::chrono::steady_clock::now();
  if (done_ < total_ && now - last_draw_ < std::chrono::milliseconds(200)) return;
  last_draw_ = now;
  draw();
}

void ProgressLine::finish() {
  if (!enabled_ || finished_) return;
  if (done_ < total_ || total_ == 0) draw();  // the total was drawn by update
  std::fputs("\n", stderr);
  finished_ = true;
}

void ProgressLine::draw() {
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double rate = seconds > 0 ? static_cast<double>(done_) / seconds : 0.0;
  const double percent = total_ > 0 ? 100.0 * static_cast<double>(done_) / total_ : 100.0;
  // \r back to the start of the line, \033[K clears what a longer line left.
  fmt::print(stderr, "\r{} / {} {} ({:.0f}%), {:.0f} {}/s\033[K", done_, total_, what_, percent,
             rate, what_);
  std::fflush(stderr);
}

}  // namespace winnow::cli
