#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cstdio>  // renameat2
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <numeric>
#include <thread>

#include "index_test_helpers.h"
#include "winnow/error.h"
#include "winnow/index/hnsw_vector_index.h"
#include "winnow/index/ivf_vector_index.h"
#include "winnow/index/vector_index_factory.h"
#include "winnow/index/vector_index_io.h"

using namespace winnow::index;
using namespace winnow::index::test;
using Catch::Matchers::Contains;

namespace {

constexpr std::size_t kDim = 24;
constexpr std::size_t kRows = 600;

struct Data {
  Dataset data = clustered_dataset(kRows, 12, kDim, 12, 21);
  std::vector<float>& base = data.base;
  std::vector<float>& queries = data.queries;
  std::vector<std::int64_t> ids = sequential_ids(kRows, 10, 4);
};

const Data& data() {
  static const Data d;
  return d;
}

// Whether the file system under `dir` swaps names (RENAME_EXCHANGE): where it
// cannot, a save renames its file and keeps no spare (replacement_file.h).
bool exchanges_names(const ScratchDir& dir) {
  const std::string a = dir.file("probe-a"), b = dir.file("probe-b");
  std::ofstream(a) << "a";
  std::ofstream(b) << "b";
  const bool ok = ::renameat2(AT_FDCWD, a.c_str(), AT_FDCWD, b.c_str(), RENAME_EXCHANGE) == 0;
  std::filesystem::remove(a);
  std::filesystem::remove(b);
  return ok;
}

void truncate_file(const std::string& path, std::uintmax_t keep) {
  std::filesystem::resize_file(path, keep);
}

void flip_byte(const std::string& path, std::uintmax_t offset) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(static_cast<std::streamoff>(offset));
  char c = 0;
  f.read(&c, 1);
  c = static_cast<char>(c ^ 0x5a);
  f.seekp(static_cast<std::streamoff>(offset));
  f.write(&c, 1);
}

// Rebuild source that hands out the fixture in batches of 250 and counts calls.
struct CountingSource {
  int* batches;
  std::size_t next = 0;
  bool operator()(VectorBatch& batch) {
    const Data& dd = data();
    if (next >= kRows) {
      return false;
    }
    const std::size_t end = std::min(kRows, next + 250);
    batch.ids.assign(dd.ids.begin() + static_cast<std::ptrdiff_t>(next),
                     dd.ids.begin() + static_cast<std::ptrdiff_t>(end));
    batch.vectors.assign(dd.base.begin() + static_cast<std::ptrdiff_t>(next * kDim),
                         dd.base.begin() + static_cast<std::ptrdiff_t>(end * kDim));
    next = end;
    ++*batches;
    return true;
  }
};

}  // namespace

