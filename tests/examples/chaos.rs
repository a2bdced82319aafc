//! The whole-service simulation as a benchmark (issue 61; docs/reliability.md): many seeds, each a
//! busy service under random work and faults, every invariant checked.
//!
//! `cargo run -p phantom-e2e --release --example chaos -- --seeds N` (or `--seconds T`: seeds
//! until T seconds of wall time have passed; `--first S`: the first seed, 1 unless given),
//! `--steps N` and `--users N` (170 and 3 unless given), `--no-faults`, `--mix M` (the request
//! and fault mix, `chaos::MIX` unless given); `--seed S` replays one
//! seed, printing its trace (`--logs`: and the service's logs on stderr, as `RUST_LOG` and
//! `PHANTOM_LOG_FORMAT` say). It prints the seeds, simulated hours, steps, requests by action,
//! faults and invariants checked by kind, how often each feature and each pair of features was
//! on in one group, every broken invariant with its seed (shrunk: the shortest run that still
//! breaks), and last one line: `<seeds> seeds, <steps> steps, <faults> faults, <broken>
//! invariants broken` (exit 1 if any broke).

use phantom_e2e::chaos::{self, Settings, Tally};
use std::time::Instant;

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn number(name: &str) -> Option<u64> {
    arg(name).map(|v| {
        v.parse()
            .unwrap_or_else(|_| panic!("{name} takes a whole number, not {v}"))
    })
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    runtime.block_on(simulate());
}

async fn simulate() {
    let defaults = Settings::default();
    let settings = Settings {
        steps: number("--steps").map_or(defaults.steps, |n| n as usize),
        users: number("--users").map_or(defaults.users, |n| n as usize),
        faults: !std::env::args().any(|a| a == "--no-faults"),
        mix: number("--mix").map_or(defaults.mix, |n| n as u32),
    };
    if let Some(seed) = number("--seed") {
        if std::env::args().any(|a| a == "--logs") {
            phantom_seams::logging::init();
        }
        let started = Instant::now();
        let out = chaos::run(seed, settings).await;
        for line in &out.trace {
            println!("{line}");
        }
        report(&out.tally, &[(seed, out.broken)], started);
        return;
    }
    let first = number("--first").unwrap_or(1);
    let seeds = number("--seeds");
    let seconds = number("--seconds");
    let started = Instant::now();
    let mut tally = Tally::default();
    let mut broken = Vec::new();
    let mut seed = first;
    loop {
        let done = match (seeds, seconds) {
            (Some(n), _) => seed >= first + n,
            (None, Some(t)) => started.elapsed().as_secs() >= t,
            (None, None) => seed >= first + 100,
        };
        if done {
            break;
        }
        let out = chaos::run(seed, settings).await;
        tally.add(&out.tally);
        if !out.broken.is_empty() {
            let shrunk = chaos::shrink(seed, out).await;
            eprintln!(
                "seed {seed} breaks {:?}; shortest: --seed {seed} --steps {} --users {}{}",
                shrunk
                    .broken
                    .iter()
                    .map(|b| b.invariant)
                    .collect::<Vec<_>>(),
                shrunk.settings.steps,
                shrunk.settings.users,
                if shrunk.settings.faults {
                    ""
                } else {
                    " --no-faults"
                },
            );
            broken.push((seed, shrunk.broken));
        }
        seed += 1;
    }
    report(&tally, &broken, started);
}

fn report(t: &Tally, broken: &[(u64, Vec<chaos::Broken>)], started: Instant) {
    println!(
        "wall time {:.1} s; simulated {:.1} h; shortest seed {} s simulated (the clock's jumps left out); longest wait for every group whole once faults stopped: {} s; longest a hook waited past its timeout: {} s",
        started.elapsed().as_secs_f64(),
        t.simulated_ms as f64 / 3_600_000.0,
        t.shortest_busy_ms / 1000,
        t.longest_settle_ms / 1000,
        t.longest_hook_overrun_ms / 1000
    );
    let list = |what: &str, m: &std::collections::BTreeMap<&'static str, usize>| {
        let items: Vec<String> = m.iter().map(|(k, v)| format!("{k} {v}")).collect();
        println!("{what}: {}", items.join(", "));
    };
    list("requests", &t.requests);
    list("faults", &t.faults);
    list("invariants checked", &t.checks);
    list("features on (group-steps)", &t.features);
    let pairs: Vec<String> = t
        .pairs
        .iter()
        .map(|((a, b), n)| format!("{a}+{b} {n}"))
        .collect();
    println!("pairs on in one group (group-steps): {}", pairs.join(", "));
    let mut total = 0;
    for (seed, list) in broken {
        for b in list {
            total += 1;
            println!(
                "BROKEN seed {seed} step {}: {} ({})",
                b.step, b.invariant, b.detail
            );
        }
    }
    println!(
        "{} seeds, {} steps, {} faults, {total} invariants broken",
        t.runs,
        t.steps,
        t.faults_total()
    );
    if total > 0 {
        std::process::exit(1);
    }
}
