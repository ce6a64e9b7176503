// winnow: the curation command line tool. Each subcommand is in its own file
// (see command.h); `winnow SUBCOMMAND --help` describes it.
//
// Exit codes (docs/cli.md, "Subcommands"): 0 ok, 1 invalid input (bad arguments or
// content), 2 internal error, 3 not found, 4 busy (another process holds the
// database or the daemon lock: try again), 5 I/O error, 6 corrupt state.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <vector>

#include <CLI/CLI.hpp>

#include "command.h"
#include "torchscript_plugin_loader.h"
#include "winnow/error.h"
#include "winnow/version.h"

namespace {

int exit_code(winnow::ErrorKind kind) {
  switch (kind) {
    case winnow::ErrorKind::invalid_input:
      return 1;
    case winnow::ErrorKind::internal:
      return 2;
    case winnow::ErrorKind::not_found:
      return 3;
    case winnow::ErrorKind::busy:
      return 4;
    case winnow::ErrorKind::io:
      return 5;
    case winnow::ErrorKind::corrupt:
      return 6;
  }
  return 2;
}

int run(int argc, char** argv) {
  using namespace winnow::cli;
  use_embedder_plugins();  // --embedder torchscript:PATH loads LibTorch on first use
  CLI::App app{"winnow: curate a labelled data set (SQLite store + vector index)"};
  app.set_version_flag("--version", std::string("winnow ") + winnow::kVersion);
  app.require_subcommand(1);
  const std::vector<Command> commands = {
      add_init_command(app),
      add_ingest_command(app),
      add_import_idx_command(app),
      add_import_folder_command(app),
      add_import_annotations_command(app),
      add_status_command(app),
      add_export_command(app),
      add_diff_command(app),
      add_import_training_command(app),
      add_rejudge_command(app),
      add_review_command(app),
      add_annotate_next_command(app),
      add_report_command(app),
      add_gallery_command(app),
      add_serve_command(app),
      add_demo_command(app),
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 1;
  }
  for (const Command& c : commands) {
    if (c.app->parsed()) return c.run();
  }
  return 1;
}

// Every command's output is checked. Standard output throws at the first
// write that fails (a full disk, /dev/full, a vanished file system), so the
// command stops there and the reason (errno) is still known; whatever is left
// is flushed at the end and checked the same way. Either is an I/O error,
// exit 5: what was written is incomplete.
int output_failed(int error) {
  std::cerr << "winnow: error: cannot write the output to standard output"
            << (error != 0 ? std::string(": ") + std::strerror(error) : std::string())
            << "; what was written is incomplete\n";
  return 5;
}

int checked_output(int code) {
  errno = 0;
  std::cout.flush();
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) return output_failed(errno);
  return code;
}

}  // namespace

int main(int argc, char** argv) {
#if defined(__GLIBC__)
  // A fixed mmap threshold: blocks of 128 KiB or more (the index's cells,
  // which grow a little at a time for months) get pages of their own and
  // give them back when freed. glibc otherwise raises the threshold after the
  // first such free and carves them from the heap, whose holes stay
  // resident and raise the peak memory (docs/benchmarks.md, "Memory").
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  // Setting that threshold also pins the trim threshold at 128 KiB, so the
  // heap's top went back to the kernel after nearly every image and was
  // faulted in again for the next: a fifth of an image ingest's time was page
  // faults. Free memory at the top is kept up to 32 MiB; the peak is the same.
  mallopt(M_TRIM_THRESHOLD, 32 * 1024 * 1024);
#endif
  std::cout.exceptions(std::ios::badbit);
  try {
    return checked_output(run(argc, argv));
  } catch (const std::ios_base::failure&) {
    const int error = errno;
    std::cout.clear();
    return output_failed(error);
  } catch (const winnow::Error& e) {
    std::cerr << "winnow: error: " << e.what() << "\n";
    return exit_code(e.kind());
  } catch (const std::exception& e) {
    std::cerr << "winnow: internal error: " << e.what() << "\n";
    return 2;
  }
}
