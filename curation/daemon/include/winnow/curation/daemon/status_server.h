// StatusServer: the daemon's HTTP endpoint (cpp-httplib), loopback by default:
// GET /status (JSON), /metrics (Prometheus), /healthz. Handlers only read
// DaemonStatus snapshots, never the store, so they are safe on the server's
// threads while the ingest loop writes. There is no authentication, so the
// endpoint is hardened to be harmless on loopback (GET/HEAD only, no bodies,
// loopback Host check, short timeouts); allow_remote lifts only the bind and
// Host restrictions.
// Details: docs/daemon.md#what-the-endpoint-refuses, docs/security.md#the-http-endpoint
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <thread>

#include "winnow/curation/daemon/daemon_status.h"

namespace httplib {
class Server;
}

namespace winnow::curation::daemon {

class ConnectionGuard;

// Largest request body accepted (the endpoint takes none; this caps what
// cpp-httplib would ever buffer).
inline constexpr std::size_t kMaxRequestBody = 4096;
// Waiting for a request, reading it and writing the answer each time out after this.
inline constexpr std::chrono::seconds kHttpTimeout{2};
// A connection is shut down this long after it was accepted, however slowly
// it keeps sending (a status request takes milliseconds).
inline constexpr std::chrono::milliseconds kHttpConnectionDeadline{6000};
// Threads that serve connections, and the connections kept open at once:
// one thread each, so a request never queues behind idle clients. Past it
// the oldest are shut down.
inline constexpr std::size_t kHttpThreads = 32;
inline constexpr std::size_t kMaxHttpConnections = kHttpThreads;

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
  StatusServer(const curation::daemon::DaemonStatus& status, const std::string& host, int port,
               bool allow_remote = false);
  ~StatusServer();  // stops serving and joins the thread

  int port() const { return port_; }
  const std::string& host() const { return host_; }

 private:
  std::unique_ptr<httplib::Server> server_;
  std::string host_;
  int port_ = 0;
  std::atomic<bool> listen_returned_{false};
  std::unique_ptr<ConnectionGuard> guard_;
  std::thread thread_;
};

// The Prometheus text format of a DaemonStatus snapshot (exposed for tests).
std::string prometheus_metrics(const nlohmann::json& snapshot);

}  // namespace winnow::curation::daemon
