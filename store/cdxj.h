// CDXJ indexes of WARC files: one line per response or revisit record,
// "<urlkey> <timestamp> <json>", sorted, as pywb and warcio.js
// (`warcio cdx-index --format cdxj`) write them, so a replay tool finds a
// capture by URL and time: urlkey is the SURT form of WARC-Target-URI
// (lower case, leading "www<n>." dropped, host labels reversed and joined
// by ",", ":port" if not the default, ")", path, "?" + the query's
// arguments sorted), timestamp the 14 digits of WARC-Date, and the JSON
// holds url, mime (the HTTP Content-Type's media type; "warc/revisit" for
// revisits), status (HTTP), digest (WARC-Payload-Digest without "sha1:"),
// length and offset (of the record's gzip member) and filename; status,
// length and offset are JSON strings, as warcio.js 2.4 and pywb write them.
// WarcWriter writes "<name>.cdxj" beside each "<name>.warc.gz" it closes;
// IndexWarcFile rebuilds the lines from a file (`freshd cdx`, and files
// left as ".open" by a crash: RecoverOpenWarcFiles).
// Thread-safety: pure functions; the file functions touch only their paths.

#ifndef FRESHD_STORE_CDXJ_H_
#define FRESHD_STORE_CDXJ_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace freshd::store {

struct CdxjRecord {
  std::string url;             // WARC-Target-URI
  std::string warc_date;       // WARC-Date, "YYYY-MM-DDThh:mm:ssZ"
  std::string warc_type;       // "response" or "revisit"
  std::string mime;            // media type of the HTTP Content-Type; ""
  int status = 0;              // HTTP status; 0: none
  std::string payload_digest;  // "sha1:..."; "": none
  uint64_t offset = 0;         // of the record's gzip member in the file
  uint64_t length = 0;         // the member's bytes
  std::string filename;        // the WARC file's name (no directory)
};

// The SURT url key of `url` (above); a non-http(s) URL is returned as is.
std::string SurtUrlKey(std::string_view url);

// One CDXJ line, without the newline.
std::string CdxjLine(const CdxjRecord& record);

// The media type of an HTTP head's Content-Type ("" if none) and its
// status code (0 if the head does not start with "HTTP/x nnn").
void HttpHeadFacts(std::string_view http_head, int* status, std::string* mime);

// The name of the index of WARC file `warc_path`: its ".warc.gz" (or
// ".warc.gz.open") suffix replaced by ".cdxj".
std::string CdxjPathFor(const std::string& warc_path);

// Reads a gzip-per-record WARC file (any file freshd writes) and returns
// its CDXJ lines, sorted (filename: the file's name without ".open").
// *valid_bytes (if given): the end of the last complete gzip member, so a
// file cut short by a crash can be truncated there. Errors: IOError;
// Corruption if the file does not start with a readable member.
Result<std::vector<std::string>> IndexWarcFile(const std::string& path,
                                               uint64_t* valid_bytes = nullptr);

// Sorts `lines` and writes them, one per line, to `path` via a temporary
// file, fsync and rename. Errors: IOError.
Status WriteCdxjFile(const std::string& path, std::vector<std::string> lines);

// Finishes files a killed writer left in `dir` as "<name>.warc.gz.open"
// (prefix "<prefix>-"), except those whose writer (the pid in the name) is
// still running: each is cut after its last complete record, fsynced,
// renamed to "<name>.warc.gz" and indexed ("<name>.cdxj"). Returns the
// final paths. A file whose final name exists already is left alone and
// reported in the error (the others are still finished).
Result<std::vector<std::string>> RecoverOpenWarcFiles(
    const std::string& dir, const std::string& prefix);

}  // namespace freshd::store

#endif  // FRESHD_STORE_CDXJ_H_
