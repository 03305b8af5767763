// parse/indexnow_request: the protocol's two forms, and hostile inputs
// (oversized, too many URLs, bad key characters, wrong host, non-JSON,
// deep JSON) answered 400 or 422, never parsed into a ping.

#include "parse/indexnow_request.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

namespace freshd::parse {
namespace {

constexpr char kJson[] = "application/json; charset=utf-8";

std::string Body(const nlohmann::json& urls, const std::string& host = "a.test",
                 const std::string& key = "abcd1234") {
  return nlohmann::json{{"host", host}, {"key", key}, {"urlList", urls}}.dump();
}

TEST(IndexNowRequestTest, GetNormalizesAndNamesTheKeyFile) {
  IndexNowParse p = ParseIndexNowQuery(
      "url=http%3A%2F%2FA.test%3A8080%2Fp%3Fx%3D1&key=abcd-1234ABCD");
  ASSERT_TRUE(p.ok()) << p.error;
  EXPECT_EQ(p.request.host, "a.test");
  EXPECT_EQ(p.request.key, "abcd-1234ABCD");
  ASSERT_EQ(p.request.urls.size(), 1u);
  EXPECT_EQ(p.request.urls[0], "http://a.test:8080/p?x=1");
  EXPECT_EQ(KeyFileUrl(p.request), "http://a.test:8080/abcd-1234ABCD.txt");
}

TEST(IndexNowRequestTest, GetWithKeyLocationCoversOnlyItsFolder) {
  IndexNowParse p = ParseIndexNowQuery(
      "url=https://a.test/blog/x&key=abcd1234&keyLocation=https://a.test/"
      "blog/k.txt");
  ASSERT_TRUE(p.ok()) << p.error;
  EXPECT_EQ(KeyFileUrl(p.request), "https://a.test/blog/k.txt");
  p = ParseIndexNowQuery(
      "url=https://a.test/shop/x&key=abcd1234&keyLocation=https://a.test/"
      "blog/k.txt");
  EXPECT_EQ(p.status, 422) << p.error;
  p = ParseIndexNowQuery(
      "url=https://a.test/x&key=abcd1234&keyLocation=https://b.test/k.txt");
  EXPECT_EQ(p.status, 422) << p.error;
}

TEST(IndexNowRequestTest, GetWithoutUrlOrKeyIs400) {
  EXPECT_EQ(ParseIndexNowQuery("").status, 400);
  EXPECT_EQ(ParseIndexNowQuery("url=https://a.test/").status, 400);
  EXPECT_EQ(ParseIndexNowQuery("key=abcd1234").status, 400);
  EXPECT_EQ(ParseIndexNowQuery("url=ftp://a.test/&key=abcd1234").status, 400);
  EXPECT_EQ(ParseIndexNowQuery("url=%00%ff&key=abcd1234").status, 400);
}

TEST(IndexNowRequestTest, MalformedKeysAre422) {
  for (const char* key : {"short", "abcd 1234", "abcd_1234", "abcd%2F1234",
                          "ab\xc3\xa9"
                          "d1234",
                          ""}) {
    IndexNowParse p =
        ParseIndexNowQuery(std::string("url=https://a.test/&key=") + key);
    EXPECT_EQ(p.status, 422) << key;
  }
  EXPECT_EQ(
      ParseIndexNowQuery("url=https://a.test/&key=" + std::string(129, 'a'))
          .status,
      422);
  EXPECT_TRUE(
      ParseIndexNowQuery("url=https://a.test/&key=" + std::string(128, 'a'))
          .ok());
  EXPECT_EQ(ParseIndexNowJson(
                kJson, Body({"https://a.test/"}, "a.test", "bad/key/chars"))
                .status,
            422);
}

TEST(IndexNowRequestTest, PostTakesTheProtocolsObject) {
  IndexNowParse p =
      ParseIndexNowJson(kJson, R"({"host":"www.A.test","key":"abcd1234",
                 "keyLocation":"https://www.a.test/k/abcd1234.txt",
                 "urlList":["https://www.a.test/k/1","https://www.a.test/k/2"],
                 "extra":{"ignored":true}})");
  ASSERT_TRUE(p.ok()) << p.error;
  EXPECT_EQ(p.request.host, "www.a.test");
  EXPECT_EQ(p.request.urls.size(), 2u);
  EXPECT_EQ(p.request.key_location, "https://www.a.test/k/abcd1234.txt");
}

TEST(IndexNowRequestTest, UrlOnAnotherHostIs422) {
  EXPECT_EQ(ParseIndexNowJson(kJson,
                              Body({"https://a.test/1", "https://evil.test/2"}))
                .status,
            422);
  EXPECT_EQ(ParseIndexNowJson(kJson, Body({"https://sub.a.test/1"})).status,
            422);
}

TEST(IndexNowRequestTest, TenThousandUrlsPassTenThousandAndOneDoNot) {
  nlohmann::json urls = nlohmann::json::array();
  for (int i = 0; i < 10000; ++i) {
    urls.push_back("https://a.test/p/" + std::to_string(i));
  }
  IndexNowParse ok = ParseIndexNowJson(kJson, Body(urls));
  ASSERT_TRUE(ok.ok()) << ok.error;
  EXPECT_EQ(ok.request.urls.size(), 10000u);
  urls.push_back("https://a.test/p/10000");
  IndexNowParse p = ParseIndexNowJson(kJson, Body(urls));
  EXPECT_EQ(p.status, 400);
  EXPECT_NE(p.error.find("10000"), std::string::npos) << p.error;
}

TEST(IndexNowRequestTest, OversizedBodyIs400) {
  const std::string body =
      Body({"https://a.test/" + std::string(kMaxIndexNowBodyBytes, 'x')});
  EXPECT_EQ(ParseIndexNowJson(kJson, body).status, 400);
}

TEST(IndexNowRequestTest, NonJsonAndWrongShapesAre400) {
  for (const char* body :
       {"", "not json", "[]", "\"s\"", "{\"host\":1}", "{", "null",
        R"({"host":"a.test","key":"abcd1234"})",
        R"({"host":"a.test","key":"abcd1234","urlList":[]})",
        R"({"host":"a.test","key":"abcd1234","urlList":"https://a.test/"})",
        R"({"host":"a.test","key":"abcd1234","urlList":[1]})",
        R"({"host":"a.test","key":5,"urlList":["https://a.test/"]})",
        R"({"host":"a/test","key":"abcd1234","urlList":["https://a.test/"]})",
        R"({"host":"a.test","key":"abcd1234","urlList":["https://a.test/"])"}) {
    IndexNowParse p = ParseIndexNowJson(kJson, body);
    EXPECT_EQ(p.status, 400) << body;
    EXPECT_FALSE(p.error.empty());
  }
}

TEST(IndexNowRequestTest, WrongContentTypeIs400) {
  const std::string body = Body({"https://a.test/"});
  EXPECT_EQ(ParseIndexNowJson("text/plain", body).status, 400);
  EXPECT_EQ(ParseIndexNowJson("", body).status, 400);
  EXPECT_TRUE(ParseIndexNowJson("Application/JSON", body).ok());
}

TEST(IndexNowRequestTest, DeepJsonIsRefusedBeforeParsing) {
  // A million levels: refused by the depth scan, no recursion anywhere.
  const std::string deep =
      std::string(1000000, '[') + std::string(1000000, ']');
  EXPECT_EQ(ParseIndexNowJson(kJson, deep).status, 400);
  const std::string nested =
      R"({"host":"a.test","key":"abcd1234","urlList":["https://a.test/"],)"
      R"("x":[[[[1]]]]})";
  IndexNowParse p = ParseIndexNowJson(kJson, nested);
  EXPECT_EQ(p.status, 400);
  EXPECT_NE(p.error.find("deeper"), std::string::npos) << p.error;
  // Brackets inside strings are not nesting.
  const std::string in_string =
      R"({"host":"a.test","key":"abcd1234","urlList":["https://a.test/[[[[[[x"]})";
  EXPECT_TRUE(ParseIndexNowJson(kJson, in_string).ok());
}

}  // namespace
}  // namespace freshd::parse
