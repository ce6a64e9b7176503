// winnow serve --db D --inbox DIR [--http-port P] [--http-host H [--http-allow-remote]] [--no-http]
//              [--poll-ms MS] [--heartbeat FILE] [--once] [--content-root DIR]...
//              [--max-content-bytes N] [--max-interruptions N]
//
// The dataset-maintenance daemon (see maintenance_daemon.h for the inbox
// protocol and the exactly-once guarantee). SIGTERM or SIGINT: the current
// batch is interrupted and rolled back (it is redone at the next start), then
// the daemon exits with 0.
#include <atomic>
#include <csignal>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "cli_json.h"
#include "command.h"
#include "winnow/curation/daemon/status_server.h"
#include "winnow/curation/daemon/maintenance_daemon.h"

namespace winnow::cli {

namespace {

// The running daemon, for the signal handler (request_stop only sets an
// atomic flag, which is async-signal-safe). A signal that comes while the
// daemon is still opening the dataset is kept and honoured once it runs.
std::atomic<curation::daemon::MaintenanceDaemon*> g_daemon{nullptr};
std::atomic<bool> g_stop_requested{false};

extern "C" void on_stop_signal(int) {
  g_stop_requested.store(true);
  if (curation::daemon::MaintenanceDaemon* d = g_daemon.load()) d->request_stop();
}

}  // namespace

Command add_serve_command(CLI::App& parent) {
  struct Options {
    curation::daemon::MaintenanceDaemonOptions daemon;
    std::string heartbeat;
    int poll_ms = 500;
    std::string http_host = "127.0.0.1";
    int http_port = 8765;
    bool no_http = false;
    bool http_allow_remote = false;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = parent.add_subcommand(
      "serve", "watch an inbox folder and ingest each manifest dropped there exactly once");
  cmd->footer("Example: winnow serve --db data.db --inbox inbox/ --http-port 8080");
  cmd->add_option("--db", o->daemon.db, "database file (winnow init)")->required();
  add_threads_option(*cmd, o->daemon.threads);
  cmd->add_option("--inbox", o->daemon.inbox,
                  "folder to watch; manifests (*.jsonl) must appear by rename")
      ->required();
  cmd->add_option("--poll-ms", o->poll_ms, "inbox scan and heartbeat interval")
      ->capture_default_str();
  cmd->add_option("--heartbeat", o->heartbeat,
                  "heartbeat/status JSON file (default: DB.serve.json)");
  cmd->add_option("--http-host", o->http_host,
                  "address of the status/metrics endpoint; a non-loopback one needs "
                  "--http-allow-remote")
      ->capture_default_str();
  cmd->add_option("--http-port", o->http_port, "port of the endpoint; 0 picks a free one")
      ->capture_default_str();
  cmd->add_flag("--http-allow-remote", o->http_allow_remote,
                "allow a non-loopback --http-host and any Host header: the endpoint has NO "
                "authentication, anyone who reaches the port reads the status");
  cmd->add_flag("--no-http", o->no_http, "no HTTP endpoint");
  cmd->add_flag("--once", o->daemon.once,
                "handle the manifests waiting (and any interrupted one), then exit");
  cmd->add_option("--content-root", o->daemon.content_roots,
                  "folder that `path` records may name files beneath (repeatable; default: the "
                  "inbox folder). Files elsewhere, behind symbolic links leading out, not "
                  "regular or too large are rejected");
  cmd->add_option("--max-content-bytes", o->daemon.max_content_bytes,
                  "largest file a `path` record may name")
      ->capture_default_str();
  cmd->add_option("--max-interruptions", o->daemon.max_interruptions,
                  "a manifest the daemon died while ingesting this many times goes to failed/")
      ->capture_default_str();
  return {cmd, [o] {
            std::signal(SIGTERM, on_stop_signal);
            std::signal(SIGINT, on_stop_signal);
            o->daemon.poll = std::chrono::milliseconds(o->poll_ms);
            o->daemon.heartbeat_file = o->heartbeat;
            // Refuse a public endpoint before the daemon touches the inbox or the heartbeat.
            if (!o->no_http) curation::daemon::check_http_bind(o->http_host, o->http_allow_remote);
            curation::daemon::DaemonStatus status;
            curation::daemon::MaintenanceDaemon daemon(o->daemon, status, status_json);
            std::optional<curation::daemon::StatusServer> server;
            if (!o->no_http) {
              server.emplace(status, o->http_host, o->http_port, o->http_allow_remote);
              status.set_extra("http", {{"host", server->host()},
                                        {"port", server->port()},
                                        {"allow_remote", o->http_allow_remote}});
              if (!curation::daemon::is_loopback_address(o->http_host)) {
                std::cerr << "winnow serve: warning: the status endpoint listens on "
                          << o->http_host << " without authentication (--http-allow-remote)\n";
              }
            }
            g_daemon = &daemon;
            if (g_stop_requested.load()) daemon.request_stop();
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
                             .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                      << "\n";
            return 0;
          }};
}

}  // namespace winnow::cli
