//! Target tracking, pure: from a policy's metric, run after run, the capacity it asks for, as AWS
//! documents the behaviour. It scales out in proportion to how far the metric is above its target
//! (the serving VMs' load spread over more), once the metric has been above the target for
//! `OUT_AFTER` runs in a row (AWS's high alarm: 3 of 3 one-minute datapoints). It scales in only
//! after `IN_AFTER` runs in a row below `IN_MARGIN` of the target (AWS's low alarm: 15 of 15),
//! by at most a tenth of the group at a time, and never with DisableScaleIn. VMs still warming up
//! carry no load yet: the proportion is taken over the VMs past their warm-up, and the VMs
//! warming up count toward the capacity already there. Missing data changes nothing and resets
//! the streaks, so a gap never leads to a scale-in. Several policies: the largest capacity wins,
//! and the group scales in only when every policy asks to.

/// Runs in a row above the target before a scale-out.
pub const OUT_AFTER: u32 = 3;
/// Runs in a row below `IN_MARGIN` of the target before a scale-in.
pub const IN_AFTER: u32 = 15;
/// How far below its target a metric must be to count toward a scale-in.
pub const IN_MARGIN: f64 = 0.9;

/// How a policy's metric has stood over its last runs (kept between runs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Streak {
    pub above: u32,
    pub below: u32,
}

/// The streak after one more run: `metric` None when there was no data.
pub fn observe(s: Streak, metric: Option<f64>, target: f64) -> Streak {
    match metric {
        None => Streak::default(),
        Some(m) if m > target => Streak {
            above: s.above + 1,
            below: 0,
        },
        Some(m) if m < target * IN_MARGIN => Streak {
            above: 0,
            below: s.below + 1,
        },
        Some(_) => Streak::default(),
    }
}

/// What the group has: its desired capacity, and how many of its VMs serve past their warm-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fleet {
    pub desired: i64,
    pub warmed: i64,
}

/// What one policy asks for after this run: a new capacity, or nothing (no data, within its
/// band, not long enough out of it).
pub fn ask(
    target: f64,
    disable_scale_in: bool,
    s: Streak,
    metric: Option<f64>,
    fleet: Fleet,
) -> Option<i64> {
    let metric = metric?;
    if target <= 0.0 || fleet.warmed == 0 {
        // No VM to spread the load over: nothing to scale in proportion to.
        return None;
    }
    let proportional = (fleet.warmed as f64 * metric / target).ceil() as i64;
    if s.above >= OUT_AFTER {
        return (proportional > fleet.desired).then_some(proportional);
    }
    if s.below >= IN_AFTER && !disable_scale_in {
        let step = (fleet.desired / 10).max(1);
        let to = proportional.max(fleet.desired - step);
        return (to < fleet.desired).then_some(to);
    }
    None
}

/// The group's new desired capacity from its policies' asks (one entry per target tracking
/// policy), within MinSize and MaxSize; None when it stays.
pub fn combine(asks: &[Option<i64>], desired: i64, min: i64, max: i64) -> Option<i64> {
    let out = asks.iter().flatten().filter(|a| **a > desired).max();
    let to = match out {
        Some(out) => *out,
        // In only if every policy asks to go in, and then no further than the highest ask.
        None if !asks.is_empty() && asks.iter().all(Option::is_some) => {
            *asks.iter().flatten().max().expect("not empty")
        }
        None => return None,
    };
    let to = to.clamp(min, max.max(min));
    (to != desired).then_some(to)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fleet(desired: i64, warmed: i64) -> Fleet {
        Fleet { desired, warmed }
    }

    fn streak(above: u32, below: u32) -> Streak {
        Streak { above, below }
    }

    #[test]
    fn streaks_count_runs_out_of_the_band_and_a_gap_resets_them() {
        let mut s = Streak::default();
        for _ in 0..3 {
            s = observe(s, Some(80.0), 50.0);
        }
        assert_eq!(s, streak(3, 0));
        assert_eq!(observe(s, Some(50.0), 50.0), Streak::default());
        assert_eq!(
            observe(s, Some(46.0), 50.0),
            Streak::default(),
            "within the margin"
        );
        assert_eq!(observe(s, Some(40.0), 50.0), streak(0, 1));
        assert_eq!(observe(s, None, 50.0), Streak::default());
    }

    #[test]
    fn scale_out_is_in_proportion_once_the_metric_stayed_above() {
        // 4 VMs at 80 % for a 50 % target: 6.4 -> 7.
        assert_eq!(
            ask(50.0, false, streak(3, 0), Some(80.0), fleet(4, 4)),
            Some(7)
        );
        assert_eq!(
            ask(50.0, false, streak(2, 0), Some(80.0), fleet(4, 4)),
            None
        );
        // Two VMs still warming up: the load of the 4 warmed ones, spread; the 2 count already.
        assert_eq!(
            ask(50.0, false, streak(3, 0), Some(80.0), fleet(6, 4)),
            Some(7)
        );
        assert_eq!(
            ask(50.0, false, streak(3, 0), Some(60.0), fleet(6, 4)),
            None
        );
        assert_eq!(ask(50.0, false, streak(3, 0), None, fleet(4, 4)), None);
        assert_eq!(
            ask(50.0, false, streak(3, 0), Some(80.0), fleet(1, 0)),
            None
        );
    }

    #[test]
    fn scale_in_is_slow_and_disable_scale_in_holds() {
        // 20 VMs at 10 % for a 50 % target: 4 would do, but a tenth at a time.
        assert_eq!(
            ask(50.0, false, streak(0, 15), Some(10.0), fleet(20, 20)),
            Some(18)
        );
        assert_eq!(
            ask(50.0, false, streak(0, 14), Some(10.0), fleet(20, 20)),
            None
        );
        assert_eq!(
            ask(50.0, true, streak(0, 15), Some(10.0), fleet(20, 20)),
            None
        );
        // Near the target: no further than the proportion.
        assert_eq!(
            ask(50.0, false, streak(0, 15), Some(40.0), fleet(5, 5)),
            Some(4)
        );
        assert_eq!(
            ask(50.0, false, streak(0, 15), Some(44.0), fleet(5, 5)),
            None
        );
    }

    #[test]
    fn the_largest_ask_wins_and_scale_in_needs_every_policy() {
        assert_eq!(combine(&[Some(7), Some(5)], 4, 1, 10), Some(7));
        assert_eq!(combine(&[Some(7), None], 4, 1, 10), Some(7));
        assert_eq!(combine(&[Some(3), None], 4, 1, 10), None);
        assert_eq!(combine(&[Some(3), Some(2)], 4, 1, 10), Some(3));
        assert_eq!(combine(&[Some(30)], 4, 1, 10), Some(10), "MaxSize");
        assert_eq!(combine(&[Some(0)], 4, 2, 10), Some(2), "MinSize");
        assert_eq!(combine(&[Some(1)], 2, 2, 10), None);
        assert_eq!(combine(&[], 4, 1, 10), None);
    }
}
