// The README and the pages under docs/ name only files inside the
// repository: every backquoted relative path (`docs/SCIENCE.md`,
// `daemon/README.md`, ...) exists in the checkout and none leaves it (`../`).
// The README's first two commands stay the demo and the test suite.

#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "tests/cli/run_command.h"

namespace freshd {
namespace {

const std::filesystem::path kSource = FRESHD_SOURCE_DIR;

TEST(ReadmeTest, NamesOnlyFilesInsideTheRepository) {
  std::vector<std::string> docs = {"README.md", "CONTRIBUTING.md"};
  for (const auto& entry :
       std::filesystem::directory_iterator(kSource / "docs")) {
    if (entry.path().extension() == ".md") {
      docs.push_back("docs/" + entry.path().filename().string());
    }
  }
  ASSERT_GE(docs.size(), 10u);
  for (const std::string& doc : docs) {
    const std::string text = testing::ReadWholeFile(kSource / doc);
    ASSERT_FALSE(text.empty()) << doc;
    EXPECT_EQ(text.find("../"), std::string::npos) << doc;
    // `dir/file.ext` spans: a path when its first part is a top-level folder
    // of the checkout (so /usr/... and URLs are not taken for one).
    static const std::regex kPath(
        R"(`([A-Za-z0-9_.-]+/[A-Za-z0-9_./-]*\.[a-z]+)`)");
    int checked = 0;
    for (std::sregex_iterator it(text.begin(), text.end(), kPath), end;
         it != end; ++it) {
      const std::string path = (*it)[1];
      const std::string top = path.substr(0, path.find('/'));
      if (!std::filesystem::is_directory(kSource / top)) continue;
      ++checked;
      EXPECT_TRUE(std::filesystem::exists(kSource / path))
          << doc << " names " << path;
    }
    if (doc == "README.md") {
      EXPECT_GE(checked, 8);
    }
  }
}

TEST(ReadmeTest, FirstCommandsAreTheDemoAndTheTests) {
  const std::string text = testing::ReadWholeFile(kSource / "README.md");
  const size_t block = text.find("```sh\n");
  ASSERT_NE(block, std::string::npos);
  EXPECT_EQ(text.compare(block + 6, 14, "./dev.sh demo "), 0);
  const size_t second = text.find('\n', block + 6) + 1;
  EXPECT_EQ(text.compare(second, 14, "./dev.sh test "), 0);
}

}  // namespace
}  // namespace freshd
