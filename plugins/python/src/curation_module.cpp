// _curation: the Python binding of the curation core, for winnow.dask
// (docs/distributed-curation.md). No decision is made in Python: parsing,
// decoding, embedding, hashing, verifying near duplicates, the label vote, the
// gain and the ingest itself are the C++ code `winnow ingest` runs.
//
// Arrays cross as numpy buffers: images as uint8 [n, height, width],
// vectors as float32 [n, dim]. The heavy calls release the GIL. Every
// winnow::Error becomes winnow.Error (the `_winnow` module's) with its kind.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "curated_samples_binding.h"
#include "manifest_partition.h"
#include "winnow/curation/dedup/content_hash.h"
#include "winnow/curation/embed/embedder_plugins.h"
#include "winnow/curation/judge/information_gain.h"
#include "winnow/curation/dataset/dataset.h"
#include "winnow/curation/ingest/batch_report.h"
#include "winnow/curation/ingest/ingester.h"
#include "winnow/curation/judge/record_decision.h"
#include "winnow/curation/bulk/listed_verification.h"
#include "winnow/curation/labels/label_quality.h"
#include "winnow/curation/core/printable_text.h"
#include "winnow/curation/core/json_text.h"
#include "winnow/error.h"
#include "winnow/index/coarse_clusters.h"
#include "winnow/index/prior_neighbours.h"

namespace py = pybind11;

namespace {

using winnow::curation::ContentKind;
using winnow::curation::ManifestRecord;
using winnow::curation::readers::ManifestEntry;
using winnow::python::Curator;
using winnow::python::ManifestPartition;
using ImageArray = py::array_t<std::uint8_t, py::array::c_style | py::array::forcecast>;
using FloatArray = py::array_t<float, py::array::c_style | py::array::forcecast>;
using LabelArray = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>;
using PositionArray = LabelArray;
using FlagArray = py::array_t<bool, py::array::c_style | py::array::forcecast>;
using DoubleArray = py::array_t<double, py::array::c_style | py::array::forcecast>;

// winnow::Error becomes the winnow.Error that `_winnow` defines, so that one
// `except winnow.Error` catches both modules' errors.
void translate_errors() {
  // A handle kept for the process's life: no reference dropped after Python ends.
  static const py::handle error_type =
      py::object(py::module_::import("winnow._winnow").attr("Error")).release();
  py::register_local_exception_translator([](std::exception_ptr thrown) {
    try {
      if (thrown) std::rethrow_exception(thrown);
    } catch (const winnow::Error& e) {
      py::object error = error_type(e.what());
      error.attr("kind") = winnow::to_string(e.kind());
      PyErr_SetObject(error_type.ptr(), error.ptr());
    }
  });
}

// A grey image as a pixels record (what the manifest's `pixels` field makes).
ManifestRecord pixels_record(const std::uint8_t* data, std::size_t height, std::size_t width,
                             std::size_t index) {
  ManifestRecord r;
  r.key = std::to_string(index);
  r.kind = ContentKind::pixels;
  r.pixels.assign(data, data + height * width);
  r.width = width;
  r.height = height;
  return r;
}

ManifestRecord text_record(const std::string& text, std::size_t index) {
  ManifestRecord r;
  r.key = std::to_string(index);
  r.kind = ContentKind::text;
  r.text = text;
  return r;
}

// Images as [n, height, width] (one image may come as [height, width]).
ImageArray checked_images(const py::array& raw) {
  ImageArray images = ImageArray::ensure(raw);
  WINNOW_THROW_IF_NOT(images && (images.ndim() == 2 || images.ndim() == 3),
                      "images must be a uint8 array [n, height, width], got {} dimensions",
                      raw.ndim());
  if (images.ndim() == 2)
    images = images.reshape({py::ssize_t{1}, images.shape(0), images.shape(1)});
  return images;
}

FloatArray embed_all(const Curator& curator, const std::vector<ManifestRecord>& records) {
  const std::size_t dim = curator.embedder().dim();
  FloatArray out({static_cast<py::ssize_t>(records.size()), static_cast<py::ssize_t>(dim)});
  float* data = out.mutable_data();
  py::gil_scoped_release release;
  for (std::size_t i = 0; i < records.size(); ++i)
    curator.embedder().embed(records[i], data + i * dim);
  return out;
}

// Search results of [n, k] neighbour similarities: a NaN or -inf slot is no
// neighbour; a real one gets the id query * k + rank.
winnow::index::SearchResults results_of(const FloatArray& similarities) {
  WINNOW_THROW_IF_NOT(similarities.ndim() == 2,
                      "similarities must be a float array [n, k], got {} dimensions",
                      similarities.ndim());
  winnow::index::SearchResults results =
      winnow::index::SearchResults::padded(static_cast<std::size_t>(similarities.shape(0)),
                                           static_cast<std::size_t>(similarities.shape(1)));
  const float* s = similarities.data();
  for (std::size_t i = 0; i < results.ids.size(); ++i) {
    if (std::isnan(s[i]) || std::isinf(s[i])) continue;
    results.ids[i] = static_cast<std::int64_t>(i);
    results.similarities[i] = s[i];
  }
  return results;
}

// A float64 array [rows, cols] of NaN.
DoubleArray nan_array(std::size_t rows, std::size_t cols) {
  DoubleArray out({static_cast<py::ssize_t>(rows), static_cast<py::ssize_t>(cols)});
  std::fill_n(out.mutable_data(), out.size(), std::numeric_limits<double>::quiet_NaN());
  return out;
}

// The contents verify_listed is given, each decoded once, when a list first
// needs it: by row, or by the job position of its record.
class ListedContents {
 public:
  ListedContents(std::vector<std::string> contents, const std::int64_t* positions)
      : contents_(std::move(contents)), records_(contents_.size()) {
    for (std::size_t i = 0; i < contents_.size(); ++i) row_of_.emplace(positions[i], i);
  }

