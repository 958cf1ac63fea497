//! Date-range presets, in UTC: weeks start on Monday, a range runs from the
//! start of its first day to the start of the day after its last (so "this
//! month" ends at the end of the month even in the future), and the previous
//! period is the same range shifted back by the preset's own length.

use serde::{Deserialize, Serialize};
use time::{Date, Duration, Month, OffsetDateTime, Time, UtcOffset};
use utoipa::ToSchema;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Preset {
    Today,
    Yesterday,
    ThisWeek,
    LastWeek,
    ThisMonth,
    LastMonth,
    ThisQuarter,
    LastQuarter,
    ThisYear,
    LastYear,
    #[serde(rename = "last_7_days")]
    Last7Days,
    #[serde(rename = "last_30_days")]
    Last30Days,
    #[serde(rename = "last_90_days")]
    Last90Days,
}

/// A half-open range `[start, end)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Range {
    pub start: OffsetDateTime,
    pub end: OffsetDateTime,
}

fn midnight(date: Date) -> OffsetDateTime {
    date.with_time(Time::MIDNIGHT).assume_offset(UtcOffset::UTC)
}

/// The first day of the month `months` after `date`'s month (may be negative).
fn month_start(date: Date, months: i32) -> Date {
    let index = date.year() * 12 + (date.month() as i32 - 1) + months;
    let (year, month) = (index.div_euclid(12), index.rem_euclid(12) + 1);
    let month = Month::try_from(month as u8).unwrap_or(Month::January);
    Date::from_calendar_date(year, month, 1).unwrap_or(date)
}

enum Step {
    Days(i64),
    Months(i32),
}

impl Preset {
    /// The range and the step back to the previous period.
    fn resolve(self, today: Date) -> (Date, Date, Step) {
        let day = Duration::days(1);
        let monday = today - Duration::days(today.weekday().number_days_from_monday() as i64);
        let quarter = month_start(today, -((today.month() as i32 - 1) % 3));
        let year = month_start(today, -(today.month() as i32 - 1));
        match self {
            Self::Today => (today, today + day, Step::Days(1)),
            Self::Yesterday => (today - day, today, Step::Days(1)),
            Self::ThisWeek => (monday, monday + Duration::days(7), Step::Days(7)),
            Self::LastWeek => (monday - Duration::days(7), monday, Step::Days(7)),
            Self::ThisMonth => (
                month_start(today, 0),
                month_start(today, 1),
                Step::Months(1),
            ),
            Self::LastMonth => (
                month_start(today, -1),
                month_start(today, 0),
                Step::Months(1),
            ),
            Self::ThisQuarter => (quarter, month_start(quarter, 3), Step::Months(3)),
            Self::LastQuarter => (month_start(quarter, -3), quarter, Step::Months(3)),
            Self::ThisYear => (year, month_start(year, 12), Step::Months(12)),
            Self::LastYear => (month_start(year, -12), year, Step::Months(12)),
            Self::Last7Days => (today - Duration::days(6), today + day, Step::Days(7)),
            Self::Last30Days => (today - Duration::days(29), today + day, Step::Days(30)),
            Self::Last90Days => (today - Duration::days(89), today + day, Step::Days(90)),
        }
    }

