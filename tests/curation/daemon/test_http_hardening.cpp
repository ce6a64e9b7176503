// The status endpoint of the real `winnow serve` process under hostile
// requests: large and chunked bodies, write methods, foreign Host headers
// (DNS rebinding), stalled clients, and a public bind address without
// --http-allow-remote.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/cli_process.h"
#include "support/temp_dir.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using winnow::test::CliProcess;
using winnow::test::poll_until;
using Clock = std::chrono::steady_clock;

// `winnow init` of an empty text dataset (a cheap embedder) at `db`.
void init_text_dataset(const fs::path& dir, const std::string& db) {
  CliProcess init(dir, {"init", "--db", db, "--embedder", "hashed-ngrams(n=3,dim=64)"}, "init");
  REQUIRE(init.wait() == 0);
}

// A daemon on an empty text dataset with its endpoint on a free loopback port;
// with max_files, started with that limit on its open descriptors.
class Daemon {
 public:
  explicit Daemon(std::vector<std::string> http_args = {}, rlim_t max_files = 0) {
    const fs::path inbox = dir_.path() / "inbox";
    fs::create_directories(inbox);
    const std::string db = dir_.file("text.db");
    init_text_dataset(dir_.path(), db);
    std::vector<std::string> args = {"serve",       "--db", db,          "--inbox", inbox.string(),
                                     "--http-port", "0",    "--poll-ms", "100"};
    args.insert(args.end(), http_args.begin(), http_args.end());
    rlimit before{};
    REQUIRE(::getrlimit(RLIMIT_NOFILE, &before) == 0);
    if (max_files > 0) {  // the child inherits the limit; this process gets its own back
      rlimit low = before;
      low.rlim_cur = max_files;
      REQUIRE(::setrlimit(RLIMIT_NOFILE, &low) == 0);
    }
    process_ = std::make_unique<CliProcess>(dir_.path(), args, "serve");
    REQUIRE(::setrlimit(RLIMIT_NOFILE, &before) == 0);
    REQUIRE(poll_until([&] {
      const json h = json::parse(winnow::test::slurp(db + ".serve.json"), nullptr, false);
      if (h.is_discarded() || !h.contains("http")) return false;
      heartbeat_ = h;
      return true;
    }));
    port_ = heartbeat_["http"]["port"];
  }
  ~Daemon() {
    process_->signal(SIGTERM);
    process_->wait(30);
  }
  int port() const { return port_; }
  // SIGTERM, then the exit code once it has ended within `seconds`.
  std::optional<int> terminate(double seconds) {
    process_->signal(SIGTERM);
    return process_->wait(seconds);
  }
  fs::path inbox() const { return dir_.path() / "inbox"; }
  bool running() { return !process_->wait(0.0).has_value(); }
  const json& heartbeat() const { return heartbeat_; }
  std::string host_port() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  winnow::test::TempDir dir_;
  std::unique_ptr<CliProcess> process_;
  json heartbeat_;
  int port_ = 0;
};

// A raw TCP connection to 127.0.0.1:port, for requests httplib::Client would
// not send as written; every send and receive times out after 10 s.
class RawConnection {
 public:
  explicit RawConnection(int port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    REQUIRE(fd_ >= 0);
    timeval tv{10, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  }
  ~RawConnection() { ::close(fd_); }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  // False once the peer has closed or reset the connection.
  bool send_all(const std::string& data) {
    std::size_t done = 0;
    while (done < data.size()) {
      const ssize_t n = ::send(fd_, data.data() + done, data.size() - done, MSG_NOSIGNAL);
      if (n <= 0) return false;
      done += static_cast<std::size_t>(n);
    }
    return true;
  }
  // Everything received until the peer closes (or resets) the connection;
  // nullopt when it stays open and silent for 10 s.
  std::optional<std::string> read_until_closed() {
    std::string got;
    char buf[4096];
    for (;;) {
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n > 0) {
        got.append(buf, static_cast<std::size_t>(n));
      } else if (n == 0 || errno == ECONNRESET) {
        return got;
      } else if (errno != EINTR) {
        return std::nullopt;  // timed out: the server is still waiting for more
      }
    }
  }

 private:
  int fd_;
};

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

}  // namespace