  const ManifestRecord* at(std::size_t i) {
    if (contents_[i].empty()) return nullptr;
    if (!records_[i]) {
      records_[i] =
          std::make_unique<ManifestRecord>(winnow::python::verification_record(contents_[i]));
    }
    return records_[i].get();
  }

  const ManifestRecord* at_position(std::int64_t position) {
    const auto found = row_of_.find(position);
    return found == row_of_.end() ? nullptr : at(found->second);
  }

 private:
  std::vector<std::string> contents_;
  std::vector<std::unique_ptr<ManifestRecord>> records_;
  std::unordered_map<std::int64_t, std::size_t> row_of_;
};

// verify_listed's work, without the GIL: for the wanted records in order, the
// verdicts on list r into row r of sims and thresholds [rows, max_verdicts].
void verify_listed_rows(const Curator& c, ListedContents& contents, const FlagArray& wanted,
                        const PositionArray& neighbours, const FloatArray& similarities,
                        std::size_t max_verdicts, double* sims, double* thresholds) {
  const auto rows = static_cast<std::size_t>(neighbours.shape(0));
  const auto k = static_cast<std::size_t>(neighbours.shape(1));
  const winnow::curation::bulk::ListedRecordLookup listed = [&](std::int64_t position) {
    return contents.at_position(position);
  };
  std::size_t row = 0;
  for (std::size_t i = 0; i < static_cast<std::size_t>(wanted.size()) && row < rows; ++i) {
    if (!wanted.data()[i]) continue;
    const std::size_t r = row++;
    const ManifestRecord* record = contents.at(i);
    if (record == nullptr) continue;
    winnow::curation::bulk::PriorNeighbours list;
    list.positions.assign(neighbours.data() + r * k, neighbours.data() + (r + 1) * k);
    list.similarities.assign(similarities.data() + r * k, similarities.data() + (r + 1) * k);
    winnow::curation::bulk::verify_listed(*record, list, listed, c.config(), c.image_verifier(),
                                          c.text_verifier(), max_verdicts);
    std::copy(list.verified_similarities.begin(), list.verified_similarities.end(),
              sims + r * max_verdicts);
    std::copy(list.verified_thresholds.begin(), list.verified_thresholds.end(),
              thresholds + r * max_verdicts);
  }
  WINNOW_THROW_IF_NOT(row == rows, "verify_listed: {} wanted records for {} lists", row, rows);
}

// Curator.verify_listed: the workers' verdicts on the pairs of their lists
// (bulk::verify_listed), for the lists of one cluster.
py::tuple verify_listed(const Curator& c, const std::vector<py::bytes>& raw_contents,
                        const py::array& raw_positions, const py::array& raw_wanted,
                        const py::array& raw_neighbours, const py::array& raw_similarities,
                        std::size_t max_verdicts) {
  const PositionArray positions = PositionArray::ensure(raw_positions);
  const FlagArray wanted = FlagArray::ensure(raw_wanted);
  const PositionArray neighbours = PositionArray::ensure(raw_neighbours);
  const FloatArray similarities = FloatArray::ensure(raw_similarities);
  const std::size_t n = raw_contents.size();
  WINNOW_THROW_IF_NOT(
      positions && wanted && neighbours && similarities &&
          static_cast<std::size_t>(positions.size()) == n &&
          static_cast<std::size_t>(wanted.size()) == n && neighbours.ndim() == 2 &&
          similarities.ndim() == 2 && neighbours.shape(0) == similarities.shape(0) &&
          neighbours.shape(1) == similarities.shape(1),
      "verify_listed: contents, positions and wanted [n], neighbours and similarities [r, k]");
  const auto rows = static_cast<std::size_t>(neighbours.shape(0));
  std::vector<std::string> contents(raw_contents.begin(), raw_contents.end());
  DoubleArray out_similarities = nan_array(rows, max_verdicts);
  DoubleArray out_thresholds = nan_array(rows, max_verdicts);
  double* sims = out_similarities.mutable_data();
  double* thresholds = out_thresholds.mutable_data();
  {
    py::gil_scoped_release release;
    ListedContents listed(std::move(contents), positions.data());
    verify_listed_rows(c, listed, wanted, neighbours, similarities, max_verdicts, sims, thresholds);
  }
  return py::make_tuple(out_similarities, out_thresholds);
}

// Curator.read: manifest lines read, hashed and embedded (the GIL released).
ManifestPartition read_partition(const Curator& c, py::bytes text, const std::string& name,
                                 const std::string& base_dir, bool starts_manifest, int threads) {
  std::string lines = text;
  py::gil_scoped_release release;
  return c.read(std::move(lines), name, base_dir, starts_manifest, threads);
}

FloatArray embed_pixels(const Curator& c, const py::array& raw) {
  const ImageArray images = checked_images(raw);
  const auto n = static_cast<std::size_t>(images.shape(0));
  const auto h = static_cast<std::size_t>(images.shape(1));
  const auto w = static_cast<std::size_t>(images.shape(2));
  std::vector<ManifestRecord> records;
  for (std::size_t i = 0; i < n; ++i)
    records.push_back(pixels_record(images.data() + i * h * w, h, w, i));
  return embed_all(c, records);
}

FloatArray embed_texts(const Curator& c, const std::vector<std::string>& texts) {
  std::vector<ManifestRecord> records;
  for (std::size_t i = 0; i < texts.size(); ++i) records.push_back(text_record(texts[i], i));
  return embed_all(c, records);
}

double image_similarity(const Curator& c, const py::array& a, const py::array& b) {
  const ImageArray x = checked_images(a), y = checked_images(b);
  const ManifestRecord ra = pixels_record(x.data(), x.shape(1), x.shape(2), 0);
  const ManifestRecord rb = pixels_record(y.data(), y.shape(1), y.shape(2), 1);
  return c.image_verifier().similarity(ra, rb);
}

double text_similarity(const Curator& c, const std::string& a, const std::string& b) {
  return c.text_verifier().similarity(text_record(a, 0), text_record(b, 1));
}

// image_similarity compares grey images: the grey verifier's threshold (the
// image verifier's own threshold() is its colour one).
double grey_image_threshold(const Curator& c) {
  const ManifestRecord grey;  // no colour image
  return c.image_verifier().threshold_for(grey, grey);
}

// Curator.label_quality: the dataset's kNN label vote on each row.
py::tuple label_quality(const Curator& c, const py::array& similarities,
                        const py::array& neighbour_labels, const py::array& labels) {
  const winnow::index::SearchResults found = results_of(FloatArray::ensure(similarities));
  const LabelArray theirs = LabelArray::ensure(neighbour_labels);
  const LabelArray ours = LabelArray::ensure(labels);
  WINNOW_THROW_IF_NOT(theirs && static_cast<std::size_t>(theirs.size()) == found.ids.size() &&
                          ours && static_cast<std::size_t>(ours.size()) == found.num_queries,
                      "label_quality: neighbour_labels must be [n, k] and labels [n]");
  const winnow::curation::labels::LabelQuality vote(
      {c.config().label_k, c.config().label_flag_below});
  const std::int64_t* their = theirs.data();
  const winnow::curation::labels::LabelLookup lookup =
      [their](std::int64_t id) -> std::optional<int> {
    if (their[id] < 0) return std::nullopt;
    return static_cast<int>(their[id]);
  };
  py::array_t<double> quality(static_cast<py::ssize_t>(found.num_queries));
  py::array_t<bool> flagged(static_cast<py::ssize_t>(found.num_queries));
  py::array_t<std::int64_t> suggested(static_cast<py::ssize_t>(found.num_queries));
  for (std::size_t q = 0; q < found.num_queries; ++q) {
    const auto r = vote.score(found, q, static_cast<int>(ours.data()[q]), lookup);
    quality.mutable_data()[q] = r.quality;
    flagged.mutable_data()[q] = r.flagged;
    suggested.mutable_data()[q] = r.suggested_label ? *r.suggested_label : -1;
  }
  return py::make_tuple(quality, flagged, suggested);
}

using CuratorClass = py::class_<Curator>;

// The config it is built from and the reading of manifest parts.
void bind_curator_reading(CuratorClass& curator) {
  curator.def(py::init<const std::string&>(), py::arg("config_json"))
      .def_property_readonly("config_json", &Curator::config_json)
      .def_property_readonly("embedder", [](const Curator& c) { return c.embedder().spec(); })
      .def_property_readonly("dim", [](const Curator& c) { return c.embedder().dim(); })
      .def("read", &read_partition, py::arg("text"), py::arg("name"), py::arg("base_dir"),
           py::arg("starts_manifest"), py::arg("threads") = 1,
           "Reads whole manifest lines as `winnow ingest` does (files beneath base_dir read and "
           "decoded), then hashes and embeds every record: a ManifestPartition.");
}

void bind_curator_embedding(CuratorClass& curator) {
  curator
      .def("embed_pixels", &embed_pixels, py::arg("images"),
           "Embeddings [n, dim] of grey images [n, height, width] (uint8).")
      .def("embed_texts", &embed_texts, py::arg("texts"), "Embeddings [n, dim] of texts.");
}

// The near-duplicate verifiers, and their verdicts on prior neighbour lists.
void bind_curator_verifiers(CuratorClass& curator) {
  curator
      .def("image_similarity", &image_similarity, py::arg("a"), py::arg("b"),
           "The near-duplicate verifier's similarity of two grey images (near duplicates from "
           "image_threshold up).")
      .def("text_similarity", &text_similarity, py::arg("a"), py::arg("b"),
           "The near-duplicate verifier's similarity of two texts (near duplicates from "
           "text_threshold up).")
      .def_property_readonly("image_threshold", &grey_image_threshold,
                             "The threshold of image_similarity (grey images).")
      .def_property_readonly("text_threshold",
                             [](const Curator& c) { return c.text_verifier().threshold(); })
      .def("verify_listed", &verify_listed, py::arg("contents"), py::arg("positions"),
           py::arg("wanted"), py::arg("neighbours"), py::arg("similarities"),
           py::arg("max_verdicts"),
           "The near-duplicate verdicts on the wanted records' prior neighbour lists (what "
           "prior_neighbours gave for vectors at `positions`, `wanted` [n]): for each list, the "
           "verifier on its leading records from the candidate gate up, at most max_verdicts; "
           "`contents` [n]: ManifestPartition.verification_contents of the n records. Returns "
           "(similarities, thresholds), both float64 [r, max_verdicts], NaN where no verdict.");
}

void bind_curator(py::module_& m) {
  CuratorClass curator(m, "Curator",
                       "A dataset's embedder, image reading and verifiers, built from its stored "
                       "config (Writer.config_json); what a worker needs, without the store.");
  bind_curator_reading(curator);
  bind_curator_embedding(curator);
  bind_curator_verifiers(curator);
  curator.def("label_quality", &label_quality, py::arg("similarities"), py::arg("neighbour_labels"),
              py::arg("labels"),
              "The kNN label vote of the dataset (label_k, label_flag_below): for each row, the "
              "neighbours' cosines [n, k] (NaN: none) and labels [n, k] (-1: unlabelled) against "
              "its label [n]; returns (quality, flagged, suggested label or -1).");
}

// train_centroids: spherical k-means of unit vectors [n, dim].
FloatArray trained_centroids(const py::array& raw, std::size_t clusters, int iterations,
                             std::uint64_t seed) {
  const FloatArray x = FloatArray::ensure(raw);
  WINNOW_THROW_IF_NOT(x && x.ndim() == 2, "train_centroids: vectors must be [n, dim]");
  const auto n = static_cast<std::size_t>(x.shape(0));
  const auto d = static_cast<std::size_t>(x.shape(1));
  std::vector<float> centroids;
  {
    py::gil_scoped_release release;
    centroids = winnow::index::train_centroids(x.data(), n, d, clusters, iterations, seed);
  }
  FloatArray out({static_cast<py::ssize_t>(clusters), static_cast<py::ssize_t>(d)});
  std::copy(centroids.begin(), centroids.end(), out.mutable_data());
  return out;
}

// nearest_centroids: each vector's `copies` nearest centroids [n, m], best first.
py::array_t<std::int32_t> nearest_centroid_table(const py::array& raw,
                                                 const py::array& raw_centroids,
                                                 std::size_t copies) {
  const FloatArray x = FloatArray::ensure(raw);
  const FloatArray c = FloatArray::ensure(raw_centroids);
  WINNOW_THROW_IF_NOT(x && c && x.ndim() == 2 && c.ndim() == 2 && x.shape(1) == c.shape(1),
                      "nearest_centroids: vectors [n, dim] and centroids [c, dim]");
  const auto n = static_cast<std::size_t>(x.shape(0));
  const auto clusters = static_cast<std::size_t>(c.shape(0));
  std::vector<std::int32_t> nearest;
  {
    py::gil_scoped_release release;
    nearest = winnow::index::nearest_centroids(x.data(), n, static_cast<std::size_t>(x.shape(1)),
                                               c.data(), clusters, copies);
  }
  const std::size_t cols = std::min(copies, clusters);
  py::array_t<std::int32_t> out({static_cast<py::ssize_t>(n), static_cast<py::ssize_t>(cols)});
  std::copy(nearest.begin(), nearest.end(), out.mutable_data());
  return out;
}

// prior_neighbours: (positions [r, k], similarities [r, k], complete [r]).
py::tuple prior_neighbour_lists(const py::array& raw, const py::array& raw_positions,
                                const py::array& raw_wanted, std::size_t k) {
  const FloatArray x = FloatArray::ensure(raw);
  const PositionArray positions = PositionArray::ensure(raw_positions);
  const FlagArray wanted = FlagArray::ensure(raw_wanted);
  WINNOW_THROW_IF_NOT(x && positions && wanted && x.ndim() == 2 && positions.size() == x.shape(0) &&
                          wanted.size() == x.shape(0),
                      "prior_neighbours: vectors [n, dim], positions [n] and wanted [n]");
  const auto n = static_cast<std::size_t>(x.shape(0));
  std::vector<std::uint8_t> flags(wanted.data(), wanted.data() + n);
  winnow::index::PriorNeighbourLists lists;
  {
    py::gil_scoped_release release;
    lists = winnow::index::prior_neighbours(x.data(), positions.data(), flags.data(), n,
                                            static_cast<std::size_t>(x.shape(1)), k);
  }
  const auto rows = static_cast<py::ssize_t>(lists.rows());
  const auto cols = static_cast<py::ssize_t>(k);
  PositionArray out_positions({rows, cols});
  FloatArray out_similarities({rows, cols});
  FlagArray out_complete(rows);
  std::copy(lists.positions.begin(), lists.positions.end(), out_positions.mutable_data());
  std::copy(lists.similarities.begin(), lists.similarities.end(), out_similarities.mutable_data());
  std::copy(lists.complete.begin(), lists.complete.end(), out_complete.mutable_data());
  return py::make_tuple(out_positions, out_similarities, out_complete);
}

// The coarse clusters and prior-neighbour search of winnow.dask's phase 2
// (winnow::index; docs/distributed-curation.md).
void bind_neighbour_search(py::module_& m) {
  m.def("train_centroids", &trained_centroids, py::arg("vectors"), py::arg("clusters"),
        py::arg("iterations") = 10, py::arg("seed") = 1,
        "Spherical k-means centroids [clusters, dim] of unit vectors [n, dim] (seeded, one "
        "thread: the same input gives the same centroids).");
  m.def("nearest_centroids", &nearest_centroid_table, py::arg("vectors"), py::arg("centroids"),
        py::arg("m"), "Each vector's m nearest centroids [n, m], best first.");
  m.def("prior_neighbours", &prior_neighbour_lists, py::arg("vectors"), py::arg("positions"),
        py::arg("wanted"), py::arg("k"),
        "For each wanted vector (in input order), its k nearest among the vectors with a smaller "
        "position: (positions [r, k] with -1 for none, similarities [r, k], complete [r]).");
}

std::vector<std::string> partition_keys(const ManifestPartition& p) {
  std::vector<std::string> keys;
  for (const ManifestEntry& e : p.entries)
    keys.push_back(e.ok() ? e.record->key : e.rejection->key);
  return keys;
}

std::vector<std::optional<std::string>> partition_content_hashes(const ManifestPartition& p) {
  std::vector<std::optional<std::string>> hashes;
  for (const ManifestEntry& e : p.entries) {
    hashes.push_back(e.ok() && !e.record->content_hash.empty()
                         ? std::optional<std::string>(e.record->content_hash)
                         : std::nullopt);
  }
  return hashes;
}

// Embeddings [entries, dim]: a row of NaN where there is none.
FloatArray partition_embeddings(const ManifestPartition& p) {
  std::size_t dim = 0;
  for (const winnow::curation::bulk::JobRecord& job : p.jobs) {
    if (!job.embedding.empty()) dim = job.embedding.size();
  }
  FloatArray out({static_cast<py::ssize_t>(p.entries.size()), static_cast<py::ssize_t>(dim)});
  std::fill_n(out.mutable_data(), out.size(), std::numeric_limits<float>::quiet_NaN());
  for (std::size_t i = 0; i < p.entries.size(); ++i) {
    const std::vector<float>& embedding = p.jobs[i].embedding;
    if (p.entries[i].ok() && embedding.size() == dim) {
      std::copy(embedding.begin(), embedding.end(), out.mutable_data() + i * dim);
    }
  }
  return out;
}

py::list verification_contents(const ManifestPartition& p, const py::array& raw_entries) {
  const PositionArray entries = PositionArray::ensure(raw_entries);
  WINNOW_THROW_IF_NOT(entries && entries.ndim() == 1, "verification_contents: entries must be [r]");
  py::list out;
  for (py::ssize_t r = 0; r < entries.size(); ++r) {
    const ManifestRecord& record =
        winnow::python::record_of_entry(p, entries.data()[r], "verification_contents");
    out.append(py::bytes(winnow::python::verification_content(record)));
  }
  return out;
}

// The arrays of set_prior_neighbours, converted and checked; they keep the
// memory `rows` points into.
struct PriorNeighbourArrays {
  PositionArray entries, positions;
  FloatArray similarities;
  FlagArray complete;
  DoubleArray verified, thresholds;
  winnow::python::PriorNeighbourRows rows;
};

// Checks, in order: entries [r], positions and similarities [r, k] and
// complete [r] agree; the verdicts come both or neither, as [r, v] each.
PriorNeighbourArrays checked_prior_neighbours(const py::array& raw_entries,
                                              const py::array& raw_positions,
                                              const py::array& raw_similarities,
                                              const py::array& raw_complete,
                                              const std::optional<py::array>& raw_verified,
                                              const std::optional<py::array>& raw_thresholds) {
  PriorNeighbourArrays a{PositionArray::ensure(raw_entries),
                         PositionArray::ensure(raw_positions),
                         FloatArray::ensure(raw_similarities),
                         FlagArray::ensure(raw_complete),
                         DoubleArray(),
                         DoubleArray(),
                         {}};
  const auto rows = static_cast<std::size_t>(a.entries ? a.entries.size() : 0);
  WINNOW_THROW_IF_NOT(a.entries && a.positions && a.similarities && a.complete &&
                          a.positions.ndim() == 2 && a.similarities.ndim() == 2 &&
                          a.positions.shape(0) == a.similarities.shape(0) &&
                          a.positions.shape(1) == a.similarities.shape(1) &&
                          static_cast<std::size_t>(a.positions.shape(0)) == rows &&
                          static_cast<std::size_t>(a.complete.size()) == rows,
                      "set_prior_neighbours: entries [r], positions and similarities [r, k] and "
                      "complete [r] must agree");
  WINNOW_THROW_IF_NOT(raw_verified.has_value() == raw_thresholds.has_value(),
                      "set_prior_neighbours: verified_similarities and "
                      "verified_thresholds come together");
  a.rows = {rows,
            static_cast<std::size_t>(a.positions.shape(1)),
            0,
            a.entries.data(),
            a.positions.data(),
            a.similarities.data(),
            a.complete.data()};
  if (raw_verified) {
    a.verified = DoubleArray::ensure(*raw_verified);
    a.thresholds = DoubleArray::ensure(*raw_thresholds);
    WINNOW_THROW_IF_NOT(a.verified && a.thresholds && a.verified.ndim() == 2 &&
                            a.thresholds.ndim() == 2 &&
                            static_cast<std::size_t>(a.verified.shape(0)) == rows &&
                            a.verified.shape(0) == a.thresholds.shape(0) &&
                            a.verified.shape(1) == a.thresholds.shape(1),
                        "set_prior_neighbours: verified_similarities and verified_thresholds "
                        "must be [r, v]");
    a.rows.verdicts = static_cast<std::size_t>(a.verified.shape(1));
    a.rows.verified_similarities = a.verified.data();
    a.rows.verified_thresholds = a.thresholds.data();
  }
  return a;
}

// ManifestPartition.set_prior_neighbours (winnow::python::set_prior_neighbours).
void set_prior_neighbours(ManifestPartition& p, std::int64_t first_position,
                          const py::array& raw_entries, const py::array& raw_positions,
                          const py::array& raw_similarities, const py::array& raw_complete,
                          const std::optional<py::array>& raw_verified,
                          const std::optional<py::array>& raw_thresholds) {
  const PriorNeighbourArrays arrays = checked_prior_neighbours(
      raw_entries, raw_positions, raw_similarities, raw_complete, raw_verified, raw_thresholds);
  winnow::python::set_prior_neighbours(p, first_position, arrays.rows);
}

// A partition pickles to its compact bytes (winnow::python::to_bytes).
py::bytes partition_bytes(const ManifestPartition& p) {
  std::string bytes;
  {
    py::gil_scoped_release release;
    bytes = winnow::python::to_bytes(p);
  }
  return py::bytes(bytes);
}

ManifestPartition partition_of_bytes(const py::bytes& b) {
  const std::string bytes = b;
  py::gil_scoped_release release;
  return winnow::python::partition_from_bytes(bytes);
}

using PartitionClass = py::class_<ManifestPartition>;

// What a partition holds, as the job's phases read it.
void bind_partition_contents(PartitionClass& partition) {
  partition.def("__len__", [](const ManifestPartition& p) { return p.entries.size(); })
      .def_readonly("lines", &ManifestPartition::lines)
      .def_readonly("embedder", &ManifestPartition::embedder)
      .def("keys", &partition_keys, "Every entry's key (a rejection's may be empty).")
      .def("content_hashes", &partition_content_hashes,
           "Every entry's content hash; None for a rejection.")
      .def("embeddings", &partition_embeddings,
           "Embeddings [entries, dim]; a row of NaN where there is none (a rejection).")
      .def("verification_contents", &verification_contents, py::arg("entries"),
           "What the near-duplicate verifier reads of entries [r] (bytes each; empty for a "
           "record with no near-duplicate check), for Curator.verify_listed.");
}

void bind_partition(py::module_& m) {
  PartitionClass partition(m, "ManifestPartition",
                           "A manifest part read, hashed and embedded by a worker; pickles "
                           "to compact bytes.");
  bind_partition_contents(partition);
  partition
      .def("set_prior_neighbours", &set_prior_neighbours, py::arg("first_position"),
           py::arg("entries"), py::arg("positions"), py::arg("similarities"), py::arg("complete"),
           py::arg("verified_similarities") = py::none(),
           py::arg("verified_thresholds") = py::none(),
           "Places the entries in a bulk job (entry i at job position first_position + i) and "
           "gives entries [r] their nearest earlier records: positions [r, k] (-1: none), "
           "similarities [r, k], complete [r] (every earlier record of the cluster listed); "
           "optionally the near-duplicate verdicts on the leading ones (Curator.verify_listed: "
           "[r, v] each, NaN where none).")
      .def(py::pickle(&partition_bytes, &partition_of_bytes));
}

// The entries of a batch's partitions, in order, as Ingester::ingest_batch
// takes them (called without the GIL): each partition is taken from the
// Python iterable when the one before is used up. Line numbers become the
// manifest's: the lines of the partitions before are added.
class PartitionEntries {
 public:
  PartitionEntries(const std::string& name, const std::string& embedder, py::iterable parts)
      : name_(name),
        embedder_(embedder),
        it_(py::iter(parts)),
        next_(py::module_::import("builtins").attr("next")) {}

