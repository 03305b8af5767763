// WarcWriter: WARC/1.1 output (ISO 28500:2017) of what the fetcher saw.
//
// Writes warcinfo (first record of every file: software, format,
// conformsTo, hostname, operator, user agent, robots policy), request,
// response and revisit records (profiles identical-payload-digest and
// server-not-modified of WARC 1.1 §6.7). Each record is its own gzip
// member, so readers can seek to any record. Every record carries
// WARC-Record-ID (<urn:uuid:v4>), WARC-Date, Content-Length and
// WARC-Block-Digest; HTTP records also carry WARC-Target-URI and
// WARC-Payload-Digest, as "sha1:" + RFC 4648 base32.
// Files are "<prefix>-<UTC yyyymmddhhmmss>-<serial>-<pid>.warc.gz", written
// as "<name>.open" and renamed after fsync on rotation (by size) or
// Close(), then indexed as "<prefix>-...-<pid>.cdxj" (store/cdxj.h). Files
// a killed writer left ".open" are finished by store::RecoverOpenWarcFiles.
// The writer never reads a clock: the caller passes each record's date.
// Thread-safety: a WarcWriter is safe for concurrent use by several threads.

#ifndef FRESHD_STORE_WARC_WRITER_H_
#define FRESHD_STORE_WARC_WRITER_H_

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/status.h"

namespace freshd::store {

struct CdxjRecord;

struct WarcWriterOptions {
  std::string dir;                      // must exist and be writable
  std::string prefix = "freshd";        // file name prefix
  uint64_t rotate_bytes = 1ull << 30;   // start a new file past this size
  std::string software = "freshd/0.1";  // warcinfo "software:"
  std::string operator_contact;         // warcinfo "operator:" (optional)
  std::string user_agent;               // warcinfo "http-header-user-agent:"
  std::string robots_policy = "obey";   // warcinfo "robots:" ("" = omit)
  // Write "<name>.cdxj" (store/cdxj.h) beside each file when it is closed;
  // the lines are kept in memory until then (one short line per record).
  bool cdxj = true;
  // Keep the last N payload digests and write an identical-payload-digest
  // revisit instead of a response when a payload repeats. 0 = off.
  size_t dedup_entries = 0;
};

// One HTTP exchange to archive. The heads are the exact bytes of the request
// and of the response status line + header fields, each ending in CRLF CRLF;
// body is the entity as stored. If the fetcher decoded the body (gzip,
// chunked), build response_head with ArchivableResponseHead() so the headers
// describe the stored bytes.
struct WarcExchange {
  std::string target_uri;
  double date = 0.0;          // Unix seconds the fetch started
  std::string ip_address;     // WARC-IP-Address, optional
  std::string request_head;   // empty: no request record
  std::string response_head;  // "HTTP/1.1 200 OK\r\n...\r\n\r\n"
  std::string_view body;      // must outlive the call
  // WarcSha1Digest(body) if the caller computed it already; empty: the
  // writer computes it.
  std::string payload_digest;
};

// A revisit of a server-not-modified (304) or identical payload. The block
// is response_head only. refers_to_* identify the original capture when
// known (empty/0 = unknown); payload_digest is the original's, if known.
struct WarcRevisit {
  enum class Profile { kIdenticalPayloadDigest, kServerNotModified };
  Profile profile = Profile::kServerNotModified;
  std::string target_uri;
  double date = 0.0;
  std::string ip_address;
  std::string request_head;  // empty: no request record
  std::string response_head;
  std::string refers_to_record_id;  // "<urn:uuid:...>"
  std::string refers_to_target_uri;
  double refers_to_date = 0.0;
  std::string payload_digest;  // "sha1:..."
};

// What was written: record ids and digests, for callers that keep them.
struct WarcWritten {
  std::string request_id;      // "" when no request record was written
  std::string response_id;     // id of the response or revisit record
  bool revisit = false;        // dedup turned a response into a revisit
  std::string payload_digest;  // "sha1:..." ("" for a 304 revisit w/o one)
  std::string file;            // final (not .open) name of the file
  // Byte offset in `file` of the response (or revisit) record's gzip
  // member: where a reader seeks to read it.
  uint64_t offset = 0;
};

class WarcWriter {
 public:
  // Validates options (dir exists, rotate_bytes > 0). No file is created
  // until the first record. Errors: InvalidArgument, IOError.
  static Result<std::unique_ptr<WarcWriter>> Open(WarcWriterOptions options);

  ~WarcWriter();  // Close()s, ignoring its result
  WarcWriter(const WarcWriter&) = delete;
  WarcWriter& operator=(const WarcWriter&) = delete;

  // Writes a request record (if request_head is set) and a response record
  // (WARC-Concurrent-To each other) to the same file, rotating first if the
  // current file is over rotate_bytes. With dedup on and a repeated payload,
  // a revisit record replaces the response. Errors: InvalidArgument (empty
  // target_uri or response_head not ending in CRLF CRLF), IOError,
  // Unavailable after Close().
  Result<WarcWritten> WriteExchange(const WarcExchange& exchange);

  // Writes a request record (optional) and a revisit record. Same errors.
  Result<WarcWritten> WriteRevisit(const WarcRevisit& revisit);

  // Closes the current file (fsync, rename .open away). Idempotent; the
  // writer accepts no records afterwards.
  Status Close();

  // Final names of the files completed so far (rotated or closed).
  std::vector<std::string> finished_files() const;

 private:
  explicit WarcWriter(WarcWriterOptions options);
  // All REQUIRE mu_ held.
  Status StartFile(double date);  // opens a new .open file + warcinfo
  // *offsets (if given): each record's member offset in the file.
  Status AppendMembers(const std::vector<std::string>& records,
                       std::vector<uint64_t>* offsets = nullptr);
  // Appends, indexes the last record as `index` (if given; its offset,
  // length and filename are filled in here), then rotates if due.
  Status WriteLocked(const std::vector<std::string>& records,
                     std::vector<uint64_t>* offsets = nullptr,
                     CdxjRecord* index = nullptr);
  Status FinishFile();  // fsync, close, rename; no-op without a file

  const WarcWriterOptions options_;
  mutable std::mutex mu_;
  // Guarded by mu_.
  int fd_ = -1;
  std::string open_path_;    // ".../name.warc.gz.open"
  std::string final_path_;   // ".../name.warc.gz"
  std::string warcinfo_id_;  // of the current file
  uint64_t file_bytes_ = 0;
  uint64_t serial_ = 0;
  bool closed_ = false;
  std::vector<std::string> finished_;
  std::vector<std::string> cdxj_lines_;  // of the current file
  // Dedup memory: payload digest -> (record id, target uri, date), LRU.
  struct Original {
    std::string record_id, target_uri;
    double date;
  };
  std::list<std::pair<std::string, Original>> lru_;
  std::unordered_map<std::string,
                     std::list<std::pair<std::string, Original>>::iterator>
      by_digest_;
};

// Rewrites a response head so it describes a decoded, de-chunked body of
// body_bytes: Content-Encoding, Transfer-Encoding and Content-Length become
// X-Crawler-Content-Encoding etc. and a correct Content-Length is added.
// `status_line` is e.g. "HTTP/1.1 200 OK"; header fields are (name, value).
std::string ArchivableResponseHead(
    std::string_view status_line,
    const std::vector<std::pair<std::string, std::string>>& headers,
    uint64_t body_bytes, bool body_decoded);

// "sha1:" + base32 (RFC 4648, with padding) of SHA-1(data).
std::string WarcSha1Digest(std::string_view data);

}  // namespace freshd::store

#endif  // FRESHD_STORE_WARC_WRITER_H_