TEST_CASE("save/load round trip keeps results, ids and tombstones", "[io]") {
  const std::string config =
      GENERATE(as<std::string>{}, "flat", "hnsw(M=12,efConstruction=30,efSearch=48)",
               "ivf(nprobe=2,cellScale=100)", "auto",      // auto: still flat at 600 vectors
               "auto(switchAt=400,nprobe=2,cellCap=64)");  // auto: switched to IVF
  INFO(config);
  const Data& dd = data();
  ScratchDir dir;
  const std::string path = dir.file("vectors.widx");

  auto index = make_vector_index(config, kDim);
  index->add(dd.ids, dd.base);
  const std::vector<std::int64_t> removed = {dd.ids[0], dd.ids[17], dd.ids[300]};
  REQUIRE(index->remove(removed) == 3);
  const SearchResults before_one =
      index->search(std::vector<float>(dd.queries.begin(), dd.queries.begin() + kDim), 10);
  const SearchResults before = index->search(dd.queries, 10);
  const IndexFingerprint fp{kRows, dd.ids.back()};

  save_vector_index(*index, path, fp);
  CHECK(dir.entries() == 1);  // no temporary file left behind

  const VectorIndexFileInfo info = read_vector_index_info(path);
  CHECK(info.config == index->config());
  CHECK(info.dim == kDim);
  CHECK(info.live == kRows - 3);
  CHECK(info.rows == kRows - 3 + index->tombstones());
  CHECK(info.fingerprint == fp);

  LoadedVectorIndex loaded = load_vector_index(path);
  REQUIRE(loaded.index);
  CHECK(loaded.fingerprint == fp);
  CHECK(loaded.index->type() == index->type());
  CHECK(loaded.index->config() == index->config());
  CHECK(loaded.index->dim() == kDim);
  CHECK(loaded.index->size() == index->size());
  CHECK(loaded.index->tombstones() == index->tombstones());
  CHECK(loaded.index->ids() == index->ids());
  for (const std::int64_t id : removed) {
    CHECK_FALSE(loaded.index->contains(id));
  }
  const SearchResults after = loaded.index->search(dd.queries, 10);
  CHECK(after.ids == before.ids);
  CHECK(after.similarities == before.similarities);
  const SearchResults after_one =
      loaded.index->search(std::vector<float>(dd.queries.begin(), dd.queries.begin() + kDim), 10);
  CHECK(after_one.ids == before_one.ids);

  // The loaded index keeps working: add, remove, save again.
  loaded.index->add({99999}, std::vector<float>(dd.base.begin(), dd.base.begin() + kDim));
  CHECK(loaded.index->search(std::vector<float>(dd.base.begin(), dd.base.begin() + kDim), 1)
            .id(0, 0) == 99999);
  save_vector_index(*loaded.index, path, IndexFingerprint{kRows + 1, 99999});
  CHECK(load_vector_index(path).index->contains(99999));
  // No temporary file left behind; the snapshot before is the next save's spare
  // (kept where the file system can swap names).
  if (exchanges_names(dir)) {
    CHECK(dir.entries() == 2);
    CHECK(load_vector_index(path + ".spare").fingerprint == fp);
  } else {
    CHECK(dir.entries() == 1);
  }
}

// The groups of cells are part of the saved index: a reloaded capped IVF
// chooses the same cells, and grows on exactly as the one never saved.
TEST_CASE("a capped IVF index with groups of cells reloads and grows on as if never saved",
          "[io][ivf]") {
  const std::size_t n = 24000, first = 20000;
  const std::vector<float> base = clustered_vectors(n, kDim, 20, 29);
  const std::vector<float> queries = clustered_vectors(100, kDim, 20, 31);
  std::vector<std::int64_t> ids(n);
  std::iota(ids.begin(), ids.end(), std::int64_t{1});
  ScratchDir dir;
  const std::string path = dir.file("capped.widx");
  const std::string config = "ivf(nprobe=4,cellScale=100,cellCap=16)";
  const auto add = [&](VectorIndex& index, std::size_t from, std::size_t to) {
    for (std::size_t b = from; b < to; b += 256) {
      const std::size_t count = std::min<std::size_t>(256, to - b);
      index.add(count, ids.data() + b, base.data() + b * kDim);
    }
  };
  auto kept = make_vector_index(config, kDim);
  add(*kept, 0, first);
  REQUIRE(dynamic_cast<IvfVectorIndex&>(*kept).cells() >= kDirectoryFrom);
  save_vector_index(*kept, path, IndexFingerprint{first, ids[first - 1]});
  std::unique_ptr<VectorIndex> loaded = load_vector_index(path).index;
  CHECK(loaded->search(queries, 10).ids == kept->search(queries, 10).ids);
  add(*kept, first, n);
  add(*loaded, first, n);
  CHECK(dynamic_cast<IvfVectorIndex&>(*loaded).cells() ==
        dynamic_cast<IvfVectorIndex&>(*kept).cells());
  const SearchResults a = kept->search(queries, 10), b = loaded->search(queries, 10);
  CHECK(b.ids == a.ids);
  CHECK(b.similarities == a.similarities);
}

