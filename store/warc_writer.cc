#include "store/warc_writer.h"

#include <fcntl.h>
#include <openssl/sha.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "store/cdxj.h"
#include "store/warc_format.h"

namespace freshd::store {
namespace {

constexpr char kProfileIdentical[] =
    "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest";
constexpr char kProfileNotModified[] =
    "http://netpreserve.org/warc/1.1/revisit/server-not-modified";
constexpr char kHttpRequestType[] = "application/http;msgtype=request";
constexpr char kHttpResponseType[] = "application/http;msgtype=response";

using Fields = std::vector<std::pair<std::string, std::string>>;

Status Errno(std::string_view what, const std::string& path) {
  return Status::IOError(std::string(what) + " " + path + ": " +
                         std::strerror(errno));
}

bool HasLineBreak(std::string_view s) {
  return s.find_first_of("\r\n") != std::string_view::npos;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

std::string WithoutLineBreaks(std::string_view s) {
  std::string out;
  for (char c : s) out.push_back(c == '\r' || c == '\n' ? ' ' : c);
  return out;
}

// Header values the caller controls must not smuggle in header lines.
Status CheckCommon(std::string_view uri, std::string_view ip,
                   std::string_view request_head,
                   std::string_view response_head) {
  if (uri.empty()) return Status::InvalidArgument("WARC: empty target URI");
  if (HasLineBreak(uri) || HasLineBreak(ip))
    return Status::InvalidArgument("WARC: line break in URI or IP");
  if (response_head.size() < 4 ||
      response_head.substr(response_head.size() - 4) != "\r\n\r\n")
    return Status::InvalidArgument(
        "WARC: response head must end with CRLF CRLF");
  if (!request_head.empty() &&
      (request_head.size() < 4 ||
       request_head.substr(request_head.size() - 4) != "\r\n\r\n"))
    return Status::InvalidArgument(
        "WARC: request head must end with CRLF CRLF");
  return Status::OK();
}

}  // namespace

std::string WarcSha1Digest(std::string_view data) {
  unsigned char md[SHA_DIGEST_LENGTH];
  SHA1(reinterpret_cast<const unsigned char*>(data.data()), data.size(), md);
  return "sha1:" + Base32Encode(std::string_view(
                       reinterpret_cast<const char*>(md), sizeof(md)));
}

std::string ArchivableResponseHead(
    std::string_view status_line,
    const std::vector<std::pair<std::string, std::string>>& headers,
    uint64_t body_bytes, bool body_decoded) {
  std::string out = WithoutLineBreaks(status_line) + "\r\n";
  for (const auto& [name, value] : headers) {
    bool rename = EqualsIgnoreCase(name, "Transfer-Encoding") ||
                  EqualsIgnoreCase(name, "Content-Length") ||
                  (body_decoded && EqualsIgnoreCase(name, "Content-Encoding"));
    if (rename) out += "X-Crawler-";
    out += WithoutLineBreaks(name) + ": " + WithoutLineBreaks(value) + "\r\n";
  }
  out += "Content-Length: " + std::to_string(body_bytes) + "\r\n\r\n";
  return out;
}

WarcWriter::WarcWriter(WarcWriterOptions options)
    : options_(std::move(options)) {}

WarcWriter::~WarcWriter() { (void)Close(); }

Result<std::unique_ptr<WarcWriter>> WarcWriter::Open(
    WarcWriterOptions options) {
  if (options.dir.empty())
    return Status::InvalidArgument("WARC directory not set");
  if (options.rotate_bytes == 0)
    return Status::InvalidArgument("WARC rotate_bytes must be > 0");
  if (options.prefix.empty() || options.prefix.find('/') != std::string::npos)
    return Status::InvalidArgument("WARC prefix must be a plain file name");
  struct stat st {};
  if (stat(options.dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return Status::InvalidArgument("WARC directory does not exist: " +
                                   options.dir);
  if (access(options.dir.c_str(), W_OK) != 0)
    return Status::IOError("WARC directory not writable: " + options.dir);
  return std::unique_ptr<WarcWriter>(new WarcWriter(std::move(options)));
}

Status WarcWriter::StartFile(double date) {
  std::string name;
  for (int attempt = 0; attempt < 1000; ++attempt) {
    char serial[16];
    std::snprintf(serial, sizeof(serial), "%05llu",
                  static_cast<unsigned long long>(serial_++));
    name = options_.prefix + "-" + CompactUtc(date) + "-" + serial + "-" +
           std::to_string(getpid()) + ".warc.gz";
    final_path_ = options_.dir + "/" + name;
    open_path_ = final_path_ + ".open";
    struct stat st {};
    if (stat(final_path_.c_str(), &st) == 0) continue;  // never overwrite
    fd_ =
        open(open_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd_ >= 0) break;
    if (errno != EEXIST) return Errno("create", open_path_);
  }
  if (fd_ < 0) return Status::IOError("no free WARC file name");
  file_bytes_ = 0;
  cdxj_lines_.clear();  // a file abandoned after a failed write has none
  warcinfo_id_ = WarcRecordId();
  std::string info = "software: " + WithoutLineBreaks(options_.software) +
                     "\r\nformat: WARC File Format 1.1\r\n"
                     "conformsTo: http://iipc.github.io/warc-specifications/"
                     "specifications/warc-format/warc-1.1/\r\n";
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) == 0 && host[0] != '\0')
    info += "hostname: " + WithoutLineBreaks(host) + "\r\n";
  if (!options_.operator_contact.empty())
    info +=
        "operator: " + WithoutLineBreaks(options_.operator_contact) + "\r\n";
  if (!options_.user_agent.empty())
    info +=
        "http-header-user-agent: " + WithoutLineBreaks(options_.user_agent) +
        "\r\n";
  if (!options_.robots_policy.empty())
    info += "robots: " + WithoutLineBreaks(options_.robots_policy) + "\r\n";
  Fields fields = {{"WARC-Type", "warcinfo"},
                   {"WARC-Record-ID", warcinfo_id_},
                   {"WARC-Date", WarcDate(date)},
                   {"WARC-Filename", name},
                   {"Content-Type", "application/warc-fields"},
                   {"WARC-Block-Digest", WarcSha1Digest(info)}};
  return AppendMembers({FrameWarcRecord(fields, info)});
}

Status WarcWriter::AppendMembers(const std::vector<std::string>& records,
                                 std::vector<uint64_t>* offsets) {
  std::string bytes;
  if (offsets != nullptr) offsets->clear();
  for (const std::string& record : records) {
    Result<std::string> member = GzipMember(record);
    if (!member.ok()) return member.status();
    if (offsets != nullptr) offsets->push_back(file_bytes_ + bytes.size());
    bytes += *member;
  }
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = write(fd_, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      Status s = Errno("write", open_path_);
      // Drop the partial member so the file stays a valid WARC. If even
      // that fails, abandon the file (left as .open) and start a new one.
      const off_t good = static_cast<off_t>(file_bytes_);
      if (ftruncate(fd_, good) != 0 || lseek(fd_, good, SEEK_SET) != good) {
        close(fd_);
        fd_ = -1;
      }
      return s;
    }
    done += static_cast<size_t>(n);
  }
  file_bytes_ += bytes.size();
  return Status::OK();
}

Status WarcWriter::FinishFile() {
  if (fd_ < 0) return Status::OK();
  Status result;
  if (fsync(fd_) != 0) result = Errno("fsync", open_path_);
  if (close(fd_) != 0 && result.ok()) result = Errno("close", open_path_);
  fd_ = -1;
  if (!result.ok()) return result;
  if (rename(open_path_.c_str(), final_path_.c_str()) != 0)
    return Errno("rename", open_path_);
  int dir_fd = open(options_.dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    if (fsync(dir_fd) != 0) result = Errno("fsync", options_.dir);
    close(dir_fd);
  }
  finished_.push_back(final_path_);
  if (options_.cdxj) {
    Status index =
        WriteCdxjFile(CdxjPathFor(final_path_), std::move(cdxj_lines_));
    if (result.ok()) result = index;
  }
  cdxj_lines_.clear();
  return result;
}

Status WarcWriter::WriteLocked(const std::vector<std::string>& records,
                               std::vector<uint64_t>* offsets,
                               CdxjRecord* index) {
  std::vector<uint64_t> mine;
  if (offsets == nullptr) offsets = &mine;
  if (Status s = AppendMembers(records, offsets); !s.ok()) return s;
  if (index != nullptr && options_.cdxj && !offsets->empty()) {
    index->offset = offsets->back();
    index->length = file_bytes_ - offsets->back();
    const size_t slash = final_path_.rfind('/');
    index->filename = final_path_.substr(slash + 1);
    cdxj_lines_.push_back(CdxjLine(*index));
  }
  if (file_bytes_ >= options_.rotate_bytes) return FinishFile();
  return Status::OK();
}

Result<WarcWritten> WarcWriter::WriteExchange(const WarcExchange& ex) {
  if (Status s = CheckCommon(ex.target_uri, ex.ip_address, ex.request_head,
                             ex.response_head);
      !s.ok())
    return s;
  if (HasLineBreak(ex.payload_digest))
    return Status::InvalidArgument("WARC: line break in payload digest");
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return Status::Unavailable("WARC writer is closed");
  if (fd_ < 0) {
    if (Status s = StartFile(ex.date); !s.ok()) return s;
  }
  WarcWritten out;
  out.payload_digest =
      ex.payload_digest.empty() ? WarcSha1Digest(ex.body) : ex.payload_digest;
  out.response_id = WarcRecordId();
  const Original* original = nullptr;
  if (options_.dedup_entries > 0 && !ex.body.empty()) {
    auto found = by_digest_.find(out.payload_digest);
    if (found != by_digest_.end()) {
      lru_.splice(lru_.begin(), lru_, found->second);
      original = &found->second->second;
    }
  }
  std::vector<std::string> records;
  const std::string date = WarcDate(ex.date);
  if (!ex.request_head.empty()) {
    out.request_id = WarcRecordId();
    Fields f = {{"WARC-Type", "request"},
                {"WARC-Record-ID", out.request_id},
                {"WARC-Date", date},
                {"WARC-Target-URI", ex.target_uri},
                {"WARC-Warcinfo-ID", warcinfo_id_},
                {"WARC-Concurrent-To", out.response_id},
                {"Content-Type", kHttpRequestType},
                {"WARC-Block-Digest", WarcSha1Digest(ex.request_head)}};
    if (!ex.ip_address.empty()) f.push_back({"WARC-IP-Address", ex.ip_address});
    records.push_back(FrameWarcRecord(f, ex.request_head));
  }
  Fields f = {{"WARC-Type", original ? "revisit" : "response"},
              {"WARC-Record-ID", out.response_id},
              {"WARC-Date", date},
              {"WARC-Target-URI", ex.target_uri},
              {"WARC-Warcinfo-ID", warcinfo_id_}};
  if (!out.request_id.empty())
    f.push_back({"WARC-Concurrent-To", out.request_id});
  if (!ex.ip_address.empty()) f.push_back({"WARC-IP-Address", ex.ip_address});
  f.push_back({"Content-Type", kHttpResponseType});
  std::string block = ex.response_head;
  if (original != nullptr) {
    out.revisit = true;
    f.push_back({"WARC-Profile", kProfileIdentical});
    f.push_back({"WARC-Refers-To", original->record_id});
    f.push_back({"WARC-Refers-To-Target-URI", original->target_uri});
    f.push_back({"WARC-Refers-To-Date", WarcDate(original->date)});
  } else {
    block.append(ex.body.data(), ex.body.size());
  }
  f.push_back({"WARC-Payload-Digest", out.payload_digest});
  f.push_back({"WARC-Block-Digest", WarcSha1Digest(block)});
  records.push_back(FrameWarcRecord(f, block));
  CdxjRecord index;
  index.url = ex.target_uri;
  index.warc_date = date;
  index.warc_type = original != nullptr ? "revisit" : "response";
  index.payload_digest = out.payload_digest;
  HttpHeadFacts(ex.response_head, &index.status, &index.mime);
  std::vector<uint64_t> offsets;
  if (Status s = WriteLocked(records, &offsets, &index); !s.ok()) return s;
  out.offset = offsets.back();
  if (options_.dedup_entries > 0 && original == nullptr && !ex.body.empty()) {
    lru_.emplace_front(out.payload_digest,
                       Original{out.response_id, ex.target_uri, ex.date});
    by_digest_[out.payload_digest] = lru_.begin();
    if (lru_.size() > options_.dedup_entries) {
      by_digest_.erase(lru_.back().first);
      lru_.pop_back();
    }
  }
  out.file = final_path_;
  return out;
}

Result<WarcWritten> WarcWriter::WriteRevisit(const WarcRevisit& rv) {
  if (Status s = CheckCommon(rv.target_uri, rv.ip_address, rv.request_head,
                             rv.response_head);
      !s.ok())
    return s;
  if (HasLineBreak(rv.refers_to_record_id) ||
      HasLineBreak(rv.refers_to_target_uri) || HasLineBreak(rv.payload_digest))
    return Status::InvalidArgument("WARC: line break in revisit field");
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return Status::Unavailable("WARC writer is closed");
  if (fd_ < 0) {
    if (Status s = StartFile(rv.date); !s.ok()) return s;
  }
  WarcWritten out;
  out.revisit = true;
  out.payload_digest = rv.payload_digest;
  out.response_id = WarcRecordId();
  std::vector<std::string> records;
  const std::string date = WarcDate(rv.date);
  if (!rv.request_head.empty()) {
    out.request_id = WarcRecordId();
    Fields f = {{"WARC-Type", "request"},
                {"WARC-Record-ID", out.request_id},
                {"WARC-Date", date},
                {"WARC-Target-URI", rv.target_uri},
                {"WARC-Warcinfo-ID", warcinfo_id_},
                {"WARC-Concurrent-To", out.response_id},
                {"Content-Type", kHttpRequestType},
                {"WARC-Block-Digest", WarcSha1Digest(rv.request_head)}};
    if (!rv.ip_address.empty()) f.push_back({"WARC-IP-Address", rv.ip_address});
    records.push_back(FrameWarcRecord(f, rv.request_head));
  }
  bool identical = rv.profile == WarcRevisit::Profile::kIdenticalPayloadDigest;
  Fields f = {{"WARC-Type", "revisit"},
              {"WARC-Record-ID", out.response_id},
              {"WARC-Date", date},
              {"WARC-Target-URI", rv.target_uri},
              {"WARC-Warcinfo-ID", warcinfo_id_}};
  if (!out.request_id.empty())
    f.push_back({"WARC-Concurrent-To", out.request_id});
  if (!rv.ip_address.empty()) f.push_back({"WARC-IP-Address", rv.ip_address});
  f.push_back({"Content-Type", kHttpResponseType});
  f.push_back(
      {"WARC-Profile", identical ? kProfileIdentical : kProfileNotModified});
  if (!rv.refers_to_record_id.empty())
    f.push_back({"WARC-Refers-To", rv.refers_to_record_id});
  if (!rv.refers_to_target_uri.empty())
    f.push_back({"WARC-Refers-To-Target-URI", rv.refers_to_target_uri});
  if (rv.refers_to_date > 0)
    f.push_back({"WARC-Refers-To-Date", WarcDate(rv.refers_to_date)});
  if (!rv.payload_digest.empty())
    f.push_back({"WARC-Payload-Digest", rv.payload_digest});
  f.push_back({"WARC-Block-Digest", WarcSha1Digest(rv.response_head)});
  records.push_back(FrameWarcRecord(f, rv.response_head));
  CdxjRecord index;
  index.url = rv.target_uri;
  index.warc_date = date;
  index.warc_type = "revisit";
  index.payload_digest = rv.payload_digest;
  HttpHeadFacts(rv.response_head, &index.status, &index.mime);
  std::vector<uint64_t> offsets;
  if (Status s = WriteLocked(records, &offsets, &index); !s.ok()) return s;
  out.offset = offsets.back();
  out.file = final_path_;
  return out;
}

Status WarcWriter::Close() {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return Status::OK();
  closed_ = true;
  return FinishFile();
}

std::vector<std::string> WarcWriter::finished_files() const {
  std::lock_guard<std::mutex> lock(mu_);
  return finished_;
}

}  // namespace freshd::store
