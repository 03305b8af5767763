// CurlMultiLoop: glue between one libcurl multi handle and a Boost.Asio
// io_context (curl's multi_socket API). CURLMOPT_SOCKETFUNCTION turns curl's
// socket interest into async_wait()s on posix::stream_descriptor objects that
// wrap (never own) curl's sockets; CURLMOPT_TIMERFUNCTION into one
// steady_timer. Completed transfers are reported through DoneFn after
// curl_multi_socket_action() returns, so the handler may add or remove
// handles freely.
//
// Sockets: curl creates them (the owner's CURLOPT_OPENSOCKETFUNCTION must
// call NoteSocketOpened, on every loop sharing the io_context) and closes
// them through CloseSocketCb (installed by Add), where the wrapper is
// deregistered from the reactor first.
// Not thread-safe: everything runs on the io_context thread.

#ifndef FRESHD_FETCH_CURL_MULTI_LOOP_H_
#define FRESHD_FETCH_CURL_MULTI_LOOP_H_

#include <curl/curl.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <functional>
#include <memory>
#include <unordered_map>

namespace freshd::fetch {

class CurlMultiLoop {
 public:
  using DoneFn = std::function<void(CURL* easy, CURLcode code)>;

  // `io` must outlive the loop. ok() is false if curl_multi_init failed.
  CurlMultiLoop(boost::asio::io_context& io, DoneFn done);
  // Cleans up the multi handle; REQUIRES: every easy handle removed.
  ~CurlMultiLoop();
  CurlMultiLoop(const CurlMultiLoop&) = delete;
  CurlMultiLoop& operator=(const CurlMultiLoop&) = delete;

  bool ok() const { return multi_ != nullptr; }
  CURLM* multi() { return multi_; }

  // Installs CURLOPT_CLOSESOCKETFUNCTION on `easy` and adds it; curl starts
  // it from the event loop. Its connections stay this loop's.
  CURLMcode Add(CURL* easy);
  // Removes `easy` (finished or aborted); DoneFn is not called for it.
  void Remove(CURL* easy);

  // Must be called from CURLOPT_OPENSOCKETFUNCTION for each new socket: it
  // forgets stale state left by a descriptor number curl closed behind our
  // back (its threaded resolver's socketpair).
  void NoteSocketOpened(curl_socket_t fd);

 private:
  struct Sock;
  static int SocketCb(CURL* easy, curl_socket_t s, int what, void* userp,
                      void* socketp);
  static int TimerCb(CURLM* multi, long timeout_ms, void* userp);
  static int CloseSocketCb(void* clientp, curl_socket_t fd);

  void Watch(curl_socket_t fd, int what, void* socketp);
  void Arm(const std::shared_ptr<Sock>& sock, bool for_read);
  void Forget(curl_socket_t fd);
  void Action(curl_socket_t fd, int ev_bitmask);
  void DrainCompletions();

  boost::asio::io_context& io_;
  DoneFn done_;
  CURLM* multi_ = nullptr;
  boost::asio::steady_timer timer_;
  std::unordered_map<curl_socket_t, std::shared_ptr<Sock>> socks_;
  // Handlers capture a weak_ptr to this token: they do nothing once the
  // loop is gone, even if the io_context runs them later.
  std::shared_ptr<char> alive_ = std::make_shared<char>(0);
};

}  // namespace freshd::fetch

#endif  // FRESHD_FETCH_CURL_MULTI_LOOP_H_
