//! Benchmark (not a test): how close predictive scaling's load forecast comes on a synthetic
//! fortnight and more, against simpler models, and what a forecast costs.
//!
//!   cargo run --release -p phantom-rules --example forecast
//!
//! The load: a working day's shape (a night low, an afternoon peak), weekends at 60 %, growing 2 %
//! a week, with ±5 % noise (a fixed seed), hourly over 23 days. From each hour of the third week,
//! each model forecasts the next 48 hours from the two weeks before it (and, for Phantom's, from
//! only the last day and the last week of them too); the errors are over all those forecasts.
//! Capacity: the VMs each hour needs at 50 a VM, from the forecast against from the actual load.

use phantom_rules::forecast::{self, mape};
use phantom_rules::predictive::capacity;
use std::time::Instant;

const DAY: usize = 24;
const WEEK: usize = 7 * DAY;
const AHEAD: usize = 48;
const TARGET: f64 = 50.0;

/// A fixed-seed generator of noise in [-1, 1) (xorshift).
struct Noise(u64);

impl Noise {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
}

fn synthetic(hours: usize) -> Vec<f64> {
    let mut noise = Noise(0x5eed);
    (0..hours)
        .map(|h| {
            let hour = (h % DAY) as f64;
            let weekend = if (h / DAY) % 7 >= 5 { 0.6 } else { 1.0 };
            let shape =
                300.0 + 200.0 * (std::f64::consts::PI * (hour - 9.0) / 12.0).sin().max(-0.6);
            let growth = 1.0 + 0.02 * h as f64 / WEEK as f64;
            weekend * shape * growth * (1.0 + 0.05 * noise.next())
        })
        .collect()
}

/// One model: its forecast of `AHEAD` hours after `history`.
type Model = fn(&[Option<f64>]) -> Vec<f64>;

fn phantom(h: &[Option<f64>]) -> Vec<f64> {
    forecast::load(h, AHEAD).expect("a day of data")
}
fn half_daily(h: &[Option<f64>]) -> Vec<f64> {
    forecast::blended(h, AHEAD, 0.5).expect("a day of data")
}
fn daily(h: &[Option<f64>]) -> Vec<f64> {
    forecast::blended(h, AHEAD, 0.0).expect("a day of data")
}
/// The same hour yesterday (the day before for the second day).
fn yesterday(h: &[Option<f64>]) -> Vec<f64> {
    let n = h.len();
    (0..AHEAD).map(|j| h[n - DAY + j % DAY].unwrap()).collect()
}
/// The same hour last week.
fn last_week(h: &[Option<f64>]) -> Vec<f64> {
    let n = h.len();
    (0..AHEAD).map(|j| h[n - WEEK + j].unwrap()).collect()
}

fn main() {
    let load = synthetic(2 * WEEK + WEEK + AHEAD);
    let starts = 2 * WEEK..3 * WEEK;
    println!(
        "| model | history | MAPE of the load | hours under capacity | VMs over, a forecast hour |"
    );
    println!("|---|---|---|---|---|");
    let models: [(&str, Model, usize); 7] = [
        ("Phantom's (weekly season, re-levelled)", phantom, 2 * WEEK),
        ("Phantom's", phantom, WEEK + DAY),
        ("Phantom's", phantom, DAY),
        ("half weekly, half daily season", half_daily, 2 * WEEK),
        ("daily season alone", daily, 2 * WEEK),
        ("same hour yesterday", yesterday, 2 * WEEK),
        ("same hour last week", last_week, 2 * WEEK),
    ];
    for (name, model, history) in models {
        let (mut forecasts, mut actuals) = (Vec::new(), Vec::new());
        let (mut under, mut over, mut hours) = (0, 0i64, 0);
        for s in starts.clone() {
            let h: Vec<Option<f64>> = load[s - history..s].iter().copied().map(Some).collect();
            let f = model(&h);
            let actual = &load[s..s + AHEAD];
            for (f, a) in f.iter().zip(actual) {
                let (cf, ca) = (capacity(*f, TARGET, 1.0), capacity(*a, TARGET, 1.0));
                under += usize::from(cf < ca);
                over += (cf - ca).max(0);
                hours += 1;
            }
            forecasts.extend(f);
            actuals.extend_from_slice(actual);
        }
        println!(
            "| {name} | {} day{} | {:.1} % | {:.1} % | {:.2} |",
            history / DAY,
            if history == DAY { "" } else { "s" },
            mape(&forecasts, &actuals),
            100.0 * under as f64 / hours as f64,
            over as f64 / hours as f64
        );
    }
    // What one forecast costs: two weeks in, 48 hours out.
    let h: Vec<Option<f64>> = load[..2 * WEEK].iter().copied().map(Some).collect();
    let runs = 10_000;
    let started = Instant::now();
    for _ in 0..runs {
        std::hint::black_box(forecast::load(std::hint::black_box(&h), AHEAD));
    }
    println!(
        "\none forecast (336 hours in, 48 out): {:.1} µs",
        started.elapsed().as_secs_f64() * 1e6 / runs as f64
    );
}
