//! Application health for any cloud, pure: the probe a group's tag `phantom:health-probe` sets (an
//! HTTP, HTTPS or TCP call to each serving VM's own address, as Google's managed instance groups
//! autoheal on), and what a VM's run of results makes of it.
//!
//! The tag is a URL without a host, the VM's address standing in for it, with the settings as its
//! query: `http://:8080/healthz`, `https://:8443/ready?status=200-299`, `tcp://:5432?interval=5`.
//! Settings: `status` (a code or range a good answer has, HTTP and HTTPS only; 200-399),
//! `interval` (s between probes of a VM, 5 to 300; 10), `timeout` (s, 1 to 60 and at most the
//! interval; 5), `unhealthy` (the failures in a row that make a VM Unhealthy, 1 to 10; 3),
//! `healthy` (the passes in a row after which a new VM is judged before its grace period ends:
//! its application is up, 1 to 10; 2), `address` (`public`, `private`, or `auto`, the default:
//! the public address where the VM has one). A VM is probed only once InService (a probe never
//! holds a new VM back), and judged once past the group's grace period or ready.

use phantom_model::group::Group;
use phantom_model::{Checked, Refusal};

/// The tag that sets a group's probe.
pub const TAG_PROBE: &str = "phantom:health-probe";

/// What a probe calls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Call {
    /// GET `path`; a status within `status` (inclusive) passes. HTTPS does not check the VM's
    /// certificate (a VM's is seldom signed for its address), as load balancers' checks do not.
    Http {
        tls: bool,
        path: String,
        status: (u16, u16),
    },
    /// A TCP connection accepted passes.
    Tcp,
    /// The VM calls in instead (`phantom_rules::heartbeat`): silent for `unhealthy` intervals, it
    /// fails.
    Heartbeat,
}

/// Which of a VM's addresses a probe calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Address {
    Auto,
    Public,
    Private,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Probe {
    pub call: Call,
    pub port: u16,
    pub interval_ms: i64,
    pub timeout_ms: i64,
    pub healthy: u32,
    pub unhealthy: u32,
    pub address: Address,
}

impl Probe {
    /// The address to call of a VM's (public, private), if it has that one.
    pub fn address_of<'a>(
        &self,
        public: Option<&'a str>,
        private: Option<&'a str>,
    ) -> Option<&'a str> {
        match self.address {
            Address::Auto => public.or(private),
            Address::Public => public,
            Address::Private => private,
        }
    }

    /// What the probe calls at `host`, as a user reads it (`http://10.0.0.5:8080/healthz`).
    pub fn target(&self, host: &str) -> String {
        match &self.call {
            Call::Http { tls, path, .. } => {
                let scheme = if *tls { "https" } else { "http" };
                format!("{scheme}://{host}:{}{path}", self.port)
            }
            Call::Tcp => format!("tcp://{host}:{}", self.port),
            Call::Heartbeat => format!("heartbeat of {host}"),
        }
    }
}

fn bad(value: &str, why: impl std::fmt::Display) -> Refusal {
    Refusal::invalid(format!(
        "Tag {TAG_PROBE} is '{value}': {why} (e.g. http://:8080/healthz?interval=10&unhealthy=3, https://:8443/ready, tcp://:5432, heartbeat://?interval=30)."
    ))
}

/// The group's probe, if its tag sets one; a tag that does not read is refused.
pub fn of_group(g: &Group) -> Checked<Option<Probe>> {
    g.settings
        .tags
        .iter()
        .find(|t| t.key == TAG_PROBE)
        .map(|t| parse(&t.value))
        .transpose()
}

