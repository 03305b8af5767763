// ProgressLine: a one-line progress report on stderr for long commands
// (`freshd sim`), shown only when stderr is a terminal, so scripts, pipes and
// logs stay quiet. Each Show() overwrites the line ("\r... ESC[K"), at most
// five times a second; Clear() erases it before the command prints its
// result. Not thread-safe: one command's thread uses it.

#ifndef FRESHD_CLI_PROGRESS_H_
#define FRESHD_CLI_PROGRESS_H_

#include <chrono>
#include <string>

namespace freshd::cli {

class ProgressLine {
 public:
  // `prefix` starts each line ("freshd sim"). `enabled`: stderr is a TTY.
  explicit ProgressLine(std::string prefix);
  ProgressLine(std::string prefix, bool enabled);

  bool enabled() const { return enabled_; }
  void Show(const std::string& text);
  void Clear();

 private:
  std::string prefix_;
  bool enabled_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace freshd::cli

#endif  // FRESHD_CLI_PROGRESS_H_
