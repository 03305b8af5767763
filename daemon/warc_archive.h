// One fetch outcome as WARC records (store/warc_writer.h): an ok response
// becomes request + response records, a 304 request + a server-not-modified
// revisit; other outcomes write nothing. The response head is rewritten
// with ArchivableResponseHead so it describes the stored (encoded) bytes.
// Used by `freshd fetch --warc` and by the daemon ([store] warc_dir).
// Thread-safety: as WarcWriter (safe from several threads).

#ifndef FRESHD_DAEMON_WARC_ARCHIVE_H_
#define FRESHD_DAEMON_WARC_ARCHIVE_H_

#include "base/status.h"
#include "fetch/outcome.h"
#include "store/warc_writer.h"

namespace freshd::daemon {

// Archives `result` (fetched with keep_raw) as fetched at `started_unix`.
// OK when nothing needed writing; the writer's error otherwise. *written
// (if given) tells what was written (its `file` empty: nothing).
Status ArchiveFetch(store::WarcWriter& warc, const fetch::FetchResult& result,
                    double started_unix, store::WarcWritten* written = nullptr);

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_WARC_ARCHIVE_H_
