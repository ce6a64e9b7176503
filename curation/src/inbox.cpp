#include "winnow/curation/inbox.h"

#include <algorithm>
#include <fstream>
#include <system_error>
#include <utility>

#include "winnow/error.h"

namespace winnow::curation {

namespace fs = std::filesystem;

namespace {

bool is_manifest(const fs::directory_entry& e) {
  const std::string name = e.path().filename().string();
  std::error_code ec;
  return e.is_regular_file(ec) && !name.empty() && name[0] != '.' &&
         e.path().extension() == ".jsonl";
}

// Manifests in `dir`, oldest first (then by name, for files of the same second).
std::vector<fs::path> manifests_in(const fs::path& dir) {
  std::vector<std::pair<fs::file_time_type, fs::path>> found;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    if (!is_manifest(e)) continue;
    std::error_code tec;
    const auto t = e.last_write_time(tec);
    if (tec) continue;  // vanished meanwhile
    found.emplace_back(t, e.path());
  }
  WINNOW_THROW_IF_NOT(!ec, "cannot list inbox folder '{}': {}", dir.string(), ec.message());
  std::sort(found.begin(), found.end());
  std::vector<fs::path> paths;
  paths.reserve(found.size());
  for (auto& f : found) paths.push_back(std::move(f.second));
  return paths;
}

// `dir/name`, or `dir/stem.N.ext` with the first N not taken.
fs::path free_name(const fs::path& dir, const fs::path& name) {
  fs::path target = dir / name;
  for (int n = 1; fs::exists(target); ++n) {
    target = dir / (name.stem().string() + "." + std::to_string(n) + name.extension().string());
  }
  return target;
}

void make_dir(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  WINNOW_THROW_IF_NOT(!ec, "cannot create folder '{}': {}", dir.string(), ec.message());
  WINNOW_THROW_IF_NOT(fs::is_directory(dir), "'{}' exists and is not a folder", dir.string());
}

fs::path move(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::rename(from, to, ec);
  WINNOW_THROW_IF_NOT(!ec, "cannot move '{}' to '{}': {}", from.string(), to.string(),
                      ec.message());
  return to;
}

}  // namespace

Inbox::Inbox(fs::path folder) : folder_(std::move(folder)) {
  make_dir(folder_);
  make_dir(processing_dir());
  make_dir(processed_dir());
  make_dir(failed_dir());
}

std::vector<fs::path> Inbox::waiting() const { return manifests_in(folder_); }

std::vector<fs::path> Inbox::interrupted() const { return manifests_in(processing_dir()); }

std::optional<fs::path> Inbox::claim(const fs::path& manifest) {
  const fs::path target = free_name(processing_dir(), manifest.filename());
  std::error_code ec;
  fs::rename(manifest, target, ec);
  if (ec == std::errc::no_such_file_or_directory) return std::nullopt;  // taken meanwhile
  WINNOW_THROW_IF_NOT(!ec, "cannot claim manifest '{}': {}", manifest.string(), ec.message());
  return target;
}

fs::path Inbox::mark_processed(const fs::path& claimed) {
  return move(claimed, free_name(processed_dir(), claimed.filename()));
}

fs::path Inbox::mark_failed(const fs::path& claimed, const std::string& reason) {
  const fs::path target = free_name(failed_dir(), claimed.filename());
  // The reason first: a crash between the two leaves the manifest in
  // processing/, to be tried again, never a failed manifest without reason.
  const fs::path reason_file = target.string() + ".reason.txt";
  {
    std::ofstream out(reason_file, std::ios::trunc);
    out << reason << "\n";
    WINNOW_THROW_IF_NOT(out.good(), "cannot write '{}'", reason_file.string());
  }
  return move(claimed, target);
}

}  // namespace winnow::curation
