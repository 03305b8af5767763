// Fetcher throughput and client CPU per page, against nginx on loopback
// serving a real HTML corpus (python3-doc), politeness off.
//
// Starts its own nginx (temp config, free port, foreground, stopped at the
// end), then per run measures, over the same URL list at the same
// concurrency: (1) a bare curl-multi loop (curl_multi_poll, bodies kept in
// memory): the CPU reference; (2) HttpFetcher (Asio-driven multi, limits,
// SSRF guard, decoder); (3) Crawler (2 + politeness gate + per-host queues,
// robots off). Client CPU is getrusage(RUSAGE_SELF) user+sys, so nginx (a
// separate process) is not counted. Then `wrk` against the same nginx.
// Prints medians of --runs runs and the command to rerun.
//
// Usage: fetch_bench [--corpus DIR] [--runs N] [--pages N] [--concurrency C]

#include <curl/curl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "fetch/crawler.h"
#include "fetch/http_fetcher.h"

namespace {

namespace fs = std::filesystem;
using freshd::fetch::FetchResult;
using freshd::fetch::OutcomeClass;

double CpuSeconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
         ru.ru_stime.tv_usec / 1e6;
}

double WallSeconds() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Sample {
  double pages_per_s = 0;
  double cpu_us_per_page = 0;
  size_t ok = 0;
  uint64_t bytes = 0;
};

int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  socklen_t len = sizeof(a);
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  int port = ntohs(a.sin_port);
  close(fd);
  return port;
}

bool PortOpen(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
  close(fd);
  return ok;
}

pid_t StartNginx(const std::string& corpus, int port, const std::string& tmp) {
  std::string conf = tmp + "/nginx.conf";
  std::ofstream(conf)
      << "daemon off;\nmaster_process off;\nworker_processes 1;\n"
      << "error_log " << tmp << "/error.log;\npid " << tmp
      << "/nginx.pid;\nevents { worker_connections 4096; }\n"
      << "http {\n  access_log off;\n  include /etc/nginx/mime.types;\n"
      << "  client_body_temp_path " << tmp << "/body;\n"
      << "  proxy_temp_path " << tmp << "/proxy;\n"
      << "  fastcgi_temp_path " << tmp << "/fcgi;\n"
      << "  uwsgi_temp_path " << tmp << "/uwsgi;\n"
      << "  scgi_temp_path " << tmp << "/scgi;\n"
      << "  keepalive_requests 1000000;\n"
      << "  server {\n    listen 127.0.0.1:" << port << ";\n"
      << "    root " << corpus << ";\n  }\n}\n";
  pid_t pid = fork();
  if (pid == 0) {
    execlp("nginx", "nginx", "-p", tmp.c_str(), "-c", conf.c_str(),
           static_cast<char*>(nullptr));
    _exit(127);
  }
  for (int i = 0; i < 200 && !PortOpen(port); ++i) usleep(10000);
  return pid;
}

// ---- bare curl multi loop: the reference ----
struct Bare {
  std::string body;
};
size_t BareWrite(char* d, size_t s, size_t n, void* u) {
  static_cast<Bare*>(u)->body.append(d, s * n);
  return s * n;
}

