//! A publisher that keeps what it was sent, per target: topics and queues exist once created
//! (any other target is refused, as SNS answers NotFound), one can be made to fail, and a
//! `Tripwire` shared with the memory store stalls a send after it was made (a crash).

use super::{PublishError, Publisher};
use crate::fault::Tripwire;
use async_trait::async_trait;
use phantom_rules::notification::Notice;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

#[derive(Default)]
pub struct MemoryPublisher {
    state: Mutex<State>,
    tripwire: Option<Arc<Tripwire>>,
}

#[derive(Default)]
struct State {
    targets: BTreeSet<String>,
    sent: BTreeMap<String, Vec<Notice>>,
    down: bool,
}

impl MemoryPublisher {
    pub fn with_tripwire(tripwire: Arc<Tripwire>) -> Self {
        Self {
            tripwire: Some(tripwire),
            ..Self::default()
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().expect("no panic holding the state")
    }

    /// A topic or queue (by ARN) that takes messages from now on.
    pub fn create(&self, arn: &str) {
        self.state().targets.insert(arn.to_string());
    }

    pub fn delete(&self, arn: &str) {
        self.state().targets.remove(arn);
    }

    /// Every send fails as a service that does not answer (true) or works again (false).
    pub fn set_down(&self, down: bool) {
        self.state().down = down;
    }

    /// What `arn` was sent, in order.
    pub fn sent(&self, arn: &str) -> Vec<Notice> {
        self.state().sent.get(arn).cloned().unwrap_or_default()
    }
}

#[async_trait]
impl Publisher for MemoryPublisher {
    async fn publish(&self, notice: &Notice) -> Result<(), PublishError> {
        {
            let mut st = self.state();
            if st.down {
                return Err(PublishError::Unavailable("the publisher is down".into()));
            }
            if !st.targets.contains(&notice.target) {
                return Err(PublishError::Refused(format!(
                    "NotFound: {} does not exist",
                    notice.target
                )));
            }
            st.sent
                .entry(notice.target.clone())
                .or_default()
                .push(notice.clone());
        }
        if let Some(t) = &self.tripwire {
            t.step().await;
        }
        Ok(())
    }
}