TEST_CASE("http: an 800 MiB POST is refused from its headers before any body is read",
          "[daemon][http]") {
  Daemon daemon;
  const std::string request_headers = "POST /status HTTP/1.1\r\nHost: " + daemon.host_port() +
                                      "\r\nContent-Type: application/octet-stream\r\n"
                                      "Content-Length: 838860800\r\n";
  for (const char* expect : {"", "Expect: 100-continue\r\n"}) {
    INFO("extra header: " << expect);
    RawConnection c(daemon.port());
    REQUIRE(c.send_all(request_headers + expect + "\r\n"));
    const auto t0 = Clock::now();
    const auto reply = c.read_until_closed();
    // The old server answered nothing: it waited for (and buffered) the whole body.
    REQUIRE(reply);
    CHECK(Clock::now() - t0 < std::chrono::seconds(5));
    CHECK(starts_with(*reply, "HTTP/1.1 405"));  // not "100 Continue" either
    CHECK_THAT(*reply, Catch::Contains("Allow: GET, HEAD"));
    // The connection is closed: the body cannot be delivered. Kernel buffers
    // take a few MiB at most before the reset arrives.
    const std::string mib(1u << 20, 'x');
    std::size_t sent = 0;
    while (sent < (800u << 20) && c.send_all(mib)) sent += mib.size();
    CHECK(sent < (64u << 20));
  }
}

TEST_CASE("http: a GET with a large or chunked body is refused with 413", "[daemon][http]") {
  Daemon daemon;
  for (const char* body_header : {"Content-Length: 838860800\r\n", "Content-Length: 4097\r\n",
                                  "Transfer-Encoding: chunked\r\n", "Content-Length: junk\r\n"}) {
    INFO(body_header);
    RawConnection c(daemon.port());
    REQUIRE(c.send_all("GET /status HTTP/1.1\r\nHost: " + daemon.host_port() + "\r\n" +
                       body_header + "\r\n"));
    const auto reply = c.read_until_closed();
    REQUIRE(reply);
    CHECK(starts_with(*reply, "HTTP/1.1 413"));
    CHECK_THAT(*reply, !Catch::Contains("\"state\""));  // no status JSON
  }
}

TEST_CASE("http: only GET and HEAD are served and other methods get 405", "[daemon][http]") {
  Daemon daemon;
  httplib::Client client("127.0.0.1", daemon.port());
  client.set_read_timeout(10, 0);
  std::vector<std::pair<std::string, httplib::Result>> refused;
  refused.emplace_back("POST", client.Post("/status", "{\"state\":\"x\"}", "application/json"));
  refused.emplace_back("PUT", client.Put("/status", "x", "text/plain"));
  refused.emplace_back("DELETE", client.Delete("/status"));
  refused.emplace_back("PATCH", client.Patch("/healthz", "x", "text/plain"));
  refused.emplace_back("OPTIONS", client.Options("/metrics"));
  for (auto& [method, res] : refused) {
    INFO(method);
    REQUIRE(res);
    CHECK(res->status == 405);
    CHECK(res->get_header_value("Allow") == "GET, HEAD");
  }
  auto get = client.Get("/status");
  REQUIRE(get);
  CHECK(get->status == 200);
  CHECK(json::parse(get->body)["http"]["port"] == daemon.port());
  auto head = client.Head("/status");
  REQUIRE(head);
  CHECK(head->status == 200);
  CHECK(head->body.empty());
}

