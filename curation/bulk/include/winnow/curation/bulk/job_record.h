// What a bulk job (winnow.dask, docs/distributed-curation.md) adds to one
// record of its manifest: the record's embedding, computed on a worker, its
// place in the job's order and its nearest earlier records. A plain ingest
// has none of it; the ingest takes these instead of embedding the record and
// searching its index (Ingester::ingest_job_batch).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace winnow::curation::bulk {

// A record's nearest records before it in a bulk job's order (phase 2),
// found on the workers inside the record's coarse cluster: job positions,
// best first, with their inner products (the index's cosine of the two
// embeddings).
struct PriorNeighbours {
  std::vector<std::int64_t> positions;
  std::vector<float> similarities;
  // Every earlier record of the cluster is listed: however many of them the
  // ingest finds rejected, none it would want is missing.
  bool complete = false;
  // The near-duplicate verifier's verdicts on the leading listed records,
  // made on the workers (listed_verification.h): similarity and threshold of
  // rank r, for r below their size (NaN where no verdict was made); the
  // writer verifies the other candidates itself.
  std::vector<double> verified_similarities;
  std::vector<double> verified_thresholds;
};

struct JobRecord {
  // The dataset embedder's vector of the record, computed by a worker; the
  // ingest copies it instead of embedding the record. Empty: the ingest
  // embeds the record itself.
  std::vector<float> embedding;
  // The record's place in the job's order (-1: not part of one) and its
  // nearest earlier records (null: the ingest searches its index).
  std::int64_t position = -1;
  std::shared_ptr<const PriorNeighbours> prior_neighbours;
};

}  // namespace winnow::curation::bulk
