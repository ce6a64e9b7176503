// winnow: the curation command line tool. Each subcommand is in its own file
// (see command.h); `winnow SUBCOMMAND --help` describes it.
//
// Exit codes: 0 ok, 1 bad input (winnow::Error, bad arguments), 2 internal
// error (any other exception).
#include <iostream>
#include <vector>

#include <CLI/CLI.hpp>

#include "command.h"
#include "winnow/error.h"
#ifdef WINNOW_HAVE_TORCHSCRIPT_EMBEDDER
#include "winnow/torch/torchscript_embedder.h"
#endif

namespace {

int run(int argc, char** argv) {
  using namespace winnow::cli;
#ifdef WINNOW_HAVE_TORCHSCRIPT_EMBEDDER
  winnow::torch::register_torchscript_embedder();  // --embedder torchscript:PATH
#endif
  CLI::App app{"winnow: curate a labelled data set (SQLite store + vector index)"};
  app.require_subcommand(1);
  const std::vector<Command> commands = {
      add_init_command(app),   add_ingest_command(app), add_import_idx_command(app),
      add_status_command(app), add_export_command(app), add_regain_command(app),
      add_report_command(app),
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

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const winnow::Error& e) {
    std::cerr << "winnow: error: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "winnow: internal error: " << e.what() << "\n";
    return 2;
  }
}
