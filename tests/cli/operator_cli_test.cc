// freshd run as systemd and an operator see it, against `freshd testweb`:
// the sd_notify datagrams on a real unix socket (EXTEND_TIMEOUT_USEC while
// recovering, READY, STATUS, WATCHDOG from the network thread, RELOADING …
// READY around SIGHUP, STOPPING), journald "<N>" prefixes with the progress
// line and the first error of a class per host, every /metrics family
// (promtool-clean when promtool is installed), the status page's routes
// and headers, and the page itself rendered by headless Chromium (plots and
// tables in the DOM after its script ran, a screenshot that is not blank).

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <zlib.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "tests/cli/daemon_child.h"
#include "tests/cli/run_command.h"

namespace freshd {
namespace {

using testing::Child;
using testing::FreePort;
using testing::HttpGet;
using testing::HttpGetResponse;
using testing::Spawn;
using testing::Wait;

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// Pixels of an 8-bit RGB(A) non-interlaced PNG that differ from its top-left
// pixel (the page's background); -1 if the file is not such a PNG.
long ForegroundPixels(const std::string& png) {
  if (png.size() < 33 || png.compare(1, 3, "PNG") != 0) return -1;
  auto be32 = [&](size_t at) {
    return (uint32_t(uint8_t(png[at])) << 24) |
           (uint32_t(uint8_t(png[at + 1])) << 16) |
           (uint32_t(uint8_t(png[at + 2])) << 8) |
           uint32_t(uint8_t(png[at + 3]));
  };
  const uint32_t width = be32(16), height = be32(20);
  const int depth = png[24], color = png[25], interlace = png[28];
  if (depth != 8 || (color != 2 && color != 6) || interlace != 0) return -1;
  const size_t bpp = color == 6 ? 4 : 3;
  std::string idat;
  for (size_t at = 8; at + 8 <= png.size();) {
    const uint32_t len = be32(at);
    if (png.compare(at + 4, 4, "IDAT") == 0) idat += png.substr(at + 8, len);
    at += 12 + len;
  }
  const size_t stride = width * bpp;
  std::vector<uint8_t> raw((stride + 1) * height);
  uLongf raw_len = raw.size();
  if (uncompress(raw.data(), &raw_len,
                 reinterpret_cast<const Bytef*>(idat.data()),
                 idat.size()) != Z_OK ||
      raw_len != raw.size()) {
    return -1;
  }
  std::vector<uint8_t> img(stride * height), prior(stride, 0);
  for (size_t y = 0; y < height; ++y) {
    const uint8_t filter = raw[y * (stride + 1)];
    const uint8_t* in = &raw[y * (stride + 1) + 1];
    uint8_t* row = &img[y * stride];
    for (size_t x = 0; x < stride; ++x) {
      const int a = x >= bpp ? row[x - bpp] : 0, b = prior[x],
                c = x >= bpp ? prior[x - bpp] : 0;
      int p = in[x];
      switch (filter) {
        case 1:
          p += a;
          break;
        case 2:
          p += b;
          break;
        case 3:
          p += (a + b) / 2;
          break;
        case 4: {
          const int pa = std::abs(b - c), pb = std::abs(a - c),
                    pc = std::abs(a + b - 2 * c);
          p += (pa <= pb && pa <= pc) ? a : (pb <= pc ? b : c);
          break;
        }
        default:
          break;
      }
      row[x] = static_cast<uint8_t>(p);
    }
    std::copy(row, row + stride, prior.begin());
  }
  long differ = 0;
  for (size_t i = 0; i < img.size(); i += bpp) {
    if (img[i] != img[0] || img[i + 1] != img[1] || img[i + 2] != img[2]) {
      ++differ;
    }
  }
  return differ;
}

class OperatorCliTest : public testing::TestWebFixture {
 protected:
  void SetUp() override {
    TestWebFixture::SetUp();
    status_port_ = FreePort();
  }
  void TearDown() override {
    if (notify_fd_ >= 0) close(notify_fd_);
    TestWebFixture::TearDown();
  }

