//! CloudWatch's metric math in GetMetricData, the part scaling and dashboards use: `+ - * /` (and
//! a leading `-`) between time series and numbers, and the functions `ABS`, `CEIL`, `FLOOR`,
//! `SUM`, `AVG`, `MIN`, `MAX` (over a list of series, `[m1, m2]` or `METRICS()`: a series, point
//! by point; over one series: its one value), `FILL` (a number, or `REPEAT`), `RATE` (change a
//! second), `DIFF`, and `METRICS()` (every MetricStat query's series, or those whose id starts
//! with the string given). Anything else (`SEARCH`, `IF`, `ANOMALY_DETECTION_BAND`, ...) is
//! refused by name.

use std::collections::BTreeMap;

/// A time series: its values by timestamp (Unix ms).
pub type Series = BTreeMap<i64, f64>;

/// What an expression or a part of one gives.
#[derive(Debug, Clone, PartialEq)]
enum Value {
    Series(Series),
    Scalar(f64),
    List(Vec<Series>),
}

/// The functions Phantom evaluates.
pub const FUNCTIONS: [&str; 11] = [
    "ABS", "CEIL", "FLOOR", "SUM", "AVG", "MIN", "MAX", "FILL", "RATE", "DIFF", "METRICS",
];

/// The series `expression` gives, over the series `named` (by query id) and the MetricStat
/// queries' ids `stats` (what `METRICS()` lists); a number it gives stands at each timestamp
/// of `grid`. An error says what is wrong, in CloudWatch's manner.
pub fn evaluate(
    expression: &str,
    named: &BTreeMap<String, Series>,
    stats: &[String],
    grid: &[i64],
) -> Result<Series, String> {
    let tokens = tokens(expression)?;
    let mut p = Parser {
        tokens,
        at: 0,
        named,
        stats,
        grid,
    };
    let v = p.expr()?;
    if p.at < p.tokens.len() {
        return Err(format!(
            "Syntax error in the expression {expression:?} near {}.",
            p.tokens[p.at]
        ));
    }
    match v {
        Value::Series(s) => Ok(s),
        Value::Scalar(x) => Ok(grid.iter().map(|t| (*t, x)).collect()),
        Value::List(l) => Err(format!(
            "The expression gives {} time series, not one: reduce them (SUM, AVG, MIN, MAX).",
            l.len()
        )),
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Number(f64),
    Name(String),
    Text(String),
    Punct(char),
}

impl std::fmt::Display for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Number(n) => write!(f, "{n}"),
            Self::Name(n) => write!(f, "{n}"),
            Self::Text(t) => write!(f, "{t:?}"),
            Self::Punct(c) => write!(f, "{c}"),
        }
    }
}

fn tokens(s: &str) -> Result<Vec<Token>, String> {
    let chars: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() || c == '.' {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '.') {
                i += 1;
            }
            let text: String = chars[start..i].iter().collect();
            let n = text
                .parse()
                .map_err(|_| format!("{text} is not a number."))?;
            out.push(Token::Number(n));
        } else if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(Token::Name(chars[start..i].iter().collect()));
        } else if c == '"' || c == '\'' {
            let end = chars[i + 1..]
                .iter()
                .position(|x| *x == c)
                .ok_or("A string in the expression is not closed.")?;
            out.push(Token::Text(chars[i + 1..i + 1 + end].iter().collect()));
            i += end + 2;
        } else if "+-*/(),[]".contains(c) {
            out.push(Token::Punct(c));
            i += 1;
        } else {
            return Err(format!(
                "The expression has a character metric math does not: {c}"
            ));
        }
    }
    Ok(out)
}