TEST_CASE("open_or_rebuild takes another nprobe or sharedScanFrom without a rebuild", "[io][ivf]") {
  const Data& dd = data();
  ScratchDir dir;
  const std::string path = dir.file("ivf.widx");
  const IndexFingerprint fp{kRows, dd.ids.back()};
  int batches = 0;
  OpenResult first = open_or_rebuild(path, "ivf", kDim, fp, CountingSource{&batches});
  REQUIRE(first.rebuilt);
  batches = 0;
  const std::string knobs = "ivf(nprobe=8,cellScale=100,cellCap=256,sharedScanFrom=10)";
  OpenResult second = open_or_rebuild(path, knobs, kDim, fp, CountingSource{&batches});
  CHECK_FALSE(second.rebuilt);
  CHECK(batches == 0);
  CHECK(second.index->config() == knobs);
  CHECK(second.index->queries_per_search() == kSharedScanQueries);
}

// Files are written and read as streams (header placeholder, payload through a
// 1 MB buffer with big arrays written directly, checksum fed in pieces). An
// index of 2,100 x 128-d vectors has a payload above the buffer size whose
// length is not a multiple of the checksum's 8-byte words.
TEST_CASE("a payload larger than the write buffer round-trips and is checksummed to its last byte",
          "[io]") {
  constexpr std::size_t d = 128;
  constexpr std::size_t n = 2100;
  const Dataset big = clustered_dataset(n, 8, d, 16, 5);
  ScratchDir dir;
  const std::string path = dir.file("big.widx");
  auto index = make_vector_index("hnsw(M=8,efConstruction=20,efSearch=32)", d);
  index->add(sequential_ids(n, 1), big.base);
  REQUIRE(index->remove({5, 6, 7}) == 3);  // a tombstone bitmap of 263 bytes
  save_vector_index(*index, path, {n, static_cast<std::int64_t>(n)});

  const VectorIndexFileInfo info = read_vector_index_info(path);
  const auto size = std::filesystem::file_size(path);
  CHECK(info.payload_size > (1u << 20));
  CHECK(info.payload_size % 8 != 0);
  CHECK(size > info.payload_size);  // header + payload, nothing else
  CHECK(info.live == n - 3);

  LoadedVectorIndex loaded = load_vector_index(path);
  REQUIRE(loaded.index);
  CHECK(loaded.index->ids() == index->ids());
  const SearchResults before = index->search(big.queries, 5);
  const SearchResults after = loaded.index->search(big.queries, 5);
  CHECK(after.ids == before.ids);
  CHECK(after.similarities == before.similarities);

  SECTION("a flipped last byte (in the checksum's tail) is caught") {
    flip_byte(path, size - 1);
    CHECK_THROWS_WITH(load_vector_index(path), Contains(path) && Contains("checksum"));
  }
  SECTION("a flipped byte in the middle of the vectors is caught") {
    flip_byte(path, size - info.payload_size + (1u << 20) + 3);
    CHECK_THROWS_WITH(load_vector_index(path), Contains(path) && Contains("checksum"));
  }
  SECTION("an appended byte is caught") {
    std::ofstream(path, std::ios::app | std::ios::binary) << 'x';
    CHECK_THROWS_WITH(load_vector_index(path), Contains(path) && Contains("appended"));
  }
}

