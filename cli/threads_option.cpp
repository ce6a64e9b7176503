#include "command.h"

namespace winnow::cli {

void add_threads_option(CLI::App& command, int& threads) {
  command
      .add_option("--threads", threads,
                  "threads that parse, decode, embed and verify each micro-batch (0: every core; "
                  "decisions are the same for any number)")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
}

}  // namespace winnow::cli
