#include "store/cdxj.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "base/ascii.h"

namespace freshd::store {
namespace {

bool IEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (AsciiLower(a[i]) != AsciiLower(b[i])) return false;
  }
  return true;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

// JSON string literal (RFC 8259): quotes, backslash and control characters
// escaped; other bytes (UTF-8) as they are.
void AppendJsonString(std::string* out, std::string_view s) {
  out->push_back('"');
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        *out += "\\\"";
        break;
      case '\\':
        *out += "\\\\";
        break;
      case '\n':
        *out += "\\n";
        break;
      case '\r':
        *out += "\\r";
        break;
      case '\t':
        *out += "\\t";
        break;
      case '\b':
        *out += "\\b";
        break;
      case '\f':
        *out += "\\f";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          *out += buf;
        } else {
          out->push_back(static_cast<char>(c));
        }
    }
  }
  out->push_back('"');
}

// Calls fn(name, value) for each "Name: value" line of a header block (the
// first line, a status or version line, is skipped when skip_first).
template <typename Fn>
void ForEachField(std::string_view head, bool skip_first, Fn fn) {
  size_t pos = 0;
  bool first = true;
  while (pos < head.size()) {
    size_t end = head.find('\n', pos);
    if (end == std::string_view::npos) end = head.size();
    std::string_view line = head.substr(pos, end - pos);
    pos = end + 1;
    if (first && skip_first) {
      first = false;
      continue;
    }
    first = false;
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    fn(Trim(line.substr(0, colon)), Trim(line.substr(colon + 1)));
  }
}

std::string BaseName(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string WithoutOpen(const std::string& name) {
  constexpr std::string_view kOpen = ".open";
  if (name.size() > kOpen.size() &&
      name.compare(name.size() - kOpen.size(), kOpen.size(), kOpen) == 0)
    return name.substr(0, name.size() - kOpen.size());
  return name;
}

Status Errno(std::string_view what, const std::string& path) {
  return Status::IOError(std::string(what) + " " + path + ": " +
                         std::strerror(errno));
}

// The CDXJ record of one decompressed WARC record (its first bytes), or
// false if it is not a response/revisit record.
bool RecordFacts(std::string_view data, CdxjRecord* r) {
  size_t end = data.find("\r\n\r\n");
  if (end == std::string_view::npos || data.substr(0, 5) != "WARC/")
    return false;
  std::string content_type;
  ForEachField(data.substr(0, end), true,
               [&](std::string_view name, std::string_view value) {
                 if (IEquals(name, "WARC-Type")) r->warc_type = value;
                 if (IEquals(name, "WARC-Target-URI")) r->url = value;
                 if (IEquals(name, "WARC-Date")) r->warc_date = value;
                 if (IEquals(name, "WARC-Payload-Digest"))
                   r->payload_digest = value;
                 if (IEquals(name, "Content-Type")) content_type = value;
               });
  if (r->warc_type != "response" && r->warc_type != "revisit") return false;
  if (content_type.rfind("application/http", 0) == 0) {
    HttpHeadFacts(data.substr(end + 4), &r->status, &r->mime);
  }
  return true;
}

}  // namespace