  bool next(ManifestEntry& entry, winnow::curation::bulk::JobRecord& job) {
    while (position_ == current_.entries.size()) {
      lines_before_ += current_.lines;
      if (!take_next_partition()) return false;
      position_ = 0;
      WINNOW_THROW_IF_NOT(current_.embedder == embedder_,
                          "batch '{}': a partition was embedded with {}, but the dataset's "
                          "embedder is {}",
                          name_, current_.embedder, embedder_);
    }
    job = position_ < current_.jobs.size() ? std::move(current_.jobs[position_])
                                           : winnow::curation::bulk::JobRecord{};
    entry = std::move(current_.entries[position_++]);
    (entry.ok() ? entry.record->line : entry.rejection->line) += lines_before_;
    return true;
  }

  // A Python error of the source (a failed task, an interrupt): it failed
  // the batch with its message, and is raised again once the batch rolled back.
  std::exception_ptr source_error() const { return source_error_; }

 private:
  // The next partition into current_; false at the end.
  bool take_next_partition() {
    py::gil_scoped_acquire gil;
    py::object part;
    try {
      part = next_(it_, py::none());
    } catch (py::error_already_set& e) {
      const std::string message = e.what();  // formatted under the GIL
      source_error_ = std::current_exception();
      WINNOW_THROW("batch '{}': its partitions could not be read: {}", name_, message);
    }
    if (part.is_none()) return false;
    current_ = std::move(part.cast<ManifestPartition&>());
    return true;
  }