TEST_CASE("loading a missing, truncated or corrupt file throws naming the path", "[io]") {
  const Data& dd = data();
  ScratchDir dir;
  const std::string path = dir.file("bad.widx");
  CHECK_THROWS_WITH(load_vector_index(path), Contains(path) && Contains("does not exist"));

  auto index = make_vector_index("hnsw(M=8,efConstruction=20,efSearch=16)", kDim);
  index->add(dd.ids, dd.base);
  save_vector_index(*index, path, {});
  const auto size = std::filesystem::file_size(path);

  SECTION("truncated payload") {
    truncate_file(path, size - 100);
    CHECK_THROWS_WITH(load_vector_index(path), Contains(path) && Contains("truncated"));
  }
  SECTION("truncated header") {
    truncate_file(path, 20);
    CHECK_THROWS_WITH(load_vector_index(path), Contains(path) && Contains("truncated"));
    CHECK_THROWS_AS(read_vector_index_info(path), winnow::Error);
  }
  SECTION("empty file") {
    truncate_file(path, 0);
    CHECK_THROWS_WITH(load_vector_index(path), Contains(path) && Contains("bad magic"));
  }
  SECTION("flipped payload byte") {
    flip_byte(path, size / 2);
    CHECK_THROWS_WITH(load_vector_index(path), Contains(path) && Contains("checksum"));
  }
  SECTION("flipped header byte") {
    flip_byte(path, 50);  // inside the fingerprint
    CHECK_THROWS_WITH(load_vector_index(path), Contains(path) && Contains("corrupt header"));
  }
  SECTION("not an index file") {
    std::ofstream(path, std::ios::trunc) << "hello, this is not an index at all";
    CHECK_THROWS_WITH(load_vector_index(path), Contains("not a winnow vector index"));
  }
}

TEST_CASE("open_or_rebuild rebuilds when the file is missing, stale or corrupt", "[io]") {
  const Data& dd = data();
  ScratchDir dir;
  const std::string path = dir.file("index.widx");
  const std::string config = "hnsw(M=8,efConstruction=20,efSearch=32)";
  const IndexFingerprint fp{kRows, dd.ids.back()};
  int batches = 0;

  // Missing: rebuilt from the source in batches and saved.
  OpenResult first = open_or_rebuild(path, config, kDim, fp, CountingSource{&batches});
  CHECK(first.rebuilt);
  CHECK(first.reason == RebuildReason::missing);
  CHECK(first.saved);
  CHECK(batches == 3);
  REQUIRE(first.index);
  CHECK(first.index->size() == kRows);
  CHECK(std::filesystem::exists(path));
  const SearchResults reference = first.index->search(dd.queries, 5);

  // Intact and current: loaded, the source is not called.
  batches = 0;
  OpenResult second = open_or_rebuild(path, config, kDim, fp, CountingSource{&batches});
  CHECK_FALSE(second.rebuilt);
  CHECK(second.reason == RebuildReason::none);
  CHECK(batches == 0);
  CHECK(second.index->search(dd.queries, 5).ids == reference.ids);

  // Another efSearch is a search-time change: loaded, not rebuilt.
  OpenResult third = open_or_rebuild(path, "hnsw(M=8,efConstruction=20,efSearch=100)", kDim, fp,
                                     CountingSource{&batches});
  CHECK_FALSE(third.rebuilt);
  CHECK(third.index->config() == "hnsw(M=8,efConstruction=20,efSearch=100)");

  // Stale fingerprint: the store has moved on.
  const IndexFingerprint newer{kRows + 5, dd.ids.back() + 20};
  OpenResult stale = open_or_rebuild(path, config, kDim, newer, CountingSource{&batches});
  CHECK(stale.rebuilt);
  CHECK(stale.reason == RebuildReason::stale);
  CHECK_THAT(stale.detail, Contains("stale") || Contains("built from"));
  CHECK(batches == 3);
  CHECK(read_vector_index_info(path).fingerprint == newer);

  // Truncated file: corrupt.
  std::filesystem::resize_file(path, std::filesystem::file_size(path) / 2);
  batches = 0;
  OpenResult corrupt = open_or_rebuild(path, config, kDim, newer, CountingSource{&batches});
  CHECK(corrupt.rebuilt);
  CHECK(corrupt.reason == RebuildReason::corrupt);
  CHECK_THAT(corrupt.detail, Contains(path) && Contains("truncated"));
  CHECK(batches == 3);
  CHECK(corrupt.index->search(dd.queries, 5).ids == reference.ids);
  CHECK_NOTHROW(load_vector_index(path));

  // Another index type or dimension: rebuilt.
  OpenResult changed = open_or_rebuild(path, "flat", kDim, newer, CountingSource{&batches});
  CHECK(changed.rebuilt);
  CHECK(changed.reason == RebuildReason::config_changed);
  CHECK(changed.index->type() == "flat");
  CHECK(std::string(to_string(changed.reason)) == "config_changed");

  // Deleted file: missing again.
  std::filesystem::remove(path);
  OpenResult missing = open_or_rebuild(path, "flat", kDim, newer, CountingSource{&batches});
  CHECK(missing.reason == RebuildReason::missing);
  CHECK(dir.entries() == 1);
}

