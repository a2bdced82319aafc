//! What the rules' tests, and the suites above them, build again and again.

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
