//! IAM's condition operators, as its documentation states them: the string, numeric, date,
//! boolean, IP address and ARN families and their negations, `Null`, the `...IfExists` suffix and
//! the `ForAllValues:` / `ForAnyValue:` prefixes for keys with several values. A policy's values
//! for one key are alternatives (any may match; for a negated operator, none may); a key absent
//! from the request makes a positive operator false and a negated one true, as IAM's.

use super::document::{Condition, Malformed};
use std::collections::BTreeMap;
use std::net::IpAddr;

/// A request's condition keys and their values (names compared without case, as IAM's).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Context {
    values: BTreeMap<String, Vec<String>>,
}

impl Context {
    pub fn with(mut self, key: &str, values: &[&str]) -> Self {
        self.set(key, values.iter().map(|v| v.to_string()).collect());
        self
    }

    pub fn set(&mut self, key: &str, values: Vec<String>) {
        self.values.insert(key.to_ascii_lowercase(), values);
    }

    pub fn get(&self, key: &str) -> Option<&[String]> {
        self.values
            .get(&key.to_ascii_lowercase())
            .map(Vec::as_slice)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    StringEquals,
    StringEqualsIgnoreCase,
    StringLike,
    Numeric(Order),
    Date(Order),
    Bool,
    IpAddress,
    Arn,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Order {
    Equals,
    LessThan,
    LessThanEquals,
    GreaterThan,
    GreaterThanEquals,
}

/// The operators by name: their family, and whether they are its negation.
const OPERATORS: [(&str, Family, bool); 26] = [
    ("StringEquals", Family::StringEquals, false),
    ("StringNotEquals", Family::StringEquals, true),
    (
        "StringEqualsIgnoreCase",
        Family::StringEqualsIgnoreCase,
        false,
    ),
    (
        "StringNotEqualsIgnoreCase",
        Family::StringEqualsIgnoreCase,
        true,
    ),
    ("StringLike", Family::StringLike, false),
    ("StringNotLike", Family::StringLike, true),
    ("NumericEquals", Family::Numeric(Order::Equals), false),
    ("NumericNotEquals", Family::Numeric(Order::Equals), true),
    ("NumericLessThan", Family::Numeric(Order::LessThan), false),
    (
        "NumericLessThanEquals",
        Family::Numeric(Order::LessThanEquals),
        false,
    ),
    (
        "NumericGreaterThan",
        Family::Numeric(Order::GreaterThan),
        false,
    ),
    (
        "NumericGreaterThanEquals",
        Family::Numeric(Order::GreaterThanEquals),
        false,
    ),
    ("DateEquals", Family::Date(Order::Equals), false),
    ("DateNotEquals", Family::Date(Order::Equals), true),
    ("DateLessThan", Family::Date(Order::LessThan), false),
    (
        "DateLessThanEquals",
        Family::Date(Order::LessThanEquals),
        false,
    ),
    ("DateGreaterThan", Family::Date(Order::GreaterThan), false),
    (
        "DateGreaterThanEquals",
        Family::Date(Order::GreaterThanEquals),
        false,
    ),
    ("Bool", Family::Bool, false),
    ("IpAddress", Family::IpAddress, false),
    ("NotIpAddress", Family::IpAddress, true),
    ("ArnEquals", Family::Arn, false),
    ("ArnNotEquals", Family::Arn, true),
    ("ArnLike", Family::Arn, false),
    ("ArnNotLike", Family::Arn, true),
    // `Null` is handled on its own; listed so that it is known.
    ("Null", Family::Bool, false),
];

/// An operator as written, read: (set prefix, base name, IfExists).
fn split(operator: &str) -> (Option<&str>, &str, bool) {
    let (set, rest) = match operator.split_once(':') {
        Some((set @ ("ForAllValues" | "ForAnyValue"), rest)) => (Some(set), rest),
        _ => (None, operator),
    };
    match rest.strip_suffix("IfExists") {
        Some(base) if base != "Null" => (set, base, true),
        _ => (set, rest, false),
    }
}

/// Whether IAM knows `operator` (with its prefix and suffix).
pub fn check(operator: &str) -> Result<(), Malformed> {
    let (_, base, _) = split(operator);
    match OPERATORS.iter().any(|(name, _, _)| *name == base) {
        true => Ok(()),
        false => Err(format!("Invalid Condition type : {operator}.")),
    }
}

/// Whether condition `c` holds for a request with `ctx`.
pub fn holds(c: &Condition, ctx: &Context) -> bool {
    let (set, base, if_exists) = split(&c.operator);
    let found = ctx.get(&c.key);
    if base == "Null" {
        // "true": the key is absent; "false": it is there.
        return c
            .values
            .iter()
            .any(|v| v.eq_ignore_ascii_case("true") == found.is_none());
    }
    let Some(&(_, family, negated)) = OPERATORS.iter().find(|(name, _, _)| *name == base) else {
        return false;
    };
    let Some(found) = found.filter(|f| !f.is_empty()) else {
        return match set {
            Some("ForAllValues") => true,
            Some(_) => false,
            None => if_exists || negated,
        };
    };
    // One value of the request's against the policy's: any matches, or for a negation none.
    let one = |got: &String| match negated {
        false => c.values.iter().any(|want| matches(family, got, want)),
        true => !c.values.iter().any(|want| matches(family, got, want)),
    };
    match set {
        Some("ForAllValues") => found.iter().all(one),
        Some(_) => found.iter().any(one),
        None if negated => found.iter().all(one),
        None => found.iter().any(one),
    }
}

fn matches(family: Family, got: &str, want: &str) -> bool {
    match family {
        Family::StringEquals => got == want,
        Family::StringEqualsIgnoreCase => got.eq_ignore_ascii_case(want),
        Family::StringLike | Family::Arn => wildcard(want, got, false),
        Family::Bool => got.eq_ignore_ascii_case(want),
        Family::Numeric(order) => match (got.parse::<f64>(), want.parse::<f64>()) {
            (Ok(g), Ok(w)) => compare(order, g, w),
            _ => false,
        },
        Family::Date(order) => match (date(got), date(want)) {
            (Some(g), Some(w)) => compare(order, g, w),
            _ => false,
        },
        Family::IpAddress => in_range(got, want),
    }
}

fn compare(order: Order, got: f64, want: f64) -> bool {
    match order {
        Order::Equals => got == want,
        Order::LessThan => got < want,
        Order::LessThanEquals => got <= want,
        Order::GreaterThan => got > want,
        Order::GreaterThanEquals => got >= want,
    }
}

/// A date as IAM takes it: ISO 8601 (a day, or a time), or seconds since 1970.
fn date(s: &str) -> Option<f64> {
    if let Ok(secs) = s.parse::<f64>() {
        return Some(secs);
    }
    if let Some(t) = phantom_model::time::parse_timestamp(s) {
        return Some(t.unix_timestamp() as f64);
    }
    let day = phantom_model::time::parse_timestamp(&format!("{s}T00:00:00Z"))?;
    Some(day.unix_timestamp() as f64)
}

/// Whether address `got` is `want` (an address, or a CIDR block).
fn in_range(got: &str, want: &str) -> bool {
    let Ok(ip) = got.parse::<IpAddr>() else {
        return false;
    };
    let (net, bits) = match want.split_once('/') {
        Some((net, bits)) => (net, bits.parse::<u32>().ok()),
        None => (want, None),
    };
    match (ip, net.parse::<IpAddr>()) {
        (IpAddr::V4(a), Ok(IpAddr::V4(n))) => {
            let bits = bits.unwrap_or(32).min(32);
            let mask = u32::MAX.checked_shl(32 - bits).unwrap_or(0);
            u32::from(a) & mask == u32::from(n) & mask
        }
        (IpAddr::V6(a), Ok(IpAddr::V6(n))) => {
            let bits = bits.unwrap_or(128).min(128);
            let mask = u128::MAX.checked_shl(128 - bits).unwrap_or(0);
            u128::from(a) & mask == u128::from(n) & mask
        }
        _ => false,
    }
}

/// IAM's wildcards: `*` any run of characters, `?` any one.
pub fn wildcard(pattern: &str, text: &str, ignore_case: bool) -> bool {
    let norm = |s: &str| -> Vec<char> {
        match ignore_case {
            true => s.to_ascii_lowercase().chars().collect(),
            false => s.chars().collect(),
        }
    };
    let (p, t) = (norm(pattern), norm(text));
    // The classic two-pointer match with backtracking to the last `*`.
    let (mut i, mut j) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while j < t.len() {
        if i < p.len() && (p[i] == '?' || p[i] == t[j]) {
            i += 1;
            j += 1;
        } else if i < p.len() && p[i] == '*' {
            star = Some((i, j));
            i += 1;
        } else if let Some((si, sj)) = star {
            i = si + 1;
            j = sj + 1;
            star = Some((si, sj + 1));
        } else {
            return false;
        }
    }
    p[i..].iter().all(|c| *c == '*')
}