/// A probe from the tag's value.
pub fn parse(value: &str) -> Checked<Probe> {
    let (scheme, rest) = value.split_once("://").ok_or_else(|| {
        bad(
            value,
            "it must start with http://, https://, tcp:// or heartbeat://",
        )
    })?;
    if scheme == "heartbeat" {
        return heartbeat(value, rest);
    }
    let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    let port = authority
        .strip_prefix(':')
        .ok_or_else(|| {
            bad(
                value,
                "give no host, only ':' and the port: the VM's address is the host",
            )
        })?
        .parse::<u16>()
        .ok()
        .filter(|p| *p > 0)
        .ok_or_else(|| bad(value, "the port must be a number from 1 to 65535"))?;
    let mut probe = Probe {
        call: match scheme {
            "http" | "https" => Call::Http {
                tls: scheme == "https",
                path: if path.is_empty() {
                    "/".into()
                } else {
                    path.into()
                },
                status: (200, 399),
            },
            "tcp" if path.is_empty() || path == "/" => Call::Tcp,
            "tcp" => return Err(bad(value, "a TCP probe has no path")),
            other => {
                return Err(bad(
                    value,
                    format!("'{other}' is not http, https, tcp or heartbeat"),
                ))
            }
        },
        port,
        interval_ms: 10_000,
        timeout_ms: 5_000,
        healthy: 2,
        unhealthy: 3,
        address: Address::Auto,
    };
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let number = |lo, hi| setting(value, k, v, lo, hi);
        match k {
            "interval" => probe.interval_ms = number(5, 300)? * 1000,
            "timeout" => probe.timeout_ms = number(1, 60)? * 1000,
            "healthy" => probe.healthy = number(1, 10)? as u32,
            "unhealthy" => probe.unhealthy = number(1, 10)? as u32,
            "address" => {
                probe.address = match v {
                    "auto" => Address::Auto,
                    "public" => Address::Public,
                    "private" => Address::Private,
                    _ => return Err(bad(value, "address must be auto, public or private")),
                }
            }
            "status" => {
                let Call::Http { status, .. } = &mut probe.call else {
                    return Err(bad(value, "a TCP probe has no status"));
                };
                let (lo, hi) = v.split_once('-').unwrap_or((v, v));
                let code = |c: &str| c.parse::<u16>().ok().filter(|c| (100..=599).contains(c));
                *status = match (code(lo), code(hi)) {
                    (Some(lo), Some(hi)) if lo <= hi => (lo, hi),
                    _ => {
                        return Err(bad(
                            value,
                            "status must be a code or a range of codes, such as 200-299",
                        ))
                    }
                };
            }
            _ => {
                return Err(bad(
                    value,
                    format!(
                    "'{k}' is not one of status, interval, timeout, healthy, unhealthy, address"
                ),
                ))
            }
        }
    }
    if probe.timeout_ms > probe.interval_ms {
        return Err(bad(value, "the timeout must be at most the interval"));
    }
    Ok(probe)
}

/// A heartbeat probe: `heartbeat://?interval=30&unhealthy=3` (interval 10 to 3600 s, 30 unless
/// given; unhealthy 1 to 10, 3).
fn heartbeat(value: &str, rest: &str) -> Checked<Probe> {
    let query = match rest.split_once('?') {
        Some(("", q)) => q,
        None if rest.is_empty() => "",
        _ => {
            return Err(bad(
                value,
                "a heartbeat has no host, port or path: heartbeat://?interval=30",
            ))
        }
    };
    let mut probe = Probe {
        call: Call::Heartbeat,
        port: 0,
        interval_ms: 30_000,
        timeout_ms: 0,
        healthy: 1,
        unhealthy: 3,
        address: Address::Auto,
    };
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let number = |lo, hi| setting(value, k, v, lo, hi);
        match k {
            "interval" => probe.interval_ms = number(10, 3600)? * 1000,
            "unhealthy" => probe.unhealthy = number(1, 10)? as u32,
            _ => {
                return Err(bad(
                    value,
                    format!("a heartbeat takes interval and unhealthy, not '{k}'"),
                ))
            }
        }
    }
    Ok(probe)
}

/// A setting of the tag's query that is a whole number from `lo` to `hi`.
fn setting(value: &str, k: &str, v: &str, lo: i64, hi: i64) -> Checked<i64> {
    v.parse::<i64>()
        .ok()
        .filter(|n| (lo..=hi).contains(n))
        .ok_or_else(|| {
            bad(
                value,
                format!("{k} must be a whole number from {lo} to {hi}"),
            )
        })
}

/// What one probe of a VM found: passed, or what it got instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Pass,
    Fail(String),
}

/// Whether a check last counted at `last` is due again at `now` (every `interval_ms`).
pub fn due(last: Option<i64>, interval_ms: i64, now_ms: i64) -> bool {
    last.is_none_or(|at| now_ms - at >= interval_ms)
}

