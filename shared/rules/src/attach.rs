//! AttachInstances, pure: which of the VMs a user named can join a group, from what the cloud
//! shows of them. The API records them as Attaching (counted at once, as AWS counts them); the
//! provisioner looks them up, tags the good ones with the group's tags (from then on they are the
//! group's like any VM it launched) and drops the others with a failed activity.

use phantom_model::instance::{CloudState, Seen, Tagged};

/// The VMs that can join (as the cloud shows them), and those that cannot, with why.
pub fn judge(
    asked: &[String],
    found: &[Tagged],
    group_id: &str,
) -> (Vec<Seen>, Vec<(String, String)>) {
    let mut ok = Vec::new();
    let mut refused = Vec::new();
    for id in asked {
        match found.iter().find(|t| t.seen.id == *id) {
            None => refused.push((
                id.clone(),
                format!("The instance {id} does not exist on the group's cloud."),
            )),
            Some(t) if t.group_id.as_deref().is_some_and(|g| g != group_id) => refused.push((
                id.clone(),
                format!(
                    "The instance {id} belongs to another group ({}).",
                    t.group.as_deref().unwrap_or("without a name tag")
                ),
            )),
            Some(t) if !t.seen.state.alive() => refused.push((
                id.clone(),
                format!(
                    "The instance {id} is {}: only pending or running instances can be attached.",
                    state_name(t.seen.state)
                ),
            )),
            Some(t) => ok.push(t.seen.clone()),
        }
    }
    (ok, refused)
}

fn state_name(s: CloudState) -> &'static str {
    match s {
        CloudState::Pending => "pending",
        CloudState::Running => "running",
        CloudState::Stopping => "stopping",
        CloudState::Stopped => "stopped",
        CloudState::ShuttingDown => "shutting-down",
        CloudState::Terminated => "terminated",
        CloudState::Unknown => "in an unknown state",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vm(id: &str, state: CloudState, group_id: &str) -> Tagged {
        Tagged {
            seen: Seen {
                id: id.into(),
                state,
                zone: "a".into(),
                launched_ms: 0,
                instance_type: "t2.micro".into(),
                market: phantom_model::instance::Market::OnDemand,
                pool: false,
            },
            owner: Some("u".into()),
            group: (!group_id.is_empty()).then(|| "other".into()),
            group_id: (!group_id.is_empty()).then(|| group_id.into()),
            private_ip: None,
            public_ip: None,
        }
    }

    #[test]
    fn only_living_vms_of_no_other_group_join() {
        let found = [
            vm("i-run", CloudState::Running, ""),
            vm("i-mine", CloudState::Pending, "g1"),
            vm("i-stopped", CloudState::Stopped, ""),
            vm("i-theirs", CloudState::Running, "g2"),
        ];
        let asked: Vec<String> = ["i-run", "i-mine", "i-stopped", "i-theirs", "i-nope"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let (ok, refused) = judge(&asked, &found, "g1");
        let ok: Vec<&str> = ok.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ok, ["i-run", "i-mine"]);
        let why: Vec<&str> = refused.iter().map(|(_, w)| w.as_str()).collect();
        assert!(why[0].contains("is stopped"));
        assert!(why[1].contains("another group (other)"));
        assert!(why[2].contains("does not exist"));
    }
}
