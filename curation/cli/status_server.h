// StatusServer: the daemon's HTTP endpoint (cpp-httplib), loopback by default.
//
//   GET /status    the DaemonStatus snapshot as JSON
//   GET /metrics   the same figures in Prometheus' text exposition format
//   GET /healthz   "ok" while the server runs
//
// Handlers only read DaemonStatus snapshots (never the store), so they are
// safe on the server's threads while the ingest loop writes.
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "winnow/curation/daemon_status.h"

namespace httplib {
class Server;
}

namespace winnow::cli {

class StatusServer {
 public:
  // Binds host:port (port 0: any free port); throws winnow::Error naming the
  // address when it cannot bind. Serving starts on a background thread.
  StatusServer(const curation::DaemonStatus& status, const std::string& host, int port);
  ~StatusServer();  // stops serving and joins the thread

  int port() const { return port_; }
  const std::string& host() const { return host_; }

 private:
  std::unique_ptr<httplib::Server> server_;
  std::string host_;
  int port_ = 0;
  std::thread thread_;
};

// The Prometheus text format of a DaemonStatus snapshot (exposed for tests).
std::string prometheus_metrics(const nlohmann::json& snapshot);

}  // namespace winnow::cli
