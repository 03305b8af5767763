// freshd changes [--since C] [--follow]: tails the running daemon's change
// feed (GET /changes on its status endpoint, daemon/change_feed.h). Prints
// each reply as the endpoint sends it, JSON Lines on stdout: the events
// (each with its "seq", the cursor), then the cursor line
// {"next_cursor": N, "oldest": O, "newest": W, "gap": G, "more": M}; stdout
// is flushed after every reply. A consumer resumes with --since set to the
// last seq it processed. Without --follow it reads until it has caught up
// and exits 0; with --follow it long-polls forever, and waits for a daemon
// that is down or restarting (retrying every 0.5 s, a note on stderr).
// A "gap" (events dropped by retention before they were read) is reported
// on stderr. Exit codes: 0 done, 1 the endpoint failed (not --follow), 2 bad
// usage or a cursor the daemon does not know (409).
//
// freshd changes --nats URL [--since SEQ|TIME] [--follow]: the whole
// cluster's change feed from its JetStream stream (cluster/change_reader.h),
// in the same format: each event line as its node wrote it (with "node")
// plus "stream_seq", the cursor; a cursor line after each batch. --since is
// a stream sequence (the last one processed) or a W3C/ISO time (from the
// first event stored then). Without --follow it reads until it has caught
// up; with --follow it waits for new events forever, and for NATS when it
// is lost (a note on stderr, retrying every second). Exit codes as above;
// 1 also when NATS is unreachable or no node has published yet (not
// --follow).

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "cli/commands.h"
#include "cli/status_client.h"
#include "cluster/change_reader.h"
#include "daemon/change_feed.h"
#include "nlohmann/json.hpp"
#include "parse/w3c_datetime.h"

