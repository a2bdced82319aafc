//! What the rules' tests, and the suites above them, build again and again.

use crate::group::NewGroupContext;
use phantom_model::instance::{Lifecycle, Market, Member};

/// A recorded VM for tests: as given, healthy, launched at 0 on hotel in zone `a`, from
/// `web@hotel`, at revision 1.
pub fn test_member(id: &str, lifecycle: Lifecycle) -> Member {
    Member {
        id: id.into(),
        cloud: "hotel".into(),
        zone: "a".into(),
        subnet: None,
        lifecycle,
        healthy: true,
        launched_ms: 0,
        joined_ms: None,
        replaces_ms: None,
        at_risk_ms: None,
        probe_failed: None,
        unhealthy_check: None,
        weight: None,
        protected: false,
        launch_configuration: Some("web@hotel".into()),
        launch_template: None,
        launched_from: None,
        instance_type: "t2.micro".into(),
        market: Market::OnDemand,
        waits: vec![],
        open: None,
        rev: 1,
    }
}

/// Where a test's group is made: as `id`, in us-east-1 of account 123456789012, on hotel (zone
/// hotel-a), at `now_ms`.
pub fn test_context(id: &str, now_ms: i64) -> NewGroupContext<'static> {
    NewGroupContext {
        id: id.into(),
        region: "us-east-1",
        account: "123456789012",
        cloud: "hotel".into(),
        default_zone: "hotel-a",
        now: phantom_model::time::from_ms(now_ms),
    }
}

/// A test's group `web` from `web@hotel` (min 1, max 5, desired 2), made at 0 as `g1`.
pub fn test_group() -> crate::group::Group {
    let input = serde_json::json!({"AutoScalingGroupName": "web", "LaunchConfigurationName": "web@hotel",
        "MinSize": 1, "MaxSize": 5, "DesiredCapacity": 2});
    crate::group::from_input(
        &serde_json::from_value(input).expect("a request"),
        test_context("g1", 0),
    )
    .expect("a group")
}