/// When a check made at `now_ms` counts as made: at its due time (the last one's plus the
/// interval) when it came within an interval of it, otherwise now. Checks run on the pulse's
/// beats, which need not divide the interval (10 s on 4 s beats: 12 s, then 8 s): counted so, the
/// interval holds on average rather than stretching to the next whole beat each time.
pub fn counted_at(last: Option<i64>, interval_ms: i64, now_ms: i64) -> i64 {
    match last.map(|at| at + interval_ms) {
        Some(due) if due <= now_ms && now_ms - due < interval_ms => due,
        _ => now_ms,
    }
}

/// A VM's recent probes: the run of passes or failures it is in, the last failure, and whether
/// it has ever passed the probe's `healthy` in a row (ready).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Streak {
    pub passes: u32,
    pub fails: u32,
    pub last_failure: Option<String>,
    /// When the run of failures began (Unix ms).
    pub failing_since_ms: Option<i64>,
    pub ready: bool,
}

impl Streak {
    /// The run after one more probe of `p` at `now_ms`.
    pub fn then(&self, p: &Probe, outcome: Outcome, now_ms: i64) -> Streak {
        match outcome {
            Outcome::Pass => {
                let passes = self.passes.saturating_add(1);
                Streak {
                    passes,
                    ready: self.ready || passes >= p.healthy,
                    ..Streak::default()
                }
            }
            Outcome::Fail(why) => Streak {
                passes: 0,
                fails: self.fails.saturating_add(1),
                last_failure: Some(why),
                failing_since_ms: self.failing_since_ms.or(Some(now_ms)),
                ready: self.ready,
            },
        }
    }

