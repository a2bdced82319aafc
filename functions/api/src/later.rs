//! The reconcile messages a request's action asks for, sent once the action is done, side by
//! side with the audit trail's event (one round trip where there were two) and still before the
//! answer leaves. Outside a request (a webhook, the console's own API) they go at once.

use phantom_seams::queue::Reconcile;
use std::cell::RefCell;
use std::future::Future;

tokio::task_local! {
    static ASKED: RefCell<Vec<Reconcile>>;
}

/// Runs `action`, keeping the reconciles it asks for: answered beside its outcome.
pub async fn collecting<T>(action: impl Future<Output = T>) -> (T, Vec<Reconcile>) {
    ASKED
        .scope(RefCell::new(Vec::new()), async {
            let out = action.await;
            (out, ASKED.with(|asked| asked.take()))
        })
        .await
}

/// Keeps `msg` for after the action, or hands it back when no request collects it.
pub fn defer(msg: Reconcile) -> Option<Reconcile> {
    let mut msg = Some(msg);
    let _outside = ASKED.try_with(|asked| {
        if let Some(m) = msg.take() {
            asked.borrow_mut().push(m);
        }
    });
    msg
}
