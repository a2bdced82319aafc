//! The ways real clouds fail, on demand: refusals, server errors and throttling, slowness,
//! unreachability, an answer lost after the launch happened, running out of capacity, new VMs
//! missing from DescribeInstances for a while, tag filters matching tags a moment old.

use super::*;

/// A failure of the next calls, whatever they are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// 500 InternalError.
    ServerError,
    /// RequestLimitExceeded.
    Throttling,
}

impl MemoryCloud {
    /// Every launch is refused with this code and message until `clear_faults`.
    pub fn refuse(&self, code: &str, message: &str) {
        self.state().refuse = Some(CloudError::new(code, message));
    }

    /// Launches are taken again (`refuse` ends).
    pub fn stop_refusing(&self) {
        self.state().refuse = None;
    }

    pub fn clear_faults(&self) {
        let mut st = self.state();
        st.refuse = None;
        st.failing = None;
        st.unreachable = false;
        st.latency = Duration::ZERO;
        st.lose_answers = 0;
        st.capacity = None;
        st.describe_lag_ms = 0;
        st.tag_lag_ms = 0;
    }

    /// New VMs are missing from DescribeInstances for `lag` after their launch (EC2's eventual
    /// consistency).
    pub fn set_describe_lag(&self, lag: Duration) {
        self.state().describe_lag_ms = lag.as_millis() as i64;
    }

    /// A VM's tags are matched by DescribeInstances' filters `lag` behind their changes (EC2's
    /// tags are eventually consistent): a VM untagged within it is still found by its old owner,
    /// and shows the tags it has now.
    pub fn set_tag_lag(&self, lag: Duration) {
        self.state().tag_lag_ms = lag.as_millis() as i64;
    }

    /// The next `n` calls of any kind fail so.
    pub fn fail_next(&self, n: usize, fault: Fault) {
        self.state().failing = Some((n, fault));
    }

    /// Each call takes this long (real time).
    pub fn set_latency(&self, latency: Duration) {
        self.state().latency = latency;
    }

    /// The most calls that waited out their latency at once (`set_latency`).
    pub fn most_in_flight(&self) -> usize {
        self.state().most_in_flight
    }

    pub fn set_unreachable(&self, unreachable: bool) {
        self.state().unreachable = unreachable;
    }

    /// The next `n` launches happen, and then their answer is lost on the way back.
    pub fn lose_next_launch_answers(&self, n: usize) {
        self.state().lose_answers = n;
    }

    /// Launches of this instance type fail with InsufficientInstanceCapacity.
    pub fn short_of(&self, instance_type: &str) {
        self.state().short_of.insert(instance_type.into());
    }

    /// Spot launches of this instance type fail for want of spot capacity (`true`), or succeed
    /// again (`false`).
    pub fn spot_short_of(&self, instance_type: &str, short: bool) {
        let mut st = self.state();
        if short {
            st.no_spot.insert(instance_type.into());
        } else {
            st.no_spot.remove(instance_type);
        }
    }

    /// The spot price of an instance type here: a launch whose SpotMaxPrice is below it fails
    /// with SpotMaxPriceTooLow.
    pub fn set_spot_price(&self, instance_type: &str, price: f64) {
        self.state().spot_prices.insert(instance_type.into(), price);
    }

    /// Launches into this zone fail with InsufficientInstanceCapacity (`true`), or succeed again.
    pub fn zone_full(&self, zone: &str, full: bool) {
        let mut st = self.state();
        if full {
            st.full_zones.insert(zone.into());
        } else {
            st.full_zones.remove(zone);
        }
    }

    /// At most `k` VMs alive at once; a launch past it fails with InsufficientInstanceCapacity.
    pub fn set_capacity(&self, k: usize) {
        self.state().capacity = Some(k);
    }

    /// From now on every call lets other tasks run first, as a real cloud's round trip does:
    /// handlers run at once interleave at each call (the simulation's).
    pub fn interleave(&self, on: bool) {
        self.state().interleave = on;
    }

    /// What every call goes through first: slowness, then the faults that answer before acting.
    pub(super) async fn enter(&self) -> Result<(), CloudError> {
        metrics::count(Counter::Ec2);
        let (latency, interleave) = {
            let st = self.state();
            (st.latency, st.interleave)
        };
        if interleave {
            tokio::task::yield_now().await;
        }
        if !latency.is_zero() {
            {
                let mut st = self.state();
                st.in_flight += 1;
                st.most_in_flight = st.most_in_flight.max(st.in_flight);
            }
            tokio::time::sleep(latency).await;
            self.state().in_flight -= 1;
        }
        let mut st = self.state();
        if st.unreachable {
            return Err(CloudError::unreachable("connection refused (memory cloud)"));
        }
        if let Some((n, fault)) = st.failing {
            st.failing = (n > 1).then_some((n - 1, fault));
            return Err(match fault {
                Fault::ServerError => CloudError::new(
                    "InternalError",
                    "An internal error has occurred (memory cloud)",
                ),
                Fault::Throttling => {
                    CloudError::new("RequestLimitExceeded", "Request limit exceeded.")
                }
            });
        }
        Ok(())
    }
}
