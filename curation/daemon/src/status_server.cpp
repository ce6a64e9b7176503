#include "winnow/curation/daemon/status_server.h"

#include "connection_guard.h"

#include "winnow/curation/core/json_text.h"

#include <arpa/inet.h>
#include <sys/socket.h>
#include <httplib.h>

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "winnow/error.h"
#include "winnow/store/sample_status.h"

namespace winnow::curation::daemon {

using nlohmann::json;

namespace {

// One metric family: HELP and TYPE lines, then its samples.
void family(std::string& out, const char* name, const char* type, const char* help) {
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

double number(const json& j, const char* key) {
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0.0;
}

std::string lowercase(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool all_digits(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

bool is_loopback_ipv4(const std::string& s) {
  in_addr a{};
  return inet_pton(AF_INET, s.c_str(), &a) == 1 && (ntohl(a.s_addr) >> 24) == 127;
}

// A Host header value naming loopback: localhost, 127.x.x.x or [::1], with or
// without a port. Any port is fine (an SSH tunnel forwards another one); only
// the name matters against DNS rebinding.
bool loopback_host_header(const std::string& value) {
  std::string name = lowercase(value);
  const std::size_t colon = name.rfind(':');
  const std::size_t bracket = name.rfind(']');
  if (colon != std::string::npos && (bracket == std::string::npos || colon > bracket)) {
    const std::string port = name.substr(colon + 1);
    if (port.empty() || port.size() > 5 || !all_digits(port)) {
      return false;
    }
    name.resize(colon);
  }
  return name == "localhost" || name == "[::1]" || is_loopback_ipv4(name);
}

void refuse(httplib::Response& res, int status, const std::string& why) {
  res.status = status;
  res.set_header("Connection", "close");
  res.set_content(fmt::format("{} {}\n", status, why), "text/plain");
}

// Fills `res` and returns true when `req` must not be served. Runs on the
// request line and headers only, before cpp-httplib reads any body.
bool refused(const httplib::Request& req, httplib::Response& res, bool allow_remote) {
  if (req.method != "GET" && req.method != "HEAD") {
    res.set_header("Allow", "GET, HEAD");
    refuse(res, 405, "method not allowed: the status endpoint is read-only (GET, HEAD)");
    return true;
  }
  // No endpoint takes a body; a chunked one has no length to check up front.
  const std::string length = req.get_header_value("Content-Length");
  const bool length_ok = length.empty() || (length.size() <= 9 && all_digits(length) &&
                                            std::stoul(length) <= kMaxRequestBody);
  if (!length_ok || req.has_header("Transfer-Encoding")) {
    refuse(res, 413, fmt::format("payload too large: at most {} bytes", kMaxRequestBody));
    return true;
  }
  // Browsers always send Host, so a request without one (an HTTP/1.0 tool)
  // cannot be a DNS-rebinding attack; every Host it does send must be loopback.
  if (!allow_remote) {
    for (std::size_t i = 0; i < req.get_header_value_count("Host"); ++i) {
      if (!loopback_host_header(req.get_header_value("Host", i))) {
        refuse(res, 403,
               "forbidden: this endpoint answers requests addressed to localhost, 127.0.0.1 "
               "or [::1] only (winnow serve --http-allow-remote lifts this)");
        return true;
      }
    }
  }
  return false;
}

}  // namespace

bool is_loopback_address(const std::string& host) {
  in6_addr a6{};
  return lowercase(host) == "localhost" || is_loopback_ipv4(host) ||
         (inet_pton(AF_INET6, host.c_str(), &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6));
}

void check_http_bind(const std::string& host, bool allow_remote) {
  WINNOW_THROW_IF_NOT_KIND(
      allow_remote || is_loopback_address(host), invalid_input,
      "--http-host {} is not a loopback address; the status endpoint has no authentication, "
      "so serving it beyond this machine needs --http-allow-remote (or use --http-host "
      "127.0.0.1 and an SSH tunnel)",
      host);
}

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
    for (store::SampleStatus st : store::kAllSampleStatuses) {
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

StatusServer::StatusServer(const curation::daemon::DaemonStatus& status, const std::string& host,
                           int port, bool allow_remote)
    : server_(std::make_unique<httplib::Server>()), host_(host) {
  check_http_bind(host, allow_remote);
  WINNOW_THROW_IF_NOT_KIND(port >= 0 && port <= 65535, invalid_input,
                           "--http-port {} is not a port number", port);
  // Refusals happen before routing and before a "100 Continue", so a large or
  // unwanted body is never read (the connection is closed after the answer).
  server_->set_pre_routing_handler(
      [allow_remote](const httplib::Request& req, httplib::Response& res) {
        return refused(req, res, allow_remote) ? httplib::Server::HandlerResponse::Handled
                                               : httplib::Server::HandlerResponse::Unhandled;
      });
  server_->set_expect_100_continue_handler(
      [allow_remote](const httplib::Request& req, httplib::Response& res) {
        return refused(req, res, allow_remote) ? res.status : 100;
      });
  server_->set_payload_max_length(kMaxRequestBody);
  // More threads than cpp-httplib's default 8, so a few slow clients do not
  // hold every one of them until the guard cuts them off.
  server_->new_task_queue = [] { return new httplib::ThreadPool(kHttpThreads); };
  const auto timeout = static_cast<time_t>(kHttpTimeout.count());
  server_->set_read_timeout(timeout);
  server_->set_write_timeout(timeout);
  server_->set_keep_alive_timeout(timeout);
  server_->set_keep_alive_max_count(1);  // one request per connection: no idle keep-alive
  // A refusal is written as two small writes and then the socket is closed,
  // which resets a connection with unread body bytes: without Nagle's delay
  // the answer is on the wire before that reset.
  server_->set_tcp_nodelay(true);
  // cpp-httplib's default is SO_REUSEPORT, with which a second daemon binds
  // the same port and silently takes half the requests; SO_REUSEADDR alone
  // still allows a restart while old connections linger in TIME_WAIT.
  server_->set_socket_options([](int sock) {
    const int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  const curation::daemon::DaemonStatus* st = &status;
  server_->Get("/status", [st](const httplib::Request&, httplib::Response& res) {
    res.set_content(json_text(st->snapshot(), 2) + "\n", "application/json");
  });
  server_->Get("/metrics", [st](const httplib::Request&, httplib::Response& res) {
    res.set_content(prometheus_metrics(st->snapshot()), "text/plain; version=0.0.4");
  });
  server_->Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("ok\n", "text/plain");
  });
  if (port == 0) {
    port_ = server_->bind_to_any_port(host);
    WINNOW_THROW_IF_NOT_KIND(port_ > 0, io, "cannot bind the status endpoint to {} (any port)",
                             host);
  } else {
    WINNOW_THROW_IF_NOT_KIND(server_->bind_to_port(host, port), io,
                             "cannot bind the status endpoint to {}:{} (in use, or not an "
                             "address of this machine)",
                             host, port);
    port_ = port;
  }
  guard_ = std::make_unique<ConnectionGuard>(port_, kHttpConnectionDeadline, kMaxHttpConnections);
  thread_ = std::thread([this] {
    server_->listen_after_bind();
    listen_returned_ = true;
  });
}

StatusServer::~StatusServer() {
  // cpp-httplib 0.11's stop() does nothing until the listen loop has started,
  // and a daemon run with --once can end before that: wait for it, or the
  // join below would hang.
  while (!server_->is_running() && !listen_returned_) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  server_->stop();
  // The server's threads end with their connections: cut them all, so that
  // a slow client does not hold the daemon's exit.
  guard_->cut_all();
  if (thread_.joinable()) thread_.join();
  guard_.reset();
}

}  // namespace winnow::curation::daemon
