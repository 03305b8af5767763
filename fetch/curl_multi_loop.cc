#include "fetch/curl_multi_loop.h"

#include <poll.h>
#include <unistd.h>

#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <chrono>
#include <exception>

namespace freshd::fetch {

namespace asio = boost::asio;

// One socket curl asked us to watch. The descriptor wraps curl's fd without
// owning it: it is always release()d, never closed, by us.
struct CurlMultiLoop::Sock {
  explicit Sock(asio::io_context& io, curl_socket_t fd) : sd(io, fd), fd(fd) {}
  ~Sock() { Detach(); }
  // Deregisters from the reactor now (pending waits complete with
  // operation_aborted), while the fd is still curl's and open.
  void Detach() {
    if (!sd.is_open()) return;
    boost::system::error_code ec;
    sd.cancel(ec);
    sd.release();
  }
  asio::posix::stream_descriptor sd;
  curl_socket_t fd;
  int want = 0;  // CURL_POLL_IN / OUT / INOUT
  bool read_armed = false;
  bool write_armed = false;
};

CurlMultiLoop::CurlMultiLoop(asio::io_context& io, DoneFn done)
    : io_(io), done_(std::move(done)), timer_(io) {
  multi_ = curl_multi_init();
  if (multi_ == nullptr) return;
  curl_multi_setopt(multi_, CURLMOPT_SOCKETFUNCTION, &CurlMultiLoop::SocketCb);
  curl_multi_setopt(multi_, CURLMOPT_SOCKETDATA, this);
  curl_multi_setopt(multi_, CURLMOPT_TIMERFUNCTION, &CurlMultiLoop::TimerCb);
  curl_multi_setopt(multi_, CURLMOPT_TIMERDATA, this);
}

CurlMultiLoop::~CurlMultiLoop() {
  timer_.cancel();
  // Closes pooled connections through CloseSocketCb, which drops wrappers.
  if (multi_ != nullptr) curl_multi_cleanup(multi_);
  socks_.clear();
}

CURLMcode CurlMultiLoop::Add(CURL* easy) {
  curl_easy_setopt(easy, CURLOPT_CLOSESOCKETFUNCTION,
                   &CurlMultiLoop::CloseSocketCb);
  curl_easy_setopt(easy, CURLOPT_CLOSESOCKETDATA, this);
  // curl calls TimerCb(0) from here; the transfer starts on the loop.
  return curl_multi_add_handle(multi_, easy);
}

void CurlMultiLoop::Remove(CURL* easy) {
  curl_multi_remove_handle(multi_, easy);
}

void CurlMultiLoop::NoteSocketOpened(curl_socket_t fd) { Forget(fd); }

void CurlMultiLoop::Forget(curl_socket_t fd) {
  auto it = socks_.find(fd);
  if (it == socks_.end()) return;
  it->second->Detach();  // handlers may still hold the Sock: detach now
  socks_.erase(it);
}

int CurlMultiLoop::CloseSocketCb(void* clientp, curl_socket_t fd) {
  auto* self = static_cast<CurlMultiLoop*>(clientp);
  self->Forget(fd);  // deregister from the reactor before the fd goes away
  return ::close(fd);
}

int CurlMultiLoop::SocketCb(CURL*, curl_socket_t s, int what, void* userp,
                            void* socketp) {
  static_cast<CurlMultiLoop*>(userp)->Watch(s, what, socketp);
  return 0;
}

void CurlMultiLoop::Watch(curl_socket_t fd, int what, void* socketp) {
  if (what == CURL_POLL_REMOVE) {
    // Drop the wrapper: curl may close this fd without telling us (resolver
    // socketpair), and a later socket may reuse the number.
    Forget(fd);
    return;
  }
  auto it = socks_.find(fd);
  // curl's own per-socket pointer tells a socket it already knows from a
  // new one that reuses a number whose close we never saw.
  if (it != socks_.end() && it->second.get() != socketp) {
    Forget(fd);
    it = socks_.end();
  }
  if (it == socks_.end()) {
    try {
      it = socks_.emplace(fd, std::make_shared<Sock>(io_, fd)).first;
    } catch (const std::exception&) {
      return;  // reactor refused the fd: the transfer's timeout ends it
    }
    curl_multi_assign(multi_, fd, it->second.get());
  }
  std::shared_ptr<Sock> sock = it->second;
  sock->want = what;
  if (what & CURL_POLL_IN) Arm(sock, true);
  if (what & CURL_POLL_OUT) Arm(sock, false);
}

void CurlMultiLoop::Arm(const std::shared_ptr<Sock>& sock, bool for_read) {
  bool& armed = for_read ? sock->read_armed : sock->write_armed;
  if (armed) return;
  armed = true;
  std::weak_ptr<char> alive = alive_;
  std::weak_ptr<Sock> weak = sock;
  auto handler = [this, alive, weak, for_read](boost::system::error_code ec) {
    if (alive.expired()) return;
    std::shared_ptr<Sock> s = weak.lock();
    if (!s) return;  // forgotten: curl is done with this socket
    (for_read ? s->read_armed : s->write_armed) = false;
    if (ec == asio::error::operation_aborted) return;
    int mask = for_read ? CURL_CSELECT_IN : CURL_CSELECT_OUT;
    if (ec) mask |= CURL_CSELECT_ERR;
    Action(s->fd, mask);
    // Still wanted and still the same socket: wait again.
    auto it = socks_.find(s->fd);
    if (it != socks_.end() && it->second == s &&
        (s->want & (for_read ? CURL_POLL_IN : CURL_POLL_OUT))) {
      Arm(s, for_read);
    }
  };
  // Asio's epoll reactor is edge-triggered and async_wait is not
  // speculative: readiness that existed before the wait (curl read only part
  // of the buffered data) would never be reported. Check it first.
  pollfd p{sock->fd, static_cast<short>(for_read ? POLLIN : POLLOUT), 0};
  if (::poll(&p, 1, 0) > 0) {
    asio::post(io_, [handler] { handler({}); });
    return;
  }
  sock->sd.async_wait(for_read ? asio::posix::descriptor_base::wait_read
                               : asio::posix::descriptor_base::wait_write,
                      handler);
}

int CurlMultiLoop::TimerCb(CURLM*, long timeout_ms, void* userp) {
  auto* self = static_cast<CurlMultiLoop*>(userp);
  self->timer_.cancel();
  if (timeout_ms < 0) return 0;
  std::weak_ptr<char> alive = self->alive_;
  self->timer_.expires_after(std::chrono::milliseconds(timeout_ms));
  self->timer_.async_wait([self, alive](boost::system::error_code ec) {
    if (alive.expired() || ec == asio::error::operation_aborted) return;
    self->Action(CURL_SOCKET_TIMEOUT, 0);
  });
  return 0;
}

void CurlMultiLoop::Action(curl_socket_t fd, int ev_bitmask) {
  int running = 0;
  curl_multi_socket_action(multi_, fd, ev_bitmask, &running);
  DrainCompletions();
}

void CurlMultiLoop::DrainCompletions() {
  int left = 0;
  while (CURLMsg* msg = curl_multi_info_read(multi_, &left)) {
    if (msg->msg != CURLMSG_DONE) continue;
    CURL* easy = msg->easy_handle;
    CURLcode code = msg->data.result;
    done_(easy, code);  // may remove `easy` and add others
  }
}

}  // namespace freshd::fetch
