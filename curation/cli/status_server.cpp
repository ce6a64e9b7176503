#include "status_server.h"

#include <httplib.h>

#include <fmt/format.h>

#include "winnow/error.h"
#include "winnow/store/sample_status.h"

namespace winnow::cli {

using nlohmann::json;

namespace {

// One metric family: HELP and TYPE lines, then its samples.
void family(std::string& out, const char* name, const char* type, const char* help) {
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

double number(const json& j, const char* key) {
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0.0;
}

}  // namespace

std::string prometheus_metrics(const json& s) {
  std::string out;
  family(out, "winnow_up", "gauge", "1 while the maintenance daemon runs.");
  out += "winnow_up 1\n";
  family(out, "winnow_processing", "gauge", "1 while a manifest is being ingested.");
  out += fmt::format("winnow_processing {}\n", s.value("state", "") == "processing" ? 1 : 0);
  family(out, "winnow_start_time_seconds", "gauge", "Start time of the daemon (Unix seconds).");
  out += fmt::format("winnow_start_time_seconds {:.3f}\n", number(s, "started_at_unix"));
  family(out, "winnow_manifests_total", "counter",
         "Manifests handled since start, by outcome (ingested, skipped as already ingested, "
         "failed).");
  for (const char* outcome : {"ingested", "skipped", "failed"}) {
    out += fmt::format("winnow_manifests_total{{outcome=\"{}\"}} {}\n", outcome,
                       number(s["manifests"], outcome));
  }
  family(out, "winnow_samples_ingested_total", "counter",
         "Records brought in by the manifests ingested since start.");
  out += fmt::format("winnow_samples_ingested_total {}\n", number(s, "samples_ingested"));
  if (s.contains("last") && s["last"].is_object()) {
    family(out, "winnow_last_manifest_seconds", "gauge", "Time taken by the last manifest.");
    out += fmt::format("winnow_last_manifest_seconds {:.6f}\n", number(s["last"], "seconds"));
  }
  const json& d = s.contains("dataset") ? s["dataset"] : json(nullptr);
  if (d.is_object()) {
    family(out, "winnow_samples", "gauge", "Samples in the store, by status.");
    for (SampleStatus st : kAllSampleStatuses) {
      const std::string name(to_string(st));
      out += fmt::format("winnow_samples{{status=\"{}\"}} {}\n", name, number(d, name.c_str()));
    }
    if (d.contains("index") && d["index"].is_object()) {
      family(out, "winnow_index_vectors", "gauge", "Vectors in the near-duplicate index.");
      out += fmt::format("winnow_index_vectors {}\n", number(d["index"], "vectors"));
    }
  }
  return out;
}

StatusServer::StatusServer(const curation::DaemonStatus& status, const std::string& host, int port)
    : server_(std::make_unique<httplib::Server>()), host_(host) {
  const curation::DaemonStatus* st = &status;
  server_->Get("/status", [st](const httplib::Request&, httplib::Response& res) {
    res.set_content(st->snapshot().dump(2) + "\n", "application/json");
  });
  server_->Get("/metrics", [st](const httplib::Request&, httplib::Response& res) {
    res.set_content(prometheus_metrics(st->snapshot()), "text/plain; version=0.0.4");
  });
  server_->Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("ok\n", "text/plain");
  });
  WINNOW_THROW_IF_NOT(port >= 0 && port <= 65535, "--http-port {} is not a port number", port);
  if (port == 0) {
    port_ = server_->bind_to_any_port(host);
    WINNOW_THROW_IF_NOT(port_ > 0, "cannot bind the status endpoint to {} (any port)", host);
  } else {
    WINNOW_THROW_IF_NOT(server_->bind_to_port(host, port),
                        "cannot bind the status endpoint to {}:{} (in use, or not an address of "
                        "this machine)",
                        host, port);
    port_ = port;
  }
  thread_ = std::thread([this] { server_->listen_after_bind(); });
}

StatusServer::~StatusServer() {
  server_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace winnow::cli