Sample RunBare(const std::vector<std::string>& urls, int conc) {
  CURLM* m = curl_multi_init();
  curl_multi_setopt(m, CURLMOPT_MAX_TOTAL_CONNECTIONS, static_cast<long>(conc));
  size_t next = 0, ok = 0;
  uint64_t bytes = 0;
  std::vector<Bare> slots(urls.size());
  auto add = [&](size_t i) {
    CURL* e = curl_easy_init();
    curl_easy_setopt(e, CURLOPT_URL, urls[i].c_str());
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, BareWrite);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, &slots[i]);
    curl_easy_setopt(e, CURLOPT_PRIVATE, &slots[i]);
    curl_multi_add_handle(m, e);
  };
  double c0 = CpuSeconds(), w0 = WallSeconds();
  while (next < urls.size() && next < static_cast<size_t>(conc)) add(next++);
  int running = 1;
  while (running > 0) {
    curl_multi_perform(m, &running);
    int left;
    while (CURLMsg* msg = curl_multi_info_read(m, &left)) {
      if (msg->msg != CURLMSG_DONE) continue;
      long code = 0;
      curl_easy_getinfo(msg->easy_handle, CURLINFO_RESPONSE_CODE, &code);
      Bare* b = nullptr;
      curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &b);
      ok += msg->data.result == CURLE_OK && code == 200;
      bytes += b->body.size();
      b->body.clear();
      b->body.shrink_to_fit();
      curl_multi_remove_handle(m, msg->easy_handle);
      curl_easy_cleanup(msg->easy_handle);
      if (next < urls.size()) {
        add(next++);
        running = 1;
      }
    }
    if (running > 0) curl_multi_poll(m, nullptr, 0, 100, nullptr);
  }
  double c1 = CpuSeconds(), w1 = WallSeconds();
  curl_multi_cleanup(m);
  return {urls.size() / (w1 - w0), (c1 - c0) * 1e6 / urls.size(), ok, bytes};
}

freshd::fetch::FetcherOptions FetcherOpts(int conc) {
  freshd::fetch::FetcherOptions o;
  o.config.allow_private_networks = true;
  o.config.max_connections = conc;
  o.user_agent = "freshd-bench/0.1";
  return o;
}

// ---- HttpFetcher, keeping `conc` transfers in flight ----
Sample RunFetcher(const std::vector<std::string>& urls, int conc) {
  boost::asio::io_context io;
  auto f = freshd::fetch::HttpFetcher::Create(io, FetcherOpts(conc));
  size_t next = 0, ok = 0;
  uint64_t bytes = 0;
  std::function<void()> issue = [&] {
    if (next >= urls.size()) return;
    freshd::fetch::FetchRequest r;
    r.url = urls[next++];
    (*f)->Fetch(std::move(r), [&](FetchResult res) {
      ok += res.outcome == OutcomeClass::kOk;
      bytes += res.body.size();
      issue();
    });
  };
  double c0 = CpuSeconds(), w0 = WallSeconds();
  for (int i = 0; i < conc; ++i) issue();
  io.run();
  double c1 = CpuSeconds(), w1 = WallSeconds();
  return {urls.size() / (w1 - w0), (c1 - c0) * 1e6 / urls.size(), ok, bytes};
}

