//! CloudWatch's metric data, pure: what PutMetricData publishes, checked as CloudWatch checks it,
//! and the statistics GetMetricStatistics and GetMetricData answer from what was kept.

use phantom_model::cloudwatch::{
    Datapoint, Datum, MetricDatum, MetricId, PutMetricData, StatisticSet, Stats,
};
use phantom_model::time::{format_timestamp, from_ms, parse_timestamp};
use std::collections::BTreeMap;

/// CloudWatch's own error codes for a request it cannot take (not the model's ValidationError).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bad {
    /// InvalidParameterValue
    Value(String),
    /// InvalidParameterCombination
    Combination(String),
    /// MissingParameter
    Missing(String),
}

pub type Checked<T> = Result<T, Bad>;

/// How far back and ahead of now a datapoint's timestamp may be (CloudWatch's two weeks and two
/// hours).
pub const MAX_PAST_MS: i64 = 14 * 24 * 3_600_000;
pub const MAX_FUTURE_MS: i64 = 2 * 3_600_000;
/// How long datapoints are kept. CloudWatch keeps a minute's data 15 days, then rolls it up into
/// 5-minute and hourly data kept longer; Phantom keeps what was published, 15 days.
pub const RETENTION_MS: i64 = 15 * 24 * 3_600_000;
/// Values in `Values` of one datum, at most.
pub const MAX_VALUES: usize = 150;
/// The most datapoints GetMetricStatistics answers.
pub const MAX_DATAPOINTS: i64 = 1_440;
/// CloudWatch refuses values outside 2^-260 .. 2^360 in magnitude (zero aside).
const TOO_BIG: f64 = 1.8786841e108; // 2^360, rounded down
const TOO_SMALL: f64 = 5.40762e-79; // 2^-260, rounded up

/// The datapoints a PutMetricData publishes, at `now_ms`.
pub fn published(req: &PutMetricData, now_ms: i64) -> Checked<Vec<Datum>> {
    if req.namespace.starts_with("AWS/") {
        return Err(Bad::Value(
            "The value AWS/ for parameter Namespace is invalid.".into(),
        ));
    }
    let data = req
        .metric_data
        .iter()
        .chain(req.entity_metric_data.iter().flat_map(|e| &e.metric_data));
    let mut out = Vec::new();
    for (i, d) in data.enumerate() {
        out.push(datum(
            &req.namespace,
            d,
            &format!("MetricData.member.{}", i + 1),
            now_ms,
        )?);
    }
    if out.is_empty() {
        return Err(Bad::Missing("The parameter MetricData is required.".into()));
    }
    Ok(out)
}

fn datum(namespace: &str, d: &MetricDatum, at: &str, now_ms: i64) -> Checked<Datum> {
    let given = [
        d.value.is_some(),
        d.statistic_values.is_some(),
        d.values.is_some(),
    ];
    match given.iter().filter(|g| **g).count() {
        0 => {
            return Err(Bad::Combination(format!(
                "One of the parameters {at}.Value, {at}.StatisticValues and {at}.Values must be specified."
            )))
        }
        1 => {}
        _ => {
            return Err(Bad::Combination(format!(
                "The parameters {at}.Value, {at}.StatisticValues and {at}.Values are mutually exclusive and you have specified more than one."
            )))
        }
    }
    let stats = if let Some(v) = d.value {
        Stats::one(value(v, &format!("{at}.Value"))?)
    } else if let Some(s) = d.statistic_values {
        statistic_set(s, at)?
    } else {
        values(d.values.as_deref().unwrap_or(&[]), d.counts.as_deref(), at)?
    };
    if d.counts.is_some() && d.values.is_none() {
        return Err(Bad::Combination(format!(
            "The parameter {at}.Counts must be specified with {at}.Values."
        )));
    }
    let high_resolution = match d.storage_resolution {
        None | Some(60) => false,
        Some(1) => true,
        Some(other) => {
            return Err(Bad::Value(format!(
                "The value {other} for parameter {at}.StorageResolution is invalid: it is 1 (high resolution) or 60."
            )))
        }
    };
    let mut names: Vec<&str> = d.dimensions.iter().map(|x| x.name.as_str()).collect();
    names.sort_unstable();
    if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
        return Err(Bad::Value(format!(
            "The dimension {} is given more than once in {at}.Dimensions.",
            w[0]
        )));
    }
    let at_ms = match &d.timestamp {
        None => now_ms,
        Some(t) => {
            let ms = parse_timestamp(t).map(|t| (t.unix_timestamp_nanos() / 1_000_000) as i64);
            match ms {
                Some(ms) if ms >= now_ms - MAX_PAST_MS && ms <= now_ms + MAX_FUTURE_MS => ms,
                _ => {
                    return Err(Bad::Value(format!(
                        "The parameter {at}.Timestamp must specify a time no more than two weeks in the past and no more than two hours in the future."
                    )))
                }
            }
        }
    };
    Ok(Datum {
        metric: MetricId::new(namespace, &d.metric_name, &d.dimensions),
        at_ms,
        unit: d.unit.clone().filter(|u| u != "None"),
        stats,
        high_resolution,
    })
}