  std::string WriteConfig(double rate) {
    std::string path = (dir_ / "freshd.toml").string();
    std::ofstream f(path);
    f << "[crawler]\nseeds = \"" << (dir_ / "seeds.txt").string() << "\"\n"
      << "[budget]\nrate = " << rate << "\nburst = 2\n"
      << "[politeness]\nmin_delay = \"50ms\"\n"
      << "[fetch]\nallow_private_networks = true\n"
      << "resolve = { \"h0.test\" = \"127.0.0.1\", \"h1.test\" = "
         "\"127.0.0.1\" }\n"
      << "[store]\npath = \"" << (dir_ / "db").string() << "\"\nwarc_dir = \""
      << (dir_ / "warc").string() << "\"\n"
      << "[status]\nlisten = \"127.0.0.1:" << status_port_ << "\"\n"
      << "[log]\nlevel = \"info\"\nprogress = \"1s\"\n";
    std::ofstream seeds(dir_ / "seeds.txt");
    seeds << "http://h0.test:" << web_port_ << "/ 2\n"
          << "http://h1.test:" << web_port_ << "/\n"
          << "http://h1.test:" << web_port_ << "/no-such-page\n";
    return path;
  }

  // Binds the socket systemd would listen on; returns its path.
  std::string BindNotifySocket() {
    std::string path = (dir_ / "notify").string();
    notify_fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
    EXPECT_EQ(bind(notify_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr),
              0);
    timeval tv{0, 200000};
    setsockopt(notify_fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return path;
  }

  // Reads datagrams into notes_ until one satisfies `done` or `timeout_s`.
  bool NoteUntil(const std::function<bool(const std::string&)>& done,
                 double timeout_s) {
    auto deadline = std::chrono::steady_clock::now() +
                    std::chrono::milliseconds(int(timeout_s * 1000));
    while (std::chrono::steady_clock::now() < deadline) {
      char buf[4096];
      ssize_t n = recv(notify_fd_, buf, sizeof buf, 0);
      if (n <= 0) continue;
      notes_.emplace_back(buf, n);
      if (done(notes_.back())) return true;
    }
    return false;
  }

  int notify_fd_ = -1;
  std::vector<std::string> notes_;
};

auto Is(const std::string& state) {
  return [state](const std::string& s) { return s == state; };
}
auto Starts(const std::string& prefix) {
  return [prefix](const std::string& s) { return s.rfind(prefix, 0) == 0; };
}

TEST_F(OperatorCliTest, TalksToSystemdAndTheJournalAndExportsEveryFamily) {
  const std::string config = WriteConfig(20);
  const std::string err = (dir_ / "run.err").string();
  const std::string notify = BindNotifySocket();
  Child run = Spawn({"run", "--config", config}, err,
                    {{"NOTIFY_SOCKET", notify}, {"WATCHDOG_USEC", "400000"}},
                    /*journal_stderr=*/true);
  ASSERT_TRUE(NoteUntil(Is("READY=1"), 20)) << Slurp(err);
  ASSERT_TRUE(Starts("EXTEND_TIMEOUT_USEC=")(notes_.front())) << notes_[0];
  ASSERT_TRUE(NoteUntil(Is("WATCHDOG=1"), 5));
  ASSERT_TRUE(NoteUntil(Starts("STATUS="), 15));
  EXPECT_TRUE(Contains(notes_.back(), " pages/s, est. freshness "))
      << notes_.back();
  nlohmann::json s = StatusWhen(
      [](const nlohmann::json& j) {
        return j["pages_fetched_total"] >= 15 && j["errors"].contains("4xx");
      },
      30);
  ASSERT_GE(s["pages_fetched_total"].get<int>(), 15) << s.dump();

  // SIGHUP: RELOADING=1 (with the monotonic time), then READY=1 again.
  notes_.clear();
  ASSERT_EQ(kill(run.pid, SIGHUP), 0);
  ASSERT_TRUE(NoteUntil(Starts("RELOADING=1\nMONOTONIC_USEC="), 10));
  ASSERT_TRUE(NoteUntil(Is("READY=1"), 10));

  // Every family an operator expects.
  const std::string metrics = HttpGet(status_port_, "/metrics");
  for (const char* family :
       {"freshd_fetch_duration_seconds_bucket{le=\"0.005\"} ",
        "freshd_fetch_duration_seconds_count ",
        "freshd_fetched_bytes_total ",
        "freshd_http_responses_total{code=\"200\"} ",
        "freshd_http_responses_total{code=\"404\"} ",
        "freshd_fetch_outcomes_total{class=\"dns\"} 0",
        "freshd_fetch_outcomes_total{class=\"tls\"} 0",
        "freshd_fetch_outcomes_total{class=\"network\"} 0",
        "freshd_fetch_outcomes_total{class=\"robots-denied\"} ",
        "freshd_fetch_outcomes_total{class=\"4xx\"} ",
        "freshd_in_flight_fetches ",
        "freshd_fetches_on_network ",
        "freshd_hosts_backoff ",
        "freshd_store_bytes ",
        "freshd_store_files ",
        "freshd_warc_bytes ",
        "freshd_warc_files ",
        "freshd_warc_records_total ",
        "freshd_warc_deduplicated_total ",
        "freshd_store_errors_total ",
        "freshd_parse_queue ",
        "freshd_parse_queue_bytes ",
        "freshd_write_queue ",
        "freshd_write_queue_bytes ",
        "freshd_loop_lag_max_seconds ",
        "freshd_scheduler_lag_max_seconds ",
        "process_cpu_seconds_total ",
        "process_resident_memory_bytes ",
        "process_open_fds ",
        "process_max_fds ",
        "process_start_time_seconds ",
        "freshd_build_info{version=\""}) {
    EXPECT_TRUE(Contains(metrics, std::string("\n") + family)) << family << "\n"
                                                               << metrics;
  }
  // The metrics page's table (docs/metrics.md) lists every family.
  const std::string readme = Slurp(FRESHD_SOURCE_DIR "/docs/metrics.md");
  for (size_t at = metrics.find("# TYPE "); at != std::string::npos;
       at = metrics.find("# TYPE ", at + 1)) {
    const size_t from = at + 7;
    const std::string name =
        metrics.substr(from, metrics.find(' ', from) - from);
    EXPECT_TRUE(Contains(readme, "`" + name + "`") ||
                Contains(readme, "`" + name + "{"))
        << name << " is not in docs/metrics.md";
  }
  // The store and the WARC directory hold something by now.
  EXPECT_FALSE(Contains(metrics, "\nfreshd_store_files 0\n")) << metrics;
  if (std::filesystem::exists("/usr/bin/promtool")) {
    const std::string file = (dir_ / "metrics.txt").string();
    std::ofstream(file) << metrics;
    const int rc = std::system(("promtool check metrics < " + file + " > " +
                                (dir_ / "promtool.out").string() + " 2>&1")
                                   .c_str());
    EXPECT_EQ(rc, 0) << Slurp((dir_ / "promtool.out").string());
  }

  // The status page's routes.
  const std::string page = HttpGetResponse(status_port_, "/");
  EXPECT_TRUE(Contains(page, "HTTP/1.1 200")) << page.substr(0, 300);
  EXPECT_TRUE(Contains(page, "Content-Type: text/html"));
  EXPECT_TRUE(Contains(page,
                       "Content-Security-Policy: default-src 'none'; "
                       "script-src 'self'"));
  EXPECT_TRUE(Contains(page, "id=\"plot-rate\""));
  EXPECT_TRUE(Contains(HttpGetResponse(status_port_, "/ui/status.js"),
                       "function plot("));
  nlohmann::json hosts =
      nlohmann::json::parse(HttpGet(status_port_, "/hosts?sort=host&limit=1"));
  EXPECT_EQ(hosts["total"], 2);
  ASSERT_EQ(hosts["hosts"].size(), 1u);
  const std::string port = ":" + std::to_string(web_port_);
  EXPECT_EQ(hosts["hosts"][0]["host"], "h0.test" + port);
  hosts = nlohmann::json::parse(
      HttpGet(status_port_, "/hosts?sort=host&offset=1&limit=5"));
  ASSERT_EQ(hosts["hosts"].size(), 1u);
  EXPECT_EQ(hosts["hosts"][0]["host"], "h1.test" + port);
  EXPECT_GE(hosts["hosts"][0]["errors"].get<int>(), 1);
  EXPECT_EQ(hosts["hosts"][0]["error_classes"][0], "4xx");
  EXPECT_GT(hosts["hosts"][0]["pages"].get<int>(), 1);
  EXPECT_TRUE(Contains(HttpGetResponse(status_port_, "/hosts?limit=501"),
                       "HTTP/1.1 400"));
  EXPECT_TRUE(Contains(HttpGetResponse(status_port_, "/hosts?sort=bogus"),
                       "HTTP/1.1 400"));
  nlohmann::json history =
      nlohmann::json::parse(HttpGet(status_port_, "/history"));
  EXPECT_GE(history["points"].size(), 2u);
  EXPECT_EQ(history["points"][0][1], 20.0);  // the target rate
  nlohmann::json overview =
      nlohmann::json::parse(HttpGet(status_port_, "/overview"));
  EXPECT_FALSE(overview["recent_fetches"].empty());
  EXPECT_FALSE(overview["due_next"].empty());
  EXPECT_EQ(overview["errors"]["dns"], 0);

  ASSERT_EQ(kill(run.pid, SIGTERM), 0);
  EXPECT_TRUE(NoteUntil(Is("STOPPING=1"), 15));
  EXPECT_EQ(Wait(run), 0) << Slurp(err);

  // The journal's view: every line opens with its priority, no time stamp.
  const std::string log = Slurp(err);
  size_t at = 0;
  int lines = 0;
  while (at < log.size()) {
    size_t end = log.find('\n', at);
    std::string line = log.substr(at, end - at);
    EXPECT_TRUE(line.size() > 3 && line[0] == '<' && line[2] == '>' &&
                line[1] >= '0' && line[1] <= '7')
        << line;
    ++lines;
    at = end == std::string::npos ? log.size() : end + 1;
  }
  EXPECT_GT(lines, 3);
  EXPECT_TRUE(Contains(log, "<6>progress: ")) << log;
  EXPECT_TRUE(Contains(
      log, "<4>host h1.test" + port + ": first 4xx error: http://h1.test:"))
      << log;
  EXPECT_TRUE(Contains(log, "/no-such-page HTTP 404")) << log;
}

TEST_F(OperatorCliTest, StatusPageRendersInHeadlessChromium) {
  // Not a skip: a machine without chromium cannot show the page renders.
  ASSERT_TRUE(std::filesystem::exists("/usr/bin/chromium"))
      << "chromium is not installed (scripts/install-deps.sh installs it)";
  const std::string config = WriteConfig(20);
  const std::string err = (dir_ / "run.err").string();
  Child run = Spawn({"run", "--config", config}, err);
  nlohmann::json s = StatusWhen(
      [](const nlohmann::json& j) { return j["pages_fetched_total"] >= 20; },
      30);
  ASSERT_GE(s["pages_fetched_total"].get<int>(), 20) << s.dump();
  // An operator control, shown in its table (freshd ctl, POST /control).
  const testing::CommandResult paused =
      testing::RunFreshd({"ctl", "pause", "h1.test", "--config", config});
  ASSERT_EQ(paused.exit_code, 0) << paused.err;
  const std::string url =
      "http://127.0.0.1:" + std::to_string(status_port_) + "/";
  const std::string chromium =
      "chromium --headless --no-sandbox --disable-gpu --no-first-run "
      "--user-data-dir=" +
      (dir_ / "chromium").string() + " --virtual-time-budget=4000 ";
  const std::string dom_file = (dir_ / "dom.html").string();
  int rc = std::system((chromium + "--dump-dom " + url + " > " + dom_file +
                        " 2> " + (dir_ / "chromium.err").string())
                           .c_str());
  ASSERT_EQ(rc, 0) << Slurp((dir_ / "chromium.err").string());
  const std::string dom = Slurp(dom_file);
  EXPECT_TRUE(Contains(dom, "data-rendered=\"1\"")) << dom;
  EXPECT_TRUE(Contains(dom, "<polyline class=\"series target\"")) << dom;
  EXPECT_TRUE(Contains(dom, "<polyline class=\"series actual\"")) << dom;
  EXPECT_TRUE(Contains(dom, "<polyline class=\"series fresh\"")) << dom;
  const std::string port = ":" + std::to_string(web_port_);
  EXPECT_TRUE(Contains(dom, "<td>h0.test" + port + "</td>")) << dom;
  EXPECT_TRUE(Contains(dom, "<td>h1.test" + port + "</td>")) << dom;
  EXPECT_TRUE(Contains(dom, "est. freshness")) << dom;
  EXPECT_TRUE(Contains(dom,
                       "<td>host</td><td class=\"url\" "
                       "title=\"h1.test\">h1.test</td><td>pause</td>"))
      << dom;
  EXPECT_FALSE(Contains(dom, "cannot reach the daemon")) << dom;
  // A never-fetched page due next reads "new", never the new-page value.
  EXPECT_FALSE(Contains(dom, ">86,400<")) << dom;

  const std::string png = (dir_ / "status.png").string();
  rc = std::system((chromium + "--window-size=1280,1400 --screenshot=" + png +
                    " " + url + " > /dev/null 2>> " +
                    (dir_ / "chromium.err").string())
                       .c_str());
  ASSERT_EQ(rc, 0) << Slurp((dir_ / "chromium.err").string());
  const long foreground = ForegroundPixels(Slurp(png));
  // Text, plots and tables: well over 1% of the 1280×1400 shot.
  EXPECT_GT(foreground, 1280L * 1400 / 100) << foreground;
  if (const char* keep = std::getenv("FRESHD_KEEP_SCREENSHOT")) {
    std::filesystem::copy_file(
        png, keep, std::filesystem::copy_options::overwrite_existing);
  }
  ASSERT_EQ(kill(run.pid, SIGTERM), 0);
  EXPECT_EQ(Wait(run), 0) << Slurp(err);
}

}  // namespace
}  // namespace freshd
