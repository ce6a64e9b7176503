#include "connection_guard.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

namespace winnow::curation::daemon {

namespace {

constexpr std::chrono::milliseconds kSweepEvery{200};

struct Connection {
  int fd;
  unsigned long inode;
};

// This process's connected sockets whose local port is `port`: the
// endpoint's accepted connections (the listening socket itself is left out by
// SO_ACCEPTCONN; the daemon connects to nothing from that port).
std::vector<Connection> connections_to(int port) {
  std::vector<Connection> out;
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return out;  // no descriptors left to look: try at the next sweep
  const int own = ::dirfd(dir);
  while (const dirent* entry = ::readdir(dir)) {
    char* end = nullptr;
    const long fd = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || fd == own) continue;
    struct stat st {};
    if (::fstat(static_cast<int>(fd), &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
    int listening = 0;
    socklen_t size = sizeof listening;
    if (::getsockopt(static_cast<int>(fd), SOL_SOCKET, SO_ACCEPTCONN, &listening, &size) != 0 ||
        listening != 0) {
      continue;
    }
    sockaddr_storage local{};
    socklen_t length = sizeof local;
    if (::getsockname(static_cast<int>(fd), reinterpret_cast<sockaddr*>(&local), &length) != 0) {
      continue;
    }
    int local_port = -1;
    if (local.ss_family == AF_INET) {
      local_port = ntohs(reinterpret_cast<const sockaddr_in&>(local).sin_port);
    } else if (local.ss_family == AF_INET6) {
      local_port = ntohs(reinterpret_cast<const sockaddr_in6&>(local).sin6_port);
    }
    if (local_port == port) out.push_back({static_cast<int>(fd), st.st_ino});
  }
  ::closedir(dir);
  return out;
}

}  // namespace

ConnectionGuard::ConnectionGuard(int port, std::chrono::milliseconds deadline,
                                 std::size_t max_connections)
    : port_(port), deadline_(deadline), max_connections_(max_connections) {
  thread_ = std::thread([this] { watch(); });
}

ConnectionGuard::~ConnectionGuard() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ConnectionGuard::cut_all() {
  std::lock_guard<std::mutex> lock(mutex_);
  cutting_all_ = true;
  sweep(true);
}

void ConnectionGuard::watch() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    sweep(cutting_all_);
    wake_.wait_for(lock, kSweepEvery, [this] { return stopping_; });
  }
}

// Called with mutex_ held. shutdown() rather than close(): the descriptor
// stays the server thread's to close, which it does as its read fails.
void ConnectionGuard::sweep(bool everything) {
  const auto now = std::chrono::steady_clock::now();
  std::vector<Connection> live = connections_to(port_);
  std::map<unsigned long, std::chrono::steady_clock::time_point> seen;
  for (const Connection& c : live) {
    const auto it = first_seen_.find(c.inode);
    seen[c.inode] = it == first_seen_.end() ? now : it->second;
  }
  first_seen_ = std::move(seen);
  // Newest first: past the cap, the oldest go (they had their time; a new
  // request from a monitor is served while idle clients keep coming). Among
  // those first seen together, the higher descriptor was accepted later.
  std::sort(live.begin(), live.end(), [&](const Connection& a, const Connection& b) {
    const auto seen_a = first_seen_[a.inode], seen_b = first_seen_[b.inode];
    return seen_a != seen_b ? seen_a > seen_b : a.fd > b.fd;
  });
  for (std::size_t i = 0; i < live.size(); ++i) {
    const bool too_old = now - first_seen_[live[i].inode] > deadline_;
    const bool too_many = i >= max_connections_;
    if (!(everything || too_old || too_many)) continue;
    // The descriptor may have been closed and its number reused since the
    // listing: only the same socket is shut down.
    struct stat st {};
    if (::fstat(live[i].fd, &st) == 0 && st.st_ino == live[i].inode) {
      ::shutdown(live[i].fd, SHUT_RDWR);
    }
  }
}

}  // namespace winnow::curation::daemon