  const std::string& name_;
  const std::string embedder_;
  const py::iterator it_;
  const py::object next_;
  ManifestPartition current_;
  std::size_t position_ = 0;
  std::size_t lines_before_ = 0;  // of the manifest, in the partitions before current_
  std::exception_ptr source_error_;
};

// The batch report as JSON text: the CLI's form (ingest::to_json, what
// `winnow ingest` prints), and the bulk job's neighbour counts.
std::string batch_report_text(const winnow::curation::ingest::BatchReport& report) {
  nlohmann::json j = winnow::curation::ingest::to_json(report);
  const winnow::curation::ingest::JobNeighbourCounts& job = report.job_neighbours;
  j["job_neighbours"] = {{"listed", job.listed},
                         {"searched", job.searched},
                         {"verdicts_taken", job.verdicts_taken},
                         {"verified_by_writer", job.verified_by_writer}};
  return winnow::curation::json_text(j);
}

// The one writer of a job: the ordinary ingest pipeline over the dataset.
class Writer {
 public:
  Writer(const std::string& db, int threads) : dataset_(db), ingester_(dataset_) {
    dataset_.set_threads(threads);
  }

  std::string config_json() const { return dataset_.config().to_json(); }
  int neighbours_k() const {
    return winnow::curation::judge::neighbours_per_record(dataset_.config());
  }
  int candidates() const { return dataset_.config().candidates; }

