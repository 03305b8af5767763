#include "sim/trace.h"

#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <unordered_map>

#include "base/ascii.h"
#include "parse/url.h"
#include "parse/w3c_datetime.h"
#include "sched/math_constants.h"
#include "sim/web_model.h"

namespace freshd::sim {
namespace {

using sched::kInf;
// Unix seconds accepted: years 1 to 9999, as RFC 3339 allows.
constexpr double kMinTime = -62135596800.0;
constexpr double kMaxTime = 253402300799.0;

enum class RowEvent : uint8_t { kChange, kCreate, kDelete };

// Reads RFC 4180 records from a stream, one at a time, within limits.
class CsvReader {
 public:
  CsvReader(std::istream& in, const TraceLimits& limits)
      : in_(*in.rdbuf()), limits_(limits) {}

  // Fills `fields` with the next record; false at the end of input. An
  // error sets `error` (and returns false). line() is where it started.
  bool Next(std::vector<std::string>& fields, std::string& error) {
    fields.clear();
    int c = in_.sbumpc();
    if (c == std::char_traits<char>::eof()) return false;
    start_line_ = line_;
    size_t bytes = 0;
    std::string field;
    bool quoted = false, was_quoted = false;
    for (;; c = in_.sbumpc()) {
      if (c != std::char_traits<char>::eof() &&
          ++bytes > limits_.max_record_bytes) {
        error = "record longer than " +
                std::to_string(limits_.max_record_bytes) + " bytes";
        return false;
      }
      if (quoted) {
        if (c == std::char_traits<char>::eof()) {
          error = "unterminated quoted field";
          return false;
        }
        if (c == '"') {
          if (in_.sgetc() == '"') {
            in_.sbumpc();
            ++bytes;
            field += '"';
          } else {
            quoted = false;
          }
        } else {
          if (c == '\n') ++line_;
          field += static_cast<char>(c);
        }
        continue;
      }
      if (c == '"') {
        if (!field.empty() || was_quoted) {
          error = "quote inside an unquoted field";
          return false;
        }
        quoted = was_quoted = true;
        continue;
      }
      if (c == ',' || c == '\n' || c == std::char_traits<char>::eof()) {
        if (fields.size() >= limits_.max_fields) {
          error = "more than " + std::to_string(limits_.max_fields) + " fields";
          return false;
        }
        if (!was_quoted && !field.empty() && field.back() == '\r' && c != ',') {
          field.pop_back();
        }
        fields.push_back(std::move(field));
        field.clear();
        was_quoted = false;
        if (c == ',') continue;
        if (c == '\n') ++line_;
        return true;
      }
      if (was_quoted) {
        if (c == '\r' && (in_.sgetc() == '\n' ||
                          in_.sgetc() == std::char_traits<char>::eof()))
          continue;
        error = "characters after a closing quote";
        return false;
      }
      field += static_cast<char>(c);
    }
  }
  uint64_t line() const { return start_line_; }

