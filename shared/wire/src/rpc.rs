//! The JSON 1.0 and Smithy RPC v2 CBOR protocols, as CloudWatch's clients send them: the AWS CLI
//! and boto3 (JSON, `X-Amz-Target: GraniteServiceVersion20100801.<Operation>`), the Go SDK and so
//! Terraform (CBOR, `POST /service/GraniteServiceVersion20100801/operation/<Operation>`).
//!
//! A request's body is turned into the Query protocol's parameters and decoded by `query`, so
//! the three protocols are checked by one decoder, with one set of messages. An answer is the
//! same document `xml` renders, written as JSON or CBOR by walking the output shape (timestamps as
//! epoch seconds, CBOR's tag 1).

use crate::error::{ApiError, ApiResult};
use crate::query::{camel, join, Document, Params};
use crate::shapes::{Service, Shape};
use ciborium::value::Value as Cbor;
use serde_json::{Map, Value};

/// How a request reached the service, and so how its answer is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    Query,
    Json,
    Cbor,
}

impl Protocol {
    pub fn content_type(self) -> &'static str {
        match self {
            Self::Query => "text/xml",
            Self::Json => "application/x-amz-json-1.0",
            Self::Cbor => "application/cbor",
        }
    }
}

/// The header by which a query-compatible service tells JSON and CBOR clients its Query error
/// code (`Code;Sender`): botocore and the Go SDK take the code from it.
pub const QUERY_ERROR_HEADER: &str = "x-amzn-query-error";
/// Every RPC v2 CBOR answer carries it; the Go SDK refuses one without.
pub const SMITHY_PROTOCOL_HEADER: &str = "smithy-protocol";
pub const SMITHY_PROTOCOL: &str = "rpc-v2-cbor";

/// The operation named by a JSON request's `X-Amz-Target` (`<targetPrefix>.<Operation>`).
pub fn json_operation(service: Service, target: &str) -> Option<&str> {
    let prefix = service.model().metadata.target_prefix.as_deref()?;
    target
        .strip_prefix(prefix)
        .and_then(|rest| rest.strip_prefix('.'))
        .filter(|op| !op.is_empty())
}

/// The operation named by a CBOR request's path (`.../service/<targetPrefix>/operation/<Operation>`,
/// under an API stage or not).
pub fn cbor_operation(service: Service, path: &str) -> Option<&str> {
    let prefix = service.model().metadata.target_prefix.as_deref()?;
    let marker = format!("/service/{prefix}/operation/");
    let at = path.find(&marker)?;
    Some(&path[at + marker.len()..]).filter(|op| !op.is_empty() && !op.contains('/'))
}

/// A JSON request body as the Query protocol's parameters of `operation`.
pub fn params_of_json(service: Service, operation: &str, body: &[u8]) -> ApiResult<Params> {
    let value: Value = if body.iter().all(u8::is_ascii_whitespace) {
        Value::Object(Map::new())
    } else {
        serde_json::from_slice(body)
            .map_err(|e| ApiError::serialization(format!("the request body is not JSON: {e}")))?
    };
    params_of(service, operation, &value)
}

/// A CBOR request body as the Query protocol's parameters of `operation`.
pub fn params_of_cbor(service: Service, operation: &str, body: &[u8]) -> ApiResult<Params> {
    let value = if body.is_empty() {
        Value::Object(Map::new())
    } else {
        let cbor: Cbor = ciborium::de::from_reader(body)
            .map_err(|e| ApiError::serialization(format!("the request body is not CBOR: {e}")))?;
        json_of_cbor(cbor)?
    };
    params_of(service, operation, &value)
}

fn params_of(service: Service, operation: &str, value: &Value) -> ApiResult<Params> {
    let op = service
        .model()
        .operations
        .get(operation)
        .ok_or_else(|| ApiError::unknown_operation(operation))?;
    if !value.is_object() {
        return Err(ApiError::serialization("the request body is not an object"));
    }
    let mut flat = Flat {
        service,
        pairs: Vec::new(),
        errors: Vec::new(),
    };
    if let Some(input) = &op.input {
        flat.value(&input.shape, value, "", "");
    }
    if !flat.errors.is_empty() {
        return Err(crate::query::validation_errors(&flat.errors));
    }
    Ok(Params::from_pairs(
        flat.pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())),
    ))
}

