//! Call counters for the benchmarks: how many DynamoDB, SQS, EC2 and KMS requests a piece of work
//! made.
//! Counted by an SDK interceptor, so no call site can forget.

use aws_smithy_runtime_api::box_error::BoxError;
use aws_smithy_runtime_api::client::interceptors::context::BeforeSerializationInterceptorContextRef;
use aws_smithy_runtime_api::client::interceptors::Intercept;
use aws_smithy_types::config_bag::ConfigBag;
use std::sync::atomic::{AtomicU64, Ordering};

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
    match c {
        Counter::DynamoDb => DYNAMODB.fetch_add(1, Ordering::Relaxed),
        Counter::Ec2 => EC2.fetch_add(1, Ordering::Relaxed),
        Counter::Sqs => SQS.fetch_add(1, Ordering::Relaxed),
        Counter::Kms => KMS.fetch_add(1, Ordering::Relaxed),
    };
}

impl Intercept for Counter {
    fn name(&self) -> &'static str {
        "phantom-call-counter"
    }

    fn read_before_execution(
        &self,
        _context: &BeforeSerializationInterceptorContextRef<'_>,
        _cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        count(*self);
        Ok(())
    }
}
