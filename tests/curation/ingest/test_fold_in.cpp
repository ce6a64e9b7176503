// fold_in: the vectors a chunk's search could not see (judged after its block
// was searched) added to its results, exactly for every row or, when the
// search scanned cells, only for the rows that scanned each vector's home
// cell: what an IVF gives once the vectors join it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "prepared_chunk.h"
#include "winnow/index/ivf_vector_index.h"
#include "winnow/index/exact_scores.h"
#include "winnow/index/vector_index_factory.h"
#include "support/unit_vectors.h"

namespace {

using winnow::curation::ThreadPool;
using winnow::curation::ingest::fold_in;
using winnow::curation::ingest::kAnyCell;
using winnow::index::SearchResults;

using winnow::test::unit_vectors;

// Row q of `found` with the candidates (score, id) merged in by brute force:
// the best k, best first, ties to the lower id.
std::vector<std::pair<float, std::int64_t>> expected_row(
    const SearchResults& found, std::size_t q, std::size_t k,
    std::vector<std::pair<float, std::int64_t>> candidates) {
  for (std::size_t r = 0; r < k && found.id(q, r) >= 0; ++r) {
    candidates.emplace_back(found.similarity(q, r), found.id(q, r));
  }
  std::sort(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  });
  candidates.resize(std::min(candidates.size(), k));
  return candidates;
}

std::vector<std::pair<float, std::int64_t>> row_of(const SearchResults& found, std::size_t q) {
  std::vector<std::pair<float, std::int64_t>> row;
  for (std::size_t r = 0; r < found.k && found.id(q, r) >= 0; ++r) {
    row.emplace_back(found.similarity(q, r), found.id(q, r));
  }
  return row;
}

// Two rows with the same ids in the same order and the same similarities to
// within float rounding (the fold and the index score with different kernels).
void check_same_row(const std::vector<std::pair<float, std::int64_t>>& got,
                    const std::vector<std::pair<float, std::int64_t>>& want) {
  REQUIRE(got.size() == want.size());
  for (std::size_t r = 0; r < got.size(); ++r) {
    CHECK(got[r].second == want[r].second);
    CHECK(got[r].first == Approx(want[r].first).margin(1e-5));
  }
}

}  // namespace

TEST_CASE("fold_in scores a vector only for the rows that scanned its home cell",
          "[ingest][search]") {
  constexpr std::size_t kDim = 8, kK = 5, kRows = 37, kVectors = 60, kCells = 6, kProbes = 2;
  const std::vector<float> queries = unit_vectors(kRows, kDim, 1);
  const std::vector<float> vectors = unit_vectors(kVectors, kDim, 2);
  std::vector<std::int64_t> ids(kVectors);
  std::vector<std::uint32_t> homes(kVectors);
  std::mt19937 rng(3);
  for (std::size_t i = 0; i < kVectors; ++i) {
    ids[i] = static_cast<std::int64_t>(1000 + 7 * i);
    // Every seventh vector has no home cell (its chunk's search scanned none).
    homes[i] = i % 7 == 0 ? kAnyCell : static_cast<std::uint32_t>(rng() % kCells);
  }
  // The index's results: two of its own per row (lower ids), and two scanned
  // cells per row.
  SearchResults searched = SearchResults::padded(kRows, kK);
  searched.probes_per_query = kProbes;
  for (std::size_t q = 0; q < kRows; ++q) {
    searched.ids[q * kK] = static_cast<std::int64_t>(2 * q + 1);
    searched.similarities[q * kK] = 0.6f;
    searched.ids[q * kK + 1] = static_cast<std::int64_t>(2 * q + 2);
    searched.similarities[q * kK + 1] = -0.2f;
    searched.probes.push_back(static_cast<std::uint32_t>(q % kCells));
    searched.probes.push_back(static_cast<std::uint32_t>((q + 3) % kCells));
  }

  SearchResults reference;
  for (const int threads : {1, 2}) {
    INFO(threads << " threads");
    ThreadPool pool(threads);
    SearchResults found = searched;
    fold_in(found, kRows, queries.data(), ids, vectors, homes, kDim, kK, pool);
    std::size_t skipped_rows = 0;
    for (std::size_t q = 0; q < kRows; ++q) {
      std::vector<std::pair<float, std::int64_t>> candidates;
      std::size_t skipped = 0;
      for (std::size_t i = 0; i < kVectors; ++i) {
        const bool scanned = homes[i] == kAnyCell || homes[i] == searched.probes[q * kProbes] ||
                             homes[i] == searched.probes[q * kProbes + 1];
        const float score = winnow::index::inner_product(queries.data() + q * kDim,
                                                         vectors.data() + i * kDim, kDim);
        if (scanned) {
          candidates.emplace_back(score, ids[i]);
        } else if (score > found.similarity(q, kK - 1)) {
          ++skipped;  // would have entered the row had every row scored every vector
        }
      }
      if (skipped > 0) ++skipped_rows;
      check_same_row(row_of(found, q), expected_row(searched, q, kK, candidates));
    }
    CHECK(skipped_rows > 0);  // the home cells made a difference
    CHECK(found.probes == searched.probes);
    if (threads == 1) {
      reference = found;
    } else {
      CHECK(found.ids == reference.ids);
      CHECK(std::memcmp(found.similarities.data(), reference.similarities.data(),
                        found.similarities.size() * sizeof(float)) == 0);
    }
  }

  SECTION("without scanned cells, or without home cells, every row scores every vector") {
    ThreadPool pool(2);
    SearchResults without_probes = searched;
    without_probes.probes_per_query = 0;
    without_probes.probes.clear();
    SearchResults without_homes = searched;
    fold_in(without_probes, kRows, queries.data(), ids, vectors, homes, kDim, kK, pool);
    fold_in(without_homes, kRows, queries.data(), ids, vectors, {}, kDim, kK, pool);
    for (std::size_t q = 0; q < kRows; ++q) {
      std::vector<std::pair<float, std::int64_t>> all;
      for (std::size_t i = 0; i < kVectors; ++i) {
        all.emplace_back(winnow::index::inner_product(queries.data() + q * kDim,
                                                      vectors.data() + i * kDim, kDim),
                         ids[i]);
      }
      const auto want = expected_row(searched, q, kK, all);
      check_same_row(row_of(without_probes, q), want);
      check_same_row(row_of(without_homes, q), want);
    }
  }
}

