// freshd fingerprint / diff as an operator runs them. Expected figures are
// worked out by hand from the definitions: word 4-shingles of the visible
// text, D = 1 - |A∩B| / |A∪B| (Olston & Pandey §2.1.1).

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/cli/run_command.h"

namespace freshd {
namespace {

using testing::RunFreshd;
using testing::WriteTempFile;

// 9 visible words (the link text "x" is one): 6 four-word shingles.
constexpr char kOld[] =
    "<html><head><title>T</title><script>var hidden = 1;</script></head>"
    "<body><p>alpha beta gamma delta epsilon zeta eta theta</p>"
    "<a href=\"/x\">x</a><!-- not text --></body></html>";
// The last two words differ: 5 shingles, 4 of them shared with kOld.
constexpr char kNew[] =
    "<html><body><p>Alpha BETA gamma delta epsilon zeta eta "
    "iota</p></body></html>";

TEST(FingerprintCliTest, CountsTokensShinglesAndResolvedLinks) {
  std::string path = WriteTempFile(kOld, ".html");
  auto r = RunFreshd({"fingerprint", "--url", "http://example.com/dir/", path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["tokens"], 9);
  EXPECT_EQ(j["shingles"], 6);
  EXPECT_EQ(j["links"], 1);
  EXPECT_EQ(j["title"], "T");
  EXPECT_EQ(j["k"], 4);
  EXPECT_EQ(j["m"], 64);
  // Version byte, m, count, then 6 eight-byte hashes, in hex.
  EXPECT_EQ(j["sketch"].get<std::string>().size(), 2 * (1 + 2 + 2 + 6 * 8u));
  std::remove(path.c_str());
}

TEST(FingerprintCliTest, SeedChangesHashesButNotCounts) {
  std::string path = WriteTempFile(kOld, ".html");
  auto a = RunFreshd({"fingerprint", path});
  auto b = RunFreshd({"fingerprint", "--seed", "0x1234", path});
  ASSERT_EQ(a.exit_code, 0);
  ASSERT_EQ(b.exit_code, 0);
  auto ja = nlohmann::json::parse(a.out), jb = nlohmann::json::parse(b.out);
  EXPECT_NE(ja["text_hash"], jb["text_hash"]);
  EXPECT_EQ(ja["shingles"], jb["shingles"]);
  std::remove(path.c_str());
}

TEST(DiffCliTest, ExactAndSketchStaleness) {
  std::string old_path = WriteTempFile(kOld, ".html");
  std::string new_path = WriteTempFile(kNew, ".html");
  auto r = RunFreshd({"diff", old_path, new_path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["old_shingles"], 6);
  EXPECT_EQ(j["new_shingles"], 5);  // case-folded: "Alpha BETA" = "alpha beta"
  EXPECT_EQ(j["common_shingles"], 4);
  EXPECT_EQ(j["union_shingles"], 7);
  EXPECT_NEAR(j["exact_staleness"].get<double>(), 3.0 / 7.0, 1e-12);
  // Both sets are smaller than m, so the sketch sees everything: exact.
  EXPECT_NEAR(j["sketch_staleness"].get<double>(), 3.0 / 7.0, 1e-12);
  EXPECT_EQ(j["text_changed"], true);

  auto same = RunFreshd({"diff", old_path, old_path});
  ASSERT_EQ(same.exit_code, 0);
  auto js = nlohmann::json::parse(same.out);
  EXPECT_EQ(js["exact_staleness"], 0.0);
  EXPECT_EQ(js["text_changed"], false);
  std::remove(old_path.c_str());
  std::remove(new_path.c_str());
}

TEST(DiffCliTest, UnreadableFileExits2) {
  std::string path = WriteTempFile(kOld, ".html");
  auto r = RunFreshd({"diff", path, "/nonexistent/new.html"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("/nonexistent/new.html"), std::string::npos);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace freshd