std::string SurtUrlKey(std::string_view url_in) {
  std::string url = AsciiLowerCopy(url_in);
  size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos ||
      (url.compare(0, scheme_end, "http") != 0 &&
       url.compare(0, scheme_end, "https") != 0)) {
    return std::string(url_in);
  }
  const bool https = url.compare(0, scheme_end, "https") == 0;
  std::string rest = url.substr(scheme_end + 3);
  size_t path_at = rest.find_first_of("/?#");
  std::string authority = rest.substr(0, path_at);
  std::string tail = path_at == std::string::npos ? "" : rest.substr(path_at);
  if (size_t at = authority.rfind('@'); at != std::string::npos)
    authority.erase(0, at + 1);
  std::string host = authority, port;
  if (size_t colon = authority.rfind(':');
      colon != std::string::npos && authority.find(']') == std::string::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }
  if ((port == "80" && !https) || (port == "443" && https)) port.clear();
  // A leading "www", "www1", ... label is dropped.
  if (host.rfind("www", 0) == 0) {
    size_t i = 3;
    while (i < host.size() && host[i] >= '0' && host[i] <= '9') ++i;
    if (i < host.size() && host[i] == '.') host.erase(0, i + 1);
  }
  std::vector<std::string> labels;
  size_t start = 0;
  for (;;) {
    size_t dot = host.find('.', start);
    labels.push_back(host.substr(start, dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  std::string key;
  for (size_t i = labels.size(); i-- > 0;) {
    key += labels[i];
    if (i > 0) key += ',';
  }
  if (!port.empty()) key += ":" + port;
  key += ')';
  if (size_t hash = tail.find('#'); hash != std::string::npos) tail.erase(hash);
  size_t q = tail.find('?');
  std::string path = tail.substr(0, q);
  key += path.empty() ? "/" : path;
  if (q != std::string::npos && q + 1 < tail.size()) {
    std::vector<std::string> args;
    std::string query = tail.substr(q + 1);
    size_t from = 0;
    for (;;) {
      size_t amp = query.find('&', from);
      args.push_back(query.substr(from, amp - from));
      if (amp == std::string::npos) break;
      from = amp + 1;
    }
    std::sort(args.begin(), args.end());
    key += '?';
    for (size_t i = 0; i < args.size(); ++i) {
      if (i > 0) key += '&';
      key += args[i];
    }
  }
  return key;
}

void HttpHeadFacts(std::string_view head, int* status, std::string* mime) {
  *status = 0;
  mime->clear();
  if (head.substr(0, 5) != "HTTP/") return;
  size_t sp = head.find(' ');
  if (sp != std::string_view::npos && sp + 4 <= head.size()) {
    int code = 0;
    bool digits = true;
    for (size_t i = sp + 1; i < sp + 4; ++i) {
      if (head[i] < '0' || head[i] > '9') digits = false;
      code = code * 10 + (head[i] - '0');
    }
    if (digits) *status = code;
  }
  size_t end = head.find("\r\n\r\n");
  ForEachField(head.substr(0, end), true,
               [&](std::string_view name, std::string_view value) {
                 if (!IEquals(name, "Content-Type") || !mime->empty()) return;
                 *mime = std::string(Trim(value.substr(0, value.find(';'))));
               });
}

std::string CdxjLine(const CdxjRecord& r) {
  std::string timestamp;
  for (char c : r.warc_date) {
    if (c >= '0' && c <= '9') timestamp.push_back(c);
  }
  timestamp.resize(14, '0');
  std::string line = SurtUrlKey(r.url) + " " + timestamp + " {\"url\":";
  AppendJsonString(&line, r.url);
  const std::string mime = r.warc_type == "revisit" ? "warc/revisit" : r.mime;
  if (!mime.empty()) {
    line += ",\"mime\":";
    AppendJsonString(&line, mime);
  }
  if (r.status > 0) line += ",\"status\":\"" + std::to_string(r.status) + "\"";
  if (!r.payload_digest.empty()) {
    size_t colon = r.payload_digest.find(':');
    line += ",\"digest\":";
    AppendJsonString(&line, colon == std::string::npos
                                ? r.payload_digest
                                : r.payload_digest.substr(colon + 1));
  }
  line += ",\"length\":\"" + std::to_string(r.length) + "\",\"offset\":\"" +
          std::to_string(r.offset) + "\",\"filename\":";
  AppendJsonString(&line, r.filename);
  line += '}';
  return line;
}

std::string CdxjPathFor(const std::string& warc_path) {
  std::string p = WithoutOpen(warc_path);
  constexpr std::string_view kGz = ".warc.gz";
  if (p.size() > kGz.size() &&
      p.compare(p.size() - kGz.size(), kGz.size(), kGz) == 0)
    p.resize(p.size() - kGz.size());
  return p + ".cdxj";
}

Result<std::vector<std::string>> IndexWarcFile(const std::string& path,
                                               uint64_t* valid_bytes) {
  if (valid_bytes != nullptr) *valid_bytes = 0;
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"),
                                          &std::fclose);
  if (!f) return Errno("open", path);
  const std::string filename = WithoutOpen(BaseName(path));
  // The first bytes of each record are enough for its headers and the
  // HTTP head; the rest is inflated only to find the member's end.
  constexpr size_t kKeep = 64 * 1024;
  std::vector<std::string> lines;
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 16) != Z_OK)
    return Status::Internal("inflateInit2 failed");
  std::unique_ptr<z_stream, int (*)(z_stream*)> guard(&zs, &inflateEnd);
  std::vector<unsigned char> in(1 << 16);
  unsigned char out[1 << 15];
  uint64_t consumed = 0;      // compressed bytes fed to zlib so far
  uint64_t member_start = 0;  // of the member being inflated
  uint64_t good_end = 0;      // end of the last complete member
  std::string head;           // the member's first kKeep bytes
  bool eof = false;
  for (;;) {
    if (zs.avail_in == 0) {
      if (eof) break;
      size_t n = std::fread(in.data(), 1, in.size(), f.get());
      if (n == 0) {
        if (std::ferror(f.get())) return Errno("read", path);
        eof = true;
        break;
      }
      zs.next_in = in.data();
      zs.avail_in = static_cast<uInt>(n);
    }
    const uInt before = zs.avail_in;
    zs.next_out = out;
    zs.avail_out = sizeof(out);
    int rc = inflate(&zs, Z_NO_FLUSH);
    consumed += before - zs.avail_in;
    const size_t produced = sizeof(out) - zs.avail_out;
    if (head.size() < kKeep) {
      head.append(reinterpret_cast<char*>(out),
                  std::min(produced, kKeep - head.size()));
    }
    if (rc == Z_STREAM_END) {
      CdxjRecord r;
      if (RecordFacts(head, &r)) {
        r.offset = member_start;
        r.length = consumed - member_start;
        r.filename = filename;
        lines.push_back(CdxjLine(r));
      }
      good_end = consumed;
      member_start = consumed;
      head.clear();
      inflateReset(&zs);
      continue;
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) break;  // damaged: stop here
    if (rc == Z_BUF_ERROR && zs.avail_in != 0) break;
  }
  if (good_end == 0 && consumed > 0)
    return Status::Corruption(path + ": no complete gzip member");
  if (valid_bytes != nullptr) *valid_bytes = good_end;
  std::sort(lines.begin(), lines.end());
  return lines;
}

