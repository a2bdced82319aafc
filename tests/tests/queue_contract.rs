//! One contract, two work queues (`phantom_seams::queue::WorkQueue`): the SQS adapter against
//! moto's SQS, and the in-memory queue the in-process suite and the simulation use. What the
//! provisioner relies on when it hides its batch: a received message stays hidden from the next
//! receive, `hide` for 0 s shows it again at once and for N s hides it until then, each delivery
//! has a receipt of its own, a receipt that names no delivery is refused, and a deleted message
//! is gone.

use phantom_e2e::argv;
use phantom_e2e::moto::{sdk_for, Moto};
use phantom_model::time::ManualClock;
use phantom_seams::fault::Tripwire;
use phantom_seams::queue::{MemoryQueue, Received, Reconcile, SqsQueue, Work, WorkQueue};
use std::sync::Arc;

/// The receiving side, which Lambda's event source (or the local runner) plays.
trait Receiver {
    /// The messages visible within `wait_secs` (at most 10).
    async fn receive(&self, wait_secs: u64) -> Vec<Received>;
    fn delete(&self, receipt: &str);
}

async fn contract(q: &dyn WorkQueue, rx: &impl Receiver) {
    let work: Work = Reconcile::new("contract", "web", "contract").into();
    q.send(&work, 0).await.expect("the queue takes a message");
    let first = rx.receive(5).await;
    assert_eq!(first.len(), 1, "{first:?}");
    let id = first[0].id.clone();
    assert_eq!(Work::parse(&first[0].body), Ok(work));
    assert!(
        rx.receive(0).await.is_empty(),
        "a received message is hidden"
    );

    q.hide(std::slice::from_ref(&first[0].receipt), 0)
        .await
        .expect("shown again at once");
    let second = rx.receive(5).await;
    assert_eq!(second.len(), 1, "{second:?}");
    assert_eq!(second[0].id, id, "the same message");
    assert_ne!(
        second[0].receipt, first[0].receipt,
        "each delivery has its own receipt"
    );

    q.hide(std::slice::from_ref(&second[0].receipt), 2)
        .await
        .expect("hidden for 2 s");
    assert!(rx.receive(0).await.is_empty(), "hidden until then");
    let third = rx.receive(10).await;
    assert_eq!(third.len(), 1, "{third:?}");
    assert_eq!(third[0].id, id, "back once the 2 s ran out");

    let refused = q.hide(&["no-such-receipt".to_string()], 5).await;
    assert!(refused.is_err(), "a receipt of no delivery: {refused:?}");

    rx.delete(&third[0].receipt);
    assert!(rx.receive(1).await.is_empty(), "a deleted message is gone");
}

/// The memory queue, its clock moved by the waits.
struct MemoryReceiver<'a>(&'a MemoryQueue, &'a ManualClock);

impl Receiver for MemoryReceiver<'_> {
    async fn receive(&self, wait_secs: u64) -> Vec<Received> {
        let got = self.0.receive(10);
        if !got.is_empty() || wait_secs == 0 {
            return got;
        }
        self.1.advance_ms(wait_secs as i64 * 1000);
        self.0.receive(10)
    }

    fn delete(&self, receipt: &str) {
        assert!(self.0.delete(receipt), "deleted");
    }
}

/// moto's SQS, read with the AWS CLI as a consumer would (long polling: a wait ends as soon as a
/// message is visible).
struct MotoReceiver<'a> {
    moto: &'a Moto,
    url: String,
}

impl Receiver for MotoReceiver<'_> {
    async fn receive(&self, wait_secs: u64) -> Vec<Received> {
        self.moto
            .receive(&self.url, wait_secs)
            .iter()
            .map(|m| {
                let text = |k: &str| m[k].as_str().expect(k).to_string();
                Received::from_sqs(
                    text("MessageId"),
                    text("ReceiptHandle"),
                    text("Body"),
                    None,
                    m["Attributes"]["SentTimestamp"].as_str(),
                )
                .expect("SQS's message")
            })
            .collect()
    }

    fn delete(&self, receipt: &str) {
        self.moto.aws(&argv!(
            "sqs delete-message --queue-url",
            &self.url,
            "--receipt-handle",
            receipt
        ));
    }
}

#[tokio::test]
async fn the_memory_queue_keeps_the_contract() {
    let clock = Arc::new(ManualClock::starting_at(1_000_000));
    let q = MemoryQueue::new(clock.clone(), Arc::new(Tripwire::default()));
    contract(&q, &MemoryReceiver(&q, &clock)).await;
}

#[tokio::test]
async fn the_sqs_queue_keeps_the_contract_on_moto() {
    let moto = Moto::start();
    let url = moto.aws(&argv!("sqs create-queue --queue-name work"))["QueueUrl"]
        .as_str()
        .expect("a queue URL")
        .to_string();
    let q = SqsQueue::new(&sdk_for(&moto.url).await, url.clone());
    contract(&q, &MotoReceiver { moto: &moto, url }).await;
}