  // Begins a bulk job of `records` records (Ingester::start_job).
  bool start_job(std::size_t records) { return ingester_.start_job(records); }
  bool can_start_job() { return ingester_.can_start_job(); }

  // Whether the manifest with this checksum was ingested already (the
  // ingest would skip it).
  bool batch_done(const std::string& checksum) {
    const auto batch = dataset_.store().find_batch_by_checksum(checksum);
    return batch && batch->state == winnow::store::BatchState::done;
  }

  // Ingests the partitions `parts` yields, in order, as one batch: what
  // `winnow ingest` does with the manifest they came from. Consumes them.
  // Returns the batch report as JSON text (batch_report_text).
  std::string ingest(const std::string& name, const std::string& checksum, py::iterable parts) {
    PartitionEntries entries(name, dataset_.embedder().spec(), parts);
    winnow::curation::ingest::BatchReport report;
    try {
      py::gil_scoped_release release;
      report = ingester_.ingest_job_batch(
          name, checksum, [&](ManifestEntry& entry, winnow::curation::bulk::JobRecord& job) {
            return entries.next(entry, job);
          });
    } catch (const winnow::Error&) {
      if (entries.source_error()) std::rethrow_exception(entries.source_error());
      throw;
    }
    return batch_report_text(report);
  }