fn value(v: f64, at: &str) -> Checked<f64> {
    let a = v.abs();
    if !v.is_finite() || a > TOO_BIG || (a != 0.0 && a < TOO_SMALL) {
        return Err(Bad::Value(format!(
            "The value {v} for parameter {at} is invalid: values are between 2^-260 and 2^360 in magnitude, or 0."
        )));
    }
    Ok(v)
}

fn statistic_set(s: StatisticSet, at: &str) -> Checked<Stats> {
    let at = format!("{at}.StatisticValues");
    for (name, v) in [
        ("SampleCount", s.sample_count),
        ("Sum", s.sum),
        ("Minimum", s.minimum),
        ("Maximum", s.maximum),
    ] {
        value(v, &format!("{at}.{name}"))?;
    }
    if s.sample_count <= 0.0 {
        return Err(Bad::Value(format!(
            "The parameter {at}.SampleCount must be greater than 0."
        )));
    }
    if s.minimum > s.maximum {
        return Err(Bad::Value(format!(
            "The parameter {at}.Minimum must not be greater than {at}.Maximum."
        )));
    }
    Ok(Stats {
        count: s.sample_count,
        sum: s.sum,
        min: s.minimum,
        max: s.maximum,
    })
}

fn values(vs: &[f64], counts: Option<&[f64]>, at: &str) -> Checked<Stats> {
    if vs.is_empty() {
        return Err(Bad::Missing(format!("The parameter {at}.Values is empty.")));
    }
    if vs.len() > MAX_VALUES {
        return Err(Bad::Value(format!(
            "The parameter {at}.Values has {} values; at most {MAX_VALUES} are taken.",
            vs.len()
        )));
    }
    if counts.is_some_and(|c| c.len() != vs.len()) {
        return Err(Bad::Value(format!(
            "The parameters {at}.Values and {at}.Counts must be of the same size."
        )));
    }
    let mut total: Option<Stats> = None;
    for (i, v) in vs.iter().enumerate() {
        let v = value(*v, &format!("{at}.Values.member.{}", i + 1))?;
        let count = counts.map_or(1.0, |c| c[i]);
        if !count.is_finite() || count <= 0.0 {
            return Err(Bad::Value(format!(
                "The parameter {at}.Counts.member.{} must be greater than 0.",
                i + 1
            )));
        }
        let s = Stats {
            count,
            sum: v * count,
            min: v,
            max: v,
        };
        total = Some(total.map_or(s, |t| t.merge(s)));
    }
    Ok(total.expect("at least one value"))
}

/// A statistic CloudWatch computes from statistic sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Statistic {
    SampleCount,
    Average,
    Sum,
    Minimum,
    Maximum,
}

