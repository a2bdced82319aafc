//! A probe of CloudWatch at Phantom's endpoint: every operation Phantom answers, sent random
//! inputs that botocore's `cloudwatch` model allows (drawn from the model itself: required
//! members, lengths, ranges, enums), is answered in JSON, a documented error or an answer, and
//! never a 5xx.

use phantom_e2e::chaos::rng::Rng;
use phantom_e2e::world::World;
use phantom_wire::shapes::{Service, Shape};
use serde_json::{json, Map, Value};

/// The operations Phantom's CloudWatch answers.
const OPERATIONS: [&str; 15] = [
    "PutMetricData",
    "ListMetrics",
    "GetMetricStatistics",
    "GetMetricData",
    "PutMetricAlarm",
    "DescribeAlarms",
    "DescribeAlarmsForMetric",
    "DeleteAlarms",
    "SetAlarmState",
    "DescribeAlarmHistory",
    "EnableAlarmActions",
    "DisableAlarmActions",
    "TagResource",
    "UntagResource",
    "ListTagsForResource",
];

/// The errors an answer may be (the model's, and the Query protocol's ValidationError).
const DOCUMENTED: [&str; 10] = [
    "ValidationError",
    "InvalidParameterValueException",
    "InvalidParameterCombinationException",
    "MissingRequiredParameterException",
    "ResourceNotFound",
    "ResourceNotFoundException",
    "InvalidNextToken",
    "InvalidFormatFault",
    "LimitExceededFault",
    "Throttling",
];

/// A value of `shape` that the model allows, drawn from `rng`; `now_s` for timestamps.
fn value(rng: &mut Rng, shape: &str, now_s: i64, depth: usize) -> Value {
    value_of(Service::CloudWatch, rng, shape, now_s, depth)
}

/// A value of `shape` in `cw`'s model that the model allows (members, lengths, ranges, enums).
pub fn value_of(cw: Service, rng: &mut Rng, shape: &str, now_s: i64, depth: usize) -> Value {
    let value = |rng: &mut Rng, shape: &str, now_s: i64, depth: usize| {
        value_of(cw, rng, shape, now_s, depth)
    };
    match cw.shape(shape) {
        Shape::Structure { required, .. } => {
            let mut out = Map::new();
            for (name, target) in cw.members(shape) {
                let needed = required.iter().any(|r| r == name);
                if needed || (depth < 4 && rng.chance(0.5)) {
                    out.insert(name.to_string(), value(rng, target, now_s, depth + 1));
                }
            }
            Value::Object(out)
        }
        Shape::List { member, min, max } => {
            let lo = min.unwrap_or(0).max(0);
            let hi = max.unwrap_or(3).min(lo + 3);
            let n = rng.between(lo, hi);
            Value::Array(
                (0..n)
                    .map(|_| value(rng, &member.shape, now_s, depth + 1))
                    .collect(),
            )
        }
        Shape::Map {
            key, value: v, min, ..
        } => {
            let n = min.unwrap_or(0).max(1);
            (0..n)
                .map(|i| {
                    let k = match value(rng, &key.shape, now_s, depth + 1) {
                        Value::String(s) => format!("{s}{i}"),
                        other => other.to_string(),
                    };
                    (k, value(rng, &v.shape, now_s, depth + 1))
                })
                .collect::<Map<String, Value>>()
                .into()
        }
        Shape::String {
            min, max, allowed, ..
        } => {
            if let Some(allowed) = allowed {
                return json!(rng.pick(allowed).expect("an enum has values"));
            }
            let lo = min.unwrap_or(1).max(1);
            let hi = max.unwrap_or(12).min(12).max(lo);
            let n = rng.between(lo, hi);
            let s: String = (0..n)
                .map(|_| {
                    let c = rng.below(36) as u8;
                    (if c < 26 { b'a' + c } else { b'0' + c - 26 }) as char
                })
                .collect();
            json!(s)
        }
        Shape::Integer { min, max } | Shape::Long { min, max } => {
            let lo = min.unwrap_or(0);
            let hi = max.unwrap_or(lo + 1000).min(lo + 100_000);
            json!(rng.between(lo, hi))
        }
        Shape::Double { .. } => json!(rng.between(-1000, 1000) as f64 / 8.0),
        Shape::Boolean {} => json!(rng.chance(0.5)),
        Shape::Timestamp {} => json!(now_s - rng.between(0, 7200)),
        Shape::Blob {} => json!(""),
    }
}

#[tokio::test]
async fn every_operation_answers_random_valid_inputs_without_a_5xx() {
    let w = World::new().await;
    let u = w.user("cw-probe").await;
    let mut rng = Rng::new(62);
    let model = Service::CloudWatch.model();
    let mut codes = std::collections::BTreeMap::<String, usize>::new();
    for op in OPERATIONS {
        let input = &model.operations[op]
            .input
            .as_ref()
            .expect("every one has an input")
            .shape;
        for _ in 0..40 {
            // Within the user's request rates.
            w.clock.advance_ms(500);
            let now_s = phantom_model::time::Clock::now_ms(w.clock.as_ref()) / 1000;
            let body = value(&mut rng, input, now_s, 0);
            let (status, answer) = w.cloudwatch(&u, op, body.clone()).await;
            assert!(status < 500, "{op} {body}: HTTP {status} {answer}");
            assert!(answer.get("__unparsed").is_none(), "{op}: {answer}");
            let code = match status {
                200 => "OK".to_string(),
                _ => {
                    let code = answer["__type"].as_str().unwrap_or_default().to_string();
                    assert!(
                        DOCUMENTED.contains(&code.as_str()),
                        "{op} {body}: HTTP {status} {answer}"
                    );
                    assert!(answer["message"].is_string(), "{op}: {answer}");
                    code
                }
            };
            *codes.entry(format!("{op} {code}")).or_default() += 1;
        }
    }
    // The probe reaches past the decoder: some inputs are taken.
    for op in [
        "ListMetrics",
        "DescribeAlarms",
        "DescribeAlarmHistory",
        "GetMetricData",
    ] {
        assert!(codes.contains_key(&format!("{op} OK")), "{codes:?}");
    }
}
