//! Telling the world: the messages a round records (`phantom_rules::notification`) are written with
//! it and sent after it; one left behind by a crash between the two is sent by the group's next
//! round, so none is lost, and none is sent for a transition that was not written.

use crate::Provisioner;
use phantom_rules::group::Group;
use phantom_rules::notification::{self, Audience, Notice};
use phantom_seams::publish::PublishError;
use phantom_seams::store::{Record, StoreError};

impl Provisioner {
    /// Writes a round's record with the messages it tells, then sends them.
    pub(crate) async fn write(
        &self,
        owner: &str,
        g: &Group,
        r: &mut Record,
    ) -> Result<(), StoreError> {
        notification::of_record(&Audience::of(&g.settings), r, self.clock.now_ms());
        self.store.record(owner, g, r).await?;
        self.send(owner, &g.name, &r.notices).await;
        Ok(())
    }

    /// Sends the messages an earlier round of the group wrote and did not send (it crashed, or the
    /// service did not answer). Only a group that tells someone can have any, or one that just
    /// stopped telling (`last_words`: the round the api asked for then).
    pub(crate) async fn send_left(
        &self,
        owner: &str,
        g: &Group,
        last_words: bool,
    ) -> Result<(), StoreError> {
        if Audience::of(&g.settings).is_empty() && !last_words {
            return Ok(());
        }
        let left = self.store.notices(owner, &g.name).await?;
        self.send(owner, &g.name, &left).await;
        Ok(())
    }

    /// Sends each message, then forgets it; one the service refuses (its topic or queue gone) is
    /// forgotten too, one it did not take is kept for the next round.
    async fn send(&self, owner: &str, group: &str, notices: &[Notice]) {
        if notices.is_empty() {
            return;
        }
        let (mut sent, mut refused, mut kept) = (0, 0, 0);
        let mut last_error = None;
        for n in notices {
            match self.publisher.publish(n).await {
                Ok(()) => sent += 1,
                Err(PublishError::Refused(why)) => {
                    refused += 1;
                    last_error = Some(format!("{}: {why}", n.target));
                }
                Err(PublishError::Unavailable(why)) => {
                    kept += 1;
                    last_error = Some(format!("{}: {why}", n.target));
                    continue;
                }
            }
            if let Err(e) = self.store.sent(owner, group, &n.id).await {
                // Kept: the next round sends it again, with the same ids in its body.
                tracing::warn!(group, notice = n.id, error = %e, "a sent notification stays recorded");
            }
        }
        tracing::info!(
            owner,
            group,
            sent,
            refused,
            kept,
            error = last_error,
            "notifications"
        );
    }
}
