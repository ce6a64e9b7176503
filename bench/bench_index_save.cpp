// bench_index_save: the wall time of save_vector_index on a saved index file,
// as a long-lived ingest saves it: every --wait seconds, --saves times, to one
// path. With the spare (the default) every save after the second writes over
// the pages of the snapshot before; --no-spare puts a directory where the
// spare would be, so that each save writes a new temporary file and renames
// it, as every save did before the spare (docs/index.md, "Persistence").
//
//   bench_index_save --index DIR/growth.db.index --out /tmp/s/x.index --saves 5 --wait 6
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "winnow/index/vector_index_io.h"
#include "winnow/version.h"

#include "bench_support.h"

int main(int argc, char** argv) {
  CLI::App app{"wall time of saving a vector index, again and again to one path"};
  std::string index_path, out_path, json_path;
  int saves = 5;
  double wait = 6.0;
  bool no_spare = false;
  app.add_option("--index", index_path, "an index file to load and save")->required();
  app.add_option("--out", out_path, "where to save it (its directory must exist)")->required();
  app.add_option("--saves", saves, "saves to time")->capture_default_str();
  app.add_option("--wait", wait, "seconds before each save, as between batches")
      ->capture_default_str();
  app.add_flag("--no-spare", no_spare, "a new temporary file each save, renamed over --out");
  app.add_option("--json", json_path, "also write the JSON here");
  CLI11_PARSE(app, argc, argv);

  using namespace winnow;
  const index::LoadedVectorIndex loaded = index::load_vector_index(index_path);
  std::filesystem::remove(out_path);
  std::filesystem::remove_all(out_path + ".spare");
  if (no_spare) std::filesystem::create_directory(out_path + ".spare");  // never a usable spare
  std::vector<double> seconds;
  for (int i = 0; i < saves; ++i) {
    std::this_thread::sleep_for(std::chrono::duration<double>(wait));
    const auto t0 = bench::Clock::now();
    index::save_vector_index(*loaded.index, out_path, loaded.fingerprint);
    seconds.push_back(bench::seconds_since(t0));
  }
  const nlohmann::json out = {{"bench", "index_save"},
                              {"version", kVersion},
                              {"index", index_path},
                              {"bytes", std::filesystem::file_size(out_path)},
                              {"vectors", loaded.index->size()},
                              {"spare", !no_spare},
                              {"wait_s", wait},
                              {"seconds", seconds},
                              {"load", bench::load_average()}};
  std::filesystem::remove(out_path);
  std::filesystem::remove_all(out_path + ".spare");
  return bench::emit(out, json_path);
}