/// A CBOR value as JSON: timestamps (tag 1) become epoch seconds, byte strings base64.
fn json_of_cbor(v: Cbor) -> ApiResult<Value> {
    Ok(match v {
        Cbor::Null => Value::Null,
        Cbor::Bool(b) => Value::Bool(b),
        Cbor::Integer(i) => {
            let i = i128::from(i);
            match i64::try_from(i) {
                Ok(n) => Value::from(n),
                Err(_) => Value::from(i as f64),
            }
        }
        Cbor::Float(f) => serde_json::Number::from_f64(f)
            .map(Value::Number)
            .ok_or_else(|| ApiError::validation(format!("{f} is not a number CloudWatch takes")))?,
        Cbor::Text(s) => Value::String(s),
        Cbor::Bytes(b) => {
            use base64::Engine;
            Value::String(base64::engine::general_purpose::STANDARD.encode(b))
        }
        Cbor::Tag(_, inner) => json_of_cbor(*inner)?,
        Cbor::Array(items) => Value::Array(
            items
                .into_iter()
                .map(json_of_cbor)
                .collect::<ApiResult<_>>()?,
        ),
        Cbor::Map(entries) => {
            let mut out = Map::new();
            for (k, v) in entries {
                let Cbor::Text(k) = k else {
                    return Err(ApiError::serialization("a map key is not text"));
                };
                out.insert(k, json_of_cbor(v)?);
            }
            Value::Object(out)
        }
        _ => return Err(ApiError::serialization("a CBOR value of an unknown kind")),
    })
}

/// A JSON document flattened into Query parameters, following the input shape.
struct Flat {
    service: Service,
    pairs: Vec<(String, String)>,
    errors: Vec<String>,
}

impl Flat {
    fn fail(&mut self, path: &str, want: &str) {
        self.errors.push(format!(
            "Value at '{path}' failed to satisfy constraint: Member must be {want}"
        ));
    }

    fn value(&mut self, shape_name: &str, v: &Value, key: &str, path: &str) {
        if v.is_null() {
            return;
        }
        match self.service.shape(shape_name) {
            Shape::Structure { .. } => {
                let Some(obj) = v.as_object() else {
                    return self.fail(path, "a structure");
                };
                for (name, target) in self.service.members(shape_name) {
                    if let Some(m) = obj.get(name) {
                        self.value(target, m, &join(key, name), &join(path, &camel(name)));
                    }
                }
                // An empty structure that was sent still counts as sent.
                if obj.is_empty() && !key.is_empty() {
                    self.pairs.push((format!("{key}.__present"), String::new()));
                }
            }
            Shape::List { member, .. } => {
                let Some(items) = v.as_array() else {
                    return self.fail(path, "a list");
                };
                if items.is_empty() {
                    self.pairs.push((key.to_string(), String::new()));
                }
                let name = crate::shapes::list_member_name(member);
                for (i, item) in items.iter().enumerate() {
                    let n = i + 1;
                    self.value(
                        &member.shape,
                        item,
                        &format!("{key}.{name}.{n}"),
                        &format!("{path}.{n}.member"),
                    );
                }
            }
            Shape::Map { value, .. } => {
                let Some(obj) = v.as_object() else {
                    return self.fail(path, "a map");
                };
                for (i, (k, item)) in obj.iter().enumerate() {
                    let entry = format!("{key}.entry.{}", i + 1);
                    self.pairs.push((format!("{entry}.key"), k.clone()));
                    self.value(&value.shape, item, &format!("{entry}.value"), path);
                }
            }
            Shape::Timestamp {} => match v {
                Value::Number(n) => match n.as_f64().and_then(timestamp_of_epoch) {
                    Some(t) => self.pairs.push((key.to_string(), t)),
                    None => self.fail(path, "a timestamp"),
                },
                Value::String(s) => self.pairs.push((key.to_string(), s.clone())),
                _ => self.fail(path, "a timestamp"),
            },
            Shape::Boolean {} => match v {
                Value::Bool(b) => self.pairs.push((key.to_string(), b.to_string())),
                _ => self.fail(path, "a boolean"),
            },
            Shape::Integer { .. } | Shape::Long { .. } | Shape::Double { .. } => match v {
                Value::Number(n) => self.pairs.push((key.to_string(), n.to_string())),
                _ => self.fail(path, "a number"),
            },
            Shape::String { .. } | Shape::Blob {} => match v {
                Value::String(s) => self.pairs.push((key.to_string(), s.clone())),
                _ => self.fail(path, "a string"),
            },
        }
    }
}