  // Saves the index file if the batches left it behind (the end of a job).
  bool save_index() {
    py::gil_scoped_release release;
    return dataset_.save_index_if_behind();
  }

 private:
  winnow::curation::Dataset dataset_;
  winnow::curation::ingest::Ingester ingester_;
};

// Content hashes of grey images [n, height, width], as a pixels record's.
std::vector<std::string> pixels_hashes(const py::array& raw) {
  const ImageArray images = checked_images(raw);
  const auto size = static_cast<std::size_t>(images.shape(1) * images.shape(2));
  std::vector<std::string> hashes;
  for (py::ssize_t i = 0; i < images.shape(0); ++i) {
    hashes.push_back(
        winnow::curation::dedup::content_hash(ContentKind::pixels, images.data() + i * size, size));
  }
  return hashes;
}

// The gain of each row of neighbour cosines [n, k].
py::array_t<double> information_gains(const py::array& similarities) {
  const winnow::index::SearchResults found = results_of(FloatArray::ensure(similarities));
  py::array_t<double> gains(static_cast<py::ssize_t>(found.num_queries));
  for (std::size_t q = 0; q < found.num_queries; ++q) {
    gains.mutable_data()[q] = winnow::curation::judge::information_gain(found, q);
  }
  return gains;
}

void bind_writer(py::module_& m) {
  py::class_<Writer>(m, "Writer",
                     "The one writer of a job: winnow's ingest pipeline on a database.")
      .def(py::init<const std::string&, int>(), py::arg("db"), py::arg("threads") = 0,
           "Opens an initialised database (winnow init); threads as `winnow ingest --threads`.")
      .def("config_json", &Writer::config_json, "The dataset's config as stored (for Curator).")
      .def_property_readonly("neighbours_k", &Writer::neighbours_k,
                             "The nearest accepted samples its ingest takes per record "
                             "(near-duplicate candidates, label voters, gain neighbours).")
      .def_property_readonly("candidates", &Writer::candidates,
                             "The near-duplicate candidates its ingest verifies per record, at "
                             "most.")
      .def("can_start_job", &Writer::can_start_job,
           "Whether the dataset holds no accepted or flagged sample, so that a bulk job's "
           "prior neighbour lists hold all a record's earlier neighbours.")
      .def("start_job", &Writer::start_job, py::arg("records"),
           "Begins a bulk job of `records` records (positions 0 .. records-1): chunks whose "
           "records bring prior neighbour lists take them instead of searching the index. False "
           "when the dataset is not empty.")
      .def("batch_done", &Writer::batch_done, py::arg("checksum"),
           "Whether the manifest with this checksum was ingested already.")
      .def("ingest", &Writer::ingest, py::arg("name"), py::arg("checksum"), py::arg("partitions"),
           "Ingests the partitions of one manifest, in order, as one batch; returns the batch "
           "report as JSON: what `winnow ingest` prints (batch, file, skipped, counts, ...) and "
           "job_neighbours.")
      .def("save_index", &Writer::save_index,
           "Saves the index file if the batches left insertions out of it (they save it only "
           "now and then), so that the next process opens it without catching up; returns "
           "whether it saved. Raises if the save fails: the batches stay committed, and the "
           "next open catches the index up from the store.");
}

}  // namespace

