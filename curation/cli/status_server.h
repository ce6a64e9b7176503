// StatusServer: the daemon's HTTP endpoint (cpp-httplib), loopback by default.
//
//   GET /status    the DaemonStatus snapshot as JSON
//   GET /metrics   the same figures in Prometheus' text exposition format
//   GET /healthz   "ok" while the server runs
//
// Handlers only read DaemonStatus snapshots (never the store), so they are
// safe on the server's threads while the ingest loop writes.
//
// The endpoint has no authentication, so it is hardened to be harmless on
// loopback (docs/daemon.md, "HTTP endpoint"):
//   - only GET and HEAD (405 otherwise), refused before any body is read;
//   - no request body over kMaxRequestBody bytes, and no chunked body (413);
//   - the Host header must name loopback (localhost, 127.x.x.x, [::1], any
//     port), else 403: a web page that rebinds its DNS name to 127.0.0.1
//     cannot read /status from a browser;
//   - a non-loopback bind address only with allow_remote (--http-allow-remote),
//     which also lifts the Host check;
//   - short socket timeouts and one request per connection, so a slow or idle
//     client holds a server thread for seconds, not forever.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <thread>

#include "winnow/curation/daemon_status.h"

namespace httplib {
class Server;
}

namespace winnow::cli {

// Largest request body accepted (the endpoint takes none; this caps what
// cpp-httplib would ever buffer).
inline constexpr std::size_t kMaxRequestBody = 4096;
// Waiting for a request, reading it and writing the answer each time out after this.
inline constexpr std::chrono::seconds kHttpTimeout{2};

// True for "localhost" and literal loopback addresses (127.0.0.0/8, ::1).
// Other names count as remote even when they resolve to loopback.
bool is_loopback_address(const std::string& host);

// Throws winnow::Error (invalid_input) when `host` is not loopback and
// allow_remote is false: the check `winnow serve` makes before starting.
void check_http_bind(const std::string& host, bool allow_remote);

class StatusServer {
 public:
  // Binds host:port (port 0: any free port); throws winnow::Error naming the
  // address when it cannot bind, or when host is not loopback and
  // allow_remote is false. Serving starts on a background thread.
  StatusServer(const curation::DaemonStatus& status, const std::string& host, int port,
               bool allow_remote = false);
  ~StatusServer();  // stops serving and joins the thread

  int port() const { return port_; }
  const std::string& host() const { return host_; }

 private:
  std::unique_ptr<httplib::Server> server_;
  std::string host_;
  int port_ = 0;
  std::atomic<bool> listen_returned_{false};
  std::thread thread_;
};

// The Prometheus text format of a DaemonStatus snapshot (exposed for tests).
std::string prometheus_metrics(const nlohmann::json& snapshot);

}  // namespace winnow::cli
