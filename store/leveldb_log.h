// CapturedLevelDbLog: a leveldb::Logger that keeps LevelDB's info log in
// memory instead of a LOG file, so what LevelDB says about damage (dropped
// log bytes, corrupt blocks met by a compaction, what RepairDB salvaged and
// lost) reaches freshd's own reports. Keeps the last 1,000 lines (each cut
// at 1 KiB) and, separately, the last 1,000 that report damage.
// Thread-safe: LevelDB logs from its background thread.

#ifndef FRESHD_STORE_LEVELDB_LOG_H_
#define FRESHD_STORE_LEVELDB_LOG_H_

#include <leveldb/env.h>

#include <cstdarg>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace freshd::store {

class CapturedLevelDbLog : public leveldb::Logger {
 public:
  static constexpr size_t kMaxLines = 1000;
  static constexpr size_t kMaxLineBytes = 1024;

  void Logv(const char* format, std::va_list ap) override;

  std::vector<std::string> lines() const;
  std::vector<std::string> damage_lines() const;

  // Whether a LevelDB log line reports lost or damaged data.
  static bool ReportsDamage(std::string_view line);

 private:
  mutable std::mutex mu_;
  std::deque<std::string> lines_;
  std::deque<std::string> damage_;
};

}  // namespace freshd::store

#endif  // FRESHD_STORE_LEVELDB_LOG_H_
