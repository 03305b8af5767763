// WarcWriter: files written with rotation and revisits are checked by the
// project's independent checker (tests/tools/warc_verify.py) and by a
// second reader here that inflates each gzip member on its own, parses the
// WARC/1.1 headers (ISO 28500:2017 §5-6) and recomputes every digest.

#include "store/warc_writer.h"

#include <gtest/gtest.h>
#include <openssl/sha.h>
#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <regex>
#include <set>

#include "store/warc_format.h"
#include "tests/store/temp_dir.h"
#include "tests/store/warc_reader.h"

namespace freshd::store {
namespace {

namespace fs = std::filesystem;

std::string RequestHead(const std::string& path) {
  return "GET " + path +
         " HTTP/1.1\r\nHost: example.com\r\nUser-Agent: freshd/0.1\r\n\r\n";
}

std::string ResponseHead(int status, size_t length) {
  return ArchivableResponseHead(
      "HTTP/1.1 " + std::to_string(status) + (status == 200 ? " OK" : " X"),
      {{"Content-Type", "text/html; charset=utf-8"},
       {"Content-Encoding", "gzip"},
       {"Transfer-Encoding", "chunked"}},
      length, /*body_decoded=*/true);
}

// --- Tests ----------------------------------------------------------------

TEST(WarcFormatTest, Base32MatchesRfc4648Vectors) {
  // RFC 4648 §10.
  EXPECT_EQ(Base32Encode(""), "");
  EXPECT_EQ(Base32Encode("f"), "MY======");
  EXPECT_EQ(Base32Encode("fo"), "MZXQ====");
  EXPECT_EQ(Base32Encode("foo"), "MZXW6===");
  EXPECT_EQ(Base32Encode("foob"), "MZXW6YQ=");
  EXPECT_EQ(Base32Encode("fooba"), "MZXW6YTB");
  EXPECT_EQ(Base32Encode("foobar"), "MZXW6YTBOI======");
  // SHA-1 of the empty string, as every WARC tool writes it.
  EXPECT_EQ(WarcSha1Digest(""), "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ");
}

TEST(WarcFormatTest, RecordIdsAreUniqueV4Urns) {
  std::regex re(
      "<urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-"
      "[0-9a-f]{12}>");
  std::set<std::string> ids;
  for (int i = 0; i < 1000; ++i) {
    std::string id = WarcRecordId();
    EXPECT_TRUE(std::regex_match(id, re)) << id;
    ids.insert(id);
  }
  EXPECT_EQ(ids.size(), 1000u);
  EXPECT_EQ(WarcDate(1763740000.9), "2025-11-21T15:46:40Z");
  EXPECT_EQ(WarcDate(-1), "1970-01-01T00:00:00Z");
}

TEST(WarcFormatTest, ArchivableHeadRenamesTransferHeaders) {
  std::string head = ArchivableResponseHead("HTTP/1.1 200 OK",
                                            {{"content-encoding", "br"},
                                             {"Content-Length", "10"},
                                             {"X-Evil", "a\r\nInjected: 1"}},
                                            1234, true);
  EXPECT_NE(head.find("X-Crawler-content-encoding: br\r\n"), std::string::npos);
  EXPECT_NE(head.find("X-Crawler-Content-Length: 10\r\n"), std::string::npos);
  EXPECT_NE(head.find("\r\nContent-Length: 1234\r\n\r\n"), std::string::npos);
  EXPECT_EQ(head.find("\r\nInjected"), std::string::npos);
  std::string raw = ArchivableResponseHead(
      "HTTP/1.1 200 OK", {{"Content-Encoding", "gzip"}}, 5, false);
  EXPECT_NE(raw.find("\r\nContent-Encoding: gzip\r\n"), std::string::npos);
}

class WarcWriterTest : public ::testing::Test {
 protected:
  TempDir dir_;
};

TEST_F(WarcWriterTest, RotatedFilesWithRevisitsVerifyIndependently) {
  const uint32_t seed = 5;
  std::printf("WarcWriterTest seed=%u\n", seed);
  std::mt19937 rng(seed);
  WarcWriterOptions options;
  options.dir = dir_.path();
  options.rotate_bytes = 40 * 1024;
  options.dedup_entries = 1000;
  options.user_agent = "freshd/0.1 (+https://example.org/bot)";
  auto opened = WarcWriter::Open(options);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  auto& writer = *opened;

  // Bodies: random text; every 5th exchange repeats an earlier body.
  std::vector<std::string> bodies;
  std::map<std::string, std::string> response_ids;  // uri -> record id
  std::map<std::string, std::string> payloads;      // record id -> digest
  int expected_records = 0, auto_revisits = 0;
  double now = 1763740000;
  std::uniform_int_distribution<int> size(0, 20000), ch('a', 'z');
  for (int i = 0; i < 60; ++i) {
    std::string body;
    if (i % 5 == 4) {
      body = bodies[static_cast<size_t>(i) / 2];
    } else {
      body.resize(static_cast<size_t>(size(rng)));
      for (char& c : body) c = static_cast<char>(ch(rng));
      if (body.empty()) body = "x" + std::to_string(i);  // keep unique
    }
    bodies.push_back(body);
    std::string uri = "https://example.com/p" + std::to_string(i);
    WarcExchange ex;
    ex.target_uri = uri;
    ex.date = now + i;
    ex.ip_address = "192.0.2.1";
    ex.request_head = RequestHead("/p" + std::to_string(i));
    ex.response_head = ResponseHead(200, body.size());
    ex.body = body;
    auto w = writer->WriteExchange(ex);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    EXPECT_EQ(w->revisit, i % 5 == 4) << i;
    auto_revisits += w->revisit;
    EXPECT_EQ(w->payload_digest, WarcSha1Digest(body));
    response_ids[uri] = w->response_id;
    payloads[w->response_id] = w->payload_digest;
    expected_records += 2;
    // The file being written is only visible under its .open name.
    if (!fs::exists(w->file)) {
      EXPECT_TRUE(fs::exists(w->file + ".open"));
    }
    if (i % 10 == 9) {  // a 304 for an earlier page
      std::string old_uri = "https://example.com/p" + std::to_string(i - 3);
      WarcRevisit rv;
      rv.profile = WarcRevisit::Profile::kServerNotModified;
      rv.target_uri = old_uri;
      rv.date = now + i + 0.5;
      rv.request_head = RequestHead("/p" + std::to_string(i - 3));
      rv.response_head = "HTTP/1.1 304 Not Modified\r\nETag: \"x\"\r\n\r\n";
      rv.refers_to_record_id = response_ids[old_uri];
      rv.refers_to_target_uri = old_uri;
      rv.refers_to_date = now + i - 3;
      rv.payload_digest = payloads[response_ids[old_uri]];
      auto r = writer->WriteRevisit(rv);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      EXPECT_TRUE(r->revisit);
      expected_records += 2;
    }
  }
  ASSERT_TRUE(writer->Close().ok());
  WarcExchange late;
  late.target_uri = "https://example.com/late";
  late.response_head = ResponseHead(200, 0);
  EXPECT_EQ(writer->WriteExchange(late).status().code(),
            Status::Code::kUnavailable);
  EXPECT_EQ(auto_revisits, 12);

  // Files: no .open left, all finished, rotated by size.
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir_.path())) {
    EXPECT_EQ(e.path().string().find(".open"), std::string::npos);
    if (e.path().extension() == ".cdxj") continue;  // cdxj_test.cc
    files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  std::vector<std::string> finished = writer->finished_files();
  std::sort(finished.begin(), finished.end());
  EXPECT_EQ(files, finished);
  ASSERT_GE(files.size(), 4u) << "rotation by size";
  for (size_t i = 0; i + 1 < files.size(); ++i)
    EXPECT_GE(fs::file_size(files[i]), options.rotate_bytes) << files[i];

  // 1. The shared independent checker.
  std::string cmd = "python3 " + std::string(FRESHD_SOURCE_DIR) +
                    "/tests/tools/warc_verify.py";
  for (const auto& f : files) cmd += " '" + f + "'";
  cmd += " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) out.append(buf, n);
  int rc = pclose(pipe);
  EXPECT_EQ(rc, 0) << out;
  std::regex count_re(": (\\d+) records, 0 errors");
  int checked = 0;
  for (std::sregex_iterator it(out.begin(), out.end(), count_re), end;
       it != end; ++it)
    checked += std::stoi((*it)[1]);
  EXPECT_EQ(checked, expected_records + static_cast<int>(files.size())) << out;

  // 2. Our own reader: one record per gzip member, digests recomputed.
  std::set<std::string> ids;
  std::map<std::string, std::string> concurrent;  // id -> concurrent-to
  std::map<std::string, std::string> stored_payload;
  int responses = 0, revisits = 0, requests = 0;
  std::vector<std::string> body_order;
  for (const auto& f : files) {
    std::vector<std::string> members = InflateMembers(ReadFile(f));
    ASSERT_FALSE(members.empty()) << f;
    for (size_t m = 0; m < members.size(); ++m) {
      ParsedRecord r;
      ASSERT_TRUE(ParseRecord(members[m], &r)) << f << " member " << m;
      EXPECT_EQ(r.version, "WARC/1.1");
      const std::string type = r.fields["warc-type"];
      const std::string id = r.fields["warc-record-id"];
      EXPECT_TRUE(ids.insert(id).second) << "duplicate id " << id;
      EXPECT_TRUE(DigestMatches(r.fields["warc-block-digest"], r.block))
          << f << " " << type;
      EXPECT_TRUE(r.fields.count("warc-date"));
      if (m == 0) {
        EXPECT_EQ(type, "warcinfo");
        EXPECT_EQ(r.fields["warc-filename"], fs::path(f).filename().string());
        EXPECT_NE(r.block.find("http-header-user-agent: freshd/0.1"),
                  std::string::npos);
        continue;
      }
      EXPECT_NE(type, "warcinfo") << "warcinfo only opens a file";
      EXPECT_FALSE(r.fields["warc-target-uri"].empty());
      if (r.fields.count("warc-concurrent-to"))
        concurrent[id] = r.fields["warc-concurrent-to"];
      if (type == "request") {
        ++requests;
        EXPECT_EQ(r.block.rfind("GET /", 0), 0u);
      } else if (type == "response") {
        ++responses;
        std::string payload = r.block.substr(r.block.find("\r\n\r\n") + 4);
        EXPECT_TRUE(DigestMatches(r.fields["warc-payload-digest"], payload));
        stored_payload[id] = r.fields["warc-payload-digest"];
        body_order.push_back(payload);
      } else {
        ASSERT_EQ(type, "revisit");
        ++revisits;
        const std::string profile = r.fields["warc-profile"];
        EXPECT_TRUE(
            profile ==
                "http://netpreserve.org/warc/1.1/revisit/"
                "identical-payload-digest" ||
            profile ==
                "http://netpreserve.org/warc/1.1/revisit/server-not-modified")
            << profile;
        // The original must precede it and carry the same payload digest.
        const std::string ref = r.fields["warc-refers-to"];
        ASSERT_TRUE(stored_payload.count(ref)) << "refers to " << ref;
        EXPECT_EQ(stored_payload[ref], r.fields["warc-payload-digest"]);
        EXPECT_EQ(r.block.find("\r\n\r\n") + 4, r.block.size())
            << "a revisit block is the response head only";
      }
    }
  }
  EXPECT_EQ(requests, 60 + 6);
  EXPECT_EQ(responses, 48);
  EXPECT_EQ(revisits, 12 + 6);
  // Request and response point at each other.
  for (const auto& [id, other] : concurrent) {
    ASSERT_TRUE(concurrent.count(other)) << id;
    EXPECT_EQ(concurrent[other], id);
  }
  // Payloads came back in order, byte for byte.
  std::vector<std::string> originals;
  for (int i = 0; i < 60; ++i)
    if (i % 5 != 4) originals.push_back(bodies[static_cast<size_t>(i)]);
  EXPECT_EQ(body_order, originals);
}

TEST_F(WarcWriterTest, RejectsBadInputAndBadDirectories) {
  WarcWriterOptions options;
  options.dir = dir_.Sub("missing");
  EXPECT_EQ(WarcWriter::Open(options).status().code(),
            Status::Code::kInvalidArgument);
  options.dir = dir_.path();
  options.rotate_bytes = 0;
  EXPECT_EQ(WarcWriter::Open(options).status().code(),
            Status::Code::kInvalidArgument);
  options.rotate_bytes = 1 << 20;
  auto writer = WarcWriter::Open(options);
  ASSERT_TRUE(writer.ok());
  WarcExchange ex;
  ex.target_uri = "https://a/\r\nWARC-Type: evil";
  ex.response_head = "HTTP/1.1 200 OK\r\n\r\n";
  EXPECT_EQ((*writer)->WriteExchange(ex).status().code(),
            Status::Code::kInvalidArgument);
  ex.target_uri = "https://a/";
  ex.response_head = "HTTP/1.1 200 OK\r\n";  // unterminated head
  EXPECT_EQ((*writer)->WriteExchange(ex).status().code(),
            Status::Code::kInvalidArgument);
  ASSERT_TRUE((*writer)->Close().ok());
  // No record was accepted, so no file was created.
  EXPECT_TRUE(fs::is_empty(dir_.path()));
}

TEST_F(WarcWriterTest, ResponseWithoutRequestAndEmptyBody) {
  WarcWriterOptions options;
  options.dir = dir_.path();
  auto writer = WarcWriter::Open(options);
  ASSERT_TRUE(writer.ok());
  WarcExchange ex;
  ex.target_uri = "https://a/empty";
  ex.date = 1;
  ex.response_head = ResponseHead(204, 0);
  auto w = (*writer)->WriteExchange(ex);
  ASSERT_TRUE(w.ok());
  EXPECT_TRUE(w->request_id.empty());
  ASSERT_TRUE((*writer)->Close().ok());
  auto members = InflateMembers(ReadFile(w->file));
  ASSERT_EQ(members.size(), 2u);
  ParsedRecord r;
  ASSERT_TRUE(ParseRecord(members[1], &r));
  EXPECT_EQ(r.fields["warc-type"], "response");
  EXPECT_EQ(r.fields.count("warc-concurrent-to"), 0u);
  EXPECT_EQ(r.fields["warc-payload-digest"], WarcSha1Digest(""));
}

}  // namespace
}  // namespace freshd::store
