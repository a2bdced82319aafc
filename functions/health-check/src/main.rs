//! The `health-check` Lambda function, run two ways: by the minute schedule (the event's content
//! is not used: it fires the scheduled actions that are due, evaluates the target tracking
//! policies and keeps the pulse alive), and by the pulse queue's event source (one tick a batch:
//! a beat of looks and sweeps). A tick whose run fails is delivered again.

use lambda_runtime::{service_fn, Error, LambdaEvent};
use serde::Deserialize;

/// An SQS event (a batch of ticks) or anything else (the schedule's event).
#[derive(Deserialize)]
#[serde(untagged)]
enum Event {
    Pulse {
        #[serde(rename = "Records")]
        records: Vec<Message>,
    },
    Schedule(serde::de::IgnoredAny),
}

#[derive(Deserialize)]
struct Message {
    body: String,
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    phantom_seams::logging::init();
    let ops = phantom_metrics::ops::namespace_for_life()?;
    let h: &'static health_check::HealthCheck = Box::leak(Box::new(
        health_check::HealthCheck::new(&phantom_seams::wiring::Seams::from_env().await?)?,
    ));
    lambda_runtime::run(service_fn(move |event: LambdaEvent<Event>| async move {
        // Last invocation's operating metrics, once a minute (before this one's work, so that
        // an error below does not skip it).
        phantom_metrics::ops::flush_emf(ops, phantom_model::time::now_ms());
        match event.payload {
            Event::Schedule(_) => Ok::<_, Error>(serde_json::to_value(h.run().await?)?),
            Event::Pulse { records } => {
                let mut beats = Vec::new();
                for m in records {
                    match phantom_rules::pulse::Tick::parse(&m.body) {
                        Ok(tick) => beats.push(h.tick(tick).await?),
                        // Not a tick: dropped (the queue holds nothing else), never retried.
                        Err(e) => tracing::error!(body = m.body, error = e, "not a tick, dropped"),
                    }
                }
                Ok(serde_json::to_value(beats)?)
            }
        }
    }))
    .await
}