TEST_CASE("open_or_catch_up hands an old but intact file to the catch-up, else rebuilds", "[io]") {
  const Data& dd = data();
  ScratchDir dir;
  const std::string path = dir.file("index.widx");
  const std::string config = "hnsw(M=8,efConstruction=20,efSearch=32)";
  int batches = 0, catch_ups = 0;
  // The source of truth: the fixture's first half at first, then all of it.
  std::size_t truth = kRows / 2;
  const CatchUp catch_up = [&](VectorIndex& index) {
    ++catch_ups;
    CatchUpCounts counts;
    for (std::size_t i = 0; i < truth; ++i) {
      if (index.contains(dd.ids[i])) continue;
      index.add(1, &dd.ids[i], dd.base.data() + i * kDim);
      ++counts.added;
    }
    return counts;
  };

  // Missing: rebuilt and saved with its own fingerprint; no catch-up.
  CaughtUpIndex first = open_or_catch_up(path, config, kDim, CountingSource{&batches}, catch_up);
  CHECK(first.open.rebuilt);
  CHECK(first.open.reason == RebuildReason::missing);
  CHECK(catch_ups == 0);
  CHECK(read_vector_index_info(path).fingerprint == fingerprint_of(*first.open.index));
  CHECK(fingerprint_of(*first.open.index) == IndexFingerprint{kRows, dd.ids.back()});

  // A file with half the vectors, then the truth grows: loaded and caught up.
  std::filesystem::remove(path);
  {
    std::unique_ptr<VectorIndex> half = make_vector_index(config, kDim);
    half->add(kRows / 2, dd.ids.data(), dd.base.data());
    save_vector_index(*half, path, fingerprint_of(*half));
  }
  truth = kRows;
  batches = 0;
  CaughtUpIndex caught = open_or_catch_up(path, config, kDim, CountingSource{&batches}, catch_up);
  CHECK_FALSE(caught.open.rebuilt);
  CHECK(caught.open.reason == RebuildReason::none);
  CHECK(batches == 0);
  CHECK(catch_ups == 1);
  CHECK(caught.counts.added == kRows - kRows / 2);
  CHECK(caught.open.index->size() == kRows);

  // Corrupt or of another config: rebuilt, never caught up.
  flip_byte(path, std::filesystem::file_size(path) - 3);
  CaughtUpIndex corrupt = open_or_catch_up(path, config, kDim, CountingSource{&batches}, catch_up);
  CHECK(corrupt.open.reason == RebuildReason::corrupt);
  CaughtUpIndex changed = open_or_catch_up(path, "flat", kDim, CountingSource{&batches}, catch_up);
  CHECK(changed.open.reason == RebuildReason::config_changed);
  CHECK(catch_ups == 1);
  CHECK(changed.open.index->size() == kRows);
}

