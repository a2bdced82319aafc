//! Warm pools, pure: how many VMs a group's pool keeps, what a VM in the pool needs next (to be
//! stopped, started, recorded in the pool's state, or forgotten), and PutWarmPool's checks.
//!
//! A pool's VMs are the group's instance records in a `Warmed:*` lifecycle: they carry the group's
//! tags, are not counted in its capacity, and are shown by DescribeWarmPool, not by
//! DescribeAutoScalingGroups. The provisioner's rounds (`reconcile`) take ready ones into the
//! group on scale-out, launch new ones into the pool, and return scaled-in ones with
//! ReuseOnScaleIn.

use phantom_model::instance::{CloudState, Lifecycle, Member};
use phantom_model::request::PutWarmPool;
pub use phantom_model::warm_pool::{
    InstanceReusePolicy, PoolState, PoolStatus, WarmPoolConfiguration,
};
use phantom_model::{Checked, Refusal};

/// What the provisioner keeps beside a group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pool {
    /// How many VMs it holds once settled.
    pub size: i64,
    pub state: PoolState,
    pub reuse_on_scale_in: bool,
    /// DeleteWarmPool asked: once it is empty, it goes.
    pub deleting: bool,
}

impl Pool {
    pub fn of(c: &WarmPoolConfiguration, desired: i64, max: i64) -> Self {
        Self {
            size: size(c, desired, max),
            state: c.pool_state,
            reuse_on_scale_in: c.reuse_on_scale_in(),
            deleting: c.deleting(),
        }
    }
}

/// The pool's size, as AWS sizes it: what MaxGroupPreparedCapacity (or else the group's MaxSize)
/// leaves beside the desired capacity, and at least its MinSize; none while it is deleted.
pub fn size(c: &WarmPoolConfiguration, desired: i64, max: i64) -> i64 {
    if c.deleting() {
        return 0;
    }
    let prepared = c.max_group_prepared_capacity.unwrap_or(max);
    (prepared - desired).max(c.min_size).max(0)
}

/// The lifecycle a VM in a pool of this state shows once the cloud has it so.
pub fn ready(state: PoolState) -> Lifecycle {
    match state {
        PoolState::Stopped => Lifecycle::WarmedStopped,
        PoolState::Running => Lifecycle::WarmedRunning,
        PoolState::Hibernated => Lifecycle::WarmedHibernated,
    }
}

/// What a VM in the pool needs this round.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    /// Nothing: in its state, or on its way there.
    Wait,
    /// The cloud has it in the pool's state: record it so.
    Ready(Lifecycle),
    Stop,
    Start,
    /// No longer on the cloud: forget it, saying why.
    Gone(String),
    /// Broken (shutting down outside Phantom): terminate it, saying why.
    Broken(String),
}

/// What a warm VM (not one already terminating) needs, from the cloud's state: `state` None when
/// the cloud does not list it; `missing_grace` over, a VM it does not list is gone.
pub fn next(
    m: &Member,
    pool: Option<&Pool>,
    state: Option<CloudState>,
    missing_over: bool,
) -> Next {
    let want = pool.map(|p| p.state);
    match state {
        None if missing_over => {
            Next::Gone("the instance in the warm pool no longer exists on the cloud".into())
        }
        Some(CloudState::Terminated) => {
            Next::Gone("the instance in the warm pool was terminated outside Phantom".into())
        }
        Some(CloudState::ShuttingDown) => {
            Next::Broken("the instance in the warm pool is shutting down outside Phantom".into())
        }
        // No pool any more: its VMs only wait to be terminated.
        _ if want.is_none() => Next::Wait,
        Some(CloudState::Running) if want == Some(PoolState::Running) => {
            settled(m, PoolState::Running)
        }
        Some(CloudState::Running) => Next::Stop,
        Some(CloudState::Stopped) if want == Some(PoolState::Running) => Next::Start,
        Some(CloudState::Stopped) => settled(m, want.expect("a pool")),
        // Pending, stopping, not listed yet, or a state Phantom does not know: wait.
        _ => Next::Wait,
    }
}

fn settled(m: &Member, state: PoolState) -> Next {
    let l = ready(state);
    if m.lifecycle == l {
        Next::Wait
    } else {
        Next::Ready(l)
    }
}

