// winnow: the curation command line tool.
//
//   winnow init       --db D [--embedder SPEC] [--index flat|hnsw(...)] [thresholds]
//   winnow ingest     --db D MANIFEST...
//   winnow import-idx --db D IMAGES LABELS [--limit N] [--prefix train]
//   winnow status     --db D [--json]
//   winnow export     --db D [--status S] [--format jsonl|csv]
//   winnow regain     --db D
//
// Exit codes: 0 ok, 1 bad input (winnow::Error, bad arguments), 2 internal
// error (any other exception).
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "winnow/curation/content_hash.h"
#include "winnow/curation/idx_importer.h"
#include "winnow/curation/ingest_pipeline.h"
#include "winnow/error.h"

namespace {

using nlohmann::json;
using namespace winnow;
using namespace winnow::curation;

json counts_json(const StatusCounts& c) {
  json j = json::object();
  for (SampleStatus s : kAllSampleStatuses) j[std::string(to_string(s))] = c[s];
  j["total"] = c.total();
  return j;
}

json batch_json(const BatchRecord& b) {
  json j = {{"id", b.id},
            {"file", b.file_name},
            {"checksum", b.checksum},
            {"state", std::string(to_string(b.state))},
            {"attempts", b.attempts},
            {"counts", counts_json(b.counts)},
            {"created_at", b.created_at}};
  if (b.started_at) j["started_at"] = *b.started_at;
  if (b.finished_at) j["finished_at"] = *b.finished_at;
  if (!b.error.empty()) j["error"] = b.error;
  return j;
}

void print_report(const BatchReport& r) {
  json j = {{"batch", r.batch_id},
            {"file", r.name},
            {"skipped", r.skipped},
            {"counts", counts_json(r.counts)},
            {"seconds", r.seconds}};
  if (!r.skipped && r.seconds > 0) j["samples_per_second"] = double(r.counts.total()) / r.seconds;
  std::cout << j.dump() << "\n";
  if (r.skipped) {
    std::cerr << r.name << ": already ingested as batch " << r.batch_id << ", skipped\n";
  }
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

int run(int argc, char** argv) {
  CLI::App app{"winnow: curate a labelled data set (SQLite store + vector index)"};
  app.require_subcommand(1);
  std::string db;

  // init
  CurationConfig config;
  auto* init = app.add_subcommand("init", "create a dataset database and record its config");
  init->add_option("--db", db, "database file")->required();
  init->add_option("--embedder", config.embedder, "embedder spec")->capture_default_str();
  init->add_option("--index", config.index, "index config: flat or hnsw(M=..,...)")
      ->capture_default_str();
  init->add_option("--candidates", config.candidates, "near-dup candidates")->capture_default_str();
  init->add_option("--min-candidate", config.min_candidate_similarity,
                   "index cosine below which candidates are not verified")
      ->capture_default_str();
  init->add_option("--candidate-margin", config.candidate_margin,
                   "verify only candidates within this of the best index cosine (2: all)")
      ->capture_default_str();
  init->add_option("--image-threshold", config.image_threshold, "shifted Pearson threshold")
      ->capture_default_str();
  init->add_option("--text-threshold", config.text_threshold, "text Jaccard threshold")
      ->capture_default_str();
  init->add_option("--label-k", config.label_k, "label quality neighbours")->capture_default_str();
  init->add_option("--flag-below", config.label_flag_below, "label issue below this quality")
      ->capture_default_str();
  init->add_option("--min-label-neighbours", config.min_label_neighbours,
                   "labelled neighbours needed to flag a label issue")
      ->capture_default_str();
  init->add_option("--micro-batch", config.micro_batch, "records searched/indexed together")
      ->capture_default_str();

  // ingest
  std::vector<std::string> manifests;
  auto* ingest = app.add_subcommand("ingest", "ingest JSON Lines manifests, one batch each");
  ingest->add_option("--db", db, "database file")->required();
  ingest->add_option("manifests", manifests, "manifest files")->required();

  // import-idx
  std::string images, labels, prefix = "train";
  std::size_t limit = 0;
  auto* import = app.add_subcommand("import-idx", "ingest an IDX image set (MNIST format) as a batch");
  import->add_option("--db", db, "database file")->required();
  import->add_option("images", images, "IDX images file (.gz or plain)")->required();
  import->add_option("labels", labels, "IDX labels file (.gz or plain)")->required();
  import->add_option("--limit", limit, "only the first N images (0: all)");
  import->add_option("--prefix", prefix, "key prefix")->capture_default_str();

  // status
  bool as_json = false;
  auto* status = app.add_subcommand("status", "counts per status and source, index, last batch");
  status->add_option("--db", db, "database file")->required();
  status->add_flag("--json", as_json, "print JSON");

  // export
  std::string only, format = "jsonl";
  auto* exp = app.add_subcommand("export", "print every sample (or one status) as JSONL or CSV");
  exp->add_option("--db", db, "database file")->required();
  exp->add_option("--status", only, "accepted|duplicate_exact|duplicate_near|label_issue|rejected");
  exp->add_option("--format", format, "jsonl or csv")->capture_default_str();

  // regain
  auto* regain = app.add_subcommand("regain", "recompute the gains of accepted samples");
  regain->add_option("--db", db, "database file")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 1;
  }

  if (init->parsed()) {
    IngestPipeline::init(db, config);
    IngestPipeline pipeline(db);
    std::cout << json{{"db", db},
                      {"config", json::parse(pipeline.config().to_json())},
                      {"index_file", pipeline.index_path()}}
                     .dump()
              << "\n";
    return 0;
  }
  if (ingest->parsed()) {
    for (const std::string& m : manifests) {
      WINNOW_THROW_IF_NOT(std::filesystem::is_regular_file(m), "manifest '{}' does not exist", m);
    }
    IngestPipeline pipeline(db);
    for (const std::string& m : manifests) {
      const std::string checksum = file_checksum(m);
      print_report(pipeline.ingest_batch(m, checksum, read_manifest(m)));
    }
    return 0;
  }
  if (import->parsed()) {
    IngestPipeline pipeline(db);
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<ManifestRecord> records = import_idx(images, labels, prefix);
    if (limit > 0 && limit < records.size()) records.resize(limit);
    const std::string checksum = fmt::format(
        "idx:{}:{}:{}:{}", file_checksum(images), file_checksum(labels), prefix, records.size());
    std::vector<ManifestEntry> entries(records.size());
    for (std::size_t i = 0; i < records.size(); ++i) {
      records[i].line = i + 1;
      entries[i].record = std::move(records[i]);
    }
    BatchReport r = pipeline.ingest_batch(images, checksum, std::move(entries));
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    print_report(r);
    return 0;
  }
  if (status->parsed()) {
    IngestPipeline pipeline(db);
    MetadataStore& store = pipeline.store();
    const StatusCounts counts = store.count_by_status();
    json j = counts_json(counts);
    json sources = json::object();
    for (const auto& [name, c] : store.count_by_source()) {
      sources[name.empty() ? "(unknown)" : name] = counts_json(c);
    }
    j["sources"] = sources;
    const IndexInfo info = pipeline.index_info();
    j["index"] = {{"type", info.type},
                  {"config", info.config},
                  {"vectors", info.vectors},
                  {"file", info.file},
                  {"rebuilt_on_open", info.rebuilt}};
    if (info.rebuilt) j["index"]["rebuild_reason"] = info.rebuild_reason;
    j["embedder"] = pipeline.embedder().spec();
    std::optional<BatchRecord> last;
    for (BatchState s : {BatchState::pending, BatchState::running, BatchState::done,
                         BatchState::failed}) {
      for (const BatchRecord& b : store.batches_in_state(s)) {
        if (!last || b.id > last->id) last = b;
      }
    }
    j["last_batch"] = last ? batch_json(*last) : json(nullptr);
    if (as_json) {
      std::cout << j.dump(2) << "\n";
    } else {
      std::cout << db << ": " << counts.total() << " samples\n";
      for (SampleStatus s : kAllSampleStatuses) {
        std::cout << "  " << to_string(s) << ": " << counts[s] << "\n";
      }
      std::cout << "index: " << info.config << ", " << info.vectors << " vectors, " << info.file
                << "\n";
      if (last) {
        std::cout << "last batch: #" << last->id << " " << last->file_name << " ("
                  << to_string(last->state) << ")\n";
      }
    }
    return 0;
  }
  if (exp->parsed()) {
    std::optional<SampleStatus> filter;
    if (!only.empty()) filter = parse_sample_status(only);
    WINNOW_THROW_IF_NOT(format == "jsonl" || format == "csv",
                        "--format '{}' is not jsonl or csv", format);
    IngestPipeline pipeline(db);
    const bool csv = format == "csv";
    if (csv) {
      std::cout << "id,key,content_hash,label,source,status,duplicate_of,label_quality,gain,"
                   "batch_id,created_at\n";
    }
    auto opt = [](const auto& v) { return v ? fmt::format("{}", *v) : std::string(); };
    pipeline.store().for_each_sample(
        [&](const SampleRecord& s) {
          const std::string label = s.label ? pipeline.label_name(*s.label) : "";
          if (csv) {
            std::cout << s.id << ',' << csv_field(s.external_key) << ',' << s.content_hash << ','
                      << csv_field(label) << ',' << csv_field(s.source) << ','
                      << to_string(s.status) << ',' << opt(s.duplicate_of) << ','
                      << opt(s.label_quality) << ',' << opt(s.gain) << ',' << opt(s.batch_id)
                      << ',' << s.created_at << '\n';
            return;
          }
          json j = {{"id", s.id},
                    {"key", s.external_key},
                    {"content_hash", s.content_hash},
                    {"label", s.label ? json(label) : json(nullptr)},
                    {"source", s.source},
                    {"status", std::string(to_string(s.status))},
                    {"duplicate_of", s.duplicate_of ? json(*s.duplicate_of) : json(nullptr)},
                    {"label_quality", s.label_quality ? json(*s.label_quality) : json(nullptr)},
                    {"gain", s.gain ? json(*s.gain) : json(nullptr)},
                    {"batch_id", s.batch_id ? json(*s.batch_id) : json(nullptr)},
                    {"created_at", s.created_at}};
          std::cout << j.dump() << '\n';
        },
        filter);
    return 0;
  }
  if (regain->parsed()) {
    IngestPipeline pipeline(db);
    const auto t0 = std::chrono::steady_clock::now();
    const std::size_t n = pipeline.regain();
    std::cout << json{{"updated", n},
                      {"seconds",
                       std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()}}
                     .dump()
              << "\n";
    return 0;
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
