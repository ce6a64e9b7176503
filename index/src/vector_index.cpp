#include "winnow/index/vector_index.h"

#include <algorithm>

#include <omp.h>

#include <cmath>
#include <limits>

#include "winnow/error.h"

namespace winnow::index {
namespace {

// Copies n rows of dim floats and L2-normalises each; throws on NaN/inf or a
// zero row. `what` names the input in messages ("vector", "query").
std::vector<float> normalized_copy(std::size_t n, std::size_t dim, const float* rows,
                                   const char* what) {
  std::vector<float> out(rows, rows + n * dim);
  for (std::size_t i = 0; i < n; ++i) {
    float* row = out.data() + i * dim;
    for (std::size_t j = 0; j < dim; ++j) {
      WINNOW_THROW_IF_NOT(std::isfinite(row[j]),
                          "{} {} has a non-finite value ({}) at component {}", what, i, row[j], j);
    }
    double norm2 = 0.0;
    for (std::size_t j = 0; j < dim; ++j) {
      norm2 += static_cast<double>(row[j]) * static_cast<double>(row[j]);
    }
    WINNOW_THROW_IF_NOT(norm2 > 0.0 && std::isfinite(norm2),
                        "{} {} has zero (or overflowing) norm and cannot be L2-normalised", what,
                        i);
    const float inv = static_cast<float>(1.0 / std::sqrt(norm2));
    for (std::size_t j = 0; j < dim; ++j) {
      row[j] *= inv;
    }
  }
  return out;
}

}  // namespace

std::size_t SearchResults::count(std::size_t query) const {
  std::size_t n = 0;
  while (n < k && ids[query * k + n] >= 0) {
    ++n;
  }
  return n;
}

SearchResults SearchResults::padded(std::size_t num_queries, std::size_t k) {
  SearchResults r;
  r.num_queries = num_queries;
  r.k = k;
  r.ids.assign(num_queries * k, -1);
  r.similarities.assign(num_queries * k, -std::numeric_limits<float>::infinity());
  return r;
}

void SearchResults::append(const SearchResults& more) {
  WINNOW_THROW_IF_NOT(more.k == k, "cannot append search results with k={} to results with k={}",
                      more.k, k);
  // The scanned cells stay only while every part has them, as many a query
  // (a row without them would make the others' misaligned).
  if (num_queries == 0) {
    probes_per_query = more.probes_per_query;
    probes.clear();
  }
  if (more.probes_per_query == probes_per_query && probes_per_query > 0) {
    probes.insert(probes.end(), more.probes.begin(), more.probes.end());
  } else {
    probes_per_query = 0;
    probes.clear();
  }
  num_queries += more.num_queries;
  ids.insert(ids.end(), more.ids.begin(), more.ids.end());
  similarities.insert(similarities.end(), more.similarities.begin(), more.similarities.end());
}

SearchResults SearchResults::rows(std::size_t first, std::size_t count) const {
  WINNOW_THROW_IF_NOT(first + count <= num_queries,
                      "rows {} to {} are outside search results of {} queries", first,
                      first + count, num_queries);
  SearchResults part;
  part.num_queries = count;
  part.k = k;
  const auto from = static_cast<std::ptrdiff_t>(first * k);
  const auto to = static_cast<std::ptrdiff_t>((first + count) * k);
  part.ids.assign(ids.begin() + from, ids.begin() + to);
  part.similarities.assign(similarities.begin() + from, similarities.begin() + to);
  if (probes_per_query > 0) {
    const std::size_t per = probes_per_query;
    part.probes_per_query = per;
    part.probes.assign(probes.begin() + static_cast<std::ptrdiff_t>(first * per),
                       probes.begin() + static_cast<std::ptrdiff_t>((first + count) * per));
  }
  return part;
}

void SearchResults::set_row(std::size_t row, const SearchResults& from, std::size_t from_row) {
  WINNOW_THROW_IF_NOT(from.k == k && row < num_queries && from_row < from.num_queries,
                      "cannot set row {} of {} (k={}) from row {} of {} (k={})", row, num_queries,
                      k, from_row, from.num_queries, from.k);
  std::copy_n(from.ids.begin() + static_cast<std::ptrdiff_t>(from_row * k), k,
              ids.begin() + static_cast<std::ptrdiff_t>(row * k));
  std::copy_n(from.similarities.begin() + static_cast<std::ptrdiff_t>(from_row * k), k,
              similarities.begin() + static_cast<std::ptrdiff_t>(row * k));
  const std::size_t per = probes_per_query;
  if (per > 0 && from.probes_per_query == per) {
    std::copy_n(from.probes.begin() + static_cast<std::ptrdiff_t>(from_row * per), per,
                probes.begin() + static_cast<std::ptrdiff_t>(row * per));
  }
}

SearchResults SearchResults::merged(const SearchResults& a, const SearchResults& b, std::size_t k) {
  const std::size_t queries = a.k > 0 ? a.num_queries : b.num_queries;
  WINNOW_THROW_IF_NOT((a.k == 0 || b.k == 0 || a.num_queries == b.num_queries),
                      "cannot merge search results of {} and {} queries", a.num_queries,
                      b.num_queries);
  SearchResults out = padded(queries, k);
  std::vector<std::pair<float, std::int64_t>> row;
  for (std::size_t q = 0; q < queries; ++q) {
    row.clear();
    for (const SearchResults* r : {&a, &b}) {
      for (std::size_t c = 0; c < r->k && r->id(q, c) >= 0; ++c) {
        row.emplace_back(r->similarity(q, c), r->id(q, c));
      }
    }
    const std::size_t keep = std::min(k, row.size());
    std::partial_sort(row.begin(), row.begin() + static_cast<std::ptrdiff_t>(keep), row.end(),
                      [](const auto& x, const auto& y) {
                        return x.first > y.first || (x.first == y.first && x.second < y.second);
                      });
    for (std::size_t c = 0; c < keep; ++c) {
      out.similarities[q * k + c] = row[c].first;
      out.ids[q * k + c] = row[c].second;
    }
  }
  return out;
}

void VectorIndex::add(std::size_t n, const std::int64_t* ids, const float* vectors) {
  if (n == 0) {
    return;
  }
  WINNOW_THROW_IF_NOT(ids != nullptr && vectors != nullptr,
                      "VectorIndex::add: null ids or vectors pointer for {} vectors", n);
  const std::vector<float> normalized = normalized_copy(n, dim(), vectors, "vector");
  do_add(n, ids, normalized.data());
}

void VectorIndex::add(const std::vector<std::int64_t>& ids, const std::vector<float>& vectors) {
  WINNOW_THROW_IF_NOT(vectors.size() == ids.size() * dim(),
                      "VectorIndex::add: {} ids need {} floats ({} x dim {}), got {}", ids.size(),
                      ids.size() * dim(), ids.size(), dim(), vectors.size());
  add(ids.size(), ids.data(), vectors.data());
}

SearchResults VectorIndex::search(std::size_t num_queries, const float* queries, int k) const {
  WINNOW_THROW_IF_NOT(k > 0, "VectorIndex::search: k must be positive, got {}", k);
  if (num_queries == 0) {
    SearchResults empty;
    empty.k = static_cast<std::size_t>(k);
    return empty;
  }
  WINNOW_THROW_IF_NOT(queries != nullptr,
                      "VectorIndex::search: null queries pointer for {} queries", num_queries);
  const std::vector<float> normalized = normalized_copy(num_queries, dim(), queries, "query");
  return do_search(num_queries, normalized.data(), static_cast<std::size_t>(k));
}

SearchResults VectorIndex::search(const std::vector<float>& queries, int k) const {
  WINNOW_THROW_IF_NOT(dim() > 0 && queries.size() % dim() == 0,
                      "VectorIndex::search: query array of {} floats is not a multiple of dim {}",
                      queries.size(), dim());
  return search(queries.size() / dim(), queries.data(), k);
}

std::size_t VectorIndex::remove(std::size_t n, const std::int64_t* ids) {
  if (n == 0) {
    return 0;
  }
  WINNOW_THROW_IF_NOT(ids != nullptr, "VectorIndex::remove: null ids pointer for {} ids", n);
  return do_remove(n, ids);
}

std::size_t VectorIndex::remove(const std::vector<std::int64_t>& ids) {
  return remove(ids.size(), ids.data());
}

void set_index_threads(int threads) {
  WINNOW_THROW_IF_NOT(threads >= 1, "index threads={} must be >= 1", threads);
  omp_set_num_threads(threads);
}

}  // namespace winnow::index
