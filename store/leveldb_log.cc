#include "store/leveldb_log.h"

#include <cstdio>

namespace freshd::store {
namespace {

void PushBounded(std::deque<std::string>& q, const std::string& line) {
  if (q.size() >= CapturedLevelDbLog::kMaxLines) q.pop_front();
  q.push_back(line);
}

}  // namespace

void CapturedLevelDbLog::Logv(const char* format, std::va_list ap) {
  char buf[kMaxLineBytes];
  int n = std::vsnprintf(buf, sizeof buf, format, ap);
  if (n < 0) return;
  std::string line(buf, std::min(static_cast<size_t>(n), sizeof buf - 1));
  while (!line.empty() && line.back() == '\n') line.pop_back();
  std::lock_guard lock(mu_);
  PushBounded(lines_, line);
  if (ReportsDamage(line)) PushBounded(damage_, line);
}

std::vector<std::string> CapturedLevelDbLog::lines() const {
  std::lock_guard lock(mu_);
  return {lines_.begin(), lines_.end()};
}

std::vector<std::string> CapturedLevelDbLog::damage_lines() const {
  std::lock_guard lock(mu_);
  return {damage_.begin(), damage_.end()};
}

bool CapturedLevelDbLog::ReportsDamage(std::string_view line) {
  // A fresh store: "Creating DB <path> since it was missing."
  if (line.substr(0, 12) == "Creating DB ") return false;
  for (std::string_view word :
       {"orrupt", "dropping", "dropped", "error", "Error", "missing",
        "checksum", "truncated", "lost", "Ignoring", "ignoring"}) {
    if (line.find(word) != std::string_view::npos) return true;
  }
  return false;
}

}  // namespace freshd::store
