#include "client_connection.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cstdlib>
#include <cstring>

namespace uaii::server {
namespace {

// The port and numeric address of a socket address (IPv4 or IPv6).
bool AddressOf(const sockaddr_storage& ss, std::string* addr, int* port) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (ss.ss_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&ss);
    inet_ntop(AF_INET, &a->sin_addr, buf, sizeof buf);
    *port = ntohs(a->sin_port);
  } else if (ss.ss_family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&ss);
    inet_ntop(AF_INET6, &a->sin6_addr, buf, sizeof buf);
    *port = ntohs(a->sin6_port);
  } else {
    return false;
  }
  *addr = buf;
  return true;
}

}  // namespace

ClientConnection::ClientConnection(const std::string& remote_addr, int remote_port, int local_port) {
  DIR* dir = opendir("/proc/self/fd");
  if (!dir) return;
  while (dirent* e = readdir(dir)) {
    char* end = nullptr;
    const long fd = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0') continue;
    struct stat st;
    if (fstat(static_cast<int>(fd), &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
    sockaddr_storage local{}, peer{};
    socklen_t ll = sizeof local, pl = sizeof peer;
    if (getsockname(static_cast<int>(fd), reinterpret_cast<sockaddr*>(&local), &ll) != 0 ||
        getpeername(static_cast<int>(fd), reinterpret_cast<sockaddr*>(&peer), &pl) != 0)
      continue;
    std::string la, pa;
    int lp = 0, pp = 0;
    if (!AddressOf(local, &la, &lp) || !AddressOf(peer, &pa, &pp)) continue;
    if (lp == local_port && pp == remote_port && pa == remote_addr) {
      fd_ = static_cast<int>(fd);
      break;
    }
  }
  closedir(dir);
}

bool ClientConnection::Gone() const {
  if (fd_ < 0) return false;
  pollfd p{.fd = fd_, .events = POLLIN | POLLRDHUP, .revents = 0};
  if (poll(&p, 1, 0) <= 0) return false;
  if (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) return true;
  if (p.revents & POLLIN) {
    char c;
    // Readable with nothing to read: the peer's end is closed. (Bytes waiting are a
    // pipelined next request: the client is there.)
    return recv(fd_, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
  }
  return false;
}

}  // namespace uaii::server