impl Statistic {
    pub const ALL: [Statistic; 5] = [
        Self::SampleCount,
        Self::Average,
        Self::Sum,
        Self::Minimum,
        Self::Maximum,
    ];

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|x| x.as_str() == s)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::SampleCount => "SampleCount",
            Self::Average => "Average",
            Self::Sum => "Sum",
            Self::Minimum => "Minimum",
            Self::Maximum => "Maximum",
        }
    }

    pub fn of(self, s: &Stats) -> f64 {
        match self {
            Self::SampleCount => s.count,
            Self::Average => s.sum / s.count,
            Self::Sum => s.sum,
            Self::Minimum => s.min,
            Self::Maximum => s.max,
        }
    }
}

/// A statistic that is a percentile or another of CloudWatch's extended statistics (`p99`,
/// `tm90`, ...): Phantom keeps statistic sets, not distributions, so it cannot compute them.
pub fn no_percentiles(stat: &str) -> Bad {
    Bad::Value(format!(
        "The statistic {stat} is not available: Phantom keeps each datapoint's SampleCount, Sum, Minimum and Maximum, from which it computes {}; not percentiles.",
        Statistic::ALL.map(Statistic::as_str).join(", ")
    ))
}

/// A period a query may ask for: 1, 5, 10, 20 or 30 seconds (high-resolution data) or a multiple
/// of 60.
pub fn check_period(period_secs: i64, name: &str) -> Checked<()> {
    if period_secs > 0 && (period_secs % 60 == 0 || [1, 5, 10, 20, 30].contains(&period_secs)) {
        Ok(())
    } else {
        Err(Bad::Value(format!(
            "The parameter {name} must be 1, 5, 10, 20, 30 or a multiple of 60."
        )))
    }
}

/// The time range of a query, in Unix ms, checked.
pub fn range(start: &str, end: &str) -> Checked<(i64, i64)> {
    let ms = |t: &str| parse_timestamp(t).map(|t| (t.unix_timestamp_nanos() / 1_000_000) as i64);
    let (Some(from), Some(to)) = (ms(start), ms(end)) else {
        return Err(Bad::Value("StartTime and EndTime are timestamps.".into()));
    };
    if from >= to {
        return Err(Bad::Value(
            "The parameter StartTime must be less than the parameter EndTime.".into(),
        ));
    }
    Ok((from, to))
}

/// The data of `[from, to)` in periods of `period_ms`, each period's statistic set (periods
/// start at multiples of the period since the epoch, as CloudWatch aligns them), with the unit
/// the data had (`unit`: only data of that unit).
pub fn periods(
    data: &[Datum],
    (from, to): (i64, i64),
    period_ms: i64,
    unit: Option<&str>,
) -> BTreeMap<i64, (Stats, Option<String>)> {
    let mut out: BTreeMap<i64, (Stats, Option<String>)> = BTreeMap::new();
    let unit = unit.filter(|u| *u != "None");
    for d in data {
        if d.at_ms < from || d.at_ms >= to {
            continue;
        }
        if unit.is_some() && d.unit.as_deref() != unit {
            continue;
        }
        let start = d.at_ms.div_euclid(period_ms) * period_ms;
        out.entry(start)
            .and_modify(|(s, u)| {
                *s = s.merge(d.stats);
                if u.is_none() {
                    u.clone_from(&d.unit);
                }
            })
            .or_insert((d.stats, d.unit.clone()));
    }
    out
}

/// GetMetricStatistics' datapoints: `statistics` of each period with data, oldest first.
pub fn datapoints(
    periods: &BTreeMap<i64, (Stats, Option<String>)>,
    statistics: &[Statistic],
) -> Vec<Datapoint> {
    periods
        .iter()
        .map(|(at, (s, unit))| {
            let pick = |x: Statistic| statistics.contains(&x).then(|| x.of(s));
            Datapoint {
                timestamp: format_timestamp(from_ms(*at)),
                sample_count: pick(Statistic::SampleCount),
                average: pick(Statistic::Average),
                sum: pick(Statistic::Sum),
                minimum: pick(Statistic::Minimum),
                maximum: pick(Statistic::Maximum),
                unit: unit.clone().unwrap_or_else(|| "None".into()),
            }
        })
        .collect()
}