namespace freshd::cli {
namespace {

struct Options {
  StatusEndpoint endpoint;
  std::string nats;  // the cluster's change stream instead of a daemon
  std::string stream = cluster::kChangeStream;
  std::string since_text = "0";
  uint64_t since = 0;
  double since_unix = -1;  // --since TIME (--nats only)
  size_t limit = daemon::kFeedDefaultLimit;
  double wait_s = 30;
  bool follow = false;
};

// --since: a cursor, or (with --nats) a time.
bool ParseSince(Options* o) {
  const std::string& t = o->since_text;
  if (!t.empty() && t.find_first_not_of("0123456789") == std::string::npos &&
      t.size() <= 19) {
    o->since = std::stoull(t);
    return true;
  }
  const auto unix = parse::ParseW3cDatetime(t);
  if (!unix || o->nats.empty()) {
    std::fprintf(stderr,
                 "freshd changes: --since %s: expected a cursor (an unsigned "
                 "integer)%s\n",
                 t.c_str(),
                 o->nats.empty() ? "" : " or a time (2026-11-26T15:00:00Z)");
    return false;
  }
  o->since_unix = static_cast<double>(*unix);
  return true;
}

int RunNats(const Options& o) {
  cluster::ChangeReaderOptions r;
  r.nats_url = o.nats;
  r.stream = o.stream;
  r.after = o.since;
  r.since_unix = o.since_unix;
  r.batch = o.limit;
  bool down_noted = false;
  std::unique_ptr<cluster::ChangeReader> reader;
  for (;;) {
    if (reader == nullptr) {
      auto opened = cluster::ChangeReader::Open(r);
      if (opened.ok()) {
        reader = std::move(opened).value();
        down_noted = false;
      } else if (opened.status().code() == Status::Code::kInvalidArgument) {
        std::fprintf(stderr, "freshd changes: %s\n",
                     opened.status().message().c_str());
        return 2;
      } else if (!o.follow) {
        std::fprintf(stderr, "freshd changes: %s\n",
                     opened.status().message().c_str());
        return 1;
      } else {
        if (!down_noted) {
          std::fprintf(stderr, "freshd changes: %s; retrying\n",
                       opened.status().message().c_str());
          down_noted = true;
        }
        std::this_thread::sleep_for(std::chrono::seconds(1));
        continue;
      }
    }
    auto batch = reader->Next(o.follow ? o.wait_s : 0.5);
    if (!batch.ok()) {
      if (!o.follow) {
        std::fprintf(stderr, "freshd changes: %s\n",
                     batch.status().message().c_str());
        return 1;
      }
      if (!down_noted) {
        std::fprintf(stderr, "freshd changes: %s; retrying\n",
                     batch.status().message().c_str());
        down_noted = true;
      }
      std::this_thread::sleep_for(std::chrono::seconds(1));
      continue;
    }
    down_noted = false;
    const cluster::ChangeBatch& b = batch.value();
    std::string out;
    for (const cluster::ChangeMessage& m : b.messages) {
      nlohmann::json j = nlohmann::json::parse(m.data, nullptr, false);
      if (j.is_discarded() || !j.is_object()) {
        std::fprintf(stderr,
                     "freshd changes: stream sequence %llu is not an event; "
                     "skipped\n",
                     static_cast<unsigned long long>(m.stream_seq));
        continue;
      }
      if (!j.contains("node")) j["node"] = m.node;
      j["stream_seq"] = m.stream_seq;
      out += j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      out += '\n';
    }
    // A batch in --follow that brought nothing prints nothing.
    const bool done = !o.follow && !b.more;
    if (!b.messages.empty() || done) {
      out += nlohmann::json{{"next_cursor", b.cursor},
                            {"oldest", b.oldest},
                            {"newest", b.newest},
                            {"gap", b.gap},
                            {"more", b.more}}
                 .dump();
      out += '\n';
      std::fwrite(out.data(), 1, out.size(), stdout);
      std::fflush(stdout);
    }
    if (b.gap) {
      std::fprintf(stderr,
                   "freshd changes: events after %llu were dropped by the "
                   "stream's limits before they were read; resuming at %llu\n",
                   static_cast<unsigned long long>(o.since),
                   static_cast<unsigned long long>(b.oldest));
    }
    if (done) return 0;
  }
}

int Run(Options o) {
  if (!ParseSince(&o)) return 2;
  if (!o.nats.empty()) return RunNats(o);
  std::string token;
  if (Status s =
          ResolveStatusEndpoint(&o.endpoint, /*loopback_only=*/false, &token);
      !s.ok()) {
    std::fprintf(stderr, "freshd changes: %s\n", s.message().c_str());
    return 2;
  }
  const std::string& host = o.endpoint.status;
  uint64_t cursor = o.since;
  bool down_noted = false;
  for (;;) {
    const double wait = o.follow ? o.wait_s : 0;
    const std::string url = "http://" + host +
                            "/changes?since=" + std::to_string(cursor) +
                            "&limit=" + std::to_string(o.limit) +
                            (wait > 0 ? "&wait=" + std::to_string(wait) : "");
    std::string body, error;
    const int status =
        StatusRequest(url, token, nullptr, wait + 15, &body, &error);
    if (status != 200) {
      const std::string what =
          status == 0 ? error : "HTTP " + std::to_string(status) + ": " + body;
      if (status == 409 || status == 400) {
        std::fprintf(stderr, "freshd changes: %s\n", what.c_str());
        return 2;
      }
      if (!o.follow) {
        std::fprintf(stderr, "freshd changes: %s: %s\n", host.c_str(),
                     what.c_str());
        return 1;
      }
      if (!down_noted) {
        std::fprintf(stderr, "freshd changes: %s: %s; retrying\n", host.c_str(),
                     what.c_str());
        down_noted = true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      continue;
    }
    down_noted = false;
    // The last line is the cursor line.
    const size_t end = body.find_last_not_of('\n');
    const size_t start =
        end == std::string::npos ? 0 : body.rfind('\n', end) + 1;
    nlohmann::json last = nlohmann::json::parse(
        body.substr(start, end == std::string::npos ? 0 : end - start + 1),
        nullptr, false);
    if (last.is_discarded() || !last.contains("next_cursor")) {
      std::fprintf(stderr, "freshd changes: malformed reply from %s\n",
                   host.c_str());
      return 1;
    }
    std::fwrite(body.data(), 1, body.size(), stdout);
    std::fflush(stdout);
    if (last.value("gap", false)) {
      std::fprintf(stderr,
                   "freshd changes: events after %llu were dropped by "
                   "retention before they were read; resuming at %llu\n",
                   static_cast<unsigned long long>(cursor),
                   last.value("oldest", 0ull));
    }
    cursor = last["next_cursor"].get<uint64_t>();
    if (!o.follow && !last.value("more", false)) return 0;
  }
}

}  // namespace

void AddChangesCommand(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "changes",
      "Tail the running daemon's change feed (GET /changes): JSON Lines on "
      "stdout, each reply ending in its cursor line");
  AddStatusEndpointOptions(cmd, &o->endpoint);
  cmd->add_option("--nats", o->nats,
                  "read the whole cluster's changes from this NATS server's "
                  "change stream instead of one daemon");
  cmd->add_option("--stream", o->stream, "the change stream (with --nats)");
  cmd->add_option("--since", o->since_text,
                  "cursor: the last seq already processed (0: from the "
                  "start); with --nats a stream sequence, or a time such as "
                  "2026-11-26T15:00:00Z");
  cmd->add_option("--limit", o->limit, "events per request")
      ->check(CLI::Range(size_t{1}, daemon::kFeedMaxLimit));
  cmd->add_option("--wait", o->wait_s, "long-poll seconds per request")
      ->check(CLI::Range(0.0, daemon::kFeedMaxWaitS));
  cmd->add_flag("--follow,-f", o->follow, "keep waiting for new events");
  cmd->callback([o, exit_code] { *exit_code = Run(*o); });
}

}  // namespace freshd::cli