 private:
  std::streambuf& in_;
  const TraceLimits& limits_;
  uint64_t line_ = 1, start_line_ = 1;
};

}  // namespace

bool ParseTraceTime(std::string_view s, double* out) {
  size_t i = 0;
  if (i < s.size() && s[i] == '-') ++i;
  const size_t digits_from = i;
  while (i < s.size() && std::isdigit(static_cast<uint8_t>(s[i]))) ++i;
  bool number = i > digits_from && i - digits_from <= 15;
  if (number && i < s.size() && s[i] == '.') {
    ++i;
    const size_t frac = i;
    while (i < s.size() && std::isdigit(static_cast<uint8_t>(s[i]))) ++i;
    number = i - frac <= 9;
  }
  if (number && i == s.size()) {
    const std::string text(s);
    *out = std::strtod(text.c_str(), nullptr);
    return std::isfinite(*out) && *out >= kMinTime && *out <= kMaxTime;
  }
  // RFC 3339 needs a full date; W3C's "YYYY" alone would be a number above.
  if (s.size() < 10 || s[4] != '-') return false;
  std::optional<int64_t> t = parse::ParseW3cDatetime(s);
  if (!t) return false;
  *out = static_cast<double>(*t);
  return true;
}

namespace {

bool ParseImportance(std::string_view s, double* out) {
  const std::string text(s);
  char* end = nullptr;
  *out = std::strtod(text.c_str(), &end);
  return !text.empty() && end == text.c_str() + text.size() &&
         std::isfinite(*out) && *out > 0 && *out <= kMaxSimImportance;
}

struct Building {
  double importance = 0;  // 0: not given
  uint64_t importance_line = 0;
  std::vector<double> changes, creates, deletes;
};

}  // namespace

Result<Trace> ParseTrace(std::istream& in, std::string_view name,
                         const TraceLimits& limits) {
  CsvReader csv(in, limits);
  auto fail = [&](std::string_view what) {
    return Status::InvalidArgument(std::string(name) + ":" +
                                   std::to_string(csv.line()) + ": " +
                                   std::string(what));
  };
  std::vector<std::string> fields;
  std::string error;
  int col_url = -1, col_time = -1, col_importance = -1, col_event = -1;
  // The header: the first non-blank record.
  for (;;) {
    if (!csv.Next(fields, error)) {
      if (!error.empty()) return fail(error);
      return Status::InvalidArgument(std::string(name) +
                                     ": empty trace (no header)");
    }
    if (fields.size() == 1 && TrimAsciiBlanks(fields[0]).empty()) continue;
    break;
  }
  for (size_t i = 0; i < fields.size(); ++i) {
    const std::string col = AsciiLowerCopy(TrimAsciiBlanks(fields[i]));
    int* slot = col == "url"          ? &col_url
                : col == "time"       ? &col_time
                : col == "importance" ? &col_importance
                : col == "event"      ? &col_event
                                      : nullptr;
    if (slot == nullptr) continue;
    if (*slot >= 0) return fail("column '" + col + "' named twice");
    *slot = static_cast<int>(i);
  }
  if (col_url < 0 || col_time < 0) {
    return fail("the header must name the columns 'url' and 'time'");
  }

  std::unordered_map<std::string, Building> pages;
  Trace trace;
  uint64_t events = 0;
  double first = kInf, last = -kInf;
  while (csv.Next(fields, error)) {
    if (fields.size() == 1 && TrimAsciiBlanks(fields[0]).empty()) continue;
    ++trace.rows;
    auto field = [&](int col) -> std::string_view {
      return col >= 0 && static_cast<size_t>(col) < fields.size()
                 ? TrimAsciiBlanks(fields[col])
                 : std::string_view();
    };
    if (static_cast<size_t>(std::max(col_url, col_time)) >= fields.size()) {
      return fail("too few fields (" + std::to_string(fields.size()) + ")");
    }
    Result<std::string> url = parse::NormalizeUrl(field(col_url));
    if (!url.ok()) {
      return fail("url: " + url.status().message());
    }
    RowEvent event = RowEvent::kChange;
    const std::string ev = AsciiLowerCopy(field(col_event));
    if (ev == "create") {
      event = RowEvent::kCreate;
    } else if (ev == "delete") {
      event = RowEvent::kDelete;
    } else if (!ev.empty() && ev != "change") {
      return fail("event: '" + ev.substr(0, 64) +
                  "' is not change, create or delete");
    }
    double time = 0;
    const std::string_view time_text = field(col_time);
    const bool timed = !time_text.empty();
    if (timed && !ParseTraceTime(time_text, &time)) {
      return fail("time: '" + std::string(time_text.substr(0, 64)) +
                  "' is neither Unix seconds nor RFC 3339");
    }
    if (!timed && event != RowEvent::kChange) {
      return fail("event: a " + ev + " needs a time");
    }
    double importance = 0;
    const std::string_view imp = field(col_importance);
    if (!imp.empty() && !ParseImportance(imp, &importance)) {
      return fail("importance: '" + std::string(imp.substr(0, 64)) +
                  "' is not a number in (0, 1e6]");
    }
    auto it = pages.find(*url);
    if (it == pages.end()) {
      if (pages.size() >= limits.max_pages) {
        return Status::ResourceExhausted(
            std::string(name) + ":" + std::to_string(csv.line()) +
            ": more than " + std::to_string(limits.max_pages) + " pages");
      }
      it = pages.emplace(std::move(*url), Building{}).first;
    }
    Building& b = it->second;
    if (importance > 0) {
      if (b.importance > 0 && b.importance != importance) {
        return fail("importance: " + std::string(imp.substr(0, 64)) +
                    " conflicts with line " +
                    std::to_string(b.importance_line) + "'s value");
      }
      b.importance = importance;
      b.importance_line = csv.line();
    }
    if (!timed) continue;
    if (++events > limits.max_events) {
      return Status::ResourceExhausted(
          std::string(name) + ":" + std::to_string(csv.line()) +
          ": more than " + std::to_string(limits.max_events) + " events");
    }
    first = std::min(first, time);
    last = std::max(last, time);
    (event == RowEvent::kChange   ? b.changes
     : event == RowEvent::kCreate ? b.creates
                                  : b.deletes)
        .push_back(time);
  }
  if (!error.empty()) return fail(error);

  // Pages sorted by URL (deterministic whatever the row order); hosts too.
  std::vector<std::pair<std::string, Building>> sorted;
  sorted.reserve(pages.size());
  for (auto& [url, b] : pages) sorted.emplace_back(url, std::move(b));
  pages.clear();
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::map<std::string, uint32_t> host_index;
  for (const auto& [url, b] : sorted) {
    host_index.emplace(std::string(parse::UrlAuthority(url)), 0);
  }
  uint32_t h = 0;
  for (auto& [host, index] : host_index) {
    index = h++;
    trace.hosts.push_back(host);
  }
  trace.urls.reserve(sorted.size());
  trace.pages.reserve(sorted.size());
  for (auto& [url, b] : sorted) {
    TracePage p;
    p.host = host_index.at(std::string(parse::UrlAuthority(url)));
    p.importance = b.importance > 0 ? b.importance : 1;
    std::sort(b.creates.begin(), b.creates.end());
    std::sort(b.deletes.begin(), b.deletes.end());
    std::sort(b.changes.begin(), b.changes.end());
    // The lifetime is one interval: from the first create, unless a delete
    // comes before it (the page existed from the start; that create
    // re-creates it), to the last delete, unless a create comes after it
    // (re-created: the page counts to the end). A create that does not start
    // the lifetime counts as a change.
    size_t recreations_from = 0;
    if (!b.creates.empty() &&
        (b.deletes.empty() || b.creates.front() <= b.deletes.front())) {
      p.created = b.creates.front();
      recreations_from = 1;
    }
    if (!b.deletes.empty()) {
      if (b.creates.empty() || b.deletes.back() >= b.creates.back()) {
        p.deleted = b.deletes.back();
      }
    }
    if (p.deleted <= p.created) {  // created and deleted at one time
      ++trace.empty_lifetimes;
      continue;
    }
    for (size_t i = recreations_from; i < b.creates.size(); ++i) {
      b.changes.push_back(b.creates[i]);
    }
    std::vector<double>().swap(b.creates);
    std::vector<double>().swap(b.deletes);
    std::sort(b.changes.begin(), b.changes.end());
    b.changes.erase(std::unique(b.changes.begin(), b.changes.end()),
                    b.changes.end());
    // Only changes within the lifetime; a change at creation is its content.
    std::erase_if(b.changes,
                  [&](double t) { return t <= p.created || t > p.deleted; });
    b.changes.shrink_to_fit();
    p.changes = std::move(b.changes);
    trace.changes += p.changes.size();
    trace.urls.push_back(std::move(url));
    trace.pages.push_back(std::move(p));
  }
  if (first <= last) {
    trace.first_time = first;
    trace.last_time = last;
  }
  return trace;
}

Result<Trace> ParseTraceText(std::string_view text, std::string_view name,
                             const TraceLimits& limits) {
  std::istringstream in{std::string(text)};
  return ParseTrace(in, name, limits);
}

namespace {

// An input stream buffer over zlib's gzFile, which reads gzip members and
// plain files alike (gzdirect): one reader for both forms of a trace.
class GzReadBuffer : public std::streambuf {
 public:
  explicit GzReadBuffer(gzFile file) : file_(file) {}
  ~GzReadBuffer() override { gzclose(file_); }
  GzReadBuffer(const GzReadBuffer&) = delete;
  GzReadBuffer& operator=(const GzReadBuffer&) = delete;
  bool failed() const { return failed_; }

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    const int n = gzread(file_, buffer_, sizeof(buffer_));
    if (n <= 0) {
      int code = Z_OK;
      gzerror(file_, &code);
      // Z_BUF_ERROR: a gzip file cut short.
      failed_ = n < 0 || code != Z_OK;
      return traits_type::eof();
    }
    setg(buffer_, buffer_, buffer_ + n);
    return traits_type::to_int_type(*gptr());
  }

 private:
  gzFile file_;
  bool failed_ = false;
  char buffer_[64 * 1024];
};

}  // namespace

Result<Trace> LoadTrace(const std::string& path, const TraceLimits& limits) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) return Status::NotFound(path + ": cannot open");
  GzReadBuffer buffer(file);
  std::istream in(&buffer);
  Result<Trace> t = ParseTrace(in, path, limits);
  if (buffer.failed()) {
    return Status::IOError(path + ": read error (or a damaged gzip file)");
  }
  return t;
}

double TraceMeanRate(const TracePage& page, double from, double to) {
  const double a = std::max(from, page.created);
  const double b = std::min(to, page.deleted);
  if (!(b > a)) return 0;
  const auto lo = std::upper_bound(page.changes.begin(), page.changes.end(), a);
  const auto hi = std::upper_bound(page.changes.begin(), page.changes.end(), b);
  return static_cast<double>(hi - lo) / (b - a);
}

}  // namespace freshd::sim
