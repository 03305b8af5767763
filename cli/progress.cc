#include "cli/progress.h"

#include <unistd.h>

#include <cstdio>
#include <utility>

namespace freshd::cli {

ProgressLine::ProgressLine(std::string prefix)
    : ProgressLine(std::move(prefix), isatty(STDERR_FILENO) == 1) {}

ProgressLine::ProgressLine(std::string prefix, bool enabled)
    : prefix_(std::move(prefix)), enabled_(enabled) {}

void ProgressLine::Show(const std::string& text) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (shown_ && now - last_ < std::chrono::milliseconds(200)) return;
  last_ = now;
  shown_ = true;
  std::fprintf(stderr, "\r%s: %s\033[K", prefix_.c_str(), text.c_str());
  std::fflush(stderr);
}

void ProgressLine::Clear() {
  if (!shown_) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  shown_ = false;
}

}  // namespace freshd::cli
