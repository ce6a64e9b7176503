// ConnectionGuard: limits what clients of the status endpoint can hold.
// cpp-httplib 0.11 times out each read, not a whole request, so a client that
// sends one header line a second keeps a server thread forever, and its
// shutdown waits for every such client. The guard watches the endpoint's
// connected sockets (this process's descriptors whose local port is the
// endpoint's) and shuts down, so that the server's thread lets go of it:
//   - a connection older than the deadline (a status request takes
//     milliseconds; the deadline is a few read timeouts);
//   - the oldest connections past the cap;
//   - every connection, when the server stops.
// Details: docs/daemon.md#what-the-endpoint-refuses
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <map>
#include <mutex>
#include <thread>

namespace winnow::curation::daemon {

class ConnectionGuard {
 public:
  ConnectionGuard(int port, std::chrono::milliseconds deadline, std::size_t max_connections);
  ~ConnectionGuard();  // stops watching (connections are left as they are)

  // Shuts down every connection to the port, now and at every later sweep
  // (for a server that is stopping).
  void cut_all();

 private:
  void watch();
  void sweep(bool everything);

  const int port_;
  const std::chrono::milliseconds deadline_;
  const std::size_t max_connections_;
  // Connected sockets by inode (a descriptor number is reused, an inode is
  // not while the socket lives): when the guard first saw each.
  std::map<unsigned long, std::chrono::steady_clock::time_point> first_seen_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  bool cutting_all_ = false;
  std::thread thread_;
};

}  // namespace winnow::curation::daemon
