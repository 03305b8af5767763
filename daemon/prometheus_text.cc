#include "daemon/prometheus_text.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace freshd::daemon {
namespace {

void AppendEscaped(std::string& out, std::string_view s, bool quote) {
  for (char c : s) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (quote && c == '"') {
      out += "\\\"";
    } else {
      out += c;
    }
  }
}

void AppendValue(std::string& out, double v) {
  if (std::isnan(v)) {
    out += "NaN";
  } else if (std::isinf(v)) {
    out += v > 0 ? "+Inf" : "-Inf";
  } else {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    out += buf;
  }
}

// Seconds since the epoch at which the system booted (/proc/stat btime).
double BootTime() {
  std::ifstream in("/proc/stat");
  std::string key;
  while (in >> key) {
    if (key == "btime") {
      double t = 0;
      in >> t;
      return t;
    }
    in.ignore(1 << 20, '\n');
  }
  return 0;
}

}  // namespace

void PrometheusText::Family(std::string_view name, std::string_view type,
                            std::string_view help) {
  out_ += "# HELP ";
  out_ += name;
  out_ += ' ';
  AppendEscaped(out_, help, false);
  out_ += "\n# TYPE ";
  out_ += name;
  out_ += ' ';
  out_ += type;
  out_ += '\n';
}

void PrometheusText::Sample(std::string_view name, const MetricLabels& labels,
                            double value) {
  out_ += name;
  if (!labels.empty()) {
    out_ += '{';
    for (size_t i = 0; i < labels.size(); ++i) {
      if (i > 0) out_ += ',';
      out_ += labels[i].first;
      out_ += "=\"";
      AppendEscaped(out_, labels[i].second, true);
      out_ += '"';
    }
    out_ += '}';
  }
  out_ += ' ';
  AppendValue(out_, value);
  out_ += '\n';
}

void PrometheusText::Gauge(std::string_view name, std::string_view help,
                           double value) {
  Family(name, "gauge", help);
  Sample(name, {}, value);
}

void PrometheusText::Counter(std::string_view name, std::string_view help,
                             double value) {
  Family(name, "counter", help);
  Sample(name, {}, value);
}

void AppendProcessMetrics(PrometheusText& out) {
  const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  // /proc/self/stat: fields after the parenthesised command name; utime and
  // stime are fields 14 and 15, starttime 22, vsize 23, rss 24 (proc(5)).
  std::ifstream stat_in("/proc/self/stat");
  std::string stat((std::istreambuf_iterator<char>(stat_in)), {});
  const size_t paren = stat.rfind(')');
  if (paren != std::string::npos && tick > 0) {
    std::istringstream fields(stat.substr(paren + 2));
    std::vector<std::string> f;
    std::string field;
    while (fields >> field) f.push_back(field);
    // f[0] is field 3 (state).
    if (f.size() >= 22) {
      const double utime = std::stod(f[11]), stime = std::stod(f[12]);
      out.Counter("process_cpu_seconds_total",
                  "Total user and system CPU time spent in seconds.",
                  (utime + stime) / tick);
      const double boot = BootTime();
      if (boot > 0) {
        out.Gauge("process_start_time_seconds",
                  "Start time of the process since unix epoch in seconds.",
                  boot + std::stod(f[19]) / tick);
      }
      out.Gauge("process_virtual_memory_bytes", "Virtual memory size in bytes.",
                std::stod(f[20]));
      out.Gauge("process_resident_memory_bytes",
                "Resident memory size in bytes.", std::stod(f[21]) * page);
    }
  }
  if (DIR* dir = opendir("/proc/self/fd")) {
    double fds = 0;
    while (dirent* e = readdir(dir)) {
      if (e->d_name[0] != '.') ++fds;
    }
    closedir(dir);
    out.Gauge("process_open_fds", "Number of open file descriptors.",
              fds - 1);  // the directory's own descriptor
  }
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0) {
    out.Gauge("process_max_fds", "Maximum number of open file descriptors.",
              limit.rlim_cur == RLIM_INFINITY
                  ? INFINITY
                  : static_cast<double>(limit.rlim_cur));
  }
}

void AppendBuildInfo(PrometheusText& out, std::string_view version) {
  out.Family("freshd_build_info", "gauge",
             "Always 1; the labels name the build.");
  out.Sample("freshd_build_info",
             {{"version", std::string(version)},
              {"compiler", __VERSION__},
              {"cplusplus", std::to_string(__cplusplus)}},
             1);
}

}  // namespace freshd::daemon