Status WriteCdxjFile(const std::string& path, std::vector<std::string> lines) {
  std::sort(lines.begin(), lines.end());
  std::string data;
  for (const std::string& l : lines) {
    data += l;
    data += '\n';
  }
  const std::string tmp = path + ".tmp";
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("create", tmp);
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      Status s = Errno("write", tmp);
      close(fd);
      unlink(tmp.c_str());
      return s;
    }
    done += static_cast<size_t>(n);
  }
  if (fsync(fd) != 0) {
    Status s = Errno("fsync", tmp);
    close(fd);
    unlink(tmp.c_str());
    return s;
  }
  if (close(fd) != 0) return Errno("close", tmp);
  if (rename(tmp.c_str(), path.c_str()) != 0) return Errno("rename", tmp);
  return Status::OK();
}

Result<std::vector<std::string>> RecoverOpenWarcFiles(
    const std::string& dir, const std::string& prefix) {
  std::unique_ptr<DIR, int (*)(DIR*)> d(opendir(dir.c_str()), &closedir);
  if (!d) return Errno("open directory", dir);
  constexpr std::string_view kSuffix = ".warc.gz.open";
  std::vector<std::string> names;
  while (dirent* e = readdir(d.get())) {
    std::string name = e->d_name;
    if (name.size() > kSuffix.size() + prefix.size() &&
        name.rfind(prefix + "-", 0) == 0 &&
        name.compare(name.size() - kSuffix.size(), kSuffix.size(), kSuffix) ==
            0) {
      names.push_back(name);
    }
  }
  std::sort(names.begin(), names.end());
  std::vector<std::string> done;
  Status first;
  for (const std::string& name : names) {
    // "<prefix>-<time>-<serial>-<pid>.warc.gz.open": is its writer alive?
    const std::string stem = name.substr(0, name.size() - kSuffix.size());
    const size_t dash = stem.rfind('-');
    const std::string pid_text =
        dash == std::string::npos ? "" : stem.substr(dash + 1);
    if (!pid_text.empty() &&
        pid_text.find_first_not_of("0123456789") == std::string::npos &&
        pid_text.size() < 10) {
      const pid_t pid = static_cast<pid_t>(std::stol(pid_text));
      if (pid != getpid() && pid > 0 && (kill(pid, 0) == 0 || errno == EPERM))
        continue;  // another process is writing it
    }
    const std::string open_path = dir + "/" + name;
    const std::string final_path = open_path.substr(0, open_path.size() - 5);
    struct stat st {};
    if (stat(final_path.c_str(), &st) == 0) {
      if (first.ok())
        first = Status::IOError(final_path + " exists; " + open_path +
                                " left as it is");
      continue;
    }
    uint64_t valid = 0;
    auto lines = IndexWarcFile(open_path, &valid);
    if (!lines.ok() && lines.status().code() != Status::Code::kCorruption) {
      if (first.ok()) first = lines.status();
      continue;
    }
    int fd = open(open_path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0 || ftruncate(fd, static_cast<off_t>(valid)) != 0 ||
        fsync(fd) != 0) {
      if (first.ok()) first = Errno("truncate", open_path);
      if (fd >= 0) close(fd);
      continue;
    }
    close(fd);
    if (valid == 0) {  // nothing readable: no file to keep
      unlink(open_path.c_str());
      continue;
    }
    if (rename(open_path.c_str(), final_path.c_str()) != 0) {
      if (first.ok()) first = Errno("rename", open_path);
      continue;
    }
    if (Status s = WriteCdxjFile(
            CdxjPathFor(final_path),
            lines.ok() ? std::move(lines).value() : std::vector<std::string>{});
        !s.ok() && first.ok()) {
      first = s;
    }
    done.push_back(final_path);
  }
  int dir_fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    (void)fsync(dir_fd);
    close(dir_fd);
  }
  if (!first.ok()) return first;
  return done;
}

}  // namespace freshd::store
