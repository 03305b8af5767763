// CDXJ indexes: SURT url keys as warcio.js and pywb compute them, the
// index WarcWriter writes beside each closed file equals the one read back
// from the file (IndexWarcFile), and a file a killed writer left ".open"
// is cut after its last complete record, renamed and indexed.

#include "store/cdxj.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "store/warc_writer.h"
#include "tests/store/temp_dir.h"
#include "tests/store/warc_reader.h"

namespace freshd::store {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    out.push_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  return out;
}

TEST(CdxjTest, SurtKeysAsReplayToolsComputeThem) {
  EXPECT_EQ(SurtUrlKey("http://www.Example.com/A/b?z=1&a=2"),
            "com,example)/a/b?a=2&z=1");
  EXPECT_EQ(SurtUrlKey("https://www2.example.com:443/"), "com,example)/");
  EXPECT_EQ(SurtUrlKey("http://example.com:80"), "com,example)/");
  EXPECT_EQ(SurtUrlKey("http://example.com:8080/x#frag"),
            "com,example:8080)/x");
  EXPECT_EQ(SurtUrlKey("http://127.0.0.1:41234/p/1"), "1,0,0,127:41234)/p/1");
  EXPECT_EQ(SurtUrlKey("dns:example.com"), "dns:example.com");
}

TEST(CdxjTest, LineHoldsUrlMimeStatusDigestAndPlace) {
  CdxjRecord r;
  r.url = "http://example.com/a\"b";
  r.warc_date = "2026-11-26T09:08:07Z";
  r.warc_type = "response";
  r.mime = "text/html";
  r.status = 200;
  r.payload_digest = "sha1:ABC";
  r.offset = 10;
  r.length = 20;
  r.filename = "f.warc.gz";
  EXPECT_EQ(CdxjLine(r),
            "com,example)/a\"b 20261126090807 {\"url\":\"http://example.com/"
            "a\\\"b\",\"mime\":\"text/html\",\"status\":\"200\",\"digest\":"
            "\"ABC\",\"length\":\"20\",\"offset\":\"10\",\"filename\":"
            "\"f.warc.gz\"}");
  r.warc_type = "revisit";
  EXPECT_NE(CdxjLine(r).find("\"mime\":\"warc/revisit\""), std::string::npos);
  int status = 0;
  std::string mime;
  HttpHeadFacts("HTTP/1.1 404 Not Found\r\ncontent-type: Text/Plain ; x=1\r\n",
                &status, &mime);
  EXPECT_EQ(status, 404);
  EXPECT_EQ(mime, "Text/Plain");
}

class CdxjFileTest : public ::testing::Test {
 protected:
  // Writes `n` exchanges (every third a revisit) with a writer that rotates
  // every ~4 KiB.
  void Write(WarcWriter& w, int n) {
    for (int i = 0; i < n; ++i) {
      const std::string body = "<p>body " + std::to_string(i) +
                               std::string(static_cast<size_t>(i) * 50, 'x');
      if (i % 3 == 2) {
        WarcRevisit rv;
        rv.target_uri = "http://h.test/r/" + std::to_string(i);
        rv.date = 1.7e9 + i;
        rv.request_head = "GET /r HTTP/1.1\r\nHost: h.test\r\n\r\n";
        rv.response_head = "HTTP/1.1 304 Not Modified\r\n\r\n";
        rv.payload_digest = "sha1:XYZ";
        ASSERT_TRUE(w.WriteRevisit(rv).ok());
        continue;
      }
      WarcExchange ex;
      ex.target_uri = "http://h.test/p/" + std::to_string(i);
      ex.date = 1.7e9 + i;
      ex.request_head = "GET /p HTTP/1.1\r\nHost: h.test\r\n\r\n";
      ex.response_head = ArchivableResponseHead(
          "HTTP/1.1 200 OK", {{"Content-Type", "text/html; charset=utf-8"}},
          body.size(), false);
      ex.body = body;
      ASSERT_TRUE(w.WriteExchange(ex).ok());
    }
  }
  TempDir dir_;
};