TEST_CASE("http: the Host header must name loopback against DNS rebinding", "[daemon][http]") {
  Daemon daemon;
  CHECK(daemon.heartbeat()["http"]["allow_remote"] == false);
  const std::string port = std::to_string(daemon.port());
  httplib::Client client("127.0.0.1", daemon.port());
  client.set_read_timeout(10, 0);
  auto with_host = [&](const std::string& host) {
    auto res = client.Get("/status", {{"Host", host}});
    REQUIRE(res);
    return res->status;
  };
  const std::vector<std::string> foreign_hosts = {"evil.example",
                                                  "evil.example:" + port,
                                                  "localhost.evil.example:" + port,
                                                  "127.0.0.1.evil.example",
                                                  "localhostx",
                                                  "192.168.1.10:" + port,
                                                  "[::2]:" + port,
                                                  "localhost:" + port + "x",
                                                  "localhost:",
                                                  "0.0.0.0:" + port};
  for (const std::string& foreign : foreign_hosts) {
    INFO(foreign);
    CHECK(with_host(foreign) == 403);
  }
  const std::vector<std::string> loopback_hosts = {
      "localhost:" + port, "localhost", "LocalHost:" + port, "127.0.0.1", "127.0.0.1:" + port,
      "[::1]:" + port,     "[::1]",     "localhost:2222"};
  for (const std::string& loopback : loopback_hosts) {
    INFO(loopback);
    CHECK(with_host(loopback) == 200);
  }
  {
    // No Host at all (an HTTP/1.0 tool): browsers always send one, so this is no rebinding.
    RawConnection c(daemon.port());
    REQUIRE(c.send_all("GET /healthz HTTP/1.0\r\n\r\n"));
    const auto reply = c.read_until_closed();
    REQUIRE(reply);
    CHECK(starts_with(*reply, "HTTP/1.1 200"));
  }
  auto metrics = client.Get("/metrics", {{"Host", "evil.example"}});
  REQUIRE(metrics);
  CHECK(metrics->status == 403);
  CHECK_THAT(metrics->body, !Catch::Contains("winnow_"));
}

TEST_CASE("http: --http-allow-remote lifts the Host check", "[daemon][http]") {
  Daemon daemon({"--http-host", "127.0.0.1", "--http-allow-remote"});
  CHECK(daemon.heartbeat()["http"]["allow_remote"] == true);
  httplib::Client client("127.0.0.1", daemon.port());
  client.set_read_timeout(10, 0);
  auto res = client.Get("/status", {{"Host", "daemon.example.org:8765"}});
  REQUIRE(res);
  CHECK(res->status == 200);
  auto post = client.Post("/status", "x", "text/plain");  // still read-only
  REQUIRE(post);
  CHECK(post->status == 405);
}

TEST_CASE("http: a stalled request is dropped after the read timeout", "[daemon][http]") {
  Daemon daemon;
  RawConnection c(daemon.port());
  REQUIRE(c.send_all("GET /status HTTP/1.1\r\nHost: localhost\r\n"));  // never finished
  const auto t0 = Clock::now();
  const auto reply = c.read_until_closed();
  REQUIRE(reply);  // closed, not left open
  CHECK(Clock::now() - t0 < std::chrono::seconds(9));
  CHECK_THAT(*reply, !Catch::Contains("\"state\""));
}

TEST_CASE("http: a non-loopback --http-host needs --http-allow-remote", "[daemon][http]") {
  winnow::test::TempDir dir;
  const fs::path inbox = dir.path() / "inbox";
  fs::create_directories(inbox);
  const std::string db = dir.file("text.db");
  init_text_dataset(dir.path(), db);
  for (const char* host : {"0.0.0.0", "::", "example.org"}) {
    INFO(host);
    CliProcess serve(dir.path(),
                     {"serve", "--db", db, "--inbox", inbox.string(), "--http-host", host,
                      "--http-port", "0", "--once"},
                     "serve");
    const auto rc = serve.wait();
    REQUIRE(rc);
    CHECK(*rc == 1);
    CHECK_THAT(serve.err(), Catch::Contains("--http-allow-remote"));
    CHECK_THAT(serve.err(), Catch::Contains("not a loopback address"));
    // Refused before the daemon started: no heartbeat, no inbox folders.
    CHECK_FALSE(fs::exists(db + ".serve.json"));
    CHECK_FALSE(fs::exists(inbox / "processed"));
  }
  // Loopback names need no flag (not ::1 here: a test machine may lack IPv6).
  for (const char* host : {"localhost", "127.0.0.1"}) {
    INFO(host);
    CliProcess serve(dir.path(),
                     {"serve", "--db", db, "--inbox", inbox.string(), "--http-host", host,
                      "--http-port", "0", "--once"},
                     "serve");
    CHECK(serve.wait() == 0);
  }
}

TEST_CASE("http: a port another daemon listens on is refused (no shared port)", "[daemon][http]") {
  Daemon first;
  winnow::test::TempDir dir;
  const fs::path inbox = dir.path() / "inbox";
  fs::create_directories(inbox);
  const std::string db = dir.file("other.db");
  init_text_dataset(dir.path(), db);
  CliProcess second(dir.path(),
                    {"serve", "--db", db, "--inbox", inbox.string(), "--http-port",
                     std::to_string(first.port()), "--once"},
                    "serve");
  const auto rc = second.wait();
  REQUIRE(rc);
  CHECK(*rc == 5);  // io: the address is in use
  CHECK_THAT(second.err(), Catch::Contains("cannot bind the status endpoint"));
}

