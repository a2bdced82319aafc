//! The health check: one sweep over every cloud and user. Per (user, cloud) it makes one
//! DescribeInstances (per page of 1000) of the user's tagged VMs, compares them with the user's
//! groups and instance records (one Query each), and
//! - queues a reconcile for each group whose plan (`phantom::reconcile::decide`) is not empty: a VM
//!   died or stopped, the group is below or above desired, a VM is not recorded, a delete is under way;
//! - terminates VMs tagged for a group that no longer exists (orphans).
//!
//! Its cost grows with users, clouds and pages, not with instances one by one. Built from the
//! seams (`Store`, `Connect`, `WorkQueue`, `Clock`); only `from_env` names AWS.

use phantom::cloud::Connect;
use phantom::config::{aws_sdk_config, Config};
use phantom::group::Group;
use phantom::metrics::{self, Calls};
use phantom::queue::{Reconcile, SqsQueue, WorkQueue};
use phantom::reconcile::{decide, Member};
use phantom::store::{DynamoStore, Store, StoreError};
use phantom::time::{Clock, SystemClock};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

pub struct HealthCheck {
    pub store: Arc<dyn Store>,
    pub queue: Option<Arc<dyn WorkQueue>>,
    pub clouds: Arc<dyn Connect>,
    pub clock: Arc<dyn Clock>,
}

/// What one sweep saw and did.
#[derive(Debug, Default, Clone, Serialize)]
pub struct Report {
    pub users: usize,
    pub groups: usize,
    pub vms_seen: usize,
    pub reconciles_queued: usize,
    /// Reconciles the queue refused (the next sweep finds the same groups).
    pub reconciles_unsent: usize,
    pub orphans_terminated: usize,
    pub cloud_errors: usize,
    pub dynamodb_calls: u64,
    pub ec2_calls: u64,
}

impl HealthCheck {
    /// The real adapters: DynamoDB, SQS (PHANTOM_WORK_QUEUE_URL), each cloud's EC2, the system clock.
    pub async fn from_env() -> Self {
        let config = Config::from_env();
        let sdk = aws_sdk_config().await;
        Self {
            store: Arc::new(DynamoStore::new(&sdk, config.table)),
            queue: SqsQueue::from_env(&sdk).map(|q| Arc::new(q) as Arc<dyn WorkQueue>),
            clouds: Arc::new(phantom_cloud::Ec2Connect::new(sdk)),
            clock: Arc::new(SystemClock),
        }
    }

    pub async fn sweep(&self) -> Result<Report, StoreError> {
        let before = metrics::calls();
        let mut report = Report::default();
        let clouds: BTreeMap<String, _> = self
            .store
            .clouds()
            .await?
            .into_iter()
            .map(|c| (c.name.clone(), c))
            .collect();
        let mut queued = Vec::new();
        for user in self.store.users().await? {
            report.users += 1;
            let creds = self.store.all_cloud_credentials(&user.name).await?;
            if creds.is_empty() {
                continue;
            }
            let groups = self
                .store
                .groups(&user.name, None, None, usize::MAX, &|_| true)
                .await?;
            report.groups += groups.len();
            let mut members: BTreeMap<String, Vec<Member>> = BTreeMap::new();
            for (group, m) in self.store.all_instances(&user.name).await? {
                members.entry(group).or_default().push(m);
            }
            let now = self.clock.now_ms();
            for cred in &creds {
                let Some(cloud) = clouds.get(&cred.cloud) else {
                    continue;
                };
                let ec2 = self.clouds.connect(cloud, cred);
                let tagged = match ec2.tagged(&user.name, None).await {
                    Ok(t) => t,
                    Err(e) => {
                        tracing::warn!(user = user.name, cloud = cloud.name, error = %e, "sweep: cloud unreachable");
                        report.cloud_errors += 1;
                        continue;
                    }
                };
                report.vms_seen += tagged.len();
                let here: Vec<&Group> = groups.iter().filter(|g| g.cloud == cloud.name).collect();
                // Any of the user's groups, on any cloud: two registrations of one endpoint must
                // not make each other's VMs look orphaned.
                let ids: BTreeSet<&str> = groups.iter().map(|g| g.id.as_str()).collect();
                let orphans: Vec<String> = tagged
                    .iter()
                    .filter(|t| !ids.contains(t.group_id.as_str()) && t.seen.is_alive())
                    .map(|t| t.seen.id.clone())
                    .collect();
                if !orphans.is_empty() {
                    tracing::warn!(
                        user = user.name,
                        cloud = cloud.name,
                        ?orphans,
                        "terminating VMs of no group"
                    );
                    match ec2.terminate(&orphans).await {
                        Ok(()) => report.orphans_terminated += orphans.len(),
                        Err(e) => {
                            tracing::warn!(error = %e, "could not terminate orphans");
                            report.cloud_errors += 1;
                        }
                    }
                }
                for g in here {
                    let seen: Vec<_> = tagged
                        .iter()
                        .filter(|t| t.group_id == g.id)
                        .map(|t| t.seen.clone())
                        .collect();
                    let recorded = members.get(&g.name).map(Vec::as_slice).unwrap_or(&[]);
                    let plan = decide(&g.target(), recorded, &seen, now);
                    if !plan.is_empty() || g.deleting() {
                        queued.push(Reconcile::new(&user.name, &g.name, "health-check"));
                    }
                }
            }
        }
        if let (Some(q), false) = (&self.queue, queued.is_empty()) {
            match q.send_all(&queued).await {
                Ok(()) => report.reconciles_queued = queued.len(),
                Err(e) => {
                    tracing::error!(error = %e, "sweep: could not queue reconciles");
                    report.reconciles_unsent = queued.len();
                }
            }
        }
        let Calls { dynamodb, ec2 } = metrics::calls() - before;
        report.dynamodb_calls = dynamodb;
        report.ec2_calls = ec2;
        tracing::info!(
            users = report.users,
            groups = report.groups,
            vms_seen = report.vms_seen,
            reconciles_queued = report.reconciles_queued,
            reconciles_unsent = report.reconciles_unsent,
            orphans_terminated = report.orphans_terminated,
            cloud_errors = report.cloud_errors,
            dynamodb_calls = report.dynamodb_calls,
            ec2_calls = report.ec2_calls,
            "health sweep"
        );
        Ok(report)
    }
}
