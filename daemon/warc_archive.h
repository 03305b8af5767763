// One fetch outcome as WARC records (store/warc_writer.h). First each
// redirect response followed (FetchResult::redirect_hops) as request +
// response records, then the last response:
//   ok (2xx)        request + response, or request + an identical-payload-
//                   digest revisit when ArchiveContext names an earlier
//                   capture of the same payload;
//   304             request + a server-not-modified revisit naming the
//                   page's last capture when known;
//   3xx not followed (loop, bad target, too many), 4xx, 5xx
//                   request + response (4xx/5xx only with `errors`);
// anything without a complete response (network errors, a body cut at a
// limit, robots-denied) writes nothing. The response head is rewritten
// with ArchivableResponseHead so it describes the stored (encoded) bytes.
// Used by `freshd fetch --warc` and by the daemon ([store] warc_dir).
// Thread-safety: as WarcWriter (safe from several threads).

#ifndef FRESHD_DAEMON_WARC_ARCHIVE_H_
#define FRESHD_DAEMON_WARC_ARCHIVE_H_

#include <string>

#include "base/status.h"
#include "fetch/outcome.h"
#include "store/records.h"
#include "store/warc_writer.h"

namespace freshd::daemon {

// What to archive and what is known of earlier captures (the daemon's
// writer reads them from the store: daemon/store_writer.h). Pointers may
// be null (unknown).
struct ArchiveContext {
  bool errors = true;  // archive 4xx/5xx responses ([store] warc_errors)
  std::string payload_digest;  // WarcSha1Digest(raw_body) if computed
  // An ok response's payload was archived before: write a revisit of it.
  const store::WarcCapture* original = nullptr;
  // A 304's page was last archived as this capture: its revisit names it.
  const store::WarcCapture* previous = nullptr;
};

// Archives `result` (fetched with keep_raw) as fetched at `started_unix`.
// OK when nothing needed writing; the writer's first error otherwise (the
// records after it are still tried). *written (if given) tells what was
// written for the last response (its `file` empty: nothing).
Status ArchiveFetch(store::WarcWriter& warc, const fetch::FetchResult& result,
                    double started_unix, store::WarcWritten* written = nullptr,
                    const ArchiveContext& context = {});

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_WARC_ARCHIVE_H_
