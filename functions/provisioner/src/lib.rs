//! The provisioner: for each reconcile message, brings one group to its desired capacity.
//!
//! One reconcile: take the group's lease (a conditional write that also reads the group), observe
//! the cloud (one DescribeInstances by the group's id tag), decide (`phantom::reconcile::decide`,
//! pure), act (RunInstances with a ClientToken from the group's id and launch sequence,
//! TerminateInstances), record instances and scaling activities, then give the lease back only if
//! the group did not change meanwhile; if it did, go round again. A message for a group whose
//! lease someone else holds is done: the holder will see the change when it gives the lease back.

use phantom::activity::{self, Activity};
use phantom::config::{aws_sdk_config, Config};
use phantom::group::Group;
use phantom::queue::{Queue, Reconcile};
use phantom::reconcile::{self, decide, Lifecycle, Member, Placement, Plan};
use phantom::store::{Lease, Store, StoreError};
use phantom_cloud::{CloudError, Ec2, Launch, TAG_GROUP, TAG_GROUP_ID, TAG_OWNER};
use std::collections::BTreeMap;

/// How long a lease lasts without being given back (a crashed holder's lease runs out).
const LEASE_MS: i64 = 60_000;
/// Rounds of reconcile for one message before leaving the rest to the next message.
const MAX_ROUNDS: usize = 5;
/// While a deleted group's VMs shut down, look again this soon (seconds).
const DELETE_POLL_SECS: i32 = 2;

pub struct Provisioner {
    pub store: Store,
    pub queue: Option<Queue>,
    sdk: aws_config::SdkConfig,
}

/// What one reconcile came to (for the log line and the tests).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Done { launched: usize, terminated: usize },
    Deleted,
    Busy,
    NoGroup,
    Waiting,
}

impl Provisioner {
    pub async fn from_env() -> Self {
        let config = Config::from_env();
        let sdk = aws_sdk_config().await;
        Self {
            store: Store::new(&sdk, config.table),
            queue: Queue::from_env(&sdk),
            sdk,
        }
    }

    /// One batch of queue messages, as (message id, body). Returns the ids that failed and should
    /// come back (SQS partial batch failure); a message that cannot be parsed is logged and dropped.
    pub async fn handle_batch(&self, messages: Vec<(String, String)>) -> Vec<String> {
        let mut failed = Vec::new();
        for (id, body) in messages {
            let msg: Reconcile = match serde_json::from_str(&body) {
                Ok(m) => m,
                Err(e) => {
                    tracing::error!(message_id = id, error = %e, "unreadable message dropped");
                    continue;
                }
            };
            match self.reconcile(&msg).await {
                Ok(outcome) => tracing::info!(
                    message_id = id,
                    owner = msg.owner,
                    group = msg.group,
                    reason = msg.reason,
                    outcome = ?outcome,
                    "reconcile"
                ),
                Err(e) => {
                    tracing::error!(message_id = id, owner = msg.owner, group = msg.group, error = %e, "reconcile failed");
                    failed.push(id);
                }
            }
        }
        failed
    }

    /// Reconciles one group. Errors are DynamoDB's; a cloud's refusal is an outcome (a failed
    /// scaling activity and a backoff), not an error.
    pub async fn reconcile(&self, msg: &Reconcile) -> Result<Outcome, StoreError> {
        let holder = uuid::Uuid::new_v4().to_string();
        let mut total = (0, 0);
        for _ in 0..MAX_ROUNDS {
            let g = match self
                .store
                .take_lease(
                    &msg.owner,
                    &msg.group,
                    &holder,
                    phantom::time::now_ms(),
                    LEASE_MS,
                )
                .await?
            {
                Lease::Taken(g) => g,
                Lease::Busy => return Ok(Outcome::Busy),
                Lease::NoGroup => return Ok(Outcome::NoGroup),
            };
            let round = self.round(&msg.owner, &g).await?;
            match round {
                Round::Deleted => return Ok(Outcome::Deleted),
                Round::Acted {
                    launched,
                    terminated,
                } => {
                    total.0 += launched;
                    total.1 += terminated;
                }
                Round::Waiting => {}
            }
            match self
                .store
                .release_lease(&msg.owner, &g.name, &holder, g.version)
                .await
            {
                Ok(()) if matches!(round, Round::Waiting) && total == (0, 0) => {
                    return Ok(Outcome::Waiting)
                }
                Ok(()) => {
                    return Ok(Outcome::Done {
                        launched: total.0,
                        terminated: total.1,
                    })
                }
                // The group changed while we worked: look again with the lease still ours.
                Err(StoreError::Conflict) => continue,
                Err(e) => return Err(e),
            }
        }
        // Still changing: let the next message carry on.
        self.enqueue(msg, 1).await;
        Ok(Outcome::Done {
            launched: total.0,
            terminated: total.1,
        })
    }

