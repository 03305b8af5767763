// Prints every record of a store as freshd c561337 reads it (one line a
// record, blobs in hex, doubles %.17g): schema1.expected.txt. Built against
// that commit's store library (see ../README.md); not part of the build.
#include <cstdio>
#include <string>
#include <string_view>

#include "store/page_store.h"

using namespace freshd;

// One line per record, fields separated by spaces, blobs in hex, doubles
// with %.17g: what a store reads back, in key order.
std::string Hex(std::string_view s) {
  static const char* d = "0123456789abcdef";
  std::string o;
  for (unsigned char c : s) {
    o += d[c >> 4];
    o += d[c & 15];
  }
  return o.empty() ? "-" : o;
}
std::string Num(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}
std::string Capture(const freshd::store::WarcCapture& c) {
  return Hex(c.record_id) + " " + Hex(c.target_uri) + " " + Num(c.date) + " " +
         Hex(c.payload_digest);
}
int main(int argc, char** argv) {
  StoreConfig c;
  c.path = argv[1];
  auto s = store::PageStore::Open(c);
  if (!s.ok()) return 1;
  store::PageStore& st = **s;
  std::printf("secret %llu pages %llu\n", (unsigned long long)st.hash_secret(),
              (unsigned long long)st.page_count());
  int dead = 0;
  Status r = st.ForEachPage([&](const store::PageRecord& p) {
    if (!p.sketch.empty()) ++dead;
    std::printf("page %llu %s %s %s %s %d %s %s %llu %s\n",
                (unsigned long long)p.url_key, Hex(p.url).c_str(),
                Hex(p.sched_state).c_str(), Hex(p.etag).c_str(),
                Hex(p.last_modified).c_str(), p.last_status,
                Hex(p.last_outcome).c_str(), Num(p.last_fetch_time).c_str(),
                (unsigned long long)p.content_hash,
                Num(p.last_signal_lastmod).c_str());
    auto sk = st.GetSketch(p.url_key, p.url);
    std::printf("sketch %s %s\n", Hex(p.url).c_str(),
                sk.ok() ? Hex(*sk).c_str() : sk.status().ToString().c_str());
    auto lc = st.GetLastCapture(p.url_key, p.url);
    std::printf("last %s %s\n", Hex(p.url).c_str(),
                lc.ok() ? Capture(*lc).c_str() : "none");
    if (lc.ok()) {
      auto dc = st.GetDigestCapture(lc->payload_digest);
      std::printf("digest %s %s %llu\n", Hex(lc->payload_digest).c_str(),
                  dc.ok() ? Capture(*dc).c_str() : "none",
                  dc.ok() ? (unsigned long long)dc->seq : 0ull);
    }
    return true;
  });
  if (!r.ok()) return 2;
  r = st.ForEachHost([&](const store::HostRecord& h) {
    if (!h.robots_body.empty() || h.robots_fetch_time != 0 ||
        h.robots_status != 0 || h.robots_error_since != 0 ||
        h.next_allowed_time != 0 || h.consecutive_errors != 0 ||
        h.backoff_s != 0)
      ++dead;
    std::printf("host %s %s %s\n", Hex(h.host).c_str(),
                Hex(h.pooled_estimates).c_str(), Hex(h.fetch_state).c_str());
    return true;
  });
  if (!r.ok()) return 3;
  auto b = st.feed_bounds();
  std::printf("feed %llu %llu digests %llu\n", (unsigned long long)b.oldest,
              (unsigned long long)b.newest,
              (unsigned long long)st.digest_entries());
  r = st.ForEachFeedEvent(0, 1 << 30, [&](const store::FeedEvent& e) {
    std::printf("event %llu %s %s %s %d %s %llu %s %llu\n",
                (unsigned long long)e.seq, Hex(e.url).c_str(),
                Num(e.time).c_str(), e.kind.c_str(), e.status,
                Num(e.staleness).c_str(), (unsigned long long)e.text_hash,
                Hex(e.warc_file).c_str(), (unsigned long long)e.warc_offset);
    return true;
  });
  if (!r.ok()) return 4;
  std::fprintf(stderr, "records with a non-empty dead field: %d\n", dead);
  return st.Close().ok() ? 0 : 5;
}
