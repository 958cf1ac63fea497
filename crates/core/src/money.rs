//! Money: an exact decimal for deal values and prices, stored in `numeric(18,4)`.
//!
//! [`Money`] wraps [`rust_decimal::Decimal`] (96-bit, exact, `Copy`). It
//! travels as a JSON **string** (`"1250.5000"`), because a JSON number becomes
//! a double in most clients and loses cents on large values; a JSON number is
//! still accepted on input for compatibility. Input is checked against the
//! column it will be stored in — at most [`Money::MAX_INTEGER_DIGITS`] digits
//! before the point and [`Money::MAX_SCALE`] after it — so a value Postgres
//! would reject (a 500) or silently round is a 400 naming the field. In
//! diesel it maps to `Numeric`:
//!
//! ```ignore
//! diesel::table! { deals (id) { id -> Uuid, value_amount -> Nullable<Numeric>, } }
//! #[derive(Queryable, Selectable)] struct Deal { id: Uuid, value_amount: Option<Money> }
//! ```

use std::fmt;
use std::str::FromStr;

use diesel::deserialize::{FromSql, FromSqlRow};
use diesel::expression::AsExpression;
use diesel::pg::{Pg, PgValue};
use diesel::serialize::{Output, ToSql};
use diesel::sql_types::Numeric;
use rust_decimal::Decimal;
use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An exact amount that fits `numeric(18,4)`.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default, AsExpression, FromSqlRow,
)]
#[diesel(sql_type = Numeric)]
pub struct Money(Decimal);

/// Why a string is not an amount.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum MoneyError {
    #[error("must be a decimal number such as \"1250.50\"")]
    Syntax,
    #[error(
        "must have at most {} digits after the decimal point",
        Money::MAX_SCALE
    )]
    Scale,
    #[error(
        "must have at most {} digits before the decimal point",
        Money::MAX_INTEGER_DIGITS
    )]
    TooLarge,
}

impl Money {
    /// Digits after the point (the column's scale).
    pub const MAX_SCALE: u32 = 4;
    /// Digits before the point (precision 18 − scale 4).
    pub const MAX_INTEGER_DIGITS: usize = 14;
    pub const ZERO: Self = Self(Decimal::ZERO);

    /// Checks that `value` fits `numeric(18,4)`.
    pub fn new(value: Decimal) -> Result<Self, MoneyError> {
        let value = value.normalize();
        if value.scale() > Self::MAX_SCALE {
            return Err(MoneyError::Scale);
        }
        if value
            .trunc()
            .abs()
            .to_string()
            .trim_start_matches('0')
            .len()
            > Self::MAX_INTEGER_DIGITS
        {
            return Err(MoneyError::TooLarge);
        }
        Ok(Self(value))
    }

    /// The exact decimal.
    pub fn decimal(&self) -> Decimal {
        self.0
    }

    /// The amount in ten-thousandths, exact (`numeric(18,4)` holds at most
    /// 18 digits, so it fits an `i64`): what range filters compare, through
    /// [`Money::e4_sql`].
    pub fn ten_thousandths(&self) -> i64 {
        let mut scaled = self.0;
        scaled.rescale(Self::MAX_SCALE);
        // |mantissa| < 10^18 < i64::MAX by construction (`Money::new`).
        i64::try_from(scaled.mantissa()).unwrap_or(if scaled.is_sign_negative() {
            i64::MIN
        } else {
            i64::MAX
        })
    }

    /// SQL of a `numeric(18,4)` column in ten-thousandths:
    /// `(<column> * 10000)::bigint`. Range filters on amounts compare
    /// this with [`Money::ten_thousandths`] rather than the numeric itself,
    /// because under row-level security the planner withholds column
    /// statistics from operators that are not leakproof, and numeric's
    /// comparisons are not (bigint's are): a numeric range then gets a
    /// default 0.5% selectivity and filtered lists get a plan for one row.
    /// The column needs a `CREATE STATISTICS` on the same expression.
    pub fn e4_sql(column: &str) -> String {
        format!("({column} * 10000)::bigint")
    }

    /// Sum, or `None` when it leaves `numeric(18,4)`.
    pub fn checked_add(self, other: Self) -> Option<Self> {
        self.0.checked_add(other.0).and_then(|v| Self::new(v).ok())
    }

    /// Product with a quantity, rounded half-even to the scale; `None` when
    /// it leaves `numeric(18,4)`.
    pub fn checked_mul(self, factor: Decimal) -> Option<Self> {
        self.0
            .checked_mul(factor)
            .map(|v| v.round_dp(Self::MAX_SCALE))
            .and_then(|v| Self::new(v).ok())
    }
}

impl FromStr for Money {
    type Err = MoneyError;