TEST_CASE("open_or_rebuild propagates bad rebuild input and writes no file", "[io]") {
  ScratchDir dir;
  const std::string path = dir.file("index.widx");
  auto bad = [](VectorBatch& batch) {
    batch.ids = {1, 2};
    batch.vectors = std::vector<float>(3, 1.0f);  // wrong length for dim 4
    return true;
  };
  CHECK_THROWS_WITH(open_or_rebuild(path, "flat", 4, {}, bad), Contains("2 ids need 8 floats"));
  CHECK_FALSE(std::filesystem::exists(path));
  CHECK_THROWS_WITH(open_or_rebuild(path, "nope", 4, {}, bad), Contains("unknown index type"));
}

namespace {

struct stat file_stat(const std::string& path) {
  struct stat st {};
  REQUIRE(::lstat(path.c_str(), &st) == 0);
  return st;
}

std::unique_ptr<VectorIndex> flat_of(std::size_t rows) {
  const Data& dd = data();
  auto index = make_vector_index("flat", kDim);
  index->add(std::vector<std::int64_t>(dd.ids.begin(), dd.ids.begin() + rows),
             std::vector<float>(dd.base.begin(), dd.base.begin() + rows * kDim));
  return index;
}

std::string contents_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

// A save overwrites the spare (the snapshot before the current one) in place
// and swaps names with the index file: the pages it writes are the ones the
// page cache holds already (replacement_file.h).
TEST_CASE("a save overwrites the spare in place and swaps it with the index file", "[io]") {
  ScratchDir dir;
  if (!exchanges_names(dir)) {
    WARN("the file system under " << dir.path() << " cannot exchange names: no spare to test");
    return;
  }
  const std::string path = dir.file("index.widx");
  const std::string spare = path + ".spare";
  save_vector_index(*flat_of(kRows), path, {1, 1});
  CHECK(dir.entries() == 1);  // the first save had no file to swap with
  save_vector_index(*flat_of(kRows), path, {2, 2});
  REQUIRE(dir.entries() == 2);
  CHECK(load_vector_index(path).fingerprint == IndexFingerprint{2, 2});
  CHECK(load_vector_index(spare).fingerprint == IndexFingerprint{1, 1});

  // A smaller index than the spare held: written over it and cut to size.
  const auto spare_before = file_stat(spare);
  save_vector_index(*flat_of(10), path, {3, 3});
  const auto saved = file_stat(path);
  CHECK(saved.st_ino == spare_before.st_ino);  // the same file, now at `path`
  CHECK(static_cast<std::uint64_t>(saved.st_size) <
        static_cast<std::uint64_t>(spare_before.st_size));
  const LoadedVectorIndex loaded = load_vector_index(path);
  CHECK(loaded.fingerprint == IndexFingerprint{3, 3});
  CHECK(loaded.index->size() == 10);
  CHECK(load_vector_index(spare).fingerprint == IndexFingerprint{2, 2});
  CHECK(dir.entries() == 2);
}

TEST_CASE("a spare that is not a plain file of its own is left alone, and the save still works",
          "[io]") {
  ScratchDir dir;
  const std::string path = dir.file("index.widx");
  const std::string spare = path + ".spare";
  const std::string outside = dir.file("outside.bin");
  {
    std::ofstream out(outside, std::ios::binary);
    out << "not an index, and not to be overwritten";
  }
  const std::string kind = GENERATE(as<std::string>{}, "symlink", "fifo", "hard link", "locked");
  INFO(kind);
  save_vector_index(*flat_of(kRows), path, {1, 1});
  int lock_fd = -1;
  if (kind == "symlink") {
    std::filesystem::create_symlink(outside, spare);
  } else if (kind == "fifo") {
    REQUIRE(::mkfifo(spare.c_str(), 0644) == 0);  // a save must not block on it
  } else if (kind == "hard link") {
    std::filesystem::create_hard_link(outside, spare);
  } else {  // another process's save holds it
    std::filesystem::copy_file(outside, spare);
    lock_fd = ::open(spare.c_str(), O_RDONLY | O_CLOEXEC);
    REQUIRE(lock_fd >= 0);
    REQUIRE(::flock(lock_fd, LOCK_EX | LOCK_NB) == 0);
  }
  const auto spare_before = file_stat(spare);
  save_vector_index(*flat_of(20), path, {2, 2});
  if (lock_fd >= 0) ::close(lock_fd);
  CHECK(load_vector_index(path).index->size() == 20);
  const auto spare_after = file_stat(spare);
  CHECK(spare_after.st_ino == spare_before.st_ino);
  CHECK(spare_after.st_mode == spare_before.st_mode);
  CHECK(contents_of(outside) == "not an index, and not to be overwritten");
  CHECK(dir.entries() == 3);  // path, spare, outside: no temporary file left
}

TEST_CASE("saving into a missing directory fails cleanly", "[io]") {
  ScratchDir dir;
  auto index = make_vector_index("flat", 4);
  index->add({1}, {1, 2, 3, 4});
  const std::string path = dir.file("no/such/dir/index.widx");
  CHECK_THROWS_WITH(save_vector_index(*index, path), Contains(path));
}

TEST_CASE("open_or_rebuild returns the rebuilt index even if it cannot save it", "[io]") {
  ScratchDir dir;
  const std::string path = dir.file("missing-dir/index.widx");
  auto one = [calls = 0](VectorBatch& batch) mutable {
    if (calls++ > 0) {
      return false;
    }
    batch.ids = {7};
    batch.vectors = {0, 0, 1, 0};
    return true;
  };
  OpenResult result = open_or_rebuild(path, "flat", 4, {1, 7}, one);
  CHECK(result.rebuilt);
  CHECK(result.reason == RebuildReason::missing);
  CHECK_FALSE(result.saved);
  CHECK_THAT(result.save_error, Contains(path));
  REQUIRE(result.index);
  CHECK(result.index->contains(7));
}

TEST_CASE("IVF cells loaded on one thread and grown on another keep every vector",
          "[ivf][persistence]") {
  // A loaded cell that grows or splits on another thread than the one that
  // read it has its old block's pages released before it is freed
  // (heap_pages.h): the new block must hold copies made before that. The
  // same adds on the loading thread must give the same index, byte for byte.
  constexpr std::size_t kWide = 64;  // 256-byte vectors: cells of whole pages
  const std::size_t stored = 6000, added = 4000;
  const Dataset more = clustered_dataset(stored + added, 50, kWide, 30, 41);
  const std::vector<std::int64_t> ids = sequential_ids(stored + added, 1);
  ScratchDir dir;
  const std::string path = dir.file("grown.widx");
  {
    IvfVectorIndex ivf(kWide);
    ivf.add(stored, ids.data(), more.base.data());
    save_vector_index(ivf, path);
  }
  auto grow = [&](VectorIndex& index) {
    for (std::size_t first = stored; first < stored + added; first += 500) {
      index.add(500, ids.data() + first, more.base.data() + first * kWide);
    }
  };
  LoadedVectorIndex here = load_vector_index(path);
  LoadedVectorIndex there = load_vector_index(path);
  REQUIRE(here.index->type() == "ivf");
  grow(*here.index);
  std::thread other([&] { grow(*there.index); });
  other.join();

  const SearchResults expected = here.index->search(more.queries, 10);
  const SearchResults found = there.index->search(more.queries, 10);
  for (std::size_t q = 0; q < expected.num_queries; ++q) {
    for (std::size_t r = 0; r < 10; ++r) {
      CHECK(found.id(q, r) == expected.id(q, r));
      CHECK(found.similarity(q, r) == expected.similarity(q, r));
    }
  }
  save_vector_index(*here.index, dir.file("here.widx"));
  save_vector_index(*there.index, dir.file("there.widx"));
  CHECK(contents_of(dir.file("here.widx")) == contents_of(dir.file("there.widx")));
}