struct Parser<'a> {
    tokens: Vec<Token>,
    at: usize,
    named: &'a BTreeMap<String, Series>,
    stats: &'a [String],
    grid: &'a [i64],
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(&Token::Punct(c)) {
            self.at += 1;
            return true;
        }
        false
    }

    fn expect(&mut self, c: char) -> Result<(), String> {
        match self.eat(c) {
            true => Ok(()),
            false => Err(format!(
                "Syntax error: {c} expected{}.",
                self.peek()
                    .map(|t| format!(" before {t}"))
                    .unwrap_or_default()
            )),
        }
    }

    fn expr(&mut self) -> Result<Value, String> {
        let mut v = self.term()?;
        loop {
            let op = if self.eat('+') {
                '+'
            } else if self.eat('-') {
                '-'
            } else {
                return Ok(v);
            };
            let r = self.term()?;
            v = arith(v, op, r)?;
        }
    }

    fn term(&mut self) -> Result<Value, String> {
        let mut v = self.factor()?;
        loop {
            let op = if self.eat('*') {
                '*'
            } else if self.eat('/') {
                '/'
            } else {
                return Ok(v);
            };
            let r = self.factor()?;
            v = arith(v, op, r)?;
        }
    }

    fn factor(&mut self) -> Result<Value, String> {
        if self.eat('-') {
            let v = self.factor()?;
            return arith(Value::Scalar(-1.0), '*', v);
        }
        if self.eat('(') {
            let v = self.expr()?;
            self.expect(')')?;
            return Ok(v);
        }
        if self.eat('[') {
            let mut list = Vec::new();
            loop {
                match self.expr()? {
                    Value::Series(s) => list.push(s),
                    Value::List(l) => list.extend(l),
                    Value::Scalar(_) => return Err("A list holds time series, not numbers.".into()),
                }
                if !self.eat(',') {
                    break;
                }
            }
            self.expect(']')?;
            return Ok(Value::List(list));
        }
        match self.tokens.get(self.at).cloned() {
            Some(Token::Number(n)) => {
                self.at += 1;
                Ok(Value::Scalar(n))
            }
            Some(Token::Name(name)) => {
                self.at += 1;
                if self.peek() == Some(&Token::Punct('(')) {
                    self.at += 1;
                    return self.call(&name);
                }
                match self.named.get(&name) {
                    Some(s) => Ok(Value::Series(s.clone())),
                    None => Err(format!(
                        "The expression names {name}, which is no query's Id before it."
                    )),
                }
            }
            Some(t) => Err(format!("Syntax error near {t}.")),
            None => Err("The expression ends too soon.".into()),
        }
    }

    /// A function's call, its name read and its `(` eaten.
    fn call(&mut self, name: &str) -> Result<Value, String> {
        if !FUNCTIONS.contains(&name) {
            return Err(format!(
                "The function {name} is not offered: Phantom's metric math has {}.",
                FUNCTIONS.join(", ")
            ));
        }
        if name == "METRICS" {
            let prefix = match self.tokens.get(self.at).cloned() {
                Some(Token::Text(t)) => {
                    self.at += 1;
                    t
                }
                _ => String::new(),
            };
            self.expect(')')?;
            let list = self
                .stats
                .iter()
                .filter(|id| id.starts_with(&prefix))
                .filter_map(|id| self.named.get(id).cloned())
                .collect();
            return Ok(Value::List(list));
        }
        let first = self.expr()?;
        let second = if self.eat(',') {
            match self.tokens.get(self.at).cloned() {
                Some(Token::Name(n)) if n == "REPEAT" && name == "FILL" => {
                    self.at += 1;
                    None
                }
                _ => Some(self.expr()?),
            }
        } else {
            None
        };
        self.expect(')')?;
        apply(name, first, second, self.grid)
    }
}

fn arith(l: Value, op: char, r: Value) -> Result<Value, String> {
    let f = |a: f64, b: f64| -> Option<f64> {
        let v = match op {
            '+' => a + b,
            '-' => a - b,
            '*' => a * b,
            _ => a / b,
        };
        v.is_finite().then_some(v)
    };
    Ok(match (l, r) {
        (Value::Scalar(a), Value::Scalar(b)) => Value::Scalar(f(a, b).unwrap_or(f64::NAN)),
        (Value::Series(s), Value::Scalar(b)) => Value::Series(
            s.iter()
                .filter_map(|(t, a)| Some((*t, f(*a, b)?)))
                .collect(),
        ),
        (Value::Scalar(a), Value::Series(s)) => Value::Series(
            s.iter()
                .filter_map(|(t, b)| Some((*t, f(a, *b)?)))
                .collect(),
        ),
        (Value::Series(x), Value::Series(y)) => Value::Series(
            x.iter()
                .filter_map(|(t, a)| Some((*t, f(*a, *y.get(t)?)?)))
                .collect(),
        ),
        _ => return Err(
            "Arithmetic takes time series and numbers: reduce a list first (SUM, AVG, MIN, MAX)."
                .into(),
        ),
    })
}