// TorchScript embedders are the `winnow` program's plugin
// (winnow/curation/embed/embedder_plugins.h), which takes curation's symbols
// from the process. Python loads this module with its symbols local, so the
// module makes them global (dlopen of itself, RTLD_NOLOAD | RTLD_GLOBAL), and
// only when a dataset first asks for a plugin's embedder. The plugins are in
// lib/winnow/ of the nearest ancestor of the module's folder that has one:
// build/python/winnow/ -> build/lib/winnow/ in the build tree,
// PREFIX/lib/python3/dist-packages/winnow/ -> PREFIX/lib/winnow/ installed.
void use_embedder_plugins() {
  winnow::curation::embed::use_embedder_plugins([] {
    namespace fs = std::filesystem;
    Dl_info info{};
    if (::dladdr(reinterpret_cast<void*>(&use_embedder_plugins), &info) == 0 ||
        info.dli_fname == nullptr) {
      return fs::path();
    }
    ::dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);  // the handle stays open
    std::error_code error;
    for (fs::path dir = fs::path(info.dli_fname).parent_path(); dir != dir.parent_path();
         dir = dir.parent_path()) {
      const fs::path plugins = dir / "lib" / "winnow";
      if (fs::is_regular_file(plugins / "libwinnow_torchscript.so", error)) return plugins;
    }
    return fs::path();
  });
}