/// Epoch seconds (with a fraction) as the ISO 8601 the decoder reads.
fn timestamp_of_epoch(secs: f64) -> Option<String> {
    if !secs.is_finite() {
        return None;
    }
    let ms = (secs * 1000.0).round();
    // Years 1 to 9999, as ISO 8601 writes them.
    if !(-62_135_596_800_000.0..=253_402_300_799_000.0).contains(&ms) {
        return None;
    }
    let t = phantom_model::time::from_ms(ms as i64);
    Some(phantom_model::time::format_timestamp(t))
}

/// An answer's document as JSON (`None`: an operation without output, `{}`).
pub fn json_response(service: Service, operation: &str, result: Option<&Document>) -> Vec<u8> {
    let value = match (output_shape(service, operation), result) {
        (Some(shape), Some(doc)) => to_json(service, shape, &doc.0),
        _ => Value::Object(Map::new()),
    };
    serde_json::to_vec(&value).expect("a JSON value writes")
}

/// An answer's document as CBOR (an operation without output: an empty map).
pub fn cbor_response(service: Service, operation: &str, result: Option<&Document>) -> Vec<u8> {
    let value = match (output_shape(service, operation), result) {
        (Some(shape), Some(doc)) => to_cbor(service, shape, &doc.0),
        _ => Cbor::Map(Vec::new()),
    };
    let mut out = Vec::new();
    ciborium::ser::into_writer(&value, &mut out).expect("writing CBOR to memory");
    out
}

/// An error in the JSON or CBOR protocol: `__type` (the model's error shape for the code, else
/// the code) and `message`; the Query code goes in `QUERY_ERROR_HEADER` (`query_error_header`).
pub fn error_body(service: Service, protocol: Protocol, err: &ApiError) -> Vec<u8> {
    let kind = error_type(service, err.code);
    match protocol {
        Protocol::Cbor => {
            let value = Cbor::Map(vec![
                (Cbor::Text("__type".into()), Cbor::Text(kind)),
                (
                    Cbor::Text("message".into()),
                    Cbor::Text(err.message.clone()),
                ),
            ]);
            let mut out = Vec::new();
            ciborium::ser::into_writer(&value, &mut out).expect("writing CBOR to memory");
            out
        }
        _ => serde_json::to_vec(&serde_json::json!({"__type": kind, "message": err.message}))
            .expect("a JSON value writes"),
    }
}

/// `Code;Sender` or `Code;Receiver`.
pub fn query_error_header(err: &ApiError) -> String {
    format!("{};{}", err.code, err.fault_type())
}

/// The model's error shape whose Query code is `code` (CloudWatch's `ResourceNotFound` is the
/// shape `ResourceNotFound`, `InvalidParameterValue` the shape `InvalidParameterValueException`).
fn error_type(service: Service, code: &str) -> String {
    let shapes: Vec<&String> = service
        .model()
        .shapes
        .iter()
        .filter(|(_, s)| matches!(s, Shape::Structure { error: Some(e), .. } if e.code.as_deref() == Some(code)))
        .map(|(name, _)| name)
        .collect();
    // Several shapes share a code (`ResourceNotFound`: also `DashboardNotFoundError`): the one
    // named for it first.
    let named = |s: &str| s == code || s.strip_suffix("Exception") == Some(code);
    shapes
        .iter()
        .find(|s| named(s))
        .or(shapes.first())
        .map_or_else(|| code.to_string(), |s| (*s).clone())
}