    async fn enqueue(&self, msg: &Reconcile, delay_secs: i32) {
        if let Some(q) = &self.queue {
            if let Err(e) = q.send(msg, delay_secs).await {
                tracing::warn!(error = %e, group = msg.group, "could not queue a follow-up reconcile; the health check will");
            }
        }
    }

    async fn round(&self, owner: &str, g: &Group) -> Result<Round, StoreError> {
        let now = phantom::time::now_ms();
        let ctx = activity::Context {
            group: &g.name,
            group_arn: g.doc["AutoScalingGroupARN"].as_str().unwrap_or_default(),
            now_ms: now,
        };
        let ec2 = match self.connect(owner, g).await? {
            Ok(ec2) => ec2,
            Err(e) => return self.launch_failed(owner, g, &ctx, &e, 0).await,
        };
        let seen: Vec<_> = match ec2.tagged(owner, Some(&g.id)).await {
            Ok(t) => t.into_iter().map(|t| t.seen).collect(),
            Err(e) => return self.launch_failed(owner, g, &ctx, &e, 0).await,
        };
        let members = self.store.instances(owner, &g.name).await?;
        let target = g.target();
        let plan = decide(&target, &members, &seen, now);

        if g.deleting() && reconcile::nothing_left(&members, &seen, &plan) {
            self.store
                .delete_instances(owner, &g.name, &plan.finished)
                .await?;
            self.forget_gone(owner, &ctx, &plan).await?;
            return match self.store.delete_group(owner, g).await {
                Ok(()) | Err(StoreError::Conflict) => Ok(Round::Deleted),
                Err(e) => Err(e),
            };
        }
        if plan.is_empty() {
            return Ok(if plan.retry_at_ms.is_some() {
                Round::Waiting
            } else {
                Round::Acted {
                    launched: 0,
                    terminated: 0,
                }
            });
        }

        // Record what the cloud has that we had not, and what became InService.
        if !plan.adopt.is_empty() {
            self.store
                .put_instances(owner, g, &plan.adopt, None)
                .await?;
        }
        for id in &plan.in_service {
            self.store
                .set_lifecycle(owner, &g.name, id, Lifecycle::InService, true)
                .await?;
        }
        self.store
            .delete_instances(owner, &g.name, &plan.finished)
            .await?;
        self.forget_gone(owner, &ctx, &plan).await?;

        let terminated = self.terminate(owner, g, &ec2, &ctx, &plan).await?;
        let launched = self.launch(owner, g, &ec2, &ctx, &plan).await?;
        if g.deleting() {
            // Come back to finish once the cloud has let the VMs go.
            self.enqueue(&reconcile_msg(owner, g, "deleting"), DELETE_POLL_SECS)
                .await;
        }
        Ok(Round::Acted {
            launched,
            terminated,
        })
    }

    /// The EC2 client for the group's cloud with the owner's credentials there.
    async fn connect(&self, owner: &str, g: &Group) -> Result<Result<Ec2, CloudError>, StoreError> {
        let Some(cloud) = self.store.cloud(&g.cloud).await? else {
            return Ok(Err(CloudError {
                code: "UnknownCloud".into(),
                message: format!("cloud '{}' is not registered", g.cloud),
            }));
        };
        let Some(creds) = self.store.cloud_credentials(owner, &g.cloud).await? else {
            return Ok(Err(CloudError {
                code: "NoCredentials".into(),
                message: format!("user '{owner}' has no credentials for cloud '{}'", g.cloud),
            }));
        };
        Ok(Ok(Ec2::connect(&self.sdk, &cloud, &creds)))
    }

    /// Instances already gone from the cloud: forget them, with an activity saying why.
    async fn forget_gone(
        &self,
        owner: &str,
        ctx: &activity::Context<'_>,
        plan: &Plan,
    ) -> Result<(), StoreError> {
        if plan.gone.is_empty() {
            return Ok(());
        }
        let ids: Vec<String> = plan.gone.iter().map(|(id, _)| id.clone()).collect();
        self.store.delete_instances(owner, ctx.group, &ids).await?;
        let acts: Vec<Activity> = plan
            .gone
            .iter()
            .map(|(id, cause)| activity::terminated(ctx, id, cause))
            .collect();
        self.store.put_activities(owner, &acts).await
    }

    async fn terminate(
        &self,
        owner: &str,
        g: &Group,
        ec2: &Ec2,
        ctx: &activity::Context<'_>,
        plan: &Plan,
    ) -> Result<usize, StoreError> {
        if plan.terminate.is_empty() {
            return Ok(0);
        }
        let ids: Vec<String> = plan.terminate.iter().map(|(id, _)| id.clone()).collect();
        if let Err(e) = ec2.terminate(&ids).await {
            let acts: Vec<Activity> = ids
                .iter()
                .map(|id| activity::terminate_failed(ctx, id, &e.to_string()))
                .collect();
            self.store.put_activities(owner, &acts).await?;
            return Ok(0);
        }
        let mut acts = Vec::new();
        for (id, cause) in &plan.terminate {
            self.store
                .set_lifecycle(owner, &g.name, id, Lifecycle::Terminating, false)
                .await?;
            acts.push(activity::terminated(ctx, id, cause));
        }
        self.store.put_activities(owner, &acts).await?;
        Ok(ids.len())
    }