    /// Accepts `-?digits(.digits)?` only: no exponent, sign `+`, spaces,
    /// underscores or separators, so what is stored is what was written.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let unsigned = s.strip_prefix('-').unwrap_or(s);
        let (int, frac) = match unsigned.split_once('.') {
            Some((int, frac)) => (int, Some(frac)),
            None => (unsigned, None),
        };
        let digits = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
        if !digits(int) || frac.is_some_and(|f| !digits(f)) {
            return Err(MoneyError::Syntax);
        }
        if int.trim_start_matches('0').len() > Self::MAX_INTEGER_DIGITS {
            return Err(MoneyError::TooLarge);
        }
        if frac.is_some_and(|f| f.trim_end_matches('0').len() > Self::MAX_SCALE as usize) {
            return Err(MoneyError::Scale);
        }
        let value = Decimal::from_str_exact(s).map_err(|_| MoneyError::Syntax)?;
        Self::new(value)
    }
}

impl fmt::Display for Money {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl Serialize for Money {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Money {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MoneyVisitor;

        impl Visitor<'_> for MoneyVisitor {
            type Value = Money;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a decimal amount as a string, such as \"1250.50\"")
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<Money, E> {
                v.parse().map_err(E::custom)
            }

            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Money, E> {
                Money::new(Decimal::from(v)).map_err(E::custom)
            }

            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Money, E> {
                Money::new(Decimal::from(v)).map_err(E::custom)
            }

            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Money, E> {
                // A JSON number arrives as a double; its shortest form is
                // what the client wrote for up to 15 significant digits.
                if !v.is_finite() {
                    return Err(E::custom(MoneyError::Syntax));
                }
                format!("{v}").parse().map_err(E::custom)
            }
        }

        deserializer.deserialize_any(MoneyVisitor)
    }
}

impl utoipa::PartialSchema for Money {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::schema::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .pattern(Some(r"^-?[0-9]{1,14}(\.[0-9]{1,4})?$"))
            .description(Some(
                "Exact decimal amount as a string (numeric(18,4)): up to 14 digits before \
                 the point and 4 after. A JSON number is accepted on input.",
            ))
            .examples(["1250.50"])
            .into()
    }
}

impl utoipa::ToSchema for Money {}

impl ToSql<Numeric, Pg> for Money {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Pg>) -> diesel::serialize::Result {
        <Decimal as ToSql<Numeric, Pg>>::to_sql(&self.0, out)
    }
}

impl FromSql<Numeric, Pg> for Money {
    fn from_sql(value: PgValue<'_>) -> diesel::deserialize::Result<Self> {
        // What the column holds fits by construction; normalize drops the
        // column's trailing zeros so `10.5000` reads back as `10.5`.
        Ok(Self(Decimal::from_sql(value)?.normalize()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ten_thousandths_are_exact() {
        for (text, e4) in [
            ("0", 0),
            ("1", 10_000),
            ("1250.5", 12_505_000),
            ("0.0001", 1),
            ("-3.25", -32_500),
            ("99999999999999.9999", 999_999_999_999_999_999),
        ] {
            let money: Money = text.parse().unwrap();
            assert_eq!(money.ten_thousandths(), e4, "{text}");
        }
    }

    fn money(s: &str) -> Result<Money, MoneyError> {
        s.parse()
    }

    #[test]
    fn parses_exact_amounts() {
        for (input, shown) in [
            ("0", "0"),
            ("12", "12"),
            ("-3.5", "-3.5"),
            ("1250.5000", "1250.5"),
            ("99999999999999.9999", "99999999999999.9999"),
            ("0.0001", "0.0001"),
            ("007.10", "7.1"),
        ] {
            assert_eq!(
                money(input).map(|m| m.to_string()),
                Ok(shown.to_string()),
                "{input}"
            );
        }
    }

    #[test]
    fn refuses_bad_strings() {
        for input in [
            "", "-", "abc", "1e5", "+1", " 1", "1 ", "1,5", "1.", ".5", "1_000", "NaN", "1.2.3",
            "--1",
        ] {
            assert_eq!(money(input), Err(MoneyError::Syntax), "{input:?}");
        }
        assert_eq!(money("1.00001"), Err(MoneyError::Scale));
        assert_eq!(money("100000000000000"), Err(MoneyError::TooLarge));
        assert!(money("1.00010").is_ok());
    }

    #[test]
    fn json_is_a_string_and_numbers_are_accepted() {
        let m = money("19.99").unwrap_or_default();
        assert_eq!(serde_json::to_string(&m).ok().as_deref(), Some("\"19.99\""));
        let from_number: Result<Money, _> = serde_json::from_str("19.99");
        assert_eq!(from_number.ok(), Some(m));
        let from_int: Result<Money, _> = serde_json::from_str("20");
        assert_eq!(from_int.ok().map(|m| m.to_string()), Some("20".to_string()));
        let bad: Result<Money, _> = serde_json::from_str("\"12.34567\"");
        assert!(bad.is_err());
        let bad: Result<Money, _> = serde_json::from_str("true");
        assert!(bad.is_err());
    }

    #[test]
    fn arithmetic_stays_in_range() {
        let max = money("99999999999999.9999").unwrap_or_default();
        assert_eq!(max.checked_add(money("0.0001").unwrap_or_default()), None);
        let price = money("10.10").unwrap_or_default();
        assert_eq!(
            price.checked_mul(Decimal::from(3)).map(|m| m.to_string()),
            Some("30.3".to_string())
        );
    }
}