fn apply(name: &str, v: Value, arg: Option<Value>, grid: &[i64]) -> Result<Value, String> {
    let reduce = |values: &[f64]| -> Option<f64> {
        if values.is_empty() {
            return None;
        }
        Some(match name {
            "SUM" => values.iter().sum(),
            "AVG" => values.iter().sum::<f64>() / values.len() as f64,
            "MIN" => values.iter().copied().fold(f64::INFINITY, f64::min),
            _ => values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        })
    };
    match (name, v) {
        ("ABS" | "CEIL" | "FLOOR", v) => {
            let g = |x: f64| match name {
                "ABS" => x.abs(),
                "CEIL" => x.ceil(),
                _ => x.floor(),
            };
            Ok(match v {
                Value::Scalar(x) => Value::Scalar(g(x)),
                Value::Series(s) => Value::Series(s.into_iter().map(|(t, x)| (t, g(x))).collect()),
                Value::List(l) => Value::List(
                    l.into_iter()
                        .map(|s| s.into_iter().map(|(t, x)| (t, g(x))).collect())
                        .collect(),
                ),
            })
        }
        ("SUM" | "AVG" | "MIN" | "MAX", Value::List(list)) => {
            let mut at: BTreeMap<i64, Vec<f64>> = BTreeMap::new();
            for s in &list {
                for (t, x) in s {
                    at.entry(*t).or_default().push(*x);
                }
            }
            Ok(Value::Series(
                at.into_iter()
                    .filter_map(|(t, xs)| Some((t, reduce(&xs)?)))
                    .collect(),
            ))
        }
        ("SUM" | "AVG" | "MIN" | "MAX", Value::Series(s)) => {
            let values: Vec<f64> = s.values().copied().collect();
            Ok(reduce(&values).map_or(Value::Series(Series::new()), Value::Scalar))
        }
        ("FILL", Value::Series(s)) => {
            let mut out = Series::new();
            let mut last = None;
            for t in grid {
                let v = match (s.get(t), &arg) {
                    (Some(x), _) => Some(*x),
                    (None, None) => last,
                    (None, Some(Value::Scalar(x))) => Some(*x),
                    (None, Some(_)) => return Err("FILL fills with a number or REPEAT.".into()),
                };
                if let Some(v) = v {
                    out.insert(*t, v);
                    last = Some(v);
                }
            }
            Ok(Value::Series(out))
        }
        ("RATE" | "DIFF", Value::Series(s)) => {
            let points: Vec<(i64, f64)> = s.into_iter().collect();
            Ok(Value::Series(
                points
                    .windows(2)
                    .map(|w| {
                        let ((t0, a), (t1, b)) = (w[0], w[1]);
                        let change = b - a;
                        (
                            t1,
                            if name == "RATE" {
                                change * 1000.0 / (t1 - t0) as f64
                            } else {
                                change
                            },
                        )
                    })
                    .collect(),
            ))
        }
        (_, Value::Scalar(_)) => Err(format!("{name} takes a time series, not a number.")),
        (_, _) => Err(format!("{name} takes one time series, not a list.")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(points: &[(i64, f64)]) -> Series {
        points.iter().copied().collect()
    }

    fn run(e: &str) -> Result<Series, String> {
        let named = BTreeMap::from([
            ("m1".to_string(), s(&[(0, 10.0), (60, 20.0), (120, 30.0)])),
            ("m2".to_string(), s(&[(0, 1.0), (120, 3.0)])),
            ("other".to_string(), s(&[(0, 100.0)])),
        ]);
        let stats = ["m1".to_string(), "m2".to_string(), "other".to_string()];
        evaluate(e, &named, &stats, &[0, 60, 120])
    }

    #[test]
    fn arithmetic_takes_the_timestamps_both_have() {
        assert_eq!(run("m1 + m2 * 2").unwrap(), s(&[(0, 12.0), (120, 36.0)]));
        assert_eq!(
            run("(m1 - 10) / m2").unwrap(),
            s(&[(0, 0.0), (120, 20.0 / 3.0)])
        );
        assert_eq!(run("-m2").unwrap(), s(&[(0, -1.0), (120, -3.0)]));
        assert_eq!(
            run("m1 / 0").unwrap(),
            Series::new(),
            "no value where it divides by 0"
        );
        assert_eq!(
            run("100 * 2").unwrap(),
            s(&[(0, 200.0), (60, 200.0), (120, 200.0)])
        );
    }

    #[test]
    fn functions_over_lists_and_series() {
        assert_eq!(
            run("SUM([m1, m2])").unwrap(),
            s(&[(0, 11.0), (60, 20.0), (120, 33.0)])
        );
        assert_eq!(
            run("MAX(METRICS(\"m\"))").unwrap(),
            s(&[(0, 10.0), (60, 20.0), (120, 30.0)])
        );
        assert_eq!(run("AVG(METRICS())").unwrap()[&0], 37.0);
        // Over one series: its one value, at each timestamp.
        assert_eq!(
            run("AVG(m1)").unwrap(),
            s(&[(0, 20.0), (60, 20.0), (120, 20.0)])
        );
        assert_eq!(
            run("FILL(m2, 0)").unwrap(),
            s(&[(0, 1.0), (60, 0.0), (120, 3.0)])
        );
        assert_eq!(
            run("FILL(m2, REPEAT)").unwrap(),
            s(&[(0, 1.0), (60, 1.0), (120, 3.0)])
        );
        assert_eq!(
            run("RATE(m1)").unwrap(),
            s(&[(60, 10.0 * 1000.0 / 60.0), (120, 10.0 * 1000.0 / 60.0)])
        );
        assert_eq!(run("DIFF(m1)").unwrap(), s(&[(60, 10.0), (120, 10.0)]));
        assert_eq!(run("ABS(-m2)").unwrap(), s(&[(0, 1.0), (120, 3.0)]));
    }

    #[test]
    fn what_it_cannot_do_is_refused_by_name() {
        assert!(run("SEARCH('{AWS/EC2} CPUUtilization', 'Average')")
            .unwrap_err()
            .contains("SEARCH is not offered"));
        assert!(run("m1 + nope").unwrap_err().contains("names nope"));
        assert!(run("METRICS()").unwrap_err().contains("3 time series"));
        assert!(run("m1 +").unwrap_err().contains("ends too soon"));
        assert!(run("(m1").unwrap_err().contains(") expected"));
        assert!(run("m1 # 2").unwrap_err().contains("character"));
        assert!(run("[m1] + 1").unwrap_err().contains("reduce a list"));
    }
}