    async fn launch(
        &self,
        owner: &str,
        g: &Group,
        ec2: &Ec2,
        ctx: &activity::Context<'_>,
        plan: &Plan,
    ) -> Result<usize, StoreError> {
        if plan.launch.is_empty() {
            return Ok(0);
        }
        let Some(lc) = self
            .store
            .launch_config(owner, &g.launch_configuration)
            .await?
        else {
            let e = CloudError {
                code: "LaunchConfigurationMissing".into(),
                message: format!("launch configuration {} not found", g.launch_configuration),
            };
            return self
                .launch_failed(owner, g, ctx, &e, plan.capacity_from)
                .await
                .map(|_| 0);
        };
        let mut tags = vec![
            (TAG_OWNER.to_string(), owner.to_string()),
            (TAG_GROUP.to_string(), g.name.clone()),
            (TAG_GROUP_ID.to_string(), g.id.clone()),
        ];
        tags.extend(g.propagated_tags());
        // One RunInstances per placement, each with its own token.
        let mut by_place: BTreeMap<(Option<String>, Option<String>), i32> = BTreeMap::new();
        for p in &plan.launch {
            *by_place
                .entry((p.zone.clone(), p.subnet.clone()))
                .or_default() += 1;
        }
        let target = g.target();
        let mut launched: Vec<Member> = Vec::new();
        let mut failure = None;
        for (i, ((zone, subnet), count)) in by_place.into_iter().enumerate() {
            let placement = Placement { zone, subnet };
            let request = Launch {
                launch_configuration: &lc.doc,
                count,
                placement: &placement,
                client_token: format!("{}-{}-{i}", g.id, g.launch_seq),
                tags: tags.clone(),
            };
            match ec2.launch(&request).await {
                Ok(vms) => launched.extend(vms.into_iter().map(|s| Member {
                    id: s.id,
                    zone: s.zone,
                    lifecycle: Lifecycle::Pending,
                    healthy: true,
                    launched_ms: s.launched_ms,
                    protected: target.protect_new,
                    launch_configuration: g.launch_configuration.clone(),
                    instance_type: s.instance_type,
                })),
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            }
        }
        if !launched.is_empty() {
            match self
                .store
                .put_instances(owner, g, &launched, Some(g.launch_seq + 1))
                .await
            {
                Ok(()) => {}
                Err(StoreError::NotFound) => {
                    // Deleted while we launched: these VMs belong to no group.
                    let ids: Vec<String> = launched.iter().map(|m| m.id.clone()).collect();
                    tracing::warn!(
                        group = g.name,
                        ?ids,
                        "group gone during launch; terminating"
                    );
                    let _ = ec2.terminate(&ids).await;
                    return Ok(0);
                }
                Err(e) => return Err(e),
            }
            let from = plan.capacity_from;
            let acts: Vec<Activity> = launched
                .iter()
                .map(|m| activity::launched(ctx, &m.id, &m.zone, from, plan.capacity_to))
                .collect();
            self.store.put_activities(owner, &acts).await?;
        }
        match failure {
            Some(e) => {
                self.launch_failed(
                    owner,
                    g,
                    ctx,
                    &e,
                    plan.capacity_from + launched.len() as i64,
                )
                .await?;
            }
            None if g.failures > 0 => self.store.set_backoff(owner, &g.name, 0, 0).await?,
            None => {}
        }
        Ok(launched.len())
    }

    /// A launch (or the observation before it) failed: a failed activity with the cloud's words,
    /// a longer wait before the next try, and a delayed message for that try.
    async fn launch_failed(
        &self,
        owner: &str,
        g: &Group,
        ctx: &activity::Context<'_>,
        e: &CloudError,
        from: i64,
    ) -> Result<Round, StoreError> {
        let failures = g.failures + 1;
        let wait = reconcile::backoff_ms(failures);
        tracing::warn!(group = g.name, error = %e, failures, wait_ms = wait, "launch failed");
        let act = activity::launch_failed(ctx, &e.to_string(), from, g.desired);
        self.store.put_activities(owner, &[act]).await?;
        match self
            .store
            .set_backoff(owner, &g.name, failures, ctx.now_ms + wait)
            .await
        {
            Ok(()) | Err(StoreError::NotFound) => {}
            Err(e) => return Err(e),
        }
        let delay = ((wait + 999) / 1000) as i32;
        self.enqueue(&reconcile_msg(owner, g, "retry after failure"), delay)
            .await;
        Ok(Round::Waiting)
    }
}

enum Round {
    Acted { launched: usize, terminated: usize },
    Waiting,
    Deleted,
}

fn reconcile_msg(owner: &str, g: &Group, reason: &str) -> Reconcile {
    Reconcile {
        owner: owner.to_string(),
        group: g.name.clone(),
        reason: reason.to_string(),
    }
}
