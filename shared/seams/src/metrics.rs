//! Call counters for the benchmarks: how many DynamoDB, SQS, EC2 and KMS requests a piece of work
//! made, and (`measured`) how long one request spent in them.
//! Counted by an SDK interceptor, so no call site can forget.

use aws_smithy_runtime_api::box_error::BoxError;
use aws_smithy_runtime_api::client::interceptors::context::{
    BeforeSerializationInterceptorContextRef, FinalizerInterceptorContextRef,
};
use aws_smithy_runtime_api::client::interceptors::Intercept;
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use aws_smithy_types::config_bag::{ConfigBag, Storable, StoreReplace};
use std::cell::Cell;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

static DYNAMODB: AtomicU64 = AtomicU64::new(0);
static EC2: AtomicU64 = AtomicU64::new(0);
static SQS: AtomicU64 = AtomicU64::new(0);
static KMS: AtomicU64 = AtomicU64::new(0);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Calls {
    pub dynamodb: u64,
    pub ec2: u64,
    pub sqs: u64,
    pub kms: u64,
}

/// The calls made so far by this process.
pub fn calls() -> Calls {
    Calls {
        dynamodb: DYNAMODB.load(Ordering::Relaxed),
        ec2: EC2.load(Ordering::Relaxed),
        sqs: SQS.load(Ordering::Relaxed),
        kms: KMS.load(Ordering::Relaxed),
    }
}

impl std::ops::Sub for Calls {
    type Output = Calls;
    fn sub(self, rhs: Calls) -> Calls {
        Calls {
            dynamodb: self.dynamodb - rhs.dynamodb,
            ec2: self.ec2 - rhs.ec2,
            sqs: self.sqs - rhs.sqs,
            kms: self.kms - rhs.kms,
        }
    }
}

/// Counts every operation of the client it is installed on (each attempt's retries aside).
#[derive(Debug, Clone, Copy)]
pub enum Counter {
    DynamoDb,
    Ec2,
    Sqs,
    Kms,
}

/// Counts one call made without an SDK client (the in-memory adapters count as the real ones would).
pub fn count(c: Counter) {
    tally(c);
    spend(c, 0);
}

/// Counts one call made by a client of our own (SQS's, KMS's JSON), timing it.
pub async fn timed<T>(c: Counter, call: impl Future<Output = T>) -> T {
    tally(c);
    let at = Instant::now();
    let out = call.await;
    spend(c, at.elapsed().as_micros() as u64);
    out
}

fn tally(c: Counter) {
    match c {
        Counter::DynamoDb => DYNAMODB.fetch_add(1, Ordering::Relaxed),
        Counter::Ec2 => EC2.fetch_add(1, Ordering::Relaxed),
        Counter::Sqs => SQS.fetch_add(1, Ordering::Relaxed),
        Counter::Kms => KMS.fetch_add(1, Ordering::Relaxed),
    };
}

/// One service's share of a request: its calls and their summed time (calls made side by side
/// both count in full).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Share {
    pub calls: u32,
    pub us: u64,
}

impl Share {
    pub fn ms(&self) -> f64 {
        self.us as f64 / 1e3
    }
}

/// What one request spent in each service's calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Spent {
    pub dynamodb: Share,
    pub ec2: Share,
    pub sqs: Share,
    pub kms: Share,
}

tokio::task_local! {
    static SPENT: Cell<Spent>;
}

/// Runs `work`, answering what its calls spent (those of tasks it spawns aside). A call is
/// added when it ends (an SDK's) or is made (an in-memory adapter's, no time).
pub async fn measured<T>(work: impl Future<Output = T>) -> (T, Spent) {
    SPENT
        .scope(Cell::new(Spent::default()), async {
            let out = work.await;
            (out, SPENT.with(Cell::get))
        })
        .await
}

fn spend(c: Counter, us: u64) {
    let _outside_a_measure = SPENT.try_with(|spent| {
        let mut all = spent.get();
        let share = match c {
            Counter::DynamoDb => &mut all.dynamodb,
            Counter::Ec2 => &mut all.ec2,
            Counter::Sqs => &mut all.sqs,
            Counter::Kms => &mut all.kms,
        };
        share.calls += 1;
        share.us += us;
        spent.set(all);
    });
}

/// When an SDK call began, kept in its config bag until it ends.
#[derive(Debug, Clone, Copy)]
struct Began(Instant);

impl Storable for Began {
    type Storer = StoreReplace<Self>;
}

impl Intercept for Counter {
    fn name(&self) -> &'static str {
        "phantom-call-counter"
    }

    fn read_before_execution(
        &self,
        _context: &BeforeSerializationInterceptorContextRef<'_>,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        tally(*self);
        cfg.interceptor_state().store_put(Began(Instant::now()));
        Ok(())
    }

    fn read_after_execution(
        &self,
        _context: &FinalizerInterceptorContextRef<'_>,
        _runtime_components: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        if let Some(Began(at)) = cfg.load::<Began>() {
            spend(*self, at.elapsed().as_micros() as u64);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn a_measure_counts_the_calls_made_within_it_only() {
        count(Counter::DynamoDb); // outside any measure
        let ((), spent) = measured(async {
            count(Counter::DynamoDb);
            count(Counter::DynamoDb);
            let wait = tokio::time::sleep(Duration::from_millis(2));
            timed(Counter::Sqs, wait).await;
        })
        .await;
        assert_eq!(spent.dynamodb, Share { calls: 2, us: 0 });
        assert_eq!(spent.sqs.calls, 1);
        assert!(spent.sqs.us >= 2_000, "{spent:?}");
        assert_eq!((spent.ec2, spent.kms), (Share::default(), Share::default()));
    }
}