    /// The current range and the previous one, for `now`.
    pub fn ranges(self, now: OffsetDateTime) -> (Range, Range) {
        let today = now.to_offset(UtcOffset::UTC).date();
        let (start, end, step) = self.resolve(today);
        let back = |d: Date| match step {
            Step::Days(n) => d - Duration::days(n),
            Step::Months(n) => month_start(d, -n),
        };
        (
            Range {
                start: midnight(start),
                end: midnight(end),
            },
            Range {
                start: midnight(back(start)),
                end: midnight(back(end)),
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    fn check(
        preset: Preset,
        now: OffsetDateTime,
        cur: [OffsetDateTime; 2],
        prev: [OffsetDateTime; 2],
    ) {
        let (c, p) = preset.ranges(now);
        assert_eq!([c.start, c.end], cur, "{preset:?} current");
        assert_eq!([p.start, p.end], prev, "{preset:?} previous");
    }

    #[test]
    fn presets_by_hand() {
        // Wednesday 2026-03-04, late evening UTC.
        let now = datetime!(2026-03-04 23:59:59 UTC);
        check(
            Preset::Today,
            now,
            [
                datetime!(2026-03-04 0:00 UTC),
                datetime!(2026-03-05 0:00 UTC),
            ],
            [
                datetime!(2026-03-03 0:00 UTC),
                datetime!(2026-03-04 0:00 UTC),
            ],
        );
        check(
            Preset::Yesterday,
            now,
            [
                datetime!(2026-03-03 0:00 UTC),
                datetime!(2026-03-04 0:00 UTC),
            ],
            [
                datetime!(2026-03-02 0:00 UTC),
                datetime!(2026-03-03 0:00 UTC),
            ],
        );
        check(
            Preset::ThisWeek,
            now,
            [
                datetime!(2026-03-02 0:00 UTC),
                datetime!(2026-03-09 0:00 UTC),
            ],
            [
                datetime!(2026-02-23 0:00 UTC),
                datetime!(2026-03-02 0:00 UTC),
            ],
        );
        check(
            Preset::LastWeek,
            now,
            [
                datetime!(2026-02-23 0:00 UTC),
                datetime!(2026-03-02 0:00 UTC),
            ],
            [
                datetime!(2026-02-16 0:00 UTC),
                datetime!(2026-02-23 0:00 UTC),
            ],
        );
        check(
            Preset::ThisMonth,
            now,
            [
                datetime!(2026-03-01 0:00 UTC),
                datetime!(2026-04-01 0:00 UTC),
            ],
            [
                datetime!(2026-02-01 0:00 UTC),
                datetime!(2026-03-01 0:00 UTC),
            ],
        );
        check(
            Preset::LastMonth,
            now,
            [
                datetime!(2026-02-01 0:00 UTC),
                datetime!(2026-03-01 0:00 UTC),
            ],
            [
                datetime!(2026-01-01 0:00 UTC),
                datetime!(2026-02-01 0:00 UTC),
            ],
        );
        check(
            Preset::ThisQuarter,
            now,
            [
                datetime!(2026-01-01 0:00 UTC),
                datetime!(2026-04-01 0:00 UTC),
            ],
            [
                datetime!(2025-10-01 0:00 UTC),
                datetime!(2026-01-01 0:00 UTC),
            ],
        );
        check(
            Preset::LastQuarter,
            now,
            [
                datetime!(2025-10-01 0:00 UTC),
                datetime!(2026-01-01 0:00 UTC),
            ],
            [
                datetime!(2025-07-01 0:00 UTC),
                datetime!(2025-10-01 0:00 UTC),
            ],
        );
        check(
            Preset::ThisYear,
            now,
            [
                datetime!(2026-01-01 0:00 UTC),
                datetime!(2027-01-01 0:00 UTC),
            ],
            [
                datetime!(2025-01-01 0:00 UTC),
                datetime!(2026-01-01 0:00 UTC),
            ],
        );
        check(
            Preset::LastYear,
            now,
            [
                datetime!(2025-01-01 0:00 UTC),
                datetime!(2026-01-01 0:00 UTC),
            ],
            [
                datetime!(2024-01-01 0:00 UTC),
                datetime!(2025-01-01 0:00 UTC),
            ],
        );
        check(
            Preset::Last7Days,
            now,
            [
                datetime!(2026-02-26 0:00 UTC),
                datetime!(2026-03-05 0:00 UTC),
            ],
            [
                datetime!(2026-02-19 0:00 UTC),
                datetime!(2026-02-26 0:00 UTC),
            ],
        );
        check(
            Preset::Last30Days,
            now,
            [
                datetime!(2026-02-03 0:00 UTC),
                datetime!(2026-03-05 0:00 UTC),
            ],
            [
                datetime!(2026-01-04 0:00 UTC),
                datetime!(2026-02-03 0:00 UTC),
            ],
        );
        check(
            Preset::Last90Days,
            now,
            [
                datetime!(2025-12-05 0:00 UTC),
                datetime!(2026-03-05 0:00 UTC),
            ],
            [
                datetime!(2025-09-06 0:00 UTC),
                datetime!(2025-12-05 0:00 UTC),
            ],
        );
    }

    #[test]
    fn boundaries_follow_utc_and_calendar_edges() {
        // 00:30 on the 1st in UTC+02:00 is still the last day of the month in UTC.
        let now = datetime!(2026-04-01 00:30 +02:00);
        check(
            Preset::ThisMonth,
            now,
            [
                datetime!(2026-03-01 0:00 UTC),
                datetime!(2026-04-01 0:00 UTC),
            ],
            [
                datetime!(2026-02-01 0:00 UTC),
                datetime!(2026-03-01 0:00 UTC),
            ],
        );
        // January: last month is December of the year before; a Sunday's week began on Monday.
        let now = datetime!(2027-01-03 12:00 UTC);
        check(
            Preset::LastMonth,
            now,
            [
                datetime!(2026-12-01 0:00 UTC),
                datetime!(2027-01-01 0:00 UTC),
            ],
            [
                datetime!(2026-11-01 0:00 UTC),
                datetime!(2026-12-01 0:00 UTC),
            ],
        );
        check(
            Preset::ThisWeek,
            now,
            [
                datetime!(2026-12-28 0:00 UTC),
                datetime!(2027-01-04 0:00 UTC),
            ],
            [
                datetime!(2026-12-21 0:00 UTC),
                datetime!(2026-12-28 0:00 UTC),
            ],
        );
        // A leap year's February.
        let now = datetime!(2028-02-29 08:00 UTC);
        check(
            Preset::ThisMonth,
            now,
            [
                datetime!(2028-02-01 0:00 UTC),
                datetime!(2028-03-01 0:00 UTC),
            ],
            [
                datetime!(2028-01-01 0:00 UTC),
                datetime!(2028-02-01 0:00 UTC),
            ],
        );
        // December's quarter.
        let now = datetime!(2026-12-31 23:00 UTC);
        check(
            Preset::ThisQuarter,
            now,
            [
                datetime!(2026-10-01 0:00 UTC),
                datetime!(2027-01-01 0:00 UTC),
            ],
            [
                datetime!(2026-07-01 0:00 UTC),
                datetime!(2026-10-01 0:00 UTC),
            ],
        );
    }
}