/// A series of `n` points `step_ms` apart, the last at `end_ms`, each the statistic of the data
/// in the step before it (oldest first; none where no data fell): a CloudWatch metric read as
/// target tracking and its chart read a PromQL range.
pub fn series(
    data: &[Datum],
    (statistic, unit): (Statistic, Option<&str>),
    end_ms: i64,
    step_ms: i64,
    n: usize,
) -> Vec<Option<f64>> {
    (0..n as i64)
        .map(|i| {
            let t = end_ms - (n as i64 - 1 - i) * step_ms;
            let unit = unit.filter(|u| *u != "None");
            data.iter()
                .filter(|d| d.at_ms >= t - step_ms && d.at_ms < t)
                .filter(|d| unit.is_none() || d.unit.as_deref() == unit)
                .map(|d| d.stats)
                .reduce(Stats::merge)
                .map(|s| statistic.of(&s))
        })
        .collect()
}

/// The number of periods a query of `(from, to)` in periods of `period_ms` spans.
pub fn span(from: i64, to: i64, period_ms: i64) -> i64 {
    (to - from + period_ms - 1) / period_ms
}

#[cfg(test)]
mod tests {
    use super::*;
    use phantom_model::cloudwatch::{Dimension, EntityMetricData};

    const NOW: i64 = 1_764_331_200_000;

    fn datum(name: &str) -> MetricDatum {
        MetricDatum {
            metric_name: name.into(),
            dimensions: vec![],
            timestamp: None,
            value: None,
            statistic_values: None,
            values: None,
            counts: None,
            unit: None,
            storage_resolution: None,
        }
    }

    fn put(data: Vec<MetricDatum>) -> PutMetricData {
        PutMetricData {
            namespace: "App".into(),
            metric_data: data,
            entity_metric_data: vec![],
            strict_entity_validation: None,
        }
    }

    #[test]
    fn a_value_a_statistic_set_and_values_with_counts_each_make_one_datum() {
        let d = |f: fn(&mut MetricDatum)| {
            let mut d = datum("Load");
            f(&mut d);
            d
        };
        let got = published(
            &put(vec![
                d(|d| d.value = Some(2.0)),
                d(|d| {
                    d.statistic_values = Some(StatisticSet {
                        sample_count: 4.0,
                        sum: 10.0,
                        minimum: 1.0,
                        maximum: 4.0,
                    })
                }),
                d(|d| {
                    d.values = Some(vec![1.0, 3.0]);
                    d.counts = Some(vec![2.0, 1.0]);
                }),
            ]),
            NOW,
        )
        .unwrap();
        assert_eq!(got[0].stats, Stats::one(2.0));
        assert_eq!(got[1].stats.count, 4.0);
        assert_eq!(
            got[2].stats,
            Stats {
                count: 3.0,
                sum: 5.0,
                min: 1.0,
                max: 3.0
            }
        );
        assert!(got.iter().all(|d| d.at_ms == NOW));
    }

    #[test]
    fn the_agents_entity_data_is_kept_as_data() {
        let mut d = datum("mem_used_percent");
        d.value = Some(40.0);
        let mut req = put(vec![]);
        req.entity_metric_data = vec![EntityMetricData {
            metric_data: vec![d],
        }];
        assert_eq!(published(&req, NOW).unwrap().len(), 1);
    }

