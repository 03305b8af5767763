// HostBook (daemon/host_book.h): host names <-> dense ids, bounded; per-host
// page counts and the stored fetch state.

#include "daemon/host_book.h"

#include <gtest/gtest.h>

#include <string>

namespace freshd::daemon {
namespace {

TEST(HostBookTest, InternsNamesDenselyAndIsBounded) {
  HostBook table(2);
  EXPECT_EQ(*table.Intern("a:1"), 0u);
  EXPECT_EQ(*table.Intern("b:1"), 1u);
  EXPECT_EQ(*table.Intern("a:1"), 0u);
  EXPECT_EQ(table.Intern("c:1").status().code(),
            Status::Code::kResourceExhausted);
  EXPECT_EQ(table.Intern("").status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(table.Name(1), "b:1");
  EXPECT_FALSE(table.Find("c:1").has_value());
}

TEST(HostBookTest, RefusesOverLongNames) {
  HostBook table;
  EXPECT_EQ(table.Intern(std::string(HostBook::kMaxNameBytes + 1, 'a'))
                .status()
                .code(),
            Status::Code::kInvalidArgument);
  EXPECT_TRUE(table.Intern(std::string(HostBook::kMaxNameBytes, 'a')).ok());
}

TEST(HostBookTest, CountsPagesUpToTheCapAndClears) {
  HostBook table;
  const sched::HostId h = *table.Intern("a:1");
  EXPECT_EQ(table.pages(h), 0u);
  EXPECT_EQ(table.pages(7), 0u);  // unknown id
  EXPECT_TRUE(table.AddPage(h, 2));
  EXPECT_TRUE(table.AddPage(h, 2));
  EXPECT_FALSE(table.AddPage(h, 2));
  EXPECT_EQ(table.pages(h), 2u);
  table.ClearPages();
  EXPECT_EQ(table.pages(h), 0u);
  EXPECT_TRUE(table.AddPage(h, 2));
}

TEST(HostBookTest, FetchStateSetReportsAChange) {
  HostBook table;
  const sched::HostId h = *table.Intern("a:1");
  EXPECT_EQ(table.fetch_state(h), "");
  EXPECT_TRUE(table.SetFetchState(h, "x"));
  EXPECT_FALSE(table.SetFetchState(h, "x"));
  EXPECT_TRUE(table.SetFetchState(h, "y"));
  EXPECT_EQ(table.fetch_state(h), "y");
  EXPECT_EQ(table.fetch_state(9), "");  // unknown id
}

}  // namespace
}  // namespace freshd::daemon
