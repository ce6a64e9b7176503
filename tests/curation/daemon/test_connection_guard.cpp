// ConnectionGuard on real sockets in this process: a listening socket, its
// accepted connections, and the clients' ends that see them shut down.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>
#include <vector>

#include "../../../curation/daemon/src/connection_guard.h"

using winnow::curation::daemon::ConnectionGuard;

namespace {

// A loopback listener on a free port, with `count` clients connected and
// accepted (in that order).
struct Endpoint {
  int listener = -1;
  int port = 0;
  std::vector<int> clients, accepted;

  explicit Endpoint(int count) {
    listener = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(listener >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(::listen(listener, 64) == 0);
    socklen_t size = sizeof addr;
    REQUIRE(::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &size) == 0);
    port = ntohs(addr.sin_port);
    for (int i = 0; i < count; ++i) {
      const int client = ::socket(AF_INET, SOCK_STREAM, 0);
      REQUIRE(::connect(client, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
      clients.push_back(client);
      const int server_end = ::accept(listener, nullptr, nullptr);
      REQUIRE(server_end >= 0);
      accepted.push_back(server_end);
    }
  }
  ~Endpoint() {
    for (int fd : clients) ::close(fd);
    for (int fd : accepted) ::close(fd);
    ::close(listener);
  }
};

// True when the client's end sees its connection ended (EOF) within `ms`.
bool ended(int client, int ms) {
  pollfd p{client, POLLIN, 0};
  if (::poll(&p, 1, ms) <= 0) return false;
  char byte = 0;
  return ::recv(client, &byte, 1, MSG_DONTWAIT) == 0;
}

}  // namespace

TEST_CASE("connection guard: past the cap the oldest connections are shut down",
          "[daemon][guard]") {
  Endpoint endpoint(6);
  ConnectionGuard guard(endpoint.port, std::chrono::seconds(60), 4);
  // All six are first seen in one sweep: the older (lower descriptors) go.
  CHECK(ended(endpoint.clients[0], 1000));
  CHECK(ended(endpoint.clients[1], 1000));
  for (int i = 2; i < 6; ++i) CHECK_FALSE(ended(endpoint.clients[i], 300));
}

TEST_CASE("connection guard: the deadline, then every connection when told", "[daemon][guard]") {
  Endpoint endpoint(3);
  {
    ConnectionGuard guard(endpoint.port, std::chrono::milliseconds(400), 32);
    CHECK_FALSE(ended(endpoint.clients[0], 200));
    CHECK(ended(endpoint.clients[0], 1500));
    CHECK(ended(endpoint.clients[2], 1500));
  }
  Endpoint more(3);
  ConnectionGuard guard(more.port, std::chrono::seconds(60), 32);
  CHECK_FALSE(ended(more.clients[1], 300));
  guard.cut_all();
  for (int client : more.clients) CHECK(ended(client, 200));
}
