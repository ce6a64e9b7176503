// winnow diff --db D FROM TO [--status S] [--all]: what changed in the dataset
// between two revisions (store/sample_history.h). The samples "in" the
// dataset are those of status S (accepted by default); a sample that came in
// is added, one that went out removed, one in at both with another label
// relabelled. Prints one JSON line a change, then a summary on stderr.
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_json.h"
#include "command.h"
#include "winnow/curation/dataset/dataset.h"
#include "winnow/error.h"
#include "winnow/store/sample_history.h"

namespace winnow::cli {

namespace {

enum class Change { added, removed, relabelled, other };
constexpr const char* kChangeNames[] = {"added", "removed", "relabelled", "changed"};

// What kind of change `before` -> `after` is for the samples of status `in`.
Change change_kind(const std::optional<store::SampleState>& before, const store::SampleState& after,
                   store::SampleStatus in) {
  const bool was_in = before && before->status == in;
  const bool is_in = after.status == in;
  if (!was_in && is_in) return Change::added;
  if (was_in && !is_in) return Change::removed;
  if (was_in && is_in && before->label != after.label) return Change::relabelled;
  return Change::other;
}

nlohmann::json state_json(const std::optional<store::SampleState>& s,
                          const curation::LabelNames& names) {
  using nlohmann::json;
  if (!s) return nullptr;
  return {{"status", std::string(to_string(s->status))},
          {"label", s->label ? json(names.name_of(*s->label)) : json(nullptr)},
          {"duplicate_of", s->duplicate_of ? json(*s->duplicate_of) : json(nullptr)},
          {"revision", s->revision}};
}

}  // namespace

Command add_diff_command(CLI::App& parent) {
  struct Options {
    std::string db, in = "accepted";
    std::int64_t from = 0, to = 0;
    bool all = false;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = parent.add_subcommand(
      "diff", "what changed between two revisions: samples added, removed and relabelled");
  cmd->add_option("--db", o->db, "database file")->required();
  cmd->add_option("from", o->from, "the earlier revision")->required();
  cmd->add_option("to", o->to, "the later revision (winnow status names the current one)")
      ->required();
  cmd->add_option("--status", o->in, "the status of the samples that make the dataset")
      ->capture_default_str();
  cmd->add_flag("--all", o->all, "also every other change of status, label or original");
  cmd->footer("Example: winnow diff --db data.db 3 7");
  return {
      cmd, [o] {
        const store::SampleStatus in = store::parse_sample_status(o->in);
        curation::Dataset dataset(o->db, curation::OpenMode::read_only);
        store::SampleHistory history(dataset.store().database());
        const std::int64_t now = history.revision();
        WINNOW_THROW_IF_NOT(o->from >= 0 && o->from < o->to && o->to <= now,
                            "revisions {} to {}: {} is at revision {}; give two revisions "
                            "from 0 to {}, the earlier first",
                            o->from, o->to, o->db, now, now);
        std::map<Change, std::int64_t> counts;
        history.for_each_changed(
            o->from, o->to,
            [&](const std::optional<store::SampleState>& before, const store::SampleState& after) {
              const Change kind = change_kind(before, after, in);
              ++counts[kind];
              if (kind == Change::other && !o->all) return;
              const nlohmann::json j = {{"id", after.sample_id},
                                        {"key", after.external_key},
                                        {"change", kChangeNames[static_cast<int>(kind)]},
                                        {"before", state_json(before, dataset.label_names())},
                                        {"after", state_json(after, dataset.label_names())},
                                        {"reason", history.reason_of(after)}};
              std::cout << json_text(j) << '\n';
            });
        std::cerr << fmt::format(
            "revisions {} to {} ({} samples): {} added, {} removed, {} relabelled, {} other "
            "changes{}\n",
            o->from, o->to, o->in, counts[Change::added], counts[Change::removed],
            counts[Change::relabelled], counts[Change::other], o->all ? "" : " (--all lists them)");
        return 0;
      }};
}

}  // namespace winnow::cli
