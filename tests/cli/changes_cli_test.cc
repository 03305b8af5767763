// The change feed end to end: `freshd run` crawls `freshd testweb` on
// loopback while `freshd changes --follow` tails GET /changes; both are
// SIGKILLed at random moments (fixed seed) and restarted, the consumer from
// the last cursor it printed. At the end the consumer has seen every event
// the store holds exactly once, in order (seq 1, 2, 3, ...), and for every
// page the store holds with content, the last event it saw for that URL
// carries the page's text hash: a committed page and its event agree.
// Also: the endpoint's bounds and errors, and a long poll that returns when
// an event arrives.

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "store/page_store.h"
#include "tests/cli/run_command.h"

namespace freshd {
namespace {

using testing::FreePort;
using testing::HttpGetStatus;

// Starts FRESHD_BINARY with `args`, stdout to `out` (or a pipe if empty),
// stderr to `err`.
pid_t Spawn(const std::vector<std::string>& args, const std::string& out,
            const std::string& err, FILE** pipe_out = nullptr) {
  int fds[2] = {-1, -1};
  if (pipe_out != nullptr && pipe(fds) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    if (pipe_out != nullptr) {
      dup2(fds[1], 1);
      close(fds[0]);
    } else {
      FILE* o = std::fopen(out.c_str(), "w");
      if (o != nullptr) dup2(fileno(o), 1);
    }
    FILE* e = std::fopen(err.c_str(), "a");
    if (e != nullptr) dup2(fileno(e), 2);
    std::vector<char*> argv{const_cast<char*>(FRESHD_BINARY)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(FRESHD_BINARY, argv.data());
    _exit(127);
  }
  if (pipe_out != nullptr) {
    close(fds[1]);
    *pipe_out = fdopen(fds[0], "r");
  }
  return pid;
}

int KillAndWait(pid_t pid, int sig) {
  kill(pid, sig);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// The complete lines of `text` (a killed writer may leave half a line).
std::vector<nlohmann::json> CompleteLines(const std::string& text) {
  std::vector<nlohmann::json> lines;
  size_t pos = 0;
  for (size_t nl; (nl = text.find('\n', pos)) != std::string::npos;
       pos = nl + 1) {
    auto j = nlohmann::json::parse(text.substr(pos, nl - pos), nullptr, false);
    if (!j.is_discarded()) lines.push_back(j);
  }
  return lines;
}

class ChangesCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("changes_cli_test_" + std::to_string(getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    FILE* out = nullptr;
    web_ = Spawn(
        {"testweb", "--web", FRESHD_SOURCE_DIR "/sim/webs/noisy-small.toml",
         "--listen", "127.0.0.1:0", "--day-seconds", "1"},
        "", (dir_ / "testweb.err").string(), &out);
    char line[1024] = {};
    ASSERT_NE(std::fgets(line, sizeof line, out), nullptr);
    std::fclose(out);
    web_port_ = nlohmann::json::parse(line)["port"].get<uint16_t>();
    status_port_ = FreePort();
    config_ = (dir_ / "freshd.toml").string();
    std::ofstream f(config_);
    f << "[crawler]\nseeds = \"" << (dir_ / "seeds.txt").string() << "\"\n"
      << "[budget]\nrate = 100\nburst = 10\n"
      << "[sched]\npolicy = \"uniform\"\nmin_interval = \"1s\"\n"
      << "[politeness]\nmin_delay = \"10ms\"\n"
      << "[fetch]\nallow_private_networks = true\n"
      << "resolve = { \"h0.test\" = \"127.0.0.1\", \"h1.test\" = "
         "\"127.0.0.1\" }\n"
      << "[store]\npath = \"" << (dir_ / "db").string() << "\"\n"
      << "warc_dir = \"" << (dir_ / "warc").string() << "\"\n"
      << "[status]\nlisten = \"127.0.0.1:" << status_port_ << "\"\n";
    std::ofstream seeds(dir_ / "seeds.txt");
    seeds << "http://h0.test:" << web_port_ << "/\n"
          << "http://h1.test:" << web_port_ << "/\n";
  }
  void TearDown() override {
    if (daemon_ > 0) KillAndWait(daemon_, SIGKILL);
    if (consumer_ > 0) KillAndWait(consumer_, SIGKILL);
    if (web_ > 0) KillAndWait(web_, SIGTERM);
    std::filesystem::remove_all(dir_);
  }

  void StartDaemon() {
    daemon_ = Spawn({"run", "--config", config_}, "/dev/null",
                    (dir_ / "run.err").string());
  }
  bool WaitForStatus(double timeout_s) {
    auto deadline = std::chrono::steady_clock::now() +
                    std::chrono::milliseconds(int(timeout_s * 1000));
    while (std::chrono::steady_clock::now() < deadline) {
      // 200 from the start; ready once no longer "recovering".
      auto [code, body] = HttpGetStatus(status_port_, "/status");
      const nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
      if (code == 200 && j.is_object() && j.value("state", "") == "running") {
        return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }
  void StartConsumer(uint64_t since) {
    consumer_out_ =
        (dir_ / ("consumer" + std::to_string(++consumers_) + ".out")).string();
    consumer_ = Spawn({"changes", "--config", config_, "--follow", "--since",
                       std::to_string(since), "--wait", "1", "--limit", "7"},
                      consumer_out_, (dir_ / "changes.err").string());
  }
  // Takes what the consumer printed (complete lines) into seen_; returns
  // the cursor to resume from.
  uint64_t Collect(uint64_t cursor) {
    for (const auto& j : CompleteLines(testing::ReadWholeFile(consumer_out_))) {
      if (j.contains("seq")) {
        seen_.push_back(j);
        cursor = j["seq"].get<uint64_t>();
      } else if (j.contains("next_cursor")) {
        EXPECT_FALSE(j["gap"].get<bool>());
        cursor = std::max(cursor, j["next_cursor"].get<uint64_t>());
      }
    }
    return cursor;
  }

  std::filesystem::path dir_;
  std::string config_;
  pid_t web_ = -1, daemon_ = -1, consumer_ = -1;
  uint16_t web_port_ = 0, status_port_ = 0;
  int consumers_ = 0;
  std::string consumer_out_;
  std::vector<nlohmann::json> seen_;
};

TEST_F(ChangesCliTest, ConsumerMissesNothingAndSeesNothingTwiceAcrossKills) {
  std::mt19937 rng(20261126);
  std::uniform_int_distribution<int> pause_ms(300, 1500);
  std::uniform_int_distribution<int> victim(0, 2);  // daemon, consumer, both
  uint64_t cursor = 0;
  StartDaemon();
  ASSERT_TRUE(WaitForStatus(20));
  StartConsumer(cursor);
  int daemon_kills = 0, consumer_kills = 0;
  for (int round = 0; round < 10; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms(rng)));
    const int v = victim(rng);
    if (v != 1) {
      KillAndWait(daemon_, SIGKILL);
      ++daemon_kills;
      daemon_ = -1;
    }
    if (v != 0) {
      KillAndWait(consumer_, SIGKILL);
      ++consumer_kills;
      consumer_ = -1;
      cursor = Collect(cursor);
    }
    if (daemon_ < 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms(rng) / 3));
      StartDaemon();
    }
    if (consumer_ < 0) StartConsumer(cursor);
  }
  ASSERT_TRUE(WaitForStatus(20));
  std::this_thread::sleep_for(std::chrono::milliseconds(4000));  // recrawls
  // Stop the daemon cleanly, then let the consumer catch up with a last,
  // non-following read (the daemon serves it again from the same store).
  EXPECT_EQ(KillAndWait(daemon_, SIGTERM), 0);
  daemon_ = -1;
  KillAndWait(consumer_, SIGKILL);
  consumer_ = -1;
  cursor = Collect(cursor);
  // A daemon with no budget and no web serves the feed; nothing new is
  // committed while we read (rate is tiny, the test web is gone: a fetch
  // that the start-up burst still makes fails, and failures are no events;
  // since a restart holds every host for min_delay, such a fetch would
  // otherwise land after the read).
  KillAndWait(web_, SIGTERM);
  web_ = -1;
  {
    std::string text = testing::ReadWholeFile(config_);
    text.replace(text.find("rate = 100"), 10, "rate = 0.000001");
    std::ofstream(config_) << text;
  }
  StartDaemon();
  ASSERT_TRUE(WaitForStatus(20));
  auto tail = testing::RunFreshd(
      {"changes", "--config", config_, "--since", std::to_string(cursor)});
  ASSERT_EQ(tail.exit_code, 0) << tail.err;
  for (const auto& j : CompleteLines(tail.out)) {
    if (j.contains("seq")) seen_.push_back(j);
  }
  EXPECT_EQ(KillAndWait(daemon_, SIGTERM), 0);
  daemon_ = -1;

  // Against the store.
  StoreConfig sc;
  sc.path = (dir_ / "db").string();
  auto store = store::PageStore::Open(sc);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  const auto bounds = (*store)->feed_bounds();
  ASSERT_EQ(bounds.oldest, 1u);
  ASSERT_GT(bounds.newest, 20u) << "too few events to mean anything";
  ASSERT_EQ(seen_.size(), bounds.newest);
  std::map<std::string, nlohmann::json> last_by_url;
  size_t changed = 0;
  for (size_t i = 0; i < seen_.size(); ++i) {
    ASSERT_EQ(seen_[i]["seq"].get<uint64_t>(), i + 1) << "missed or repeated";
    last_by_url[seen_[i]["url"].get<std::string>()] = seen_[i];
    if (seen_[i]["kind"] == "changed") ++changed;
  }
  // What the consumer saw is what the store holds.
  size_t i = 0;
  ASSERT_TRUE((*store)
                  ->ForEachFeedEvent(0, 1 << 30,
                                     [&](const store::FeedEvent& e) {
                                       EXPECT_EQ(seen_[i]["url"], e.url);
                                       EXPECT_EQ(seen_[i]["kind"], e.kind);
                                       ++i;
                                       return true;
                                     })
                  .ok());
  EXPECT_EQ(i, seen_.size());
  size_t pages_with_content = 0;
  ASSERT_TRUE((*store)
                  ->ForEachPage([&](const store::PageRecord& p) {
                    if (p.content_hash == 0 || p.last_fetch_time == 0) {
                      return true;
                    }
                    ++pages_with_content;
                    auto it = last_by_url.find(p.url);
                    EXPECT_NE(it, last_by_url.end()) << p.url;
                    if (it == last_by_url.end()) return true;
                    char hash[17];
                    std::snprintf(
                        hash, sizeof hash, "%016llx",
                        static_cast<unsigned long long>(p.content_hash));
                    EXPECT_EQ(it->second["text_hash"], hash) << p.url;
                    return true;
                  })
                  .ok());
  EXPECT_GT(pages_with_content, 5u);
  EXPECT_GT(changed, 0u);
  std::printf(
      "events %zu (changed %zu), pages with content %zu, daemon kills %d, "
      "consumer kills %d\n",
      seen_.size(), changed, pages_with_content, daemon_kills, consumer_kills);
}

TEST_F(ChangesCliTest, EndpointBoundsErrorsAndLongPoll) {
  StartDaemon();
  ASSERT_TRUE(WaitForStatus(20));
  EXPECT_EQ(HttpGetStatus(status_port_, "/changes?limit=0").first, 400);
  EXPECT_EQ(HttpGetStatus(status_port_, "/changes?limit=10001").first, 400);
  EXPECT_EQ(HttpGetStatus(status_port_, "/changes?wait=61").first, 400);
  EXPECT_EQ(HttpGetStatus(status_port_, "/changes?since=-1").first, 400);
  EXPECT_EQ(HttpGetStatus(status_port_, "/changes?bogus=1").first, 400);
  EXPECT_EQ(HttpGetStatus(status_port_, "/changes?since=99999999").first, 409);
  // Events come; a page of 3 says there is more.
  std::pair<int, std::string> r;
  for (int i = 0; i < 100; ++i) {
    r = HttpGetStatus(status_port_, "/changes?since=0&limit=3");
    if (CompleteLines(r.second).size() == 4) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(r.first, 200);
  auto lines = CompleteLines(r.second);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0]["seq"], 1);
  EXPECT_EQ(lines[0]["kind"], "new");
  EXPECT_TRUE(lines[0]["warc"].is_object()) << lines[0];
  EXPECT_EQ(lines[3]["next_cursor"], 3);
  EXPECT_EQ(lines[3]["gap"], false);
  // A long poll past the newest returns when the next event is committed
  // (the crawl goes on), long before its 30 s; meanwhile /status answers.
  const uint64_t newest = lines[3]["newest"].get<uint64_t>();
  auto start = std::chrono::steady_clock::now();
  std::pair<int, std::string> polled;
  std::thread poller([&] {
    polled = HttpGetStatus(
        status_port_, "/changes?since=" + std::to_string(newest) + "&wait=30");
  });
  EXPECT_EQ(HttpGetStatus(status_port_, "/status").first, 200);
  poller.join();
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  EXPECT_EQ(polled.first, 200);
  auto got = CompleteLines(polled.second);
  ASSERT_GE(got.size(), 2u);
  EXPECT_EQ(got[0]["seq"], newest + 1);
  EXPECT_LT(took, 20);
  // Nothing new to wait for: a short wait ends empty, with the same cursor.
  const uint64_t now_newest =
      CompleteLines(
          HttpGetStatus(status_port_, "/changes?since=0&limit=1").second)
          .back()["newest"]
          .get<uint64_t>();
  EXPECT_EQ(KillAndWait(daemon_, SIGTERM), 0);
  daemon_ = -1;
  // The daemon gone, the CLI without --follow fails with 1.
  auto down = testing::RunFreshd({"changes", "--config", config_});
  EXPECT_EQ(down.exit_code, 1);
  EXPECT_GT(now_newest, 0u);
}

}  // namespace
}  // namespace freshd