PYBIND11_MODULE(_curation, m) {
  m.doc() =
      "winnow's curation core for Python; use the `winnow.dask` module and "
      "winnow.CuratedDataset";
  translate_errors();
  use_embedder_plugins();
  bind_curator(m);
  bind_partition(m);
  bind_writer(m);
  winnow::python::bind_curated_samples(m);
  m.def(
      "file_checksum",
      [](const std::string& path) { return winnow::curation::readers::file_checksum(path, true); },
      py::arg("path"), "A manifest's checksum: its batch identity (as `winnow ingest` takes it).");
  m.def(
      "batch_name", [](const std::string& path) { return winnow::curation::printable_text(path); },
      py::arg("path"), "The batch name `winnow ingest` gives a manifest path.");
  m.def("pixels_hash", &pixels_hashes, py::arg("images"),
        "Content hashes of grey images [n, height, width], as a pixels record's.");
  m.def(
      "text_hash",
      [](const std::string& text) {
        return winnow::curation::dedup::content_hash(ContentKind::text, text.data(), text.size());
      },
      py::arg("text"), "The content hash of a text record.");
  bind_neighbour_search(m);
  m.def("information_gain", &information_gains, py::arg("similarities"),
        "The gain of each row of neighbour cosines [n, k] (best first; NaN: none).");
}
