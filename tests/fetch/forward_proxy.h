// A small forward proxy for the fetch tests, on 127.0.0.1 with an ephemeral
// port, one thread per connection (POSIX sockets). It speaks the two forms
// freshd uses: an HTTP proxy that only tunnels (CONNECT host:port, answered
// 200 and then relayed both ways; any other method 405), and SOCKS5 (no
// authentication, CONNECT command). With `credentials` set ("user:pass"),
// a CONNECT without the matching "Proxy-Authorization: Basic ..." gets 407.
// It records every CONNECT target as the client sent it (an IP literal or a
// name: a name is refused with 502 and never resolved) and the
// Proxy-Authorization values it saw.
// Thread-safety: the accessors may be called from any thread.

#ifndef FRESHD_TESTS_FETCH_FORWARD_PROXY_H_
#define FRESHD_TESTS_FETCH_FORWARD_PROXY_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace freshd::fetch::testing {

class ForwardProxy {
 public:
  enum class Kind { kHttp, kSocks5 };

  explicit ForwardProxy(Kind kind = Kind::kHttp, std::string credentials = "")
      : kind_(kind), credentials_(std::move(credentials)) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a));
    ::listen(listen_fd_, 64);
    socklen_t len = sizeof(a);
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    acceptor_ = std::thread([this] { AcceptLoop(); });
  }
  ~ForwardProxy() {
    stop_ = true;
    ::shutdown(listen_fd_, SHUT_RDWR);
    acceptor_.join();
    ::close(listen_fd_);
    std::vector<std::thread> sessions;
    {
      std::lock_guard<std::mutex> lock(mu_);
      sessions.swap(sessions_);
    }
    for (std::thread& t : sessions) t.join();
  }
  ForwardProxy(const ForwardProxy&) = delete;
  ForwardProxy& operator=(const ForwardProxy&) = delete;

  uint16_t port() const { return port_; }
  std::string Url() const {
    return std::string(kind_ == Kind::kHttp ? "http" : "socks5") +
           "://127.0.0.1:" + std::to_string(port_);
  }
  // CONNECT targets as sent ("127.0.0.1:8080", or a name).
  std::vector<std::string> connects() const {
    std::lock_guard<std::mutex> lock(mu_);
    return connects_;
  }
  std::vector<std::string> auth_headers() const {
    std::lock_guard<std::mutex> lock(mu_);
    return auth_headers_;
  }
  // Every request head the proxy received (CONNECT and refused ones).
  std::vector<std::string> heads() const {
    std::lock_guard<std::mutex> lock(mu_);
    return heads_;
  }
  std::vector<std::string> methods() const {
    std::lock_guard<std::mutex> lock(mu_);
    return methods_;
  }
  int connections() const { return connections_.load(); }
  int refused_407() const { return refused_407_.load(); }

  static std::string Base64(const std::string& in) {
    static const char* k =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    size_t i = 0;
    for (; i + 2 < in.size(); i += 3) {
      const unsigned v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8) |
                         uint8_t(in[i + 2]);
      out += {k[v >> 18], k[(v >> 12) & 63], k[(v >> 6) & 63], k[v & 63]};
    }
    if (i + 1 == in.size()) {
      const unsigned v = uint8_t(in[i]) << 16;
      out += {k[v >> 18], k[(v >> 12) & 63], '=', '='};
    } else if (i + 2 == in.size()) {
      const unsigned v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8);
      out += {k[v >> 18], k[(v >> 12) & 63], k[(v >> 6) & 63], '='};
    }
    return out;
  }

 private:
  void AcceptLoop() {
    while (!stop_) {
      const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) return;
      ++connections_;
      std::lock_guard<std::mutex> lock(mu_);
      sessions_.emplace_back([this, fd] {
        if (kind_ == Kind::kHttp) {
          HttpSession(fd);
        } else {
          SocksSession(fd);
        }
      });
    }
  }

  static bool SendAll(int fd, const std::string& s) {
    return ::send(fd, s.data(), s.size(), MSG_NOSIGNAL) ==
           static_cast<ssize_t>(s.size());
  }
  static bool ReadExactly(int fd, char* buf, size_t n) {
    size_t got = 0;
    while (got < n) {
      const ssize_t k = ::recv(fd, buf + got, n - got, 0);
      if (k <= 0) return false;
      got += static_cast<size_t>(k);
    }
    return true;
  }

  // Connects to an IP literal "a.b.c.d" or "::1"; -1 otherwise.
  static int Dial(const std::string& ip, uint16_t port) {
    sockaddr_storage ss{};
    socklen_t len = 0;
    auto* a4 = reinterpret_cast<sockaddr_in*>(&ss);
    auto* a6 = reinterpret_cast<sockaddr_in6*>(&ss);
    if (::inet_pton(AF_INET, ip.c_str(), &a4->sin_addr) == 1) {
      a4->sin_family = AF_INET;
      a4->sin_port = htons(port);
      len = sizeof(*a4);
    } else if (::inet_pton(AF_INET6, ip.c_str(), &a6->sin6_addr) == 1) {
      a6->sin6_family = AF_INET6;
      a6->sin6_port = htons(port);
      len = sizeof(*a6);
    } else {
      return -1;
    }
    const int fd = ::socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0) {
      ::close(fd);
      return -1;
    }
    return fd;
  }

  void Relay(int a, int b, const std::string& pending_to_b) {
    if (!pending_to_b.empty()) SendAll(b, pending_to_b);
    char buf[16384];
    while (!stop_) {
      pollfd p[2] = {{a, POLLIN, 0}, {b, POLLIN, 0}};
      const int n = ::poll(p, 2, 100);
      if (n < 0) break;
      if (n == 0) continue;
      bool done = false;
      for (int i = 0; i < 2 && !done; ++i) {
        if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        const ssize_t k = ::recv(p[i].fd, buf, sizeof(buf), 0);
        if (k <= 0 || !SendAll(p[1 - i].fd, std::string(buf, k))) done = true;
      }
      if (done) break;
    }
  }

  void HttpSession(int fd) {
    std::string head;
    char c;
    while (head.find("\r\n\r\n") == std::string::npos && head.size() < 65536) {
      if (::recv(fd, &c, 1, 0) != 1) {
        ::close(fd);
        return;
      }
      head += c;
    }
    const std::string line = head.substr(0, head.find("\r\n"));
    const std::string method = line.substr(0, line.find(' '));
    std::string auth;
    const std::string key = "\r\nproxy-authorization: ";
    std::string lower = head;
    for (char& ch : lower) ch = static_cast<char>(std::tolower(ch));
    if (size_t at = lower.find(key); at != std::string::npos) {
      const size_t from = at + key.size();
      auth = head.substr(from, head.find("\r\n", from) - from);
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      methods_.push_back(method);
      heads_.push_back(head);
      if (!auth.empty()) auth_headers_.push_back(auth);
    }
    if (method != "CONNECT") {
      SendAll(fd,
              "HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n");
      ::close(fd);
      return;
    }
    if (!credentials_.empty() && auth != "Basic " + Base64(credentials_)) {
      ++refused_407_;
      SendAll(fd,
              "HTTP/1.1 407 Proxy Authentication Required\r\n"
              "Proxy-Authenticate: Basic realm=\"test\"\r\n"
              "Content-Length: 0\r\nConnection: close\r\n\r\n");
      ::close(fd);
      return;
    }
    const size_t sp = line.find(' ');
    const std::string target =
        line.substr(sp + 1, line.find(' ', sp + 1) - sp - 1);
    {
      std::lock_guard<std::mutex> lock(mu_);
      connects_.push_back(target);
    }
    const size_t colon = target.rfind(':');
    std::string host = target.substr(0, colon);
    if (host.size() > 2 && host.front() == '[')
      host = host.substr(1, host.size() - 2);
    const int up =
        Dial(host, static_cast<uint16_t>(std::stoi(target.substr(colon + 1))));
    if (up < 0) {
      SendAll(fd, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n");
      ::close(fd);
      return;
    }
    SendAll(fd, "HTTP/1.1 200 Connection established\r\n\r\n");
    Relay(fd, up, "");
    ::close(up);
    ::close(fd);
  }

  void SocksSession(int fd) {
    unsigned char hello[2];
    unsigned char methods[255];
    if (!ReadExactly(fd, reinterpret_cast<char*>(hello), 2) || hello[0] != 5 ||
        !ReadExactly(fd, reinterpret_cast<char*>(methods), hello[1])) {
      ::close(fd);
      return;
    }
    SendAll(fd, std::string("\x05\x00", 2));
    unsigned char req[4];
    if (!ReadExactly(fd, reinterpret_cast<char*>(req), 4) || req[1] != 1) {
      ::close(fd);
      return;
    }
    std::string host;
    if (req[3] == 1) {
      unsigned char a[4];
      ReadExactly(fd, reinterpret_cast<char*>(a), 4);
      char text[INET_ADDRSTRLEN];
      ::inet_ntop(AF_INET, a, text, sizeof(text));
      host = text;
    } else if (req[3] == 3) {  // a name: recorded, refused
      unsigned char n;
      ReadExactly(fd, reinterpret_cast<char*>(&n), 1);
      host.resize(n);
      ReadExactly(fd, host.data(), n);
    } else {
      unsigned char a[16];
      ReadExactly(fd, reinterpret_cast<char*>(a), 16);
      char text[INET6_ADDRSTRLEN];
      ::inet_ntop(AF_INET6, a, text, sizeof(text));
      host = text;
    }
    unsigned char p[2];
    ReadExactly(fd, reinterpret_cast<char*>(p), 2);
    const uint16_t port = static_cast<uint16_t>((p[0] << 8) | p[1]);
    {
      std::lock_guard<std::mutex> lock(mu_);
      connects_.push_back(host + ":" + std::to_string(port));
    }
    const int up = Dial(host, port);
    const std::string reply_tail("\x00\x01\x00\x00\x00\x00\x00\x00", 8);
    if (up < 0) {
      SendAll(fd, std::string("\x05\x04", 2) + reply_tail);  // host unreachable
      ::close(fd);
      return;
    }
    SendAll(fd, std::string("\x05\x00", 2) + reply_tail);
    Relay(fd, up, "");
    ::close(up);
    ::close(fd);
  }

  const Kind kind_;
  const std::string credentials_;
  int listen_fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> connections_{0};
  std::atomic<int> refused_407_{0};
  std::thread acceptor_;
  mutable std::mutex mu_;
  std::vector<std::thread> sessions_;
  std::vector<std::string> connects_, auth_headers_, methods_, heads_;
};

}  // namespace freshd::fetch::testing

#endif  // FRESHD_TESTS_FETCH_FORWARD_PROXY_H_
