//! The work-queue seam: work for the provisioner's fleet (reconcile a group, sweep one user's VMs on
//! one cloud), as a trait with the SQS adapter (`sqs`) and an in-memory queue (`memory`: delays,
//! redelivery; compiled for the tests and tools only, feature `memory`). Messages say only what to
//! look at; the provisioner reads the rest, so a duplicate or a late one does no harm.

#[cfg(any(test, feature = "memory"))]
pub mod memory;
pub mod pulse;
pub mod sqs;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

#[cfg(any(test, feature = "memory"))]
pub use memory::MemoryQueue;
pub use sqs::SqsQueue;

pub const QUEUE_URL_ENV: &str = "PHANTOM_WORK_QUEUE_URL";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reconcile {
    pub owner: String,
    pub group: String,
    /// What asked for it (for the logs).
    pub reason: String,
    /// Its place in a chain of follow-ups at a group whose VMs are on their way in or out (0: not
    /// a follow-up); bounds the chain (`phantom_rules::round::follow_up_delay_secs`).
    #[serde(default)]
    pub follow_up: u32,
}

impl Reconcile {
    pub fn new(owner: &str, group: &str, reason: &str) -> Self {
        Self {
            owner: owner.to_string(),
            group: group.to_string(),
            reason: reason.to_string(),
            follow_up: 0,
        }
    }

    /// The next look in a chain of follow-ups.
    pub fn follow_up(&self) -> Self {
        Self {
            reason: "follow-up".into(),
            follow_up: self.follow_up + 1,
            ..self.clone()
        }
    }
}

/// Look at everything one user runs on one cloud: the health check's unit of work.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sweep {
    pub owner: String,
    pub cloud: String,
    /// What the health check's list held for the pair: the sweep writes its own view only where
    /// it differs.
    #[serde(default)]
    pub view: Option<phantom_model::pulse::PairView>,
}

/// A cloud said a VM changed state: an EC2 state-change event, as template.yaml's EventBridge rule
/// puts it on the work queue (its input transformer writes this shape).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StateChange {
    pub instance: String,
    pub state: String,
    pub region: String,
    pub account: String,
}

/// A cloud said a VM is at risk of interruption: EC2's rebalance recommendation or spot
/// interruption warning, as template.yaml's AtRiskRule puts it on the work queue (its input
/// transformer writes this shape; `signal` is the event's detail-type).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AtRisk {
    pub instance: String,
    pub signal: String,
    pub region: String,
    pub account: String,
}

/// AWS Health said EC2 scheduled a change to VMs (a retirement, a stop, a reboot, maintenance),
/// as template.yaml's ScheduledEventRule puts it on the work queue (`instances` are the event's
/// resources, `code` its eventTypeCode).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Scheduled {
    pub instances: Vec<String>,
    pub code: String,
    pub region: String,
    pub account: String,
}

/// One message on the work queue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Work {
    Reconcile(Reconcile),
    Sweep(Sweep),
    StateChange(StateChange),
    AtRisk(AtRisk),
    Scheduled(Scheduled),
}

impl From<Scheduled> for Work {
    fn from(s: Scheduled) -> Self {
        Work::Scheduled(s)
    }
}

impl From<Reconcile> for Work {
    fn from(r: Reconcile) -> Self {
        Work::Reconcile(r)
    }
}

impl From<StateChange> for Work {
    fn from(s: StateChange) -> Self {
        Work::StateChange(s)
    }
}

impl From<AtRisk> for Work {
    fn from(a: AtRisk) -> Self {
        Work::AtRisk(a)
    }
}

impl From<Sweep> for Work {
    fn from(s: Sweep) -> Self {
        Work::Sweep(s)
    }
}

impl Work {
    /// A message body as it travels.
    pub fn parse(body: &str) -> Result<Self, String> {
        serde_json::from_str(body).map_err(|e| e.to_string())
    }
}

/// Where work goes.
#[async_trait]
pub trait WorkQueue: Send + Sync {
    /// Sends one message, visible after `delay_secs` (SQS allows up to 900).
    async fn send(&self, msg: &Work, delay_secs: i32) -> Result<(), String>;
    /// Sends many, visible at once.
    async fn send_all(&self, msgs: &[Work]) -> Result<(), String>;
    /// About how many messages wait to be received now (SQS's ApproximateNumberOfMessages).
    async fn backlog(&self) -> Result<u64, String>;
    /// Hides these received messages (by receipt) until `secs` from now, 0 showing them again at
    /// once (SQS's ChangeMessageVisibility). The provisioner hides its batch while it works, so a
    /// batch whose invocation died comes back when its leases run out, and a failed one soon.
    async fn hide(&self, receipts: &[String], secs: i32) -> Result<(), String>;
}

/// The message attribute saying when a message was due to be handled (Unix ms, the sender's clock:
/// sent, plus its delay), so that the wait it measures leaves out the delay that was asked for.
pub const DUE_ATTRIBUTE: &str = "phantom-due-ms";

/// A message as the queue hands it to the provisioner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Received {
    pub id: String,
    /// What this delivery of it is known by (SQS's receipt handle): each delivery has its own.
    pub receipt: String,
    pub body: String,
    /// When it was due (Unix ms): its `DUE_ATTRIBUTE`, or SQS's SentTimestamp for a message that
    /// has none (EventBridge's state changes, sent without a delay).
    pub due_ms: i64,
}

impl Received {
    /// From what SQS gives: the attribute's and the SentTimestamp's text; neither readable is an
    /// error (SQS always gives a SentTimestamp).
    pub fn from_sqs(
        id: String,
        receipt: String,
        body: String,
        due: Option<&str>,
        sent_timestamp: Option<&str>,
    ) -> Result<Self, String> {
        let due_ms = match (due, sent_timestamp) {
            (Some(d), _) => d
                .parse()
                .map_err(|_| format!("{DUE_ATTRIBUTE} is not a number: {d}"))?,
            (None, Some(t)) => t
                .parse()
                .map_err(|_| format!("SentTimestamp is not a number: {t}"))?,
            (None, None) => return Err("the message has no SentTimestamp".into()),
        };
        Ok(Self {
            id,
            receipt,
            body,
            due_ms,
        })
    }
}

/// A message body as it travels.
fn body(msg: &Work) -> String {
    serde_json::to_string(msg).expect("a work message serializes")
}

#[cfg(test)]
mod tests {
    use super::Received;

    #[test]
    fn a_message_is_due_at_its_attribute_else_when_sqs_says_it_was_sent() {
        let r = |due: Option<&str>, sent: Option<&str>| {
            Received::from_sqs("m-1".into(), "r-1".into(), "{}".into(), due, sent).map(|r| r.due_ms)
        };
        assert_eq!(
            r(Some("5000"), Some("1000")),
            Ok(5_000),
            "the delay is left out"
        );
        assert_eq!(
            r(None, Some("1000")),
            Ok(1_000),
            "EventBridge's, sent without a delay"
        );
        assert!(r(None, None).is_err());
        assert!(r(Some("soon"), Some("1000"))
            .unwrap_err()
            .contains("phantom-due-ms"));
        assert!(r(None, Some("x")).unwrap_err().contains("SentTimestamp"));
    }
}
