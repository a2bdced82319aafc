//! What one reconcile round (or an instance action) writes at once.

use super::activity::Activity;
use super::hold::Holds;
use super::instance::Member;
use super::notification::Notice;

/// Launch failures in a row and when launching may be tried again (Unix ms).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    pub failures: i64,
    pub retry_at_ms: i64,
}

/// What one reconcile round writes, all at once: instance records added or changed (whole), those
/// forgotten, the launch sequence advanced past what was launched, the backoff, the activities.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Record {
    pub put: Vec<Member>,
    pub forget: Vec<String>,
    /// Moves the group's `launch_seq` from the one it was read with to this.
    pub launch_seq: Option<i64>,
    /// Sets the group's desired capacity, as a compare-and-set on the version it was read at
    /// (TerminateInstanceInAutoScalingGroup with a decrement).
    pub desired: Option<i64>,
    pub backoff: Option<Backoff>,
    /// Sets the group's `unreplaced_ms`.
    pub unreplaced: Option<Vec<i64>>,
    /// A group across clouds: sets what it remembers of each (`Group::holds`).
    pub holds: Option<Holds>,
    pub activities: Vec<Activity>,
    /// Messages telling of what this record writes, sent once it is written (`phantom_rules::notification`
    /// in the rules above): kept in the store until sent, so none is lost to a crash.
    pub notices: Vec<Notice>,
    /// LaunchInstances requests carried out, with their results (replacing them as pending).
    pub launches: Vec<crate::sync_launch::SyncLaunch>,
    /// Asks for a round of the group (when, Unix ms): kept on the group until a round takes its
    /// lease (the store's `Ask`), so a round asked for by a writer that died is not lost.
    pub ask_ms: Option<i64>,
}

impl Record {
    pub fn is_empty(&self) -> bool {
        self.put.is_empty()
            && self.forget.is_empty()
            && self.launch_seq.is_none()
            && self.desired.is_none()
            && self.backoff.is_none()
            && self.unreplaced.is_none()
            && self.holds.is_none()
            && self.activities.is_empty()
            && self.notices.is_empty()
            && self.launches.is_empty()
            && self.ask_ms.is_none()
    }
}
