#include "store/trace_export.h"

#include <cstdio>
#include <string>
#include <unordered_set>

namespace freshd::store {

std::string CsvField(std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) {
    return std::string(s);
  }
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += c;
  }
  q += '"';
  return q;
}

namespace {

const char* EventFor(std::string_view kind) {
  if (kind == "new") return "create";
  if (kind == "changed") return "change";
  if (kind == "gone") return "delete";
  return nullptr;  // "unchanged" and anything newer: no change seen
}

std::string FormatTime(double t) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", t);
  return buf;
}

}  // namespace

Status ExportTrace(const PageStore& store, std::ostream& out,
                   TraceExportStats* stats) {
  TraceExportStats local;
  TraceExportStats& st = stats != nullptr ? *stats : local;
  st = TraceExportStats{};
  out << "url,time,event,observed\n";
  std::unordered_set<std::string> with_rows;
  constexpr size_t kBatch = 4096;
  uint64_t after = 0;
  while (true) {
    size_t seen = 0;
    Status s = store.ForEachFeedEvent(after, kBatch, [&](const FeedEvent& e) {
      ++seen;
      after = e.seq;
      ++st.feed_events;
      if (st.first_seq == 0) {
        st.first_seq = e.seq;
        st.first_time = e.time;
      }
      st.last_seq = e.seq;
      st.last_time = e.time;
      const char* event = EventFor(e.kind);
      if (event == nullptr) return true;
      out << CsvField(e.url) << ',' << FormatTime(e.time) << ',' << event
          << ",fetch\n";
      ++st.rows;
      with_rows.insert(e.url);
      return true;
    });
    if (!s.ok()) return s;
    if (seen < kBatch) break;
  }
  Status s = store.ForEachPage([&](const PageRecord& p) {
    if (p.last_fetch_time <= 0 || with_rows.count(p.url) != 0) return true;
    out << CsvField(p.url) << ",,change,fetch\n";
    ++st.rows;
    ++st.static_pages;
    return true;
  });
  if (!s.ok()) return s;
  out.flush();
  if (!out) return Status::IOError("writing the trace failed");
  return Status::OK();
}

}  // namespace freshd::store
