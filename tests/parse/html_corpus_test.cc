// No-crash, bounded-time runs of the HTML path (ExtractHtml + fingerprint)
// over the shared hostile corpora: the 8,606 html5lib tokenizer and tree
// construction inputs, and every file of hostile-xml-html/ (billion laughs,
// libxml2 error cases, 100,000-deep nesting). Each output must be valid
// UTF-8 within the configured limits; the whole run must stay fast.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "parse/html_fingerprint.h"
#include "parse/text_utf8.h"

namespace freshd::parse {
namespace {

const std::string kTestData = FRESHD_TEST_DATA_DIR;

// RFC 4648 base64 (the JSONL stores 4 non-UTF-8 inputs as html_base64).
std::string Base64Decode(std::string_view in) {
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    int v = c >= 'A' && c <= 'Z'   ? c - 'A'
            : c >= 'a' && c <= 'z' ? c - 'a' + 26
            : c >= '0' && c <= '9' ? c - '0' + 52
            : c == '+'             ? 62
            : c == '/'             ? 63
                                   : -1;
    if (v < 0) continue;  // '=' padding
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  return out;
}

class HtmlCorpusTest : public ::testing::Test {
 protected:
  // Runs the whole HTML path on one input and checks its invariants.
  void Check(std::string_view name, std::string_view body) {
    FingerprintOptions options;
    options.seed = 42;
    options.limits.max_text_bytes = 1 << 20;
    options.limits.max_links = 1000;
    Result<PageFingerprint> fp = FingerprintHtml(
        body, "text/html", "http://example.com/a/b.html", options);
    ASSERT_TRUE(fp.ok()) << name << ": " << fp.status().ToString();
    const ExtractedPage& page = fp->page;
    EXPECT_EQ(ValidUtf8Prefix(page.text), page.text.size()) << name;
    EXPECT_EQ(ValidUtf8Prefix(page.title), page.title.size()) << name;
    EXPECT_LE(page.text.size(), options.limits.max_text_bytes + 1) << name;
    EXPECT_LE(page.links.size(), options.limits.max_links) << name;
    EXPECT_LE(fp->text.sketch.hashes.size(), options.m) << name;
    for (const Link& l : page.links)
      EXPECT_EQ(l.url.rfind("http", 0), 0u) << name << ": " << l.url;
    ++checked_;
  }
  size_t checked_ = 0;
};

TEST_F(HtmlCorpusTest, Html5libInputsNeverCrash) {
  std::ifstream in(kTestData + "/html5lib/inputs.jsonl");
  ASSERT_TRUE(in) << "missing html5lib_inputs.jsonl";
  auto start = std::chrono::steady_clock::now();
  std::string line;
  while (std::getline(in, line)) {
    nlohmann::json j = nlohmann::json::parse(line);
    std::string html =
        j.contains("html")
            ? j.at("html").get<std::string>()
            : Base64Decode(j.at("html_base64").get<std::string>());
    Check(j.at("name").get<std::string>(), html);
  }
  EXPECT_EQ(checked_, 8606u);
  double s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  EXPECT_LT(s, 30.0) << "html5lib corpus took " << s << " s";
}

TEST_F(HtmlCorpusTest, HostileFilesNeverCrashAndStayFast) {
  const std::string dir = kTestData + "/hostile-xml-html";
  ASSERT_TRUE(std::filesystem::is_directory(dir));
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream f(entry.path(), std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    auto start = std::chrono::steady_clock::now();
    Check(entry.path().string(), ss.str());
    double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    // Linear-time: even the largest (100,000-deep nesting) takes milliseconds;
    // 2 s leaves room for ASan on a loaded machine.
    EXPECT_LT(s, 2.0) << entry.path();
  }
  EXPECT_GT(checked_, 80u);
}

TEST_F(HtmlCorpusTest, DeepNestingKeepsText) {
  std::string html;
  for (int i = 0; i < 100000; ++i) html += "<div><template>";
  html += "hidden";
  for (int i = 0; i < 100000; ++i) html += "</template></div>";
  html += "shown";
  Check("deep", html);
  Result<ExtractedPage> page = ExtractHtml(html, "text/html", "");
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->text, "shown");
}

}  // namespace
}  // namespace freshd::parse
