#include "fetch/http_fetcher.h"

#include <curl/curl.h>

#include <algorithm>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <deque>
#include <list>
#include <unordered_map>
#include <unordered_set>

#include "fetch/address_guard.h"
#include "fetch/curl_multi_loop.h"
#include "fetch/easy_setup.h"
#include "fetch/http_text.h"
#include "fetch/response_reader.h"
#include "fetch/transfer.h"
#include "fetch/transfer_result.h"

namespace freshd::fetch {

namespace asio = boost::asio;

namespace {

struct OnceInit {
  OnceInit() { curl_global_init(CURL_GLOBAL_DEFAULT); }
};

// Multi handles open at once: the newest and those finishing their
// transfers, each with up to max_connections connections (file
// descriptors). At the cap the newest serves on past its origin limit.
constexpr size_t kMaxMultiHandles = 4;

}  // namespace

// Owns the transfers in flight and drives them: starts them on the newest
// multi loop, runs the low-speed check, and reports each exactly once.
class HttpFetcher::Impl {
 public:
  Impl(asio::io_context& io, FetcherOptions options, ProxyRoutes proxies,
       OriginCredentials credentials)
      : io_(io),
        options_(std::move(options)),
        guard_(options_.config.allow_private_networks,
               options_.exempt_endpoints),
        proxies_(std::move(proxies)),
        credentials_(std::move(credentials)) {
    env_.options = &options_;
    env_.guard = &guard_;
    env_.proxies = &proxies_;
    env_.credentials = &credentials_;
    env_.note_socket_opened = [this](curl_socket_t fd) {
      for (Multi& m : multis_) m.loop->NoteSocketOpened(fd);
    };
    env_.schedule_decode = [this](uint64_t id) { ScheduleDecode(id); };
    for (const std::string& t : options_.config.content_types) {
      env_.accepted_types.push_back(AsciiLowerCopy(t));
    }
    OpenMulti();
  }

  ~Impl() {
    for (auto& [id, t] : transfers_) {
      if (t->on_curl) t->loop->Remove(t->easy);
      t->Cleanup();
    }
    transfers_.clear();
  }

  bool ok() const { return !multis_.empty(); }
  size_t in_flight() const { return transfers_.size(); }
  size_t running() const { return running_; }
  size_t multi_handles() const { return multis_.size(); }
  uint64_t multi_handles_opened() const { return multis_opened_; }
  const FetcherOptions& options() const { return options_; }

  void Fetch(FetchRequest request, Callback done);

 private:
  // One curl multi handle and how many transfers run on it.
  struct Multi {
    std::unique_ptr<CurlMultiLoop> loop;
    size_t running = 0;
  };

  // Opens a multi handle that takes the transfers from now on; false (and
  // the newest one keeps serving) if curl cannot make one.
  bool OpenMulti();
  // The loop for a transfer to `origin`: the newest, after opening another
  // when `origin` would be one too many for it.
  CurlMultiLoop* LoopFor(const std::string& origin);
  Multi& MultiOf(const CurlMultiLoop* loop);
  // Posts a turn that closes the older multi handles with nothing running
  // (never from inside one of their own callbacks).
  void ScheduleCloseRetired();
  // Hands waiting transfers to curl while fewer than max_running_ run.
  void StartWaiting();
  // Takes `t` off curl (if on it); a waiting transfer may start then.
  void RemoveFromCurl(Transfer& t);
  void ArmSpeedCheck(Transfer& t);
  void ScheduleDecode(uint64_t id);
  void OnDone(CURL* easy, CURLcode code);
  void Finish(uint64_t id, CURLcode code);
  void Fail(Callback done, FetchResult r);
  // Through a proxy: the target's address from [fetch] resolve, an IP
  // literal or an async lookup, then PinChecked.
  void ResolveForProxy(uint64_t id, const TargetParts& target);
  // Pins the first of `ips` the SSRF guard allows and queues the transfer;
  // none allowed: kBlockedAddress.
  void PinChecked(uint64_t id, const TargetParts& target,
                  const std::vector<std::string>& ips);
  // Reports a transfer not yet on curl as failed.
  void FailTransfer(uint64_t id, OutcomeClass c, std::string detail);

