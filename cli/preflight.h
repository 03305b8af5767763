// Operator errors caught before the daemon starts (issue #26): what
// `freshd check-config` checks beyond the config's own content, so that a
// unit's ExecStartPre fails with a clear message instead of `run` failing
// (and being restarted) later. Each check returns InvalidArgument with a
// message naming the key and the path or address at fault. Not pure (reads
// the file system, binds a socket briefly); thread-safe.
#ifndef FRESHD_CLI_PREFLIGHT_H_
#define FRESHD_CLI_PREFLIGHT_H_

#include <string>

#include "base/status.h"
#include "conf/config.h"

namespace freshd::cli {

// The seeds file (`seeds_path`, or [crawler] seeds when empty; nothing to
// check when both are) exists, is readable and parses (daemon/seeds.h).
[[nodiscard]] Status CheckSeedsFile(const Config& config,
                                    const std::string& seeds_path = "");

// [store] warc_dir (when set) is a writable directory, or could be created:
// its nearest existing ancestor is a writable directory. Creates nothing.
[[nodiscard]] Status CheckWarcDir(const Config& config);

// [status] listen, and [push] listen when set, can be bound now (binds and
// releases each at once), or are held by a running freshd whose status
// endpoint answers at [status] listen (the daemon this config is checked for
// before a reload: `check-config && reload`).
[[nodiscard]] Status CheckListenAddress(const Config& config);

// The secrets `run` reads at start: [fetch] proxy_credentials_file and each
// origin rule's credentials_file or credential ($CREDENTIALS_DIRECTORY as
// this process sees it) exist, are readable by no one else and parse.
// Messages name the key, the file and its mode, never its content.
[[nodiscard]] Status CheckCredentialFiles(const Config& config);

// All four, first failure wins.
[[nodiscard]] Status Preflight(const Config& config);

// `run`: creates [store] warc_dir (and its parents) when set and missing,
// as the store directory is created.
[[nodiscard]] Status CreateWarcDir(const Config& config);

}  // namespace freshd::cli

#endif  // FRESHD_CLI_PREFLIGHT_H_
