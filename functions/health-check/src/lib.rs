//! The health check, run on a schedule: the fan-out. It reads the list of (user, cloud) pairs
//! that have groups (one Query, kept by group creation and deletion) and puts one sweep message per
//! pair on the work queue; the provisioner's fleet runs them in parallel (`provisioner::sweep`).
//! It never talks to a cloud, so a slow or dead cloud holds up only its own pairs, and users
//! without groups cost nothing. When the queue still holds a round's worth of messages (the fleet
//! is behind), it skips its run rather than pile more sweeps in front of the reconciles.
//!
//! The same run fires the scheduled actions that are due (`scheduler`), so they run within one
//! period of the schedule of their time, evaluates the target tracking policies (`tracker`) and
//! puts ForecastAndScale policies' next hour in place (`predictor`).
//! All read the one list of groups the index says are due.
//!
//! Built from the seams (`Store`, `WorkQueue`, `Clock`); only `from_env` names AWS.

pub mod alarms;
pub mod collector;
pub mod predictor;
pub mod prober;
pub mod pulse;
pub mod scheduler;
pub mod tracker;

use phantom_model::time::Clock;
use phantom_seams::counts;
use phantom_seams::metrics::{self, Calls};
use phantom_seams::queue::{Sweep, Work, WorkQueue};
use phantom_seams::store::{Store, StoreError, Watched};
use phantom_seams::wiring::Seams;
use serde::Serialize;
use std::sync::Arc;

pub struct HealthCheck {
    pub store: Arc<dyn Store>,
    pub queue: Arc<dyn WorkQueue>,
    pub clock: Arc<dyn Clock>,
    /// The metric source target tracking reads.
    pub metrics: Arc<dyn phantom_seams::prometheus::Connect>,
    /// A metric's datapoints are this far apart (PHANTOM_METRIC_PERIOD_SECS; AWS's is a minute).
    pub metric_period_ms: i64,
    /// The pulse (sub-minute looks and sweeps, `pulse`); without one, each run of the schedule
    /// sweeps every pair.
    pub pulse: Option<Arc<pulse::Pulse>>,
    /// Group metrics as CloudWatch log lines (PHANTOM_METRICS_NAMESPACE, on AWS); none locally.
    pub emf: Option<collector::Emf>,
    /// The groups' probes and what they found so far (`prober`): run by each beat, or by each run
    /// of the schedule where there is no pulse.
    pub probing: Arc<prober::Probing>,
    /// The deployment's SNS: CloudWatch alarms' topics (`alarms`).
    pub publisher: Arc<dyn phantom_seams::publish::Publisher>,
    /// The `AWS/AutoScaling` metrics this instance listed lately (`collector`).
    pub listed: phantom_seams::store::Listed,
}

/// What one run of the schedule did.
#[derive(Debug, Default, Clone, Serialize)]
pub struct Report {
    /// (user, cloud) pairs on the list.
    pub pairs: usize,
    /// Sweep messages queued (one per pair).
    pub sweeps_queued: usize,
    /// Messages waiting on the queue before the run; at least `pairs` of them skip the run.
    pub backlog: u64,
    /// Calls made while the run lasted, counted process-wide: exact where the function runs alone
    /// (Lambda), an upper bound in phantom-local.
    pub dynamodb_calls: u64,
    pub sqs_calls: u64,
}

/// What one run of the schedule did.
#[derive(Debug, Clone, Serialize)]
pub struct Run {
    pub scheduler: scheduler::Fired,
    pub tracking: tracker::Evaluated,
    pub forecasting: predictor::Prepared,
    /// CloudWatch's alarms evaluated, and their actions.
    pub alarms: alarms::Evaluated,
    /// Group metrics kept and written (none when the groups could not be read).
    pub metrics: Option<collector::Collected>,
    pub health: Report,
    /// The first tick of a chain this run started (none was alive).
    pub pulse_started: Option<u64>,
}

#[derive(Debug)]
pub enum HealthError {
    Store(StoreError),
    /// The queue refused the sweeps: the next run tries again.
    Queue(String),
}

impl std::fmt::Display for HealthError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Store(e) => write!(f, "{e}"),
            Self::Queue(e) => write!(f, "could not queue sweeps: {e}"),
        }
    }
}

impl std::error::Error for HealthError {}

impl HealthCheck {
    /// The health check over the seams a main built, with the work queue (which must be set)
    /// and its settings from the environment: the pulse's period and cadence, the metrics'
    /// namespace.
    pub fn new(seams: &Seams) -> Result<Self, String> {
        let queue = seams.queue.clone().ok_or_else(|| {
            format!(
                "{} is not set: the health check has nowhere to send its sweeps",
                phantom_seams::queue::QUEUE_URL_ENV
            )
        })?;
        let pulse = match &seams.pulse {
            None => None,
            Some(q) => {
                let (period_ms, cadence) = pulse::Pulse::settings_from_env()?;
                Some(Arc::new(pulse::Pulse::new(
                    Some(q.clone()),
                    period_ms,
                    cadence,
                    seams.lookups.clone(),
                )))
            }
        };
        Ok(Self {
            store: seams.store.clone(),
            queue,
            clock: seams.clock.clone(),
            metrics: seams.metrics.clone(),
            metric_period_ms: seams.metric_period_ms,
            pulse,
            emf: collector::Emf::from_env()?,
            probing: Arc::new(prober::Probing::new(
                Arc::new(phantom_seams::probe::NetProber::default()),
                seams.lookups.clone(),
            )),
            publisher: seams.publisher.clone(),
            listed: Default::default(),
        })
    }