  asio::io_context& io_;
  const FetcherOptions options_;
  const AddressGuard guard_;
  const ProxyRoutes proxies_;
  const OriginCredentials credentials_;
  asio::ip::tcp::resolver resolver_{io_};
  TransferEnv env_;
  uint64_t next_id_ = 1;
  std::unordered_map<uint64_t, std::unique_ptr<Transfer>> transfers_;
  std::deque<uint64_t> waiting_;  // ids set up, not yet handed to curl
  size_t running_ = 0;            // transfers on curl
  const size_t max_running_ =
      static_cast<size_t>(std::max(1, options_.config.max_connections));
  bool start_posted_ = false;
  bool close_posted_ = false;
  std::unordered_set<std::string> origins_on_newest_;
  uint64_t multis_opened_ = 0;
  std::shared_ptr<char> alive_ = std::make_shared<char>(0);
  // Newest last. Last member: destroyed first, while transfers_ is valid.
  std::list<Multi> multis_;
};

bool HttpFetcher::Impl::OpenMulti() {
  origins_on_newest_.clear();
  auto loop = std::make_unique<CurlMultiLoop>(
      io_, [this](CURL* easy, CURLcode code) { OnDone(easy, code); });
  if (!loop->ok()) return false;
  const long max_conn = static_cast<long>(max_running_);
  curl_multi_setopt(loop->multi(), CURLMOPT_MAX_TOTAL_CONNECTIONS, max_conn);
  curl_multi_setopt(loop->multi(), CURLMOPT_MAXCONNECTS, max_conn);
  curl_multi_setopt(loop->multi(), CURLMOPT_PIPELINING,
                    static_cast<long>(CURLPIPE_MULTIPLEX));
  multis_.push_back(Multi{std::move(loop), 0});
  ++multis_opened_;
  return true;
}

CurlMultiLoop* HttpFetcher::Impl::LoopFor(const std::string& origin) {
  const size_t limit = options_.origins_per_multi_handle;
  if (limit > 0 && !origins_on_newest_.contains(origin) &&
      origins_on_newest_.size() >= limit && multis_.size() < kMaxMultiHandles &&
      OpenMulti()) {
    ScheduleCloseRetired();  // the one before may have nothing running
  }
  origins_on_newest_.insert(origin);
  return multis_.back().loop.get();
}

HttpFetcher::Impl::Multi& HttpFetcher::Impl::MultiOf(
    const CurlMultiLoop* loop) {
  auto it =
      std::find_if(multis_.begin(), multis_.end(),
                   [loop](const Multi& m) { return m.loop.get() == loop; });
  return *it;  // every loop a transfer is on is in multis_
}

void HttpFetcher::Impl::ScheduleCloseRetired() {
  if (close_posted_) return;
  close_posted_ = true;
  std::weak_ptr<char> alive = alive_;
  asio::post(io_, [this, alive] {
    if (alive.expired()) return;
    close_posted_ = false;
    const Multi* newest = &multis_.back();
    multis_.remove_if(
        [newest](const Multi& m) { return &m != newest && m.running == 0; });
  });
}

void HttpFetcher::Impl::Fail(Callback done, FetchResult r) {
  std::weak_ptr<char> alive = alive_;
  asio::post(io_, [alive, done = std::move(done), r = std::move(r)]() mutable {
    if (!alive.expired()) done(std::move(r));
  });
}

void HttpFetcher::Impl::Fetch(FetchRequest request, Callback done) {
  FetchResult r;
  r.url = request.url;
  r.final_url = request.url;
  TargetParts target;
  if (!ParseTarget(request.url, &target, &r.detail)) {
    r.outcome = OutcomeClass::kBadUrl;
    Fail(std::move(done), std::move(r));
    return;
  }
  auto t = std::make_unique<Transfer>();
  t->env = &env_;
  t->id = next_id_++;
  t->origin = target.scheme + "://" + target.host + ":" + target.port;
  t->req = std::move(request);
  t->max_body = t->req.max_body_bytes.value_or(options_.config.max_body_bytes);
  t->proxy = proxies_.For(target.host);
  if (!SetUpEasy(t.get(), target)) {
    r.outcome = OutcomeClass::kNetwork;
    r.detail = "curl_easy_init failed";
    Fail(std::move(done), std::move(r));
    return;
  }
  t->done = std::move(done);
  t->result = std::move(r);
  const uint64_t id = t->id;
  const bool proxied = !t->proxy.empty();
  transfers_.emplace(id, std::move(t));
  if (proxied) {
    ResolveForProxy(id, target);
    return;
  }
  waiting_.push_back(id);
  StartWaiting();
}

void HttpFetcher::Impl::ResolveForProxy(uint64_t id,
                                        const TargetParts& target) {
  std::string name = target.host;
  if (name.size() > 2 && name.front() == '[' && name.back() == ']') {
    name = name.substr(1, name.size() - 2);
  }
  auto fixed = options_.config.resolve.find(target.host);
  boost::system::error_code ec;
  asio::ip::make_address(name, ec);
  if (fixed != options_.config.resolve.end() || !ec) {
    std::string ip =
        fixed != options_.config.resolve.end() ? fixed->second : name;
    if (ip.size() > 2 && ip.front() == '[') ip = ip.substr(1, ip.size() - 2);
    PinChecked(id, target, {ip});
    return;
  }
  std::weak_ptr<char> alive = alive_;
  resolver_.async_resolve(
      name, target.port,
      [this, alive, id, target, name](
          const boost::system::error_code& error,
          const asio::ip::tcp::resolver::results_type& results) {
        if (alive.expired()) return;
        if (error) {
          FailTransfer(id, OutcomeClass::kDns,
                       "could not resolve host: " + name);
          return;
        }
        std::vector<std::string> ips;
        for (const auto& entry : results) {
          ips.push_back(entry.endpoint().address().to_string());
        }
        PinChecked(id, target, ips);
      });
}

void HttpFetcher::Impl::PinChecked(uint64_t id, const TargetParts& target,
                                   const std::vector<std::string>& ips) {
  auto it = transfers_.find(id);
  if (it == transfers_.end()) return;
  const auto port = static_cast<unsigned short>(std::stoi(target.port));
  std::string refused;
  for (const std::string& ip : ips) {
    boost::system::error_code ec;
    const asio::ip::address address = asio::ip::make_address(ip, ec);
    if (ec) continue;
    const asio::ip::tcp::endpoint endpoint(address, port);
    if (guard_.Allows(endpoint.data(), endpoint.size())) {
      PinTarget(it->second.get(), target, ip);
      waiting_.push_back(id);
      StartWaiting();
      return;
    }
    if (refused.empty()) {
      refused = FormatSocketAddress(endpoint.data(), endpoint.size());
    }
  }
  FailTransfer(id, OutcomeClass::kBlockedAddress,
               refused.empty()
                   ? "no usable address for " + target.host
                   : "refused to connect to non-public address " + refused +
                         " ([fetch] allow_private_networks = false)");
}

void HttpFetcher::Impl::FailTransfer(uint64_t id, OutcomeClass c,
                                     std::string detail) {
  auto it = transfers_.find(id);
  if (it == transfers_.end()) return;
  FetchResult r = std::move(it->second->result);
  Callback done = std::move(it->second->done);
  transfers_.erase(it);  // not on curl: ~Transfer cleans up
  r.outcome = c;
  r.detail = std::move(detail);
  Fail(std::move(done), std::move(r));
}

void HttpFetcher::Impl::StartWaiting() {
  while (running_ < max_running_ && !waiting_.empty()) {
    const uint64_t id = waiting_.front();
    waiting_.pop_front();
    auto it = transfers_.find(id);
    if (it == transfers_.end()) continue;
    Transfer* raw = it->second.get();
    raw->start = std::chrono::steady_clock::now();
    CurlMultiLoop* loop = LoopFor(raw->origin);
    if (loop->Add(raw->easy) != CURLM_OK) {
      FetchResult fr = std::move(raw->result);
      Callback cb = std::move(raw->done);
      transfers_.erase(it);  // ~Transfer cleans up
      fr.outcome = OutcomeClass::kNetwork;
      fr.detail = "curl_multi_add_handle failed";
      Fail(std::move(cb), std::move(fr));
      continue;
    }
    raw->on_curl = true;
    raw->loop = loop;
    ++running_;
    ++MultiOf(loop).running;
    ArmSpeedCheck(*raw);
  }
}

void HttpFetcher::Impl::RemoveFromCurl(Transfer& t) {
  if (!t.on_curl) return;
  t.loop->Remove(t.easy);
  Multi& multi = MultiOf(t.loop);
  if (--multi.running == 0 && &multi != &multis_.back()) {
    ScheduleCloseRetired();
  }
  t.on_curl = false;
  t.loop = nullptr;
  --running_;
  if (waiting_.empty() || start_posted_) return;
  // Not from here: this may run inside the loop's completion handling.
  start_posted_ = true;
  std::weak_ptr<char> alive = alive_;
  asio::post(io_, [this, alive] {
    if (alive.expired()) return;
    start_posted_ = false;
    StartWaiting();
  });
}

// Our low-speed limit: curl's LOW_SPEED_TIME is whole seconds, so a timer
// checks the bytes received per low_speed_time_s window instead.
void HttpFetcher::Impl::ArmSpeedCheck(Transfer& t) {
  const FetchConfig& c = options_.config;
  if (c.low_speed_bytes == 0 || c.low_speed_time_s <= 0) return;
  if (!t.speed_timer) t.speed_timer = std::make_unique<asio::steady_timer>(io_);
  t.window_bytes = 0;
  t.speed_timer->expires_after(std::chrono::microseconds(
      static_cast<int64_t>(c.low_speed_time_s * 1e6)));
  std::weak_ptr<char> alive = alive_;
  uint64_t id = t.id;
  t.speed_timer->async_wait([this, alive, id](boost::system::error_code ec) {
    if (alive.expired() || ec) return;
    auto it = transfers_.find(id);
    if (it == transfers_.end()) return;
    Transfer& tr = *it->second;
    if (tr.curl_done) return;  // only decoding is left
    const FetchConfig& cfg = options_.config;
    double need =
        static_cast<double>(cfg.low_speed_bytes) * cfg.low_speed_time_s;
    if (static_cast<double>(tr.window_bytes) < need) {
      tr.abort = Abort::kLowSpeed;
      RemoveFromCurl(tr);
      Finish(id, CURLE_OPERATION_TIMEDOUT);
      return;
    }
    ArmSpeedCheck(tr);
  });
}

// A decode turn: the held-back body of a compressed response is decoded a
// slice per turn (response_reader.h), then, if curl has finished meanwhile,
// the transfer is reported.
void HttpFetcher::Impl::ScheduleDecode(uint64_t id) {
  std::weak_ptr<char> alive = alive_;
  asio::post(io_, [this, alive, id] {
    if (alive.expired()) return;
    auto it = transfers_.find(id);
    if (it == transfers_.end()) return;
    Transfer& t = *it->second;
    if (!DecodeMore(t)) {
      // Refused (decoded size cap, corrupt stream): stop the transfer.
      if (!t.curl_done) RemoveFromCurl(t);
      Finish(id, t.curl_done ? t.curl_code : CURLE_WRITE_ERROR);
      return;
    }
    if (t.curl_done && !t.decode_scheduled) Finish(id, t.curl_code);
  });
}

void HttpFetcher::Impl::OnDone(CURL* easy, CURLcode code) {
  Transfer* t = nullptr;
  curl_easy_getinfo(easy, CURLINFO_PRIVATE, &t);
  if (t == nullptr) return;
  RemoveFromCurl(*t);
  if (t->decode_scheduled) {  // the body is still being decoded
    t->curl_done = true;
    t->curl_code = code;
    if (t->speed_timer) t->speed_timer->cancel();
    return;
  }
  Finish(t->id, code);
}

void HttpFetcher::Impl::Finish(uint64_t id, CURLcode code) {
  auto it = transfers_.find(id);
  if (it == transfers_.end()) return;
  std::unique_ptr<Transfer> t = std::move(it->second);
  transfers_.erase(it);
  FetchResult r = TakeResult(t.get(), code);
  Callback done = std::move(t->done);
  t->Cleanup();
  done(std::move(r));
}

// ---- public shell ----

HttpFetcher::HttpFetcher(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpFetcher::~HttpFetcher() = default;

Result<std::unique_ptr<HttpFetcher>> HttpFetcher::Create(
    asio::io_context& io, FetcherOptions options) {
  static const OnceInit once;  // curl_global_init is not thread-safe itself
  (void)once;
  Result<ProxyRoutes> proxies =
      ProxyRoutes::Create(options.config, options.host_proxies);
  if (!proxies.ok()) return proxies.status();
  Result<OriginCredentials> credentials = OriginCredentials::Create(
      options.origin_rules, options.credentials_directory);
  if (!credentials.ok()) return credentials.status();
  auto impl =
      std::make_unique<Impl>(io, std::move(options), std::move(proxies).value(),
                             std::move(credentials).value());
  if (!impl->ok()) return Status::Internal("curl_multi_init failed");
  return std::unique_ptr<HttpFetcher>(new HttpFetcher(std::move(impl)));
}

void HttpFetcher::Fetch(FetchRequest request, Callback done) {
  impl_->Fetch(std::move(request), std::move(done));
}

size_t HttpFetcher::in_flight() const { return impl_->in_flight(); }

size_t HttpFetcher::running() const { return impl_->running(); }

size_t HttpFetcher::multi_handles() const { return impl_->multi_handles(); }

uint64_t HttpFetcher::multi_handles_opened() const {
  return impl_->multi_handles_opened();
}

const FetcherOptions& HttpFetcher::options() const { return impl_->options(); }

}  // namespace freshd::fetch
