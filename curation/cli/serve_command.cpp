// winnow serve --db D --inbox DIR [--http-port P] [--http-host H] [--no-http]
//              [--poll-ms MS] [--heartbeat FILE] [--once]
//
// The dataset-maintenance daemon (see maintenance_daemon.h for the inbox
// protocol and the exactly-once guarantee). SIGTERM or SIGINT: the current
// batch finishes, then the daemon exits with 0.
#include <atomic>
#include <csignal>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "cli_json.h"
#include "command.h"
#include "status_server.h"
#include "winnow/curation/maintenance_daemon.h"

namespace winnow::cli {

namespace {

// The running daemon, for the signal handler (request_stop only sets an
// atomic flag, which is async-signal-safe).
std::atomic<curation::MaintenanceDaemon*> g_daemon{nullptr};

extern "C" void on_stop_signal(int) {
  if (curation::MaintenanceDaemon* d = g_daemon.load()) d->request_stop();
}

}  // namespace

Command add_serve_command(CLI::App& parent) {
  struct Options {
    curation::MaintenanceDaemonOptions daemon;
    std::string heartbeat;
    int poll_ms = 500;
    std::string http_host = "127.0.0.1";
    int http_port = 8765;
    bool no_http = false;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = parent.add_subcommand(
      "serve", "watch an inbox folder and ingest each manifest dropped there exactly once");
  cmd->add_option("--db", o->daemon.db, "database file (winnow init)")->required();
  cmd->add_option("--inbox", o->daemon.inbox,
                  "folder to watch; manifests (*.jsonl) must appear by rename")
      ->required();
  cmd->add_option("--poll-ms", o->poll_ms, "inbox scan and heartbeat interval")
      ->capture_default_str();
  cmd->add_option("--heartbeat", o->heartbeat, "heartbeat/status JSON file (default: DB.serve.json)");
  cmd->add_option("--http-host", o->http_host,
                  "address of the status/metrics endpoint (loopback unless you change it)")
      ->capture_default_str();
  cmd->add_option("--http-port", o->http_port, "port of the endpoint; 0 picks a free one")
      ->capture_default_str();
  cmd->add_flag("--no-http", o->no_http, "no HTTP endpoint");
  cmd->add_flag("--once", o->daemon.once,
                "handle the manifests waiting (and any interrupted one), then exit");
  return {cmd, [o] {
            o->daemon.poll = std::chrono::milliseconds(o->poll_ms);
            o->daemon.heartbeat_file = o->heartbeat;
            curation::DaemonStatus status;
            curation::MaintenanceDaemon daemon(o->daemon, status, status_json);
            std::optional<StatusServer> server;
            if (!o->no_http) {
              server.emplace(status, o->http_host, o->http_port);
              status.set_extra("http", {{"host", server->host()}, {"port", server->port()}});
              if (o->http_host != "127.0.0.1" && o->http_host != "localhost" &&
                  o->http_host != "::1") {
                std::cerr << "winnow serve: warning: the status endpoint listens on "
                          << o->http_host << ", not only on loopback\n";
              }
            }
            g_daemon = &daemon;
            std::signal(SIGTERM, on_stop_signal);
            std::signal(SIGINT, on_stop_signal);
            std::cerr << "winnow serve: watching " << o->daemon.inbox.string() << " for "
                      << o->daemon.db << "; heartbeat " << daemon.heartbeat_file().string();
            if (server) {
              std::cerr << "; http://" << server->host() << ":" << server->port() << "/status";
            }
            std::cerr << std::endl;
            const std::size_t handled = daemon.run();
            g_daemon = nullptr;
            const nlohmann::json s = status.snapshot();
            std::cout << nlohmann::json{{"handled", handled},
                                        {"manifests", s["manifests"]},
                                        {"samples_ingested", s["samples_ingested"]}}
                             .dump()
                      << "\n";
            return 0;
          }};
}

}  // namespace winnow::cli
