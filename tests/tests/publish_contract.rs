//! One contract, two publishers (`phantom_seams::publish::Publisher`): the SDKs' SNS and SQS against
//! moto, and the in-memory twin the in-process suite uses. What notifications rely on: a message
//! reaches a queue as sent, a topic passes it on with its subject, and a topic or queue that does
//! not exist is refused (the put that names it fails), not taken for a passing outage.

use phantom_e2e::argv;
use phantom_e2e::moto::{sdk_for, Moto};
use phantom_rules::notification::Notice;
use phantom_seams::publish::memory::MemoryPublisher;
use phantom_seams::publish::{PublishError, Publisher, SnsSqs};
use serde_json::Value;

/// Where the contract's messages go, and what they came to, for one publisher.
trait Targets {
    /// A topic (with a queue subscribed, where there is SNS) and a queue: their ARNs.
    fn make(&self, name: &str) -> (String, String);
    /// What reached the queue (directly or through the topic), as (subject, body).
    fn got(&self, queue: &str) -> Vec<(Option<String>, String)>;
}

fn notice(target: &str, subject: Option<&str>, body: &str) -> Notice {
    Notice {
        id: "0000000000001-0000-contract".into(),
        at_ms: 1,
        target: target.into(),
        subject: subject.map(str::to_string),
        body: body.into(),
    }
}

async fn contract(p: &dyn Publisher, t: &dyn Targets) {
    let (topic, queue) = t.make("contract");
    p.publish(&notice(&queue, None, r#"{"Event":"to-queue"}"#))
        .await
        .expect("a queue takes a message");
    p.publish(&notice(
        &topic,
        Some("Auto Scaling: launch"),
        r#"{"Event":"to-topic"}"#,
    ))
    .await
    .expect("a topic takes a message");
    let mut got = t.got(&queue);
    got.sort();
    assert_eq!(
        got,
        [
            (None, r#"{"Event":"to-queue"}"#.to_string()),
            (
                Some("Auto Scaling: launch".to_string()),
                r#"{"Event":"to-topic"}"#.to_string()
            ),
        ]
    );
    for missing in [
        topic.replace(":contract", ":no-such-topic"),
        queue.replace(":contract", ":no-such-queue"),
    ] {
        match p.publish(&notice(&missing, None, "{}")).await {
            Err(PublishError::Refused(_)) => {}
            other => panic!("{missing}: {other:?}"),
        }
    }
}

/// The memory twin: a queue gets what is sent to it; a topic's subscriber is the queue of its
/// name (the twin does not fan out: the contract reads the topic's own list for it).
struct MemoryTargets<'a>(&'a MemoryPublisher);

impl Targets for MemoryTargets<'_> {
    fn make(&self, name: &str) -> (String, String) {
        let topic = format!("arn:aws:sns:us-east-1:000000000000:{name}");
        let queue = format!("arn:aws:sqs:us-east-1:000000000000:{name}");
        self.0.create(&topic);
        self.0.create(&queue);
        (topic, queue)
    }

    fn got(&self, queue: &str) -> Vec<(Option<String>, String)> {
        let topic = queue.replace(":sqs:", ":sns:");
        [queue, topic.as_str()]
            .iter()
            .flat_map(|t| self.0.sent(t))
            .map(|n| (n.subject, n.body))
            .collect()
    }
}

/// moto's SNS and SQS, read with the AWS CLI as a consumer would.
struct MotoTargets<'a>(&'a Moto);

impl MotoTargets<'_> {
    fn aws(&self, args: &[&str]) -> Value {
        self.0.aws(args)
    }

    fn url(&self, queue_arn: &str) -> String {
        let name = queue_arn.rsplit(':').next().unwrap();
        self.aws(&["sqs", "get-queue-url", "--queue-name", name])["QueueUrl"]
            .as_str()
            .unwrap()
            .to_string()
    }
}

impl Targets for MotoTargets<'_> {
    fn make(&self, name: &str) -> (String, String) {
        let topic = self.aws(&["sns", "create-topic", "--name", name])["TopicArn"]
            .as_str()
            .unwrap()
            .to_string();
        let url = self.aws(&["sqs", "create-queue", "--queue-name", name])["QueueUrl"]
            .as_str()
            .unwrap()
            .to_string();
        let attrs = self.aws(&argv!(
            "sqs get-queue-attributes --queue-url",
            &url,
            "--attribute-names QueueArn"
        ));
        let queue = attrs["Attributes"]["QueueArn"]
            .as_str()
            .unwrap()
            .to_string();
        self.aws(&argv!(
            "sns subscribe --topic-arn",
            &topic,
            "--protocol sqs --notification-endpoint",
            &queue
        ));
        (topic, queue)
    }

    fn got(&self, queue: &str) -> Vec<(Option<String>, String)> {
        self.0
            .receive(&self.url(queue), 2)
            .iter()
            .map(|m| {
                let body = m["Body"].as_str().unwrap().to_string();
                // Through the topic: SNS's envelope around the message.
                match serde_json::from_str::<Value>(&body) {
                    Ok(env) if env["Type"] == "Notification" => (
                        env["Subject"].as_str().map(str::to_string),
                        env["Message"].as_str().unwrap().to_string(),
                    ),
                    _ => (None, body),
                }
            })
            .collect()
    }
}

#[tokio::test]
async fn the_memory_publisher_keeps_the_contract() {
    let p = MemoryPublisher::default();
    contract(&p, &MemoryTargets(&p)).await;
}

#[tokio::test]
async fn the_sns_and_sqs_publisher_keeps_the_contract_on_moto() {
    let moto = Moto::start();
    let p = SnsSqs::new(&sdk_for(&moto.url).await);
    contract(&p, &MotoTargets(&moto)).await;
}