TEST_F(CdxjFileTest, WrittenIndexEqualsTheFileReadBack) {
  WarcWriterOptions o;
  o.dir = dir_.path();
  o.rotate_bytes = 4096;
  auto w = WarcWriter::Open(o);
  ASSERT_TRUE(w.ok());
  Write(**w, 30);
  ASSERT_TRUE((*w)->Close().ok());
  const std::vector<std::string> files = (*w)->finished_files();
  ASSERT_GE(files.size(), 3u);
  size_t total = 0;
  for (const std::string& f : files) {
    const std::string index = CdxjPathFor(f);
    ASSERT_TRUE(fs::exists(index)) << index;
    std::vector<std::string> written = Lines(ReadFile(index));
    uint64_t valid = 0;
    auto read = IndexWarcFile(f, &valid);
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    EXPECT_EQ(valid, fs::file_size(f));
    EXPECT_EQ(written, *read) << f;
    EXPECT_TRUE(std::is_sorted(written.begin(), written.end()));
    total += written.size();
    // Each line's offset starts the member of the record it names.
    const std::string data = ReadFile(f);
    for (const std::string& line : written) {
      const size_t at = line.find("\"offset\":\"") + 10;
      const uint64_t offset = std::stoull(line.substr(at));
      const size_t len_at = line.find("\"length\":\"") + 10;
      const uint64_t length = std::stoull(line.substr(len_at));
      std::vector<std::string> m = InflateMembers(data.substr(offset, length));
      ASSERT_EQ(m.size(), 1u) << line;
      ParsedRecord rec;
      ASSERT_TRUE(ParseRecord(m[0], &rec));
      EXPECT_NE(line.find("\"url\":\"" + rec.fields["warc-target-uri"] + "\""),
                std::string::npos);
      if (rec.fields["warc-type"] == "response") {
        EXPECT_NE(line.find("\"mime\":\"text/html\",\"status\":\"200\""),
                  std::string::npos)
            << line;
        EXPECT_NE(line.find("\"digest\":\"" +
                            rec.fields["warc-payload-digest"].substr(5) + "\""),
                  std::string::npos);
      } else {
        EXPECT_NE(line.find("\"mime\":\"warc/revisit\",\"status\":\"304\""),
                  std::string::npos)
            << line;
      }
    }
  }
  EXPECT_EQ(total, 30u);
}

// A writer killed mid-file (here: a child process that exits without
// closing, its last record cut in half) leaves "<name>.open"; recovery
// keeps the complete records, renames the file and indexes it. A file of a
// writer that is still running is left alone.
TEST_F(CdxjFileTest, FileLeftOpenIsCutRenamedAndIndexed) {
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    WarcWriterOptions o;
    o.dir = dir_.path();
    auto w = WarcWriter::Open(o);
    if (!w.ok()) _exit(1);
    Write(**w, 7);
    _exit(0);  // no Close(): the file stays ".open"
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_EQ(WEXITSTATUS(status), 0);
  std::string open_path;
  for (const auto& e : fs::directory_iterator(dir_.path())) {
    if (e.path().extension() == ".open") open_path = e.path().string();
  }
  ASSERT_FALSE(open_path.empty());
  const uint64_t full = fs::file_size(open_path);
  fs::resize_file(open_path, full - 20);  // the last member cut short
  // A running writer's file (our own pid would be recovered; use pid 1).
  const std::string live =
      dir_.path() + "/freshd-20260101000000-00000-1" + ".warc.gz.open";
  fs::copy_file(open_path, live);

  auto done = RecoverOpenWarcFiles(dir_.path(), "freshd");
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  ASSERT_EQ(done->size(), 1u);
  const std::string final_path = (*done)[0];
  EXPECT_EQ(final_path + ".open", open_path);
  EXPECT_FALSE(fs::exists(open_path));
  EXPECT_TRUE(fs::exists(live));
  const std::vector<std::string> members = InflateMembers(ReadFile(final_path));
  // warcinfo + 7 exchanges of 2 records, the last response lost.
  EXPECT_EQ(members.size(), 14u);
  const std::vector<std::string> index =
      Lines(ReadFile(CdxjPathFor(final_path)));
  EXPECT_EQ(index.size(), 6u);  // responses and revisits 0..5
  std::string verify = "python3 " + std::string(FRESHD_SOURCE_DIR) +
                       "/tests/tools/warc_verify.py " + final_path +
                       " > /dev/null 2>&1";
  EXPECT_EQ(std::system(verify.c_str()), 0);
  // Nothing left to do the second time.
  auto again = RecoverOpenWarcFiles(dir_.path(), "freshd");
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->empty());
}

}  // namespace
}  // namespace freshd::store
