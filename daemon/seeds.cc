#include "daemon/seeds.h"

#include <cmath>
#include <cstdlib>
#include <fstream>

namespace freshd::daemon {
namespace {

constexpr size_t kReadPiece = 64 * 1024;

Status LineError(std::string_view name, size_t line, const std::string& what) {
  return Status::InvalidArgument(std::string(name) + ":" +
                                 std::to_string(line) + ": " + what);
}

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f' ||
         c == '\n';
}

// The next whitespace-separated field of *rest ("" at the end).
std::string_view NextField(std::string_view* rest) {
  size_t b = 0;
  while (b < rest->size() && IsSpace((*rest)[b])) ++b;
  size_t e = b;
  while (e < rest->size() && !IsSpace((*rest)[e])) ++e;
  std::string_view field = rest->substr(b, e - b);
  rest->remove_prefix(e);
  return field;
}

// Counts lines and seeds across calls; each line parsed in place.
class SeedParser {
 public:
  SeedParser(std::string_view name, const SeedFn& fn) : name_(name), fn_(fn) {}

  Status Line(std::string_view line) {
    ++line_no_;
    if (line.size() > kMaxSeedLineBytes) {
      return LineError(name_, line_no_, "line longer than 16 KiB");
    }
    std::string_view url = NextField(&line);
    std::string_view weight = NextField(&line);
    std::string_view extra = NextField(&line);
    if (url.empty() || url[0] == '#') return Status::OK();
    if (!extra.empty()) {
      return LineError(name_, line_no_, "expected \"URL [weight]\", got more");
    }
    seed_.url.assign(url);
    seed_.weight = 1.0;
    seed_.line = line_no_;
    if (!weight.empty()) {
      const std::string w(weight);
      char* stop = nullptr;
      seed_.weight = std::strtod(w.c_str(), &stop);
      if (*stop != '\0' || !std::isfinite(seed_.weight) || seed_.weight <= 0) {
        return LineError(name_, line_no_,
                         "weight must be a positive number, got \"" + w + "\"");
      }
    }
    if (seeds_ >= kMaxSeeds) {
      return LineError(name_, line_no_, "more than 10,000,000 seeds");
    }
    ++seeds_;
    return fn_(seed_);
  }
  // The line after the last one taken, for an over-long line's error.
  size_t next_line() const { return line_no_ + 1; }

 private:
  std::string_view name_;
  const SeedFn& fn_;
  size_t line_no_ = 0;
  size_t seeds_ = 0;
  Seed seed_;
};

}  // namespace

Result<std::vector<Seed>> ParseSeeds(std::string_view text,
                                     std::string_view name) {
  std::vector<Seed> seeds;
  const SeedFn keep = [&seeds](const Seed& s) {
    seeds.push_back(s);
    return Status::OK();
  };
  SeedParser parser(name, keep);
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    if (Status s = parser.Line(line); !s.ok()) return s;
  }
  return seeds;
}

Status ForEachSeedInFile(const std::string& path, const SeedFn& fn) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IOError("cannot read seeds file " + path);
  SeedParser parser(path, fn);
  std::string piece(kReadPiece, '\0');
  std::string partial;  // a line cut by the end of a piece
  while (in) {
    in.read(piece.data(), static_cast<std::streamsize>(piece.size()));
    std::string_view chunk(piece.data(), static_cast<size_t>(in.gcount()));
    if (chunk.empty()) break;
    while (!chunk.empty()) {
      const size_t nl = chunk.find('\n');
      if (nl == std::string_view::npos) {
        if (partial.size() + chunk.size() > kMaxSeedLineBytes) {
          return LineError(path, parser.next_line(), "line longer than 16 KiB");
        }
        partial.append(chunk);
        break;
      }
      Status s;
      if (partial.empty()) {
        s = parser.Line(chunk.substr(0, nl));
      } else {
        partial.append(chunk.substr(0, nl));
        s = parser.Line(partial);
        partial.clear();
      }
      if (!s.ok()) return s;
      chunk.remove_prefix(nl + 1);
    }
  }
  if (in.bad()) return Status::IOError("error reading seeds file " + path);
  if (!partial.empty()) return parser.Line(partial);
  return Status::OK();
}

Result<std::vector<Seed>> ReadSeedsFile(const std::string& path) {
  std::vector<Seed> seeds;
  Status s = ForEachSeedInFile(path, [&seeds](const Seed& seed) {
    seeds.push_back(seed);
    return Status::OK();
  });
  if (!s.ok()) return s;
  return seeds;
}

}  // namespace freshd::daemon
