// Encoding of an index's state (id map + FAISS data) inside a winnow index
// file (private to winnow_index). The file header, checksum and atomic
// writing live in vector_index_io.cpp; each implementation encodes its own
// state in its own .cpp through these friend functions. Payloads are streamed
// to and from the file (byte_io.h), never held whole in memory.
//
// Payload layout, for every index type:
//   id map (id_map.cpp: u64 count, i64 ids[count], tombstone bitmap)
//   u64 faiss_size, faiss_size bytes of faiss::write_index output
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "io/byte_io.h"
#include "winnow/index/auto_vector_index.h"
#include "winnow/index/flat_vector_index.h"
#include "winnow/index/hnsw_vector_index.h"
#include "winnow/index/ivf_vector_index.h"

namespace faiss {
struct Index;
}

namespace winnow::index::detail {

struct PayloadCodec {
  // Dispatch on the dynamic type (vector_index_io.cpp).
  static void write(const VectorIndex& index, ByteSink& out);
  static std::unique_ptr<VectorIndex> read(const std::string& config, std::size_t dim,
                                           ByteReader& in);

  // flat_vector_index.cpp
  static void write_flat(const FlatVectorIndex& index, ByteSink& out);
  static std::unique_ptr<VectorIndex> read_flat(std::size_t dim, ByteReader& in);

  // hnsw_vector_index.cpp
  static void write_hnsw(const HnswVectorIndex& index, ByteSink& out);
  static std::unique_ptr<VectorIndex> read_hnsw(const HnswParams& params, std::size_t dim,
                                                ByteReader& in);

  // ivf_vector_index.cpp
  static void write_ivf(const IvfVectorIndex& index, ByteSink& out);
  static std::unique_ptr<VectorIndex> read_ivf(const IvfParams& params, std::size_t dim,
                                               ByteReader& in);

  // auto_vector_index.cpp
  static void write_auto(const AutoVectorIndex& index, ByteSink& out);
  static std::unique_ptr<VectorIndex> read_auto(const AutoParams& params, std::size_t dim,
                                                ByteReader& in);

  // Shared helpers (vector_index_io.cpp): faiss::write_index into the stream
  // as u64 size + bytes, and back. read_faiss rethrows FAISS errors as
  // winnow::Error naming in.what().
  static void write_faiss(const faiss::Index& index, ByteSink& out);
  static std::unique_ptr<faiss::Index> read_faiss(ByteReader& in);
};

}  // namespace winnow::index::detail