    /// One run of the schedule: the scheduled actions that are due, the target tracking
    /// policies, then the sweeps. All are tried; the first failure is returned.
    pub async fn run(&self) -> Result<Run, HealthError> {
        let started = std::time::Instant::now();
        let run = self.run_once().await;
        phantom_metrics::ops::observe(
            phantom_metrics::ops::SCHEDULE_SECONDS,
            &[],
            started.elapsed().as_secs_f64(),
        );
        run
    }

    async fn run_once(&self) -> Result<Run, HealthError> {
        let now_ms = self.clock.now_ms();
        let due = self.store.due(now_ms).await;
        let (fired, tracking, forecasting, collected) = match &due {
            Ok(due) => {
                // Each due group read once, for the scheduler, the tracker and the collector.
                let read =
                    phantom_seams::store::samples::groups_of_due(self.store.as_ref(), due).await;
                let mut groups = Vec::new();
                let mut unread = 0;
                for r in &read {
                    match &r.groups {
                        Ok(gs) => groups.extend(gs.iter().map(|g| (r.user.clone(), g.clone()))),
                        Err(e) => {
                            tracing::warn!(user = r.user, groups = r.due, error = %e, "due groups not read this run");
                            unread += r.due;
                        }
                    }
                }
                let mut fired =
                    scheduler::fire(self.store.as_ref(), self.queue.as_ref(), &groups, now_ms)
                        .await;
                fired.groups_due += unread;
                fired.errors += unread;
                let tracker = tracker::Tracker {
                    store: self.store.as_ref(),
                    queue: self.queue.as_ref(),
                    connect: self.metrics.as_ref(),
                    period_ms: self.metric_period_ms,
                    now_ms,
                };
                let tracking = tracker.run(&groups).await;
                let predictor = predictor::Predictor {
                    store: self.store.as_ref(),
                    queue: self.queue.as_ref(),
                    connect: self.metrics.as_ref(),
                    period_ms: self.metric_period_ms,
                    now_ms,
                };
                let forecasting = predictor.run(&groups).await;
                let collected = Some(
                    collector::collect(
                        self.store.as_ref(),
                        self.emf.as_ref(),
                        &self.listed,
                        read,
                        now_ms,
                    )
                    .await,
                );
                (Ok(fired), tracking, forecasting, collected)
            }
            Err(e) => (Err(e.clone()), Err(e.clone()), Err(e.clone()), None),
        };
        let watcher = alarms::Watcher {
            store: self.store.as_ref(),
            queue: self.queue.as_ref(),
            publisher: self.publisher.as_ref(),
            connect: self.metrics.as_ref(),
            now_ms,
        };
        let alarms = watcher.run().await;
        if let Some(c) = &collected {
            tracing::info!(
                groups = c.groups,
                lines = c.lines,
                bytes = c.bytes,
                datapoints = c.datapoints,
                errors = c.errors,
                "group metrics"
            );
        }
        if let Ok(f) = &fired {
            counts!(
                info,
                f,
                [groups_due, applied, held, failed, errors],
                "scheduler"
            );
        }
        // With a pulse, the beats sweep and probe; the schedule only keeps a chain alive.
        let (health, pulse_started) = match &self.pulse {
            Some(_) => (Ok(Report::default()), self.keep_pulse().await),
            None => {
                self.probe().await;
                (self.sweep().await, Ok(None))
            }
        };
        Ok(Run {
            scheduler: fired.map_err(HealthError::Store)?,
            tracking: tracking.map_err(HealthError::Store)?,
            forecasting: forecasting.map_err(HealthError::Store)?,
            alarms: alarms.map_err(HealthError::Store)?,
            metrics: collected,
            health: health?,
            pulse_started: pulse_started?,
        })
    }

    pub async fn sweep(&self) -> Result<Report, HealthError> {
        let before = metrics::calls();
        let watched = self.store.watched().await.map_err(HealthError::Store)?;
        let backlog = self.queue.backlog().await.map_err(HealthError::Queue)?;
        if fleet_behind(backlog, watched.len()) {
            tracing::warn!(
                pairs = watched.len(),
                backlog,
                "health check skipped: the fleet has not caught up with the last run"
            );
            return Ok(Report {
                pairs: watched.len(),
                backlog,
                ..Report::default()
            });
        }
        let sweeps = sweep_messages(watched.iter());
        self.queue
            .send_all(&sweeps)
            .await
            .map_err(HealthError::Queue)?;
        let Calls { dynamodb, sqs, .. } = metrics::calls() - before;
        let report = Report {
            pairs: watched.len(),
            sweeps_queued: sweeps.len(),
            backlog,
            dynamodb_calls: dynamodb,
            sqs_calls: sqs,
        };
        counts!(
            info,
            report,
            [pairs, sweeps_queued, backlog, dynamodb_calls, sqs_calls],
            "health check"
        );
        Ok(report)
    }
}

/// The fleet has not caught up: the queue holds a round's worth of messages (one per pair), and
/// more sweeps would only wait in front of the reconciles.
fn fleet_behind(backlog: u64, pairs: usize) -> bool {
    backlog > 0 && backlog >= pairs as u64
}

/// One sweep message per pair, carrying what the list holds of it.
fn sweep_messages<'a>(pairs: impl Iterator<Item = &'a Watched>) -> Vec<Work> {
    pairs
        .map(|w| {
            Sweep {
                owner: w.user.clone(),
                cloud: w.cloud.clone(),
                view: w.view.clone(),
            }
            .into()
        })
        .collect()
}