TEST_CASE("an IVF search folded with home cells matches the index once it holds the vectors",
          "[ingest][search]") {
  constexpr std::size_t kDim = 16, kK = 10, kQueries = 300, kNew = 40;
  // Cells of at most 64 vectors, 16 scanned of about 100: the fold must skip
  // the new vectors outside a query's scanned cells, as the index will.
  auto index = winnow::index::make_vector_index("ivf(nprobe=16,cellCap=64)", kDim);
  const std::vector<float> base = unit_vectors(4000, kDim, 11);
  std::vector<std::int64_t> base_ids(4000);
  for (std::size_t i = 0; i < base_ids.size(); ++i) base_ids[i] = static_cast<std::int64_t>(i + 1);
  index->add(base_ids, base);
  const auto& ivf = dynamic_cast<const winnow::index::IvfVectorIndex&>(*index);
  const std::size_t cells = ivf.cells();
  REQUIRE(cells > 32);

  const std::vector<float> queries = unit_vectors(kQueries, kDim, 12);
  const std::vector<float> fresh = unit_vectors(kNew, kDim, 13);
  std::vector<std::int64_t> fresh_ids(kNew);
  for (std::size_t i = 0; i < kNew; ++i) fresh_ids[i] = static_cast<std::int64_t>(10000 + i);

  // As the ingest does: the new vectors' home cells are the first cells their
  // own search scanned; the queries' results are folded with them.
  const SearchResults own = index->search(kNew, fresh.data(), static_cast<int>(kK));
  REQUIRE(own.probes_per_query == 16);
  std::vector<std::uint32_t> homes(kNew);
  for (std::size_t i = 0; i < kNew; ++i) homes[i] = own.probes[i * own.probes_per_query];
  SearchResults folded = index->search(kQueries, queries.data(), static_cast<int>(kK));
  REQUIRE(folded.probes.size() == kQueries * 16);
  ThreadPool pool(2);
  fold_in(folded, kQueries, queries.data(), fresh_ids, fresh, homes, kDim, kK, pool);

  // The index holding them, unless an insertion split a cell (then the
  // centroids differ and the comparison would not hold).
  index->add(fresh_ids, fresh);
  REQUIRE(ivf.cells() == cells);
  const SearchResults direct = index->search(kQueries, queries.data(), static_cast<int>(kK));
  CHECK(direct.probes == folded.probes);
  std::size_t rows_with_fresh = 0;
  for (std::size_t q = 0; q < kQueries; ++q) {
    check_same_row(row_of(folded, q), row_of(direct, q));
    if (std::any_of(direct.ids.begin() + static_cast<std::ptrdiff_t>(q * kK),
                    direct.ids.begin() + static_cast<std::ptrdiff_t>((q + 1) * kK),
                    [](std::int64_t id) { return id >= 10000; })) {
      ++rows_with_fresh;
    }
  }
  CHECK(rows_with_fresh > 0);  // the fold had something to add
}

TEST_CASE("search results appended part by part, or taken out by rows, keep their scanned cells",
          "[index][search]") {
  auto index = winnow::index::make_vector_index("ivf(cellCap=16)", 8);
  const std::vector<float> base = unit_vectors(500, 8, 21);
  std::vector<std::int64_t> ids(500);
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<std::int64_t>(i);
  index->add(ids, base);
  const std::vector<float> queries = unit_vectors(9, 8, 22);
  const SearchResults whole = index->search(9, queries.data(), 4);
  REQUIRE(whole.probes_per_query == 16);
  SearchResults parts;
  parts.k = 4;
  parts.append(index->search(5, queries.data(), 4));
  parts.append(index->search(4, queries.data() + 5 * 8, 4));
  CHECK(parts.ids == whole.ids);
  CHECK(parts.probes_per_query == whole.probes_per_query);
  CHECK(parts.probes == whole.probes);
  // ... and a range of rows taken out again is that part.
  const SearchResults second = whole.rows(5, 4);
  CHECK(second.num_queries == 4);
  CHECK(second.ids == std::vector<std::int64_t>(whole.ids.begin() + 5 * 4, whole.ids.end()));
  CHECK(second.probes ==
        std::vector<std::uint32_t>(whole.probes.begin() + 5 * 16, whole.probes.end()));
  CHECK_THROWS_WITH(whole.rows(8, 2), Catch::Contains("outside search results of 9 queries"));
  // A part without cells (another kind of index) drops them all.
  SearchResults flat = winnow::index::make_vector_index("flat", 8)->search(1, queries.data(), 4);
  CHECK(flat.probes_per_query == 0);
  parts.append(SearchResults::padded(1, 4));
  CHECK(parts.probes_per_query == 0);
  CHECK(parts.probes.empty());
}
