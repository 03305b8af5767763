#include "daemon/seeds.h"

#include <cmath>
#include <fstream>
#include <sstream>

namespace freshd::daemon {
namespace {

Status LineError(std::string_view name, size_t line, const std::string& what) {
  return Status::InvalidArgument(std::string(name) + ":" +
                                 std::to_string(line) + ": " + what);
}

}  // namespace

Result<std::vector<Seed>> ParseSeeds(std::string_view text,
                                     std::string_view name) {
  std::vector<Seed> seeds;
  size_t line_no = 0;
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    ++line_no;
    if (line.size() > kMaxSeedLineBytes) {
      return LineError(name, line_no, "line longer than 16 KiB");
    }
    std::istringstream fields{std::string(line)};
    std::string url, weight, extra;
    fields >> url >> weight >> extra;
    if (url.empty() || url[0] == '#') continue;
    if (!extra.empty()) {
      return LineError(name, line_no, "expected \"URL [weight]\", got more");
    }
    Seed seed{url, 1.0, line_no};
    if (!weight.empty()) {
      char* stop = nullptr;
      seed.weight = std::strtod(weight.c_str(), &stop);
      if (*stop != '\0' || !std::isfinite(seed.weight) || seed.weight <= 0) {
        return LineError(
            name, line_no,
            "weight must be a positive number, got \"" + weight + "\"");
      }
    }
    if (seeds.size() >= kMaxSeeds) {
      return LineError(name, line_no, "more than 10,000,000 seeds");
    }
    seeds.push_back(std::move(seed));
  }
  return seeds;
}

Result<std::vector<Seed>> ReadSeedsFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IOError("cannot read seeds file " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return ParseSeeds(text.str(), path);
}

}  // namespace freshd::daemon