// ---- Crawler with politeness off (gate still consulted) ----
Sample RunCrawler(const std::vector<std::string>& urls, int conc) {
  boost::asio::io_context io;
  freshd::fetch::CrawlerOptions o;
  o.fetcher = FetcherOpts(conc);
  o.obey_robots = false;
  o.politeness.min_delay_s = 0;
  o.politeness.max_in_flight_per_host = conc;
  auto c = freshd::fetch::Crawler::Create(io, o);
  size_t next = 0, ok = 0;
  uint64_t bytes = 0;
  std::function<void()> issue = [&] {
    if (next >= urls.size()) return;
    freshd::fetch::CrawlRequest r;
    r.url = urls[next++];
    (*c)->Fetch(std::move(r), [&](FetchResult res) {
      ok += res.outcome == OutcomeClass::kOk;
      bytes += res.body.size();
      issue();
    });
  };
  double c0 = CpuSeconds(), w0 = WallSeconds();
  for (int i = 0; i < conc; ++i) issue();
  io.run();
  double c1 = CpuSeconds(), w1 = WallSeconds();
  return {urls.size() / (w1 - w0), (c1 - c0) * 1e6 / urls.size(), ok, bytes};
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::string corpus = "/usr/share/doc/python3/html";
  int runs = 5, pages = 3000, conc = 16;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--corpus")
      corpus = v;
    else if (k == "--runs")
      runs = std::stoi(v);
    else if (k == "--pages")
      pages = std::stoi(v);
    else if (k == "--concurrency")
      conc = std::stoi(v);
  }
  corpus = fs::canonical(corpus).string();
  std::vector<std::string> paths;
  for (const auto& e : fs::recursive_directory_iterator(corpus)) {
    if (e.is_regular_file() && e.path().extension() == ".html") {
      paths.push_back(fs::relative(e.path(), corpus).string());
    }
  }
  std::sort(paths.begin(), paths.end());
  if (paths.empty()) {
    std::fprintf(stderr,
                 "no .html files under %s (apt-get install python3-doc)\n",
                 corpus.c_str());
    return 2;
  }
  char tmpl[] = "/tmp/freshd-bench-nginx-XXXXXX";
  std::string tmp = mkdtemp(tmpl);
  int port = FreePort();
  pid_t nginx = StartNginx(corpus, port, tmp);
  if (!PortOpen(port)) {
    std::fprintf(stderr, "nginx did not start (see %s/error.log)\n",
                 tmp.c_str());
    return 1;
  }
  std::string base = "http://127.0.0.1:" + std::to_string(port) + "/";
  std::vector<std::string> urls;
  for (int i = 0; i < pages; ++i)
    urls.push_back(base + paths[i % paths.size()]);
  curl_global_init(CURL_GLOBAL_DEFAULT);

  std::vector<double> bare_ps, bare_cpu, f_ps, f_cpu, c_ps, c_cpu;
  for (int r = 0; r < runs; ++r) {
    Sample b = RunBare(urls, conc);
    Sample f = RunFetcher(urls, conc);
    Sample c = RunCrawler(urls, conc);
    std::printf(
        "run %d: bare %.0f p/s %.1f us/p (ok %zu) | fetcher %.0f p/s "
        "%.1f us/p (ok %zu) | crawler %.0f p/s %.1f us/p (ok %zu)\n",
        r, b.pages_per_s, b.cpu_us_per_page, b.ok, f.pages_per_s,
        f.cpu_us_per_page, f.ok, c.pages_per_s, c.cpu_us_per_page, c.ok);
    bare_ps.push_back(b.pages_per_s);
    bare_cpu.push_back(b.cpu_us_per_page);
    f_ps.push_back(f.pages_per_s);
    f_cpu.push_back(f.cpu_us_per_page);
    c_ps.push_back(c.pages_per_s);
    c_cpu.push_back(c.cpu_us_per_page);
  }
  std::printf(
      "corpus: %zu html files, %d fetches per run, concurrency %d, "
      "%d runs\n",
      paths.size(), pages, conc, runs);
  std::printf("median bare curl-multi: %.0f pages/s, %.1f client CPU us/page\n",
              Median(bare_ps), Median(bare_cpu));
  std::printf(
      "median HttpFetcher:     %.0f pages/s, %.1f client CPU us/page "
      "(%.2fx bare)\n",
      Median(f_ps), Median(f_cpu), Median(f_cpu) / Median(bare_cpu));
  std::printf(
      "median Crawler:         %.0f pages/s, %.1f client CPU us/page "
      "(%.2fx bare)\n",
      Median(c_ps), Median(c_cpu), Median(c_cpu) / Median(bare_cpu));
  std::fflush(stdout);
  // wrk against the same nginx, same concurrency, one page.
  std::string wrk = "wrk -t1 -c" + std::to_string(conc) + " -d3s " + base +
                    paths[paths.size() / 2] +
                    " 2>&1 | grep -E 'Requests/sec|Latency'";
  std::printf("wrk (%s):\n", paths[paths.size() / 2].c_str());
  std::fflush(stdout);
  if (std::system(wrk.c_str()) != 0) std::printf("  wrk not available\n");
  std::printf("rerun: %s --corpus %s --runs %d --pages %d --concurrency %d\n",
              argv[0], corpus.c_str(), runs, pages, conc);
  kill(nginx, SIGQUIT);
  waitpid(nginx, nullptr, 0);
  fs::remove_all(tmp);
  return 0;
}