fn output_shape(service: Service, operation: &str) -> Option<&'static str> {
    let op = service.model().operations.get(operation)?;
    op.output.as_ref().map(|o| o.shape.as_str())
}

fn to_json(service: Service, shape_name: &str, v: &Value) -> Value {
    match service.shape(shape_name) {
        Shape::Structure { .. } => {
            let mut out = Map::new();
            if let Some(obj) = v.as_object() {
                for (name, target) in service.members(shape_name) {
                    if let Some(m) = obj.get(name).filter(|m| !m.is_null()) {
                        out.insert(name.to_string(), to_json(service, target, m));
                    }
                }
            }
            Value::Object(out)
        }
        Shape::List { member, .. } => Value::Array(
            v.as_array()
                .into_iter()
                .flatten()
                .map(|i| to_json(service, &member.shape, i))
                .collect(),
        ),
        Shape::Map { value, .. } => Value::Object(
            v.as_object()
                .into_iter()
                .flatten()
                .map(|(k, i)| (k.clone(), to_json(service, &value.shape, i)))
                .collect(),
        ),
        Shape::Timestamp {} => epoch_of(v)
            .and_then(serde_json::Number::from_f64)
            .map_or(Value::Null, Value::Number),
        _ => v.clone(),
    }
}

fn to_cbor(service: Service, shape_name: &str, v: &Value) -> Cbor {
    match service.shape(shape_name) {
        Shape::Structure { .. } => {
            let mut out = Vec::new();
            if let Some(obj) = v.as_object() {
                for (name, target) in service.members(shape_name) {
                    if let Some(m) = obj.get(name).filter(|m| !m.is_null()) {
                        out.push((Cbor::Text(name.to_string()), to_cbor(service, target, m)));
                    }
                }
            }
            Cbor::Map(out)
        }
        Shape::List { member, .. } => Cbor::Array(
            v.as_array()
                .into_iter()
                .flatten()
                .map(|i| to_cbor(service, &member.shape, i))
                .collect(),
        ),
        Shape::Map { value, .. } => Cbor::Map(
            v.as_object()
                .into_iter()
                .flatten()
                .map(|(k, i)| (Cbor::Text(k.clone()), to_cbor(service, &value.shape, i)))
                .collect(),
        ),
        Shape::Timestamp {} => match epoch_of(v) {
            Some(secs) => Cbor::Tag(1, Box::new(Cbor::Float(secs))),
            None => Cbor::Null,
        },
        Shape::Double { .. } => v.as_f64().map_or(Cbor::Null, Cbor::Float),
        Shape::Integer { .. } | Shape::Long { .. } => {
            v.as_i64().map_or(Cbor::Null, |n| Cbor::Integer(n.into()))
        }
        Shape::Boolean {} => v.as_bool().map_or(Cbor::Null, Cbor::Bool),
        Shape::String { .. } | Shape::Blob {} => match v {
            Value::String(s) => Cbor::Text(s.clone()),
            other => Cbor::Text(other.to_string()),
        },
    }
}