/// PutWarmPool's settings as the group keeps them, checked as AWS checks them. A put replaces the
/// whole pool: what it leaves out is back at AWS's default. `old` is the pool the group has.
pub fn put(
    input: &PutWarmPool,
    old: Option<&WarmPoolConfiguration>,
    mixed: bool,
) -> Checked<WarmPoolConfiguration> {
    if mixed {
        return Err(Refusal::invalid(
            "You can't add a warm pool to an Auto Scaling group that has a mixed instances policy.",
        ));
    }
    if old.is_some_and(WarmPoolConfiguration::deleting) {
        return Err(Refusal::invalid(format!(
            "The warm pool of AutoScalingGroup {} is being deleted; put it again once it is gone.",
            input.auto_scaling_group_name
        )));
    }
    let max = match input.max_group_prepared_capacity {
        None | Some(-1) => None,
        Some(n) if n < -1 => {
            return Err(Refusal::invalid(format!(
                "MaxGroupPreparedCapacity must be -1 (the group's MaxSize) or more, not {n}."
            )))
        }
        Some(n) => Some(n),
    };
    let min_size = input.min_size.unwrap_or(0);
    if min_size < 0 {
        return Err(Refusal::invalid(format!(
            "MinSize must be 0 or more, not {min_size}."
        )));
    }
    if max.is_some_and(|m| min_size > m) {
        return Err(Refusal::invalid(format!(
            "MinSize ({min_size}) cannot be greater than MaxGroupPreparedCapacity ({}).",
            max.expect("checked")
        )));
    }
    let pool_state = match input.pool_state.as_deref() {
        None => PoolState::Stopped,
        Some(s) => PoolState::parse(s).ok_or_else(|| {
            Refusal::invalid(format!(
                "PoolState must be Stopped, Running or Hibernated, not '{s}'."
            ))
        })?,
    };
    Ok(WarmPoolConfiguration {
        max_group_prepared_capacity: max,
        min_size,
        pool_state,
        status: None,
        instance_reuse_policy: input.instance_reuse_policy.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(max: Option<i64>, min: i64) -> WarmPoolConfiguration {
        WarmPoolConfiguration {
            max_group_prepared_capacity: max,
            min_size: min,
            pool_state: PoolState::Stopped,
            status: None,
            instance_reuse_policy: None,
        }
    }

    #[test]
    fn a_pool_holds_what_the_prepared_capacity_leaves_and_at_least_its_min_size() {
        // MaxSize 10, desired 3: 7 in the pool.
        assert_eq!(size(&config(None, 0), 3, 10), 7);
        assert_eq!(size(&config(Some(5), 0), 3, 10), 2);
        assert_eq!(size(&config(Some(5), 4), 3, 10), 4);
        // Desired above what is prepared: the pool's MinSize only.
        assert_eq!(size(&config(Some(2), 1), 3, 10), 1);
        assert_eq!(size(&config(Some(2), 0), 3, 10), 0);
        let mut deleting = config(None, 4);
        deleting.status = Some(PoolStatus::PendingDelete);
        assert_eq!(size(&deleting, 3, 10), 0);
    }

    fn member(l: Lifecycle) -> Member {
        Member {
            launch_configuration: None,
            ..crate::fixtures::test_member("i-1", l)
        }
    }

    #[test]
    fn a_warm_vm_is_brought_to_the_pools_state() {
        let stopped = Pool {
            size: 1,
            state: PoolState::Stopped,
            reuse_on_scale_in: false,
            deleting: false,
        };
        let running = Pool {
            state: PoolState::Running,
            ..stopped
        };
        let pending = member(Lifecycle::WarmedPending);
        let at = |p: &Pool, s| next(&pending, Some(p), Some(s), false);
        assert_eq!(at(&stopped, CloudState::Pending), Next::Wait);
        assert_eq!(at(&stopped, CloudState::Running), Next::Stop);
        assert_eq!(at(&stopped, CloudState::Stopping), Next::Wait);
        assert_eq!(
            at(&stopped, CloudState::Stopped),
            Next::Ready(Lifecycle::WarmedStopped)
        );
        assert_eq!(
            at(&running, CloudState::Running),
            Next::Ready(Lifecycle::WarmedRunning)
        );
        // A pool changed from Stopped to Running starts its stopped VMs.
        let ready = member(Lifecycle::WarmedStopped);
        assert_eq!(
            next(&ready, Some(&running), Some(CloudState::Stopped), false),
            Next::Start
        );
        assert_eq!(
            next(&ready, Some(&stopped), Some(CloudState::Stopped), false),
            Next::Wait
        );
        // Gone, or going, whatever the pool.
        assert!(matches!(
            next(&ready, None, Some(CloudState::Terminated), false),
            Next::Gone(_)
        ));
        assert_eq!(next(&ready, Some(&stopped), None, false), Next::Wait);
        assert!(matches!(
            next(&ready, Some(&stopped), None, true),
            Next::Gone(_)
        ));
        assert!(matches!(
            next(
                &ready,
                Some(&stopped),
                Some(CloudState::ShuttingDown),
                false
            ),
            Next::Broken(_)
        ));
        assert_eq!(
            next(&ready, None, Some(CloudState::Running), false),
            Next::Wait
        );
    }

    fn input(max: Option<i64>, min: Option<i64>, state: Option<&str>) -> PutWarmPool {
        PutWarmPool {
            auto_scaling_group_name: "web".into(),
            max_group_prepared_capacity: max,
            min_size: min,
            pool_state: state.map(str::to_string),
            instance_reuse_policy: None,
        }
    }

    #[test]
    fn put_warm_pool_is_checked_as_aws_checks_it() {
        let c = put(&input(None, None, None), None, false).unwrap();
        assert_eq!(c, config(None, 0));
        assert_eq!(
            put(&input(Some(-1), Some(2), Some("Running")), None, false)
                .unwrap()
                .pool_state,
            PoolState::Running
        );
        for bad in [
            input(Some(-2), None, None),
            input(None, Some(-1), None),
            input(Some(1), Some(2), None),
            input(None, None, Some("Frozen")),
        ] {
            assert!(put(&bad, None, false).is_err(), "{bad:?}");
        }
        assert!(put(&input(None, None, None), None, true).is_err());
        let mut deleting = config(None, 0);
        deleting.status = Some(PoolStatus::PendingDelete);
        assert!(put(&input(None, None, None), Some(&deleting), false).is_err());
        // A put replaces the pool: a reuse policy left out is gone.
        let mut reusing = config(None, 0);
        reusing.instance_reuse_policy = Some(InstanceReusePolicy {
            reuse_on_scale_in: Some(true),
        });
        assert!(!put(&input(Some(3), None, None), Some(&reusing), false)
            .unwrap()
            .reuse_on_scale_in());
    }
}
