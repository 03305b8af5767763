// ForEachSeedInFile streams a seeds file in 64 KiB pieces: the same seeds,
// weights, line numbers and errors as ParseSeeds on the whole text, with
// lines cut across pieces, CRLF, no final newline, an over-long line in the
// middle of a big file, and a callback's error stopping the read.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "daemon/seeds.h"

namespace freshd::daemon {
namespace {

class SeedsStreamTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& text) {
    const std::string path = (std::filesystem::path(::testing::TempDir()) /
                              ("seeds_stream_" + std::to_string(getpid()) +
                               "_" + std::to_string(paths_.size()) + ".txt"))
                                 .string();
    std::ofstream(path, std::ios::binary) << text;
    paths_.push_back(path);
    return path;
  }
  void TearDown() override {
    for (const auto& p : paths_) std::filesystem::remove(p);
  }
  std::vector<std::string> paths_;
};

TEST_F(SeedsStreamTest, SameSeedsAsParseSeedsAcrossPieces) {
  std::string text = "# seeds\n";
  for (int i = 0; i < 30000; ++i) {  // ~1 MB: lines cut at piece ends
    text += "http://h" + std::to_string(i % 7) + ".test/p/" +
            std::to_string(i) + (i % 3 == 0 ? "  2.5" : "") +
            (i % 5 == 0 ? "\r\n" : "\n");
    if (i % 1000 == 0) text += "\n   \n# comment\n";
  }
  text += "http://last.test/no-newline 3";
  const std::string path = Write(text);
  auto whole = ParseSeeds(text, path);
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  std::vector<Seed> streamed;
  ASSERT_TRUE(ForEachSeedInFile(path, [&](const Seed& s) {
                streamed.push_back(s);
                return Status::OK();
              }).ok());
  ASSERT_EQ(streamed.size(), whole->size());
  ASSERT_EQ(streamed.size(), 30001u);
  for (size_t i = 0; i < streamed.size(); ++i) {
    ASSERT_EQ(streamed[i].url, (*whole)[i].url) << i;
    ASSERT_EQ(streamed[i].weight, (*whole)[i].weight) << i;
    ASSERT_EQ(streamed[i].line, (*whole)[i].line) << i;
  }
  EXPECT_EQ(streamed.back().url, "http://last.test/no-newline");
  EXPECT_EQ(streamed.back().weight, 3);
}

TEST_F(SeedsStreamTest, ErrorsCarryTheLineAndStopTheRead) {
  std::string text;
  for (int i = 0; i < 5000; ++i)
    text += "http://a.test/" + std::to_string(i) + "\n";
  text += std::string(100000, 'x') + "\nhttp://after.test/\n";  // line 5001
  const std::string path = Write(text);
  size_t seen = 0;
  Status s = ForEachSeedInFile(path, [&](const Seed&) {
    ++seen;
    return Status::OK();
  });
  EXPECT_EQ(s.message(), path + ":5001: line longer than 16 KiB");
  EXPECT_EQ(seen, 5000u);
  EXPECT_EQ(ParseSeeds(text, path).status().message(), s.message());

  const std::string bad = Write("http://a/\nhttp://b/ -1\n");
  EXPECT_EQ(ForEachSeedInFile(bad, [](const Seed&) { return Status::OK(); })
                .message(),
            bad + ":2: weight must be a positive number, got \"-1\"");

  seen = 0;
  s = ForEachSeedInFile(path, [&](const Seed&) {
    return ++seen == 10 ? Status::ResourceExhausted("enough") : Status::OK();
  });
  EXPECT_EQ(s.code(), Status::Code::kResourceExhausted);
  EXPECT_EQ(seen, 10u);
  EXPECT_EQ(ForEachSeedInFile("/nonexistent/seeds",
                              [](const Seed&) { return Status::OK(); })
                .code(),
            Status::Code::kIOError);
}

TEST(SeedsTest, ParsesUrlsWeightsAndCommentsWithLineNumbers) {
  auto seeds = ParseSeeds("# seeds\nhttp://a.test/\n\n  http://b.test/x  2.5\n",
                          "s.txt");
  ASSERT_TRUE(seeds.ok());
  ASSERT_EQ(seeds.value().size(), 2u);
  EXPECT_EQ(seeds.value()[1].url, "http://b.test/x");
  EXPECT_EQ(seeds.value()[1].weight, 2.5);
  EXPECT_EQ(seeds.value()[1].line, 4u);
  EXPECT_EQ(ParseSeeds("http://a/ 0\n", "s.txt").status().message(),
            "s.txt:1: weight must be a positive number, got \"0\"");
  EXPECT_EQ(ParseSeeds("\nhttp://a/ 1 2\n", "s.txt").status().message(),
            "s.txt:2: expected \"URL [weight]\", got more");
  EXPECT_FALSE(ParseSeeds("http://a/ nan\n", "s").ok());
  EXPECT_FALSE(ParseSeeds(std::string(20000, 'x'), "s").ok());
  EXPECT_EQ(ReadSeedsFile("/nonexistent/seeds").status().code(),
            Status::Code::kIOError);
}

}  // namespace
}  // namespace freshd::daemon
