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
        lifecycle,
        healthy: true,
        launched_ms: 0,
        joined_ms: None,
        replaces_ms: None,
        at_risk_ms: None,
        weight: None,
        protected: false,
        launch_configuration: Some("web@hotel".into()),
        launch_template: None,
        instance_type: "t2.micro".into(),
        market: Market::OnDemand,
        waits: vec![],
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
