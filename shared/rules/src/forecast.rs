//! The load forecast of a predictive scaling policy, pure: hourly values from up to two weeks of
//! hourly history, as AWS forecasts (it needs 24 hours of data, reads up to 14 days, and
//! forecasts 48 hours).
//!
//! The model is seasonal averages, re-levelled. An hour's seasonal value is the mean of the same
//! hour of the week in the weeks of history (the weekly season: weekends and weekdays differ);
//! where the history is shorter than a week before that hour, the mean of the same hour of the
//! day over the days there are (the daily season). The forecast is the seasonal
//! value times the level: how the last day's load compares with what the seasons gave for it,
//! so growth or a drop since last week carries forward. Gaps (hours without data) are skipped.
//! `tests/examples/forecast.rs` measures it against a synthetic fortnight (docs/benchmarks.md).

/// An hour, in ms.
pub const HOUR_MS: i64 = 3_600_000;
/// Hours of history read: two weeks, as AWS reads.
pub const HISTORY_HOURS: usize = 14 * 24;
/// Hours of data needed before there is a forecast.
pub const MIN_HOURS: usize = 24;
/// Hours forecast from the current hour on.
pub const AHEAD_HOURS: usize = 48;

const DAY: usize = 24;
const WEEK: usize = 7 * DAY;
/// How much of the seasonal value the weekly season gives, where there is one: all of it (the
/// benchmark found any share of the daily season, which mixes weekdays and weekends, worse).
pub const WEEKLY_WEIGHT: f64 = 1.0;
/// The level is kept within these bounds: one odd day does not double or halve the forecast.
const LEVEL: (f64, f64) = (0.5, 2.0);

/// The start of the hour `ms` falls in.
pub fn hour_of(ms: i64) -> i64 {
    ms.div_euclid(HOUR_MS) * HOUR_MS
}

/// The load of the `ahead` hours right after `history` (hourly, oldest first, None where there
/// was no data), or None with less than `MIN_HOURS` hours of data.
pub fn load(history: &[Option<f64>], ahead: usize) -> Option<Vec<f64>> {
    blended(history, ahead, WEEKLY_WEIGHT)
}

/// `load` with the weekly season's weight given (0: the daily season alone): the benchmark
/// compares them.
pub fn blended(history: &[Option<f64>], ahead: usize, weekly_weight: f64) -> Option<Vec<f64>> {
    let known: Vec<f64> = history.iter().flatten().copied().collect();
    if known.len() < MIN_HOURS {
        return None;
    }
    let n = history.len();
    // The values at `t - k * period` for k = 1.. that the history holds (at most `cycles`).
    let past = |t: usize, period: usize, cycles: usize| -> Option<f64> {
        let values: Vec<f64> = (1..=cycles)
            .filter_map(|k| t.checked_sub(k * period))
            .filter(|i| *i < n)
            .filter_map(|i| history[i])
            .collect();
        mean(&values)
    };
    let seasonal = |t: usize| -> Option<f64> {
        let daily = past(t, DAY, 7);
        let weekly = past(t, WEEK, t / WEEK);
        match (weekly, daily) {
            (Some(w), Some(d)) => Some(weekly_weight * w + (1.0 - weekly_weight) * d),
            (w, d) => w.or(d),
        }
    };
    // The level: the last day as it was against what the seasons gave for it.
    let (mut actual, mut expected) = (0.0, 0.0);
    let last_day = n.saturating_sub(DAY);
    for (t, value) in history.iter().enumerate().skip(last_day) {
        if let (Some(a), Some(e)) = (value, seasonal(t)) {
            actual += a;
            expected += e;
        }
    }
    let level = if expected > 0.0 {
        (actual / expected).clamp(LEVEL.0, LEVEL.1)
    } else {
        1.0
    };
    // An hour no season covers (a gap a week and every day long): the last day's mean.
    let recent = mean(&known[known.len().saturating_sub(DAY)..]).expect("some data");
    Some(
        (n..n + ahead)
            .map(|t| (seasonal(t).map_or(recent, |s| s * level)).max(0.0))
            .collect(),
    )
}

fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// The mean absolute percentage error of `forecast` against `actual` (hours where the actual
/// load is 0 are left out).
pub fn mape(forecast: &[f64], actual: &[f64]) -> f64 {
    let errors: Vec<f64> = forecast
        .iter()
        .zip(actual)
        .filter(|(_, a)| **a != 0.0)
        .map(|(f, a)| ((f - a) / a).abs())
        .collect();
    100.0 * mean(&errors).unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A day's shape: low at night, a peak in the afternoon; weekends at 60 %.
    fn load_at(hour: usize) -> f64 {
        let h = (hour % DAY) as f64;
        let day = (hour / DAY) % 7;
        let weekend = if day >= 5 { 0.6 } else { 1.0 };
        weekend * (100.0 + 80.0 * (std::f64::consts::PI * (h - 9.0) / 12.0).sin().max(-0.5))
    }

    fn series(hours: usize) -> Vec<Option<f64>> {
        (0..hours).map(|h| Some(load_at(h))).collect()
    }

    #[test]
    fn less_than_a_day_of_data_has_no_forecast() {
        let mut h = series(30);
        for v in h.iter_mut().take(7) {
            *v = None;
        }
        assert_eq!(load(&h, 48), None, "23 hours of data");
        h[0] = Some(1.0);
        assert_eq!(load(&h, 48).map(|f| f.len()), Some(48));
    }

    #[test]
    fn two_weeks_of_a_weekly_pattern_are_forecast_closely_weekend_included() {
        // History ends on a Friday night: the forecast covers Saturday and Sunday.
        let history = series(14 * DAY + 4 * DAY);
        let n = history.len();
        let forecast = load(&history, 48).unwrap();
        let actual: Vec<f64> = (n..n + 48).map(load_at).collect();
        assert!(
            mape(&forecast, &actual) < 1.0,
            "{}",
            mape(&forecast, &actual)
        );
        // The daily season alone misses the weekend.
        let daily = blended(&history, 48, 0.0).unwrap();
        assert!(mape(&daily, &actual) > 10.0, "{}", mape(&daily, &actual));
    }

    #[test]
    fn a_day_of_data_repeats_it_and_growth_carries_forward() {
        let flat: Vec<Option<f64>> = (0..DAY).map(|h| Some(10.0 + h as f64)).collect();
        let f = load(&flat, 48).unwrap();
        assert_eq!(f[0], 10.0);
        assert_eq!(f[23], 33.0);
        assert_eq!(f[24], 10.0, "the day again");
        // A week at one level, then the last day at double: the forecast follows the last day.
        let mut h: Vec<Option<f64>> = vec![Some(10.0); WEEK];
        h.extend(vec![Some(20.0); DAY]);
        let f = load(&h, 48).unwrap();
        assert!(f.iter().all(|v| (*v - 20.0).abs() < 1e-9), "{f:?}");
    }

    #[test]
    fn gaps_are_skipped_and_a_forecast_is_never_negative() {
        let mut h = series(3 * DAY);
        for v in h.iter_mut().skip(DAY).take(DAY) {
            *v = None;
        }
        let f = load(&h, 48).unwrap();
        assert_eq!(f.len(), 48);
        assert!(f.iter().all(|v| v.is_finite() && *v >= 0.0));
        let zeros = vec![Some(0.0); DAY];
        assert_eq!(load(&zeros, 2), Some(vec![0.0, 0.0]));
    }

    #[test]
    fn hours_start_on_the_hour() {
        assert_eq!(hour_of(HOUR_MS * 5 + 1), HOUR_MS * 5);
        assert_eq!(hour_of(HOUR_MS * 5), HOUR_MS * 5);
    }
}
