// libFuzzer target for parse/robots: any bytes parse, and matching any
// agent/path against the result terminates and is deterministic. Input
// layout: agent '\n' path '\n' robots.txt body.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "parse/robots.h"
#include "parse/url.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  size_t a = in.find('\n');
  std::string_view agent =
      a == std::string_view::npos ? "freshd" : in.substr(0, a);
  std::string_view rest = a == std::string_view::npos ? in : in.substr(a + 1);
  size_t p = rest.find('\n');
  std::string_view path = p == std::string_view::npos ? "/" : rest.substr(0, p);
  std::string_view body =
      p == std::string_view::npos ? rest : rest.substr(p + 1);

  freshd::parse::RobotsTxt robots = freshd::parse::ParseRobotsTxt(body);
  bool first = robots.IsAllowed(agent, path);
  if (first != robots.IsAllowed(agent, path)) __builtin_trap();
  (void)robots.IsUrlAllowed(agent, path);
  (void)robots.CrawlDelay(agent);
  (void)robots.ResolvedSitemaps("http://fuzz.example/robots.txt");
  if (robots.anomalies().size() > freshd::parse::kMaxRobotsAnomalies)
    __builtin_trap();
  return 0;
}