    #[test]
    fn cloudwatchs_refusals() {
        let mut both = datum("x");
        both.value = Some(1.0);
        both.values = Some(vec![1.0]);
        assert!(matches!(
            published(&put(vec![both]), NOW),
            Err(Bad::Combination(_))
        ));
        assert!(matches!(
            published(&put(vec![datum("x")]), NOW),
            Err(Bad::Combination(_))
        ));
        assert!(matches!(published(&put(vec![]), NOW), Err(Bad::Missing(_))));
        let mut aws = put(vec![]);
        aws.namespace = "AWS/EC2".into();
        assert_eq!(
            published(&aws, NOW),
            Err(Bad::Value(
                "The value AWS/ for parameter Namespace is invalid.".into()
            ))
        );
        let mut old = datum("x");
        old.value = Some(1.0);
        old.timestamp = Some(format_timestamp(from_ms(NOW - MAX_PAST_MS - 1)));
        assert!(matches!(
            published(&put(vec![old]), NOW),
            Err(Bad::Value(_))
        ));
        let mut uneven = datum("x");
        uneven.values = Some(vec![1.0, 2.0]);
        uneven.counts = Some(vec![1.0]);
        assert!(matches!(
            published(&put(vec![uneven]), NOW),
            Err(Bad::Value(_))
        ));
        let mut huge = datum("x");
        huge.value = Some(1e200);
        assert!(matches!(
            published(&put(vec![huge]), NOW),
            Err(Bad::Value(_))
        ));
        let mut twice = datum("x");
        twice.value = Some(1.0);
        twice.dimensions = vec![
            Dimension {
                name: "A".into(),
                value: "1".into(),
            },
            Dimension {
                name: "A".into(),
                value: "2".into(),
            },
        ];
        assert!(matches!(
            published(&put(vec![twice]), NOW),
            Err(Bad::Value(_))
        ));
    }

    #[test]
    fn dimensions_in_any_order_are_one_metric() {
        let a = Dimension {
            name: "A".into(),
            value: "1".into(),
        };
        let b = Dimension {
            name: "B".into(),
            value: "2".into(),
        };
        assert_eq!(
            MetricId::new("App", "Load", &[a.clone(), b.clone()]),
            MetricId::new("App", "Load", &[b, a])
        );
    }

    #[test]
    fn periods_align_to_the_epoch_and_merge_their_data() {
        let d = |at_ms: i64, v: f64| Datum {
            metric: MetricId::new("App", "Load", &[]),
            at_ms,
            unit: Some("Percent".into()),
            stats: Stats::one(v),
            high_resolution: false,
        };
        let data = [
            d(NOW + 1_000, 10.0),
            d(NOW + 59_000, 30.0),
            d(NOW + 61_000, 5.0),
        ];
        let p = periods(&data, (NOW, NOW + 120_000), 60_000, None);
        let points = datapoints(&p, &[Statistic::Average, Statistic::Maximum]);
        assert_eq!(points.len(), 2);
        assert_eq!(points[0].average, Some(20.0));
        assert_eq!(points[0].maximum, Some(30.0));
        assert_eq!(points[0].sum, None);
        assert_eq!(points[1].average, Some(5.0));
        assert_eq!(points[1].unit, "Percent");
        // Another unit asked: none of it.
        assert!(periods(&data, (NOW, NOW + 120_000), 60_000, Some("Count")).is_empty());
    }

    #[test]
    fn a_series_takes_each_steps_data_before_it() {
        let d = |at_ms: i64, v: f64| Datum {
            metric: MetricId::new("App", "Load", &[]),
            at_ms,
            unit: None,
            stats: Stats::one(v),
            high_resolution: false,
        };
        let data = [
            d(NOW - 50_000, 10.0),
            d(NOW - 20_000, 30.0),
            d(NOW - 1, 5.0),
            d(NOW, 99.0),
        ];
        let s = series(&data, (Statistic::Average, None), NOW, 30_000, 3);
        assert_eq!(s, [None, Some(10.0), Some(17.5)]);
    }

    #[test]
    fn periods_are_those_cloudwatch_takes() {
        assert!(check_period(60, "Period").is_ok());
        assert!(check_period(300, "Period").is_ok());
        assert!(check_period(10, "Period").is_ok());
        assert!(check_period(90, "Period").is_err());
        assert!(check_period(0, "Period").is_err());
        assert_eq!(span(0, 86_400_000, 60_000), 1_440);
    }
}