/// A document's timestamp (ISO 8601, as the actions write them) in epoch seconds.
fn epoch_of(v: &Value) -> Option<f64> {
    match v {
        Value::String(s) => phantom_model::time::parse_timestamp(s)
            .map(|t| (t.unix_timestamp_nanos() / 1_000_000) as f64 / 1000.0),
        Value::Number(n) => n.as_f64(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_json_body_reads_as_the_query_parameters_of_its_operation() {
        let body = br#"{"Namespace":"App","MetricData":[{"MetricName":"Load","Value":2.5,
            "Timestamp":1764331200,"Dimensions":[{"Name":"Group","Value":"web"}]}]}"#;
        let params = params_of_json(Service::CloudWatch, "PutMetricData", body).unwrap();
        assert_eq!(params.get("Namespace"), Some("App"));
        assert_eq!(params.get("MetricData.member.1.Value"), Some("2.5"));
        assert_eq!(
            params.get("MetricData.member.1.Timestamp"),
            Some("2025-11-28T12:00:00.000Z")
        );
        assert_eq!(
            params.get("MetricData.member.1.Dimensions.member.1.Name"),
            Some("Group")
        );
    }

    #[test]
    fn a_cbor_body_with_a_tagged_timestamp_reads_the_same() {
        let value = Cbor::Map(vec![
            (Cbor::Text("Namespace".into()), Cbor::Text("App".into())),
            (Cbor::Text("MetricName".into()), Cbor::Text("Load".into())),
            (
                Cbor::Text("StartTime".into()),
                Cbor::Tag(1, Box::new(Cbor::Integer(1_764_331_200.into()))),
            ),
            (Cbor::Text("Period".into()), Cbor::Integer(60.into())),
        ]);
        let mut body = Vec::new();
        ciborium::ser::into_writer(&value, &mut body).unwrap();
        let params = params_of_cbor(Service::CloudWatch, "GetMetricStatistics", &body).unwrap();
        assert_eq!(params.get("StartTime"), Some("2025-11-28T12:00:00.000Z"));
        assert_eq!(params.get("Period"), Some("60"));
    }

    #[test]
    fn a_wrong_kind_of_value_is_a_validation_error() {
        let e = params_of_json(Service::CloudWatch, "PutMetricData", br#"{"Namespace":3}"#)
            .unwrap_err();
        assert_eq!(e.code, "ValidationError");
        assert!(e.message.contains("'namespace'"), "{}", e.message);
    }

    #[test]
    fn operations_are_named_by_target_or_path() {
        let cw = Service::CloudWatch;
        assert_eq!(
            json_operation(cw, "GraniteServiceVersion20100801.ListMetrics"),
            Some("ListMetrics")
        );
        assert_eq!(json_operation(cw, "Other.ListMetrics"), None);
        assert_eq!(
            cbor_operation(
                cw,
                "/Prod/service/GraniteServiceVersion20100801/operation/PutMetricAlarm"
            ),
            Some("PutMetricAlarm")
        );
    }

    #[test]
    fn answers_write_timestamps_as_epoch_seconds() {
        let doc = Document(serde_json::json!({"Datapoints": [
            {"Timestamp": "2025-11-28T12:00:00.000Z", "Average": 2.5, "Unit": "Count"}
        ], "Label": "Load"}));
        let json: Value = serde_json::from_slice(&json_response(
            Service::CloudWatch,
            "GetMetricStatistics",
            Some(&doc),
        ))
        .unwrap();
        assert_eq!(json["Datapoints"][0]["Timestamp"], 1_764_331_200.0);
        let cbor: Cbor = ciborium::de::from_reader(
            &cbor_response(Service::CloudWatch, "GetMetricStatistics", Some(&doc))[..],
        )
        .unwrap();
        let text = format!("{cbor:?}");
        assert!(text.contains("Tag(1, Float(1764331200.0))"), "{text}");
    }

    #[test]
    fn an_error_names_the_models_shape_and_the_query_code() {
        let e = ApiError::invalid_parameter_value("bad");
        assert_eq!(
            error_type(Service::CloudWatch, e.code),
            "InvalidParameterValueException"
        );
        assert_eq!(query_error_header(&e), "InvalidParameterValue;Sender");
        assert_eq!(
            error_type(Service::CloudWatch, "ResourceNotFound"),
            "ResourceNotFound"
        );
        let body: Value =
            serde_json::from_slice(&error_body(Service::CloudWatch, Protocol::Json, &e)).unwrap();
        assert_eq!(body["message"], "bad");
    }
}
