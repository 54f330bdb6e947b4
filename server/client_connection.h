// Whether the client of a request is still there. cpp-httplib 0.11 (Debian 12's) gives
// a handler no way to ask (later versions add Request::is_connection_closed, which
// llama-server uses), so the server finds the request's socket itself — the one
// connected socket of this process whose local and peer ports are the request's — and
// asks the kernel: a peer that closed or reset its end shows as POLLRDHUP / POLLHUP /
// POLLERR, or as a readable socket with nothing to read. A generation checks it between
// tokens, so a client that disconnects cancels its generation at once, streamed or not.
#pragma once
#include <string>

namespace uaii::server {

class ClientConnection {
 public:
  // Finds the socket of the connection from remote_addr:remote_port to local_port.
  // When none is found (a platform without /proc) the watch says "still there".
  ClientConnection(const std::string& remote_addr, int remote_port, int local_port);
  // True once the client has closed or reset the connection.
  bool Gone() const;
  bool found() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

}  // namespace uaii::server