TEST_CASE("http: clients that take every descriptor do not stop the daemon", "[daemon][http]") {
  // 48 descriptors: the database, index, heartbeat and listening socket, and
  // room for few clients; the flood below takes the rest again and again.
  Daemon daemon({}, 48);
  // An idle client: a connection begun and never written to (non-blocking,
  // so that a full accept queue does not hold the test).
  const auto idle_client = [&] {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    REQUIRE(fd >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(daemon.port()));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);  // EINPROGRESS is fine
    return fd;
  };
  const auto flood_until = Clock::now() + std::chrono::seconds(3);
  std::vector<int> idle;
  while (Clock::now() < flood_until) {
    while (idle.size() < 80) idle.push_back(idle_client());
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    for (int i = 0; i < 20; ++i) ::close(idle[static_cast<std::size_t>(i)]);  // some go,
    idle.erase(idle.begin(), idle.begin() + 20);                              // and come back
    REQUIRE(daemon.running());
  }
  for (int fd : idle) ::close(fd);
  // The inbox is listed again once descriptors are free: a manifest goes in.
  std::ofstream(daemon.inbox() / "after.jsonl")
      << "{\"key\": \"a\", \"text\": \"after the flood\"}\n";
  CHECK(poll_until([&] { return fs::exists(daemon.inbox() / "processed" / "after.jsonl"); }, 30));
  CHECK(daemon.running());
}

TEST_CASE("http: slow clients are cut off at the deadline and do not hold SIGTERM",
          "[daemon][http]") {
  Daemon daemon;
  // Clients that send a request one header line at a time and never end it:
  // each read is within the read timeout, so only the deadline stops them.
  auto slow_clients = [&](std::vector<std::unique_ptr<RawConnection>>& slow) {
    for (int i = 0; i < 20; ++i) {
      slow.push_back(std::make_unique<RawConnection>(daemon.port()));
      REQUIRE(slow.back()->send_all("GET /status HTTP/1.1\r\nHost: localhost\r\n"));
    }
  };
  std::vector<std::unique_ptr<RawConnection>> slow;
  slow_clients(slow);
  std::atomic<bool> dripping{true};
  std::thread drip([&] {
    while (dripping) {
      for (auto& c : slow) c->send_all("X-Slow: 1\r\n");  // false once cut off: fine
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
  });
  // The others are served meanwhile.
  httplib::Client client("127.0.0.1", daemon.port());
  client.set_read_timeout(3, 0);
  const auto health = client.Get("/healthz");
  REQUIRE(health);
  CHECK(health->status == 200);
  // Every slow connection is shut down at the deadline (6 s), well before
  // the 10 s each read here waits.
  const auto start = Clock::now();
  for (auto& c : slow) CHECK(c->read_until_closed().has_value());
  CHECK(Clock::now() - start < std::chrono::seconds(9));
  dripping = false;
  drip.join();

  // Twenty more, then SIGTERM: the daemon does not wait for them.
  std::vector<std::unique_ptr<RawConnection>> more;
  slow_clients(more);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const auto stop_start = Clock::now();
  const std::optional<int> rc = daemon.terminate(10);
  REQUIRE(rc.has_value());
  CHECK(*rc == 0);
  CHECK(Clock::now() - stop_start < std::chrono::seconds(3));
}

TEST_CASE("http: a flood of idle connections does not keep a request waiting", "[daemon][http]") {
  Daemon daemon;
  std::vector<std::unique_ptr<RawConnection>> idle;
  for (int i = 0; i < 150; ++i) idle.push_back(std::make_unique<RawConnection>(daemon.port()));
  // Past the cap of 32 the oldest are shut down: a request made now is served
  // at once, not after the 118 older connections have timed out.
  httplib::Client client("127.0.0.1", daemon.port());
  client.set_read_timeout(2, 0);
  const auto start = Clock::now();
  const auto health = client.Get("/healthz");
  REQUIRE(health);
  CHECK(health->status == 200);
  CHECK(Clock::now() - start < std::chrono::seconds(2));
  // The first connections were shut down rather than left open.
  CHECK(idle.front()->read_until_closed().has_value());
  CHECK(daemon.running());
}
