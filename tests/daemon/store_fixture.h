// tests/daemon: a real LevelDB store in a temporary directory, opened for a
// test and removed after it, and a page record to put in it.

#ifndef FRESHD_TESTS_DAEMON_STORE_FIXTURE_H_
#define FRESHD_TESTS_DAEMON_STORE_FIXTURE_H_

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "conf/config.h"
#include "parse/url.h"
#include "store/page_store.h"
#include "tests/store/temp_dir.h"

namespace freshd::daemon {

// Page i of host h.test, with etag "e<i>".
inline store::PageRecord TestPageRecord(int i) {
  store::PageRecord r;
  r.url = "http://h.test/p/" + std::to_string(i);
  r.url_key = parse::UrlKey(r.url);
  r.etag = "e" + std::to_string(i);
  return r;
}

class TempStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StoreConfig c;
    c.path = dir_.path() + "/db";
    auto store = store::PageStore::Open(c);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
  }
  store::TempDir dir_;
  std::unique_ptr<store::PageStore> store_;
};

}  // namespace freshd::daemon

#endif  // FRESHD_TESTS_DAEMON_STORE_FIXTURE_H_
