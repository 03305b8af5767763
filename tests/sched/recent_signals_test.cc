// RecentSignals: where a page's signals since its fetch fell around the
// change a trusted Last-Modified timed (sched/recent_signals.h).
#include "sched/recent_signals.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace freshd::sched {
namespace {

SignalTriple Placed(const RecentSignals& r, int signals, double change,
                    bool* ok) {
  SignalTriple x{10 * 3600.0, signals, true};
  *ok = r.Place(signals, change, &x);
  return x;
}

TEST(RecentSignalsTest, SplitsSignalsAroundTheChange) {
  RecentSignals r;
  r.Add(1, 100);   // before
  r.Add(2, 5000);  // claims the change (within 1 s)
  r.Add(3, 9000);  // after: false
  bool ok;
  SignalTriple x = Placed(r, 3, 5000.6, &ok);
  ASSERT_TRUE(ok);
  EXPECT_TRUE(x.signal_at_change);
  EXPECT_EQ(x.signals_after, 1);
  // The change 2 s from any claim: unsignalled, two signals before it.
  x = Placed(r, 3, 7000, &ok);
  ASSERT_TRUE(ok);
  EXPECT_FALSE(x.signal_at_change);
  EXPECT_EQ(x.signals_after, 1);
  x = Placed(r, 3, 5002, &ok);
  ASSERT_TRUE(ok);
  EXPECT_FALSE(x.signal_at_change);
  // Only the signals of this interval count: 2 received, the third's time
  // is from an earlier interval.
  x = Placed(r, 2, 50, &ok);
  ASSERT_TRUE(ok);
  EXPECT_EQ(x.signals_after, 2);
  EXPECT_FALSE(x.signal_at_change);
  // No signals: nothing to place.
  x = Placed(r, 0, 50, &ok);
  ASSERT_TRUE(ok);
  EXPECT_EQ(x.signals_after, 0);
  EXPECT_FALSE(x.signal_at_change);
}

TEST(RecentSignalsTest, OneSignalClaimsTheChangeAtMost) {
  RecentSignals r;
  r.Add(1, 3600);
  r.Add(2, 3600.5);  // the same instant twice (a hint and a lastmod)
  bool ok;
  SignalTriple x = Placed(r, 2, 3600, &ok);
  ASSERT_TRUE(ok);
  EXPECT_TRUE(x.signal_at_change);
  EXPECT_EQ(x.signals_after, 0);  // the other counts before, not after
}

TEST(RecentSignalsTest, KeepsTheNewestFourAndSaysWhenThatIsNotEnough) {
  RecentSignals r;
  for (int count = 1; count <= 6; ++count) r.Add(count, 1000.0 * count);
  bool ok;
  // Signals 3..6 kept (3000..6000 s); 1 and 2 assumed earlier.
  SignalTriple x = Placed(r, 6, 4500, &ok);
  ASSERT_TRUE(ok);
  EXPECT_EQ(x.signals_after, 2);
  EXPECT_FALSE(x.signal_at_change);
  x = Placed(r, 6, 3000, &ok);
  ASSERT_TRUE(ok);
  EXPECT_TRUE(x.signal_at_change);
  EXPECT_EQ(x.signals_after, 3);
  // Every kept one after the change: the unkept ones might be too.
  SignalTriple untouched{1, 6, true};
  untouched.signals_after = 9;
  EXPECT_FALSE(r.Place(6, 2000, &untouched));
  EXPECT_EQ(untouched.signals_after, 9);
}

TEST(RecentSignalsTest, UnknownTimesAreNotGuessed) {
  RecentSignals fresh;  // e.g. restored after a restart: no times kept
  SignalTriple x{1, 1, true};
  EXPECT_FALSE(fresh.Place(1, 10, &x));
  EXPECT_TRUE(fresh.Place(0, 10, &x));  // but no signals need none
  RecentSignals r;
  r.Add(2, 500);  // count 1 was never recorded
  EXPECT_FALSE(r.Place(2, 10, &x));
  r.Add(1, -5);  // a claim before the fetch is not a usable time
  EXPECT_FALSE(r.Place(2, 10, &x));
  r.Add(1, 5);
  EXPECT_TRUE(r.Place(2, 10, &x));
  EXPECT_FALSE(r.Place(2, -1, &x));      // no change time
  EXPECT_FALSE(r.Place(-1, 10, &x));     // no count
  EXPECT_FALSE(r.Place(65535, 10, &x));  // a saturated count
  EXPECT_EQ(sizeof(RecentSignals), 16u);
}

TEST(RecentSignalsTest, ADateOnlyClaimHoldsItsWholeDay) {
  // Fetched at 06:00; a date-only lastmod claims the next day (its midnight
  // is 18 h later); Last-Modified then times the change at 14:30 that day.
  constexpr double kDay = 86400;
  const double fetch = 20000 * kDay + 6 * 3600.0;
  const double claimed = 20001 * kDay;
  ASSERT_TRUE(IsWholeDayClaim(claimed));
  RecentSignals r;
  r.Add(1, claimed - fetch, /*whole_day=*/true);
  bool ok;
  SignalTriple x = Placed(r, 1, claimed + 14.5 * 3600 - fetch, &ok);
  ASSERT_TRUE(ok);
  EXPECT_TRUE(x.signal_at_change);
  EXPECT_EQ(x.signals_after, 0);
  // The same claim read as an instant (midnight) would put it before the
  // change, and the change would count as unsignalled.
  RecentSignals instant;
  instant.Add(1, claimed - fetch);
  x = Placed(instant, 1, claimed + 14.5 * 3600 - fetch, &ok);
  ASSERT_TRUE(ok);
  EXPECT_FALSE(x.signal_at_change);
  // A change the day before the claimed day: the claim came after it.
  x = Placed(r, 1, claimed - 3 * 3600 - fetch, &ok);
  ASSERT_TRUE(ok);
  EXPECT_FALSE(x.signal_at_change);
  EXPECT_EQ(x.signals_after, 1);
  // A change the day after: the claim came before it.
  x = Placed(r, 1, claimed + 30 * 3600 - fetch, &ok);
  ASSERT_TRUE(ok);
  EXPECT_FALSE(x.signal_at_change);
  EXPECT_EQ(x.signals_after, 0);
}

TEST(RecentSignalsTest, WholeDayClaimsAreMidnightsExactly) {
  EXPECT_TRUE(IsWholeDayClaim(0));
  EXPECT_TRUE(IsWholeDayClaim(1764028800));   // 2025-11-25T00:00:00Z
  EXPECT_FALSE(IsWholeDayClaim(1764028801));  // one second later
  EXPECT_FALSE(IsWholeDayClaim(1764028800.5));
  EXPECT_FALSE(IsWholeDayClaim(-std::numeric_limits<double>::infinity()));
  EXPECT_FALSE(IsWholeDayClaim(std::nan("")));
  EXPECT_EQ(ClaimEnd(1764028800), 1764028800 + 86400);  // the day's end
  EXPECT_EQ(ClaimEnd(1764028801), 1764028801);          // an instant
}

}  // namespace
}  // namespace freshd::sched
