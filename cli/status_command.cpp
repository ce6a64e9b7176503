// winnow status --db D [--json] [--check]
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "winnow/curation/core/printable_text.h"
#include "cli_json.h"
#include "command.h"
#include "winnow/curation/dataset/dataset.h"

namespace winnow::cli {

Command add_status_command(CLI::App& parent) {
  struct Options {
    std::string db;
    bool json = false;
    bool check = false;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = parent.add_subcommand("status", "counts per status and source, index, last batch");
  cmd->footer("Example: winnow status --db data.db --json");
  cmd->add_option("--db", o->db, "database file")->required();
  cmd->add_flag("--json", o->json, "print JSON");
  cmd->add_flag("--check", o->check,
                "also run SQLite's quick_check on the database file; exit 6 when it finds "
                "damage");
  return {
      cmd, [o] {
        curation::Dataset dataset(o->db, curation::OpenMode::read_only);
        nlohmann::json j = status_json(dataset);
        std::vector<std::string> problems;
        if (o->check) {
          problems = dataset.store().quick_check();
          j["check"] = {
              {"quick_check", problems.empty() ? nlohmann::json("ok") : nlohmann::json(problems)}};
        }
        const int code = problems.empty() ? 0 : 6;  // corrupt (docs/cli.md)
        if (o->json) {
          std::cout << json_text(j, 2) << "\n";
          return code;
        }
        std::cout << curation::visible_text(o->db) << ": " << j["total"] << " samples, revision "
                  << j["revision"] << "\n";
        for (store::SampleStatus s : store::kAllSampleStatuses) {
          std::cout << "  " << to_string(s) << ": " << j[std::string(to_string(s))] << "\n";
        }
        const auto& index = j["index"];
        std::cout << "index: " << index["config"].get<std::string>() << ", " << index["vectors"]
                  << " vectors, " << curation::visible_text(index["file"].get<std::string>())
                  << "\n";
        if (!j["label_check"].is_null()) {
          std::cout << curation::visible_text(j["label_check"]["line"].get<std::string>()) << "\n";
        }
        if (j["label_conflicts"].get<std::int64_t>() > 0) {
          std::cout << "label conflicts: " << j["label_conflicts"]
                    << " duplicates carry another label than their original (export "
                       "--details: label_conflict)\n";
        }
        if (j["reviews"]["samples"].get<std::int64_t>() > 0) {
          const auto& r = j["reviews"];
          std::cout << "reviewed by a person: " << r["samples"] << " samples (";
          const char* sep = "";
          for (const auto& [verdict, n] : r["by_verdict"].items()) {
            std::cout << sep << verdict << " " << n;
            sep = ", ";
          }
          std::cout << "; by";
          sep = " ";
          for (const auto& [who, n] : r["by_reviewer"].items()) {
            std::cout << sep << curation::visible_text(who.empty() ? "(unnamed)" : who) << " " << n;
            sep = ", ";
          }
          std::cout << ")\n";
        }
        const auto& images = j["image_issues"];
        if (images["images"].get<std::int64_t>() > 0) {
          std::cout << "image files: " << images["images"] << ", " << images["with_issues"]
                    << " with image-quality issues";
          for (const auto& [issue, count] : images["issues"].items()) {
            if (count.get<std::int64_t>() > 0) std::cout << ", " << issue << " " << count;
          }
          std::cout << "\n";
        }
        if (!j["last_batch"].is_null()) {
          const auto& b = j["last_batch"];
          std::cout << "last batch: #" << b["id"] << " "
                    << curation::visible_text(b["file"].get<std::string>()) << " ("
                    << b["state"].get<std::string>() << ")\n";
        }
        const auto& w = j["winnow"];
        const auto recorded = [](const nlohmann::json& v) {
          return v.is_null() ? std::string("(not recorded)") : v.get<std::string>();
        };
        std::cout << "winnow: created by " << recorded(w["database_created_by"])
                  << ", last written by " << recorded(w["database_written_by"]) << "\n";
        if (o->check) {
          std::cout << "check: "
                    << (problems.empty()
                            ? std::string("ok (SQLite quick_check)")
                            : std::to_string(problems.size()) +
                                  (problems.size() == 1 ? " problem" : " problems") +
                                  " found by SQLite's quick_check, first: " + problems.front())
                    << "\n";
        }
        return code;
      }};
}

}  // namespace winnow::cli