    /// Whether the run makes the VM Unhealthy: as many failures in a row as the probe's
    /// threshold, once the VM is past its grace period (`graced`) or was ready; with what the last
    /// one got and since when the VM has failed.
    pub fn verdict(&self, p: &Probe, graced: bool, target: &str) -> Option<String> {
        if self.fails < p.unhealthy || !(graced || self.ready) {
            return None;
        }
        let since = self.failing_since_ms.map_or(String::new(), |ms| {
            format!(
                " since {}",
                phantom_model::time::format_seconds(phantom_model::time::from_ms(ms))
            )
        });
        Some(format!(
            "{target} failed {} probes in a row{since}: {}",
            self.fails,
            self.last_failure.as_deref().unwrap_or("no answer")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_on_beats_that_do_not_divide_the_interval_keep_it_on_average() {
        // A 10 s probe and a 5 s probe on 4 s beats, for a minute.
        for (interval, want) in [(10_000, 7), (5_000, 13)] {
            let mut last = None;
            let mut made = 0;
            for beat in 0..=15 {
                let now = beat * 4_000;
                if due(last, interval, now) {
                    last = Some(counted_at(last, interval, now));
                    made += 1;
                }
            }
            assert_eq!(made, want, "every {interval} ms over 60 s");
        }
        // A check far behind (a beat missed for long) starts again from now.
        assert_eq!(counted_at(Some(0), 10_000, 35_000), 35_000);
        assert_eq!(counted_at(Some(0), 10_000, 12_000), 10_000);
        assert_eq!(counted_at(None, 10_000, 12_000), 12_000);
        assert!(!due(Some(10_000), 10_000, 19_999));
    }

    #[test]
    fn a_probe_reads_from_its_tag_with_defaults() {
        let p = parse("http://:8080/healthz").unwrap();
        assert_eq!(
            p,
            Probe {
                call: Call::Http {
                    tls: false,
                    path: "/healthz".into(),
                    status: (200, 399)
                },
                port: 8080,
                interval_ms: 10_000,
                timeout_ms: 5_000,
                healthy: 2,
                unhealthy: 3,
                address: Address::Auto,
            }
        );
        let p = parse(
            "https://:8443?status=204&interval=5&timeout=2&healthy=1&unhealthy=1&address=private",
        )
        .unwrap();
        assert_eq!(
            p.call,
            Call::Http {
                tls: true,
                path: "/".into(),
                status: (204, 204)
            }
        );
        assert_eq!(
            (p.interval_ms, p.timeout_ms, p.healthy, p.unhealthy),
            (5_000, 2_000, 1, 1)
        );
        assert_eq!(p.address, Address::Private);
        assert_eq!(parse("tcp://:22").unwrap().call, Call::Tcp);
        let hb = parse("heartbeat://?interval=60&unhealthy=2").unwrap();
        assert_eq!(
            (hb.call, hb.interval_ms, hb.unhealthy),
            (Call::Heartbeat, 60_000, 2)
        );
        assert_eq!(parse("heartbeat://").unwrap().interval_ms, 30_000);
        assert_eq!(p.target("10.0.0.5"), "https://10.0.0.5:8443/");
    }

    #[test]
    fn a_tag_that_does_not_read_is_refused_saying_why() {
        for (value, why) in [
            ("http://vm:80/", "give no host"),
            ("ftp://:21", "not http, https, tcp or heartbeat"),
            ("http://:0/", "port must be"),
            ("http://:80/?interval=1", "interval must be"),
            ("http://:80/?interval=5&timeout=6", "at most the interval"),
            ("http://:80/?status=600", "status must be"),
            ("http://:80/?status=300-200", "status must be"),
            ("tcp://:22?status=200", "TCP probe has no status"),
            ("tcp://:22/x", "no path"),
            ("http://:80/?colour=red", "not one of"),
            ("healthz", "must start with"),
            ("heartbeat://:80", "no host, port or path"),
            ("heartbeat://?interval=5", "interval must be"),
            ("heartbeat://?status=200", "takes interval and unhealthy"),
        ] {
            let e = parse(value).unwrap_err();
            assert!(e.message().contains(why), "{value}: {e}");
        }
    }

    #[test]
    fn a_vm_fails_after_its_threshold_in_a_row_and_one_pass_starts_again() {
        let p = parse("http://:80/?unhealthy=3").unwrap();
        let fail = || Outcome::Fail("HTTP 500".into());
        let s = Streak::default()
            .then(&p, fail(), 1_000)
            .then(&p, fail(), 2_000);
        assert_eq!(s.verdict(&p, true, "http://vm:80/"), None);
        assert_eq!(
            s.then(&p, Outcome::Pass, 3_000)
                .then(&p, fail(), 4_000)
                .fails,
            1
        );
        let s = s.then(&p, fail(), 3_000);
        let why = s.verdict(&p, true, "http://10.0.0.5:80/").unwrap();
        assert!(
            why.starts_with(
                "http://10.0.0.5:80/ failed 3 probes in a row since 1970-01-01T00:00:01Z: HTTP 500"
            ),
            "{why}"
        );
    }

    #[test]
    fn within_its_grace_a_vm_is_judged_only_once_it_was_ready() {
        let p = parse("http://:80/?unhealthy=1&healthy=2").unwrap();
        let fail = || Outcome::Fail("connection refused".into());
        // Booting: failures within the grace period count for nothing.
        let booting = Streak::default().then(&p, fail(), 0);
        assert_eq!(booting.verdict(&p, false, "t"), None);
        assert!(
            booting.verdict(&p, true, "t").is_some(),
            "past its grace it is judged"
        );
        // Up (two passes in a row), then down: judged at once.
        let up = Streak::default()
            .then(&p, Outcome::Pass, 0)
            .then(&p, Outcome::Pass, 1);
        assert!(up.ready);
        assert!(up.then(&p, fail(), 2).verdict(&p, false, "t").is_some());
    }

    #[test]
    fn the_address_is_the_public_one_where_there_is_one_unless_told() {
        let auto = parse("tcp://:22").unwrap();
        assert_eq!(
            auto.address_of(Some("54.1.2.3"), Some("10.0.0.5")),
            Some("54.1.2.3")
        );
        assert_eq!(auto.address_of(None, Some("10.0.0.5")), Some("10.0.0.5"));
        let private = parse("tcp://:22?address=private").unwrap();
        assert_eq!(
            private.address_of(Some("54.1.2.3"), Some("10.0.0.5")),
            Some("10.0.0.5")
        );
        let public = parse("tcp://:22?address=public").unwrap();
        assert_eq!(public.address_of(None, Some("10.0.0.5")), None);
    }
}
