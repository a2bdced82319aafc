//! The memory cloud's status checks and scheduled events (DescribeInstanceStatus), and what tests
//! do to them from outside: impair a VM's instance, system or EBS check, schedule an event, mend
//! it, or make the cloud one without the call.

use super::*;
use crate::cloud::without_unknown;
use phantom_model::status::{Check, CheckStatus, EventCode, InstanceStatus, ScheduledEvent};

/// Which of a VM's status checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    Instance,
    System,
    Ebs,
}

/// What tests have told the cloud of a VM's checks and events; a VM not told of passes them all.
#[derive(Debug, Clone, Default)]
pub(super) struct Told {
    instance: Option<Check>,
    system: Option<Check>,
    ebs: Option<Check>,
    events: Vec<ScheduledEvent>,
}

impl MemoryCloud {
    /// The VM's check turns impaired now (its `ImpairedSince`), until `mend`.
    pub fn impair(&self, id: &str, which: Which) {
        let now = self.clock.now_ms();
        self.set_check(id, which, CheckStatus::Impaired, Some(now));
    }

    /// The VM's check says this (insufficient-data, initializing, ...), without a since.
    pub fn set_check(&self, id: &str, which: Which, status: CheckStatus, since: Option<i64>) {
        let check = Check {
            status,
            impaired_since_ms: since,
        };
        let mut st = self.state();
        let told = st.told.entry(id.to_string()).or_default();
        match which {
            Which::Instance => told.instance = Some(check),
            Which::System => told.system = Some(check),
            Which::Ebs => told.ebs = Some(check),
        }
    }

    /// EC2 schedules an event for the VM, not before `not_before_ms` (and AWS Health tells of it:
    /// `take_health_events`).
    pub fn schedule_event(&self, id: &str, code: EventCode, not_before_ms: i64) {
        let mut st = self.state();
        st.health.push((id.to_string(), code));
        st.told
            .entry(id.to_string())
            .or_default()
            .events
            .push(ScheduledEvent {
                code,
                not_before_ms,
                description: format!("The instance is scheduled for {}", code.name()),
            });
    }

    /// The scheduled events AWS Health has told of since the last call.
    pub fn take_health_events(&self) -> Vec<(String, EventCode)> {
        std::mem::take(&mut self.state().health)
    }

    /// The VM's checks pass again and its events are gone.
    pub fn mend(&self, id: &str) {
        self.state().told.remove(id);
    }

    /// This cloud's EC2 API has no DescribeInstanceStatus (it answers UnsupportedOperation).
    pub fn without_status_checks(&self) {
        self.state().no_status_checks = true;
    }

    /// DescribeInstanceStatus calls so far.
    pub fn status_calls(&self) -> usize {
        self.state().status_calls
    }

    /// DescribeInstanceStatus with IncludeAllInstances, by id: every VM asked for (one it does not
    /// have fails the call, as EC2's does); a VM not running has no checks to apply.
    pub(super) async fn describe_statuses(
        &self,
        ids: &[String],
    ) -> Result<Vec<InstanceStatus>, CloudError> {
        let ids = ids.to_vec();
        without_unknown(ids, |ids| async move { self.statuses_by_id(&ids).await }).await
    }

    async fn statuses_by_id(&self, ids: &[String]) -> Result<Vec<InstanceStatus>, CloudError> {
        self.enter().await?;
        let out = {
            let mut st = self.state();
            st.status_calls += 1;
            if st.no_status_checks {
                return Err(CloudError::new(
                    "UnsupportedOperation",
                    "The action DescribeInstanceStatus is not supported (memory cloud).",
                ));
            }
            // EC2 refuses a call that names a VM it does not have, naming them.
            let unknown: Vec<&str> = ids
                .iter()
                .filter(|id| !st.vms.contains_key(*id))
                .map(String::as_str)
                .collect();
            if !unknown.is_empty() {
                return Err(CloudError::new(
                    "InvalidInstanceID.NotFound",
                    format!("The instance IDs '{}' do not exist", unknown.join(", ")),
                ));
            }
            ids.iter()
                .filter_map(|id| st.vms.get(id))
                .map(|vm| {
                    if vm.state != CloudState::Running {
                        return InstanceStatus {
                            instance: Check::NOT_APPLICABLE,
                            system: Check::NOT_APPLICABLE,
                            ..InstanceStatus::ok(&vm.id)
                        };
                    }
                    let told = st.told.get(&vm.id).cloned().unwrap_or_default();
                    InstanceStatus {
                        id: vm.id.clone(),
                        instance: told.instance.unwrap_or(Check::OK),
                        system: told.system.unwrap_or(Check::OK),
                        ebs: told.ebs.unwrap_or(Check::NOT_APPLICABLE),
                        events: told.events,
                    }
                })
                .collect()
        };
        self.trip.step().await;
        Ok(out)
    }
}
