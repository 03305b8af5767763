#include "daemon/operator_log.h"

#include <cstdio>
#include <memory>

#include "spdlog/pattern_formatter.h"
#include "spdlog/sinks/stdout_sinks.h"
#include "spdlog/spdlog.h"

namespace freshd::daemon {
namespace {

// %* in the pattern: the line's syslog priority digit.
class PriorityFlag : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    const char digit = static_cast<char>('0' + SyslogPriority(msg.level));
    dest.push_back(digit);
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<PriorityFlag>();
  }
};

}  // namespace

int SyslogPriority(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::critical:
      return 2;
    case spdlog::level::err:
      return 3;
    case spdlog::level::warn:
      return 4;
    case spdlog::level::info:
      return 6;
    default:
      return 7;
  }
}

void InstallLogger(const std::string& level, bool journal) {
  spdlog::drop("freshd");
  auto logger = spdlog::stderr_logger_mt("freshd");
  if (journal) {
    auto formatter = std::make_unique<spdlog::pattern_formatter>();
    formatter->add_flag<PriorityFlag>('*').set_pattern("<%*>%v");
    logger->set_formatter(std::move(formatter));
  } else {
    logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %l %v");
  }
  logger->set_level(spdlog::level::from_str(level));
  // Errors reach the journal (or the terminal) at once, not at exit.
  logger->flush_on(spdlog::level::warn);
  spdlog::set_default_logger(logger);
}

std::string ProgressLine(const nlohmann::json& s) {
  auto num = [&](const char* key) {
    return s.contains(key) && s[key].is_number() ? s[key].get<double>() : 0.0;
  };
  char head[256];
  std::snprintf(
      head, sizeof head,
      "%.0f pages, %.0f fetched, %.3g/%.3g pages/s, est. freshness "
      "%.3f, %.0f in flight",
      num("pages_known"), num("pages_fetched_total"), num("rate_actual"),
      num("rate_target"), num("estimated_freshness"),
      s.contains("in_flight") ? s["in_flight"].value("total", 0.0) : 0.0);
  std::string line = head;
  std::string errors;
  if (s.contains("errors") && s["errors"].is_object()) {
    for (const auto& [name, count] : s["errors"].items()) {
      if (!count.is_number() || count.get<double>() == 0) continue;
      errors += ' ' + name + '=' + std::to_string(count.get<uint64_t>());
    }
  }
  line += errors.empty() ? ", no errors" : ", errors" + errors;
  return line;
}

}  // namespace freshd::daemon
