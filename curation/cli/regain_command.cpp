// winnow regain --db D: recompute the gains of accepted samples against today's
// index (gains frozen at insert depend on arrival order).
#include <chrono>
#include <iostream>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "command.h"
#include "winnow/curation/ingest_pipeline.h"

namespace winnow::cli {

Command add_regain_command(CLI::App& parent) {
  struct Options {
    std::string db;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = parent.add_subcommand("regain", "recompute the gains of accepted samples");
  cmd->add_option("--db", o->db, "database file")->required();
  return {cmd, [o] {
            curation::IngestPipeline pipeline(o->db);
            const auto t0 = std::chrono::steady_clock::now();
            const std::size_t n = pipeline.regain();
            const double seconds =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            std::cout << nlohmann::json{{"updated", n}, {"seconds", seconds}}.dump() << "\n";
            return 0;
          }};
}

}  // namespace winnow::cli
