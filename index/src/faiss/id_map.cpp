#include "faiss/id_map.h"

#include <unordered_set>

#include "winnow/error.h"

namespace winnow::index::detail {

std::int64_t IdMap::find(std::int64_t external) const {
  const auto it = lookup_.find(external);
  return it == lookup_.end() ? -1 : it->second;
}

void IdMap::check_new(std::size_t n, const std::int64_t* ids) const {
  std::unordered_set<std::int64_t> batch;
  batch.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    WINNOW_THROW_IF_NOT(ids[i] >= 0,
                        "id {} (position {} of the batch) is negative; sample ids must be >= 0",
                        ids[i], i);
    WINNOW_THROW_IF_NOT(!contains(ids[i]),
                        "id {} (position {} of the batch) is already in the index", ids[i], i);
    WINNOW_THROW_IF_NOT(batch.insert(ids[i]).second,
                        "id {} is repeated in the batch (second time at position {})", ids[i], i);
  }
}

void IdMap::append(std::size_t n, const std::int64_t* ids) {
  lookup_.reserve(lookup_.size() + n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto internal = static_cast<std::int64_t>(external_.size());
    external_.push_back(ids[i]);
    lookup_.emplace(ids[i], internal);
  }
  dead_.resize((external_.size() + 7) / 8, 0);
}

void IdMap::tombstone(std::int64_t internal) {
  const auto i = static_cast<std::size_t>(internal);
  lookup_.erase(external_[i]);
  dead_[i >> 3] = static_cast<std::uint8_t>(dead_[i >> 3] | (1u << (i & 7)));
}

std::size_t IdMap::tombstone_all(std::size_t n, const std::int64_t* external_ids) {
  std::size_t removed = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t internal = find(external_ids[i]);
    if (internal >= 0) {
      tombstone(internal);
      ++removed;
    }
  }
  return removed;
}

void IdMap::erase(const std::vector<std::int64_t>& sorted_internal) {
  if (sorted_internal.empty()) {
    return;
  }
  std::vector<std::int64_t> kept;
  kept.reserve(external_.size() - sorted_internal.size());
  std::size_t next = 0;
  for (std::size_t i = 0; i < external_.size(); ++i) {
    if (next < sorted_internal.size() && sorted_internal[next] == static_cast<std::int64_t>(i)) {
      ++next;
      continue;
    }
    kept.push_back(external_[i]);
  }
  external_ = std::move(kept);
  dead_.assign((external_.size() + 7) / 8, 0);
  rebuild_lookup();
}

std::vector<std::int64_t> IdMap::live_external() const {
  std::vector<std::int64_t> out;
  out.reserve(lookup_.size());
  for (std::size_t i = 0; i < external_.size(); ++i) {
    if (!is_dead(static_cast<std::int64_t>(i))) {
      out.push_back(external_[i]);
    }
  }
  return out;
}

std::vector<std::int64_t> IdMap::live_internal() const {
  std::vector<std::int64_t> out;
  out.reserve(lookup_.size());
  for (std::size_t i = 0; i < external_.size(); ++i) {
    if (!is_dead(static_cast<std::int64_t>(i))) {
      out.push_back(static_cast<std::int64_t>(i));
    }
  }
  return out;
}

void IdMap::rebuild_lookup() {
  lookup_.clear();
  lookup_.reserve(external_.size());
  for (std::size_t i = 0; i < external_.size(); ++i) {
    if (!is_dead(static_cast<std::int64_t>(i))) {
      lookup_.emplace(external_[i], static_cast<std::int64_t>(i));
    }
  }
}

// Layout: u64 count, i64 external[count], u8 dead bitmap[(count + 7) / 8].
void IdMap::write(ByteSink& out) const {
  append_pod(out, static_cast<std::uint64_t>(external_.size()));
  append_bytes(out, external_.data(), external_.size() * sizeof(std::int64_t));
  append_bytes(out, dead_.data(), dead_.size());
}

IdMap IdMap::read(ByteReader& in) {
  IdMap map;
  const auto count = in.read<std::uint64_t>();
  WINNOW_THROW_IF_NOT(count <= in.remaining() / sizeof(std::int64_t),
                      "{}: id table claims {} ids but only {} bytes remain", in.what(), count,
                      in.remaining());
  const auto n = static_cast<std::size_t>(count);
  map.external_.resize(n);
  map.dead_.resize((n + 7) / 8);
  in.read_bytes(map.external_.data(), n * sizeof(std::int64_t), "the id table");
  in.read_bytes(map.dead_.data(), map.dead_.size(), "the tombstone bitmap");
  map.rebuild_lookup();
  std::size_t live = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!map.is_dead(static_cast<std::int64_t>(i))) {
      WINNOW_THROW_IF_NOT(map.external_[i] >= 0, "{}: id table holds a negative id {} at row {}",
                          in.what(), map.external_[i], i);
      ++live;
    }
  }
  WINNOW_THROW_IF_NOT(live == map.lookup_.size(), "{}: id table holds duplicate live ids",
                      in.what());
  return map;
}

void IdMap::collect_hits(const std::int64_t* labels, const float* similarities,
                         std::size_t per_query, SearchResults& out) const {
  for (std::size_t q = 0; q < out.num_queries; ++q) {
    std::size_t j = 0;
    for (std::size_t r = 0; r < per_query; ++r) {
      const std::int64_t internal = labels[q * per_query + r];
      if (internal < 0 || is_dead(internal)) {
        continue;
      }
      out.ids[q * out.k + j] = external(internal);
      out.similarities[q * out.k + j] = similarities[q * per_query + r];
      ++j;
    }
  }
}

}  // namespace winnow::index::detail
