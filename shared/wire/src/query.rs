//! The AWS Query protocol, inbound: a form-urlencoded body (or query string) decoded into a JSON
//! document by walking the operation's input shape, checking the model's constraints on the way.
//!
//! `Name.member.N` is a list, `Name.Field` a structure member, `Name=` an empty list (botocore sends
//! that for `[]`). Values keep the model's member names as keys, so a stored document renders back
//! through the output shape unchanged.

use crate::error::{ApiError, ApiResult};
use crate::shapes::{self, Service, Shape};
use percent_encoding::percent_decode;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};

/// The request's parameters, name -> value (a repeated name keeps its last value).
#[derive(Debug, Default, Clone)]
pub struct Params(BTreeMap<String, String>);

impl Params {
    /// Parses `application/x-www-form-urlencoded` text. Bytes that are not UTF-8 once
    /// percent-decoded are refused rather than silently replaced.
    pub fn parse(form: &[u8]) -> ApiResult<Self> {
        let mut map = BTreeMap::new();
        for pair in form.split(|b| *b == b'&').filter(|p| !p.is_empty()) {
            let (k, v) = match pair.iter().position(|b| *b == b'=') {
                Some(i) => (&pair[..i], &pair[i + 1..]),
                None => (pair, &pair[..0]),
            };
            map.insert(decode_component(k)?, decode_component(v)?);
        }
        Ok(Self(map))
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }

    /// Every parameter, by name.
    pub fn pairs(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        Self(
            pairs
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    /// Every key that starts with `prefix`.
    fn keys_under<'a>(&'a self, prefix: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.0
            .range::<str, _>((
                std::ops::Bound::Included(prefix),
                std::ops::Bound::Unbounded,
            ))
            .map(|(k, _)| k.as_str())
            .take_while(move |k| k.starts_with(prefix))
    }
}

fn decode_component(raw: &[u8]) -> ApiResult<String> {
    let plus_as_space: Vec<u8> = raw
        .iter()
        .map(|b| if *b == b'+' { b' ' } else { *b })
        .collect();
    percent_decode(&plus_as_space)
        .decode_utf8()
        .map(|s| s.into_owned())
        .map_err(|_| ApiError::malformed_query("The request contains bytes that are not UTF-8"))
}

/// A decoded request, or an answer to render: the JSON document botocore's shapes describe, which
/// only this layer (this file and `xml.rs`) reads and writes; actions see their typed request.
#[derive(Debug, Clone, PartialEq)]
pub struct Document(pub(crate) Value);

impl Document {
    /// The document as read: for the authorization, which reads the names and tags any
    /// request carries (`phantom_rules::iam::autoscaling`) before the action reads it typed.
    pub fn as_value(&self) -> &Value {
        &self.0
    }
}

impl From<Value> for Document {
    fn from(v: Value) -> Self {
        Self(v)
    }
}

/// Decodes the input of `operation` from `params`. All constraint violations are reported at once,
/// in AWS's wording ("1 validation error detected: Value ... at 'path' failed to satisfy ...").
pub fn decode_input(operation: &str, params: &Params) -> ApiResult<Document> {
    decode_input_of(Service::AutoScaling, operation, params)
}

/// `decode_input` for an operation of `service`.
pub fn decode_input_of(service: Service, operation: &str, params: &Params) -> ApiResult<Document> {
    let op = service
        .model()
        .operations
        .get(operation)
        .ok_or_else(|| ApiError::invalid_action(operation, service.version()))?;
    let Some(input) = &op.input else {
        return Ok(Document(Value::Object(Map::new())));
    };
    let mut d = Decoder {
        service,
        params,
        errors: Vec::new(),
    };
    let value = d
        .structure(&input.shape, "", "")
        .unwrap_or_else(|| Value::Object(Map::new()));
    if d.errors.is_empty() {
        if service == Service::AutoScaling {
            crate::limits::check(operation, &value)?;
        }
        Ok(Document(value))
    } else {
        Err(validation_errors(&d.errors))
    }
}

/// A decoded input as the action's request type (`model::request`). The decoder has checked the
/// wire shape, so a failure here is a request type out of step with the model: a ValidationError
/// naming the member, never a default.
pub fn input<T: serde::de::DeserializeOwned>(input: impl Into<Document>) -> ApiResult<T> {
    serde_path_to_error::deserialize(input.into().0)
        .map_err(|e| ApiError::validation(format!("{} cannot be read: {}", e.path(), e.inner())))
}

/// An action's answer (a `model::response` type, or `()` for an action with no output) as the
/// document `xml.rs` renders.
pub fn output<T: serde::Serialize>(answer: T) -> ApiResult<Option<Document>> {
    match serde_json::to_value(answer) {
        Ok(Value::Null) => Ok(None),
        Ok(doc) => Ok(Some(Document(doc))),
        Err(e) => Err(ApiError::internal(format!(
            "an answer cannot be written: {e}"
        ))),
    }
}

/// AWS's summary of one or more constraint violations.
pub fn validation_errors(errors: &[String]) -> ApiError {
    let n = errors.len();
    let noun = if n == 1 { "error" } else { "errors" };
    ApiError::validation(format!(
        "{n} validation {noun} detected: {}",
        errors.join("; ")
    ))
}

struct Decoder<'a> {
    service: Service,
    params: &'a Params,
    errors: Vec<String>,
}

pub(crate) fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}.{name}")
    }
}

/// AWS names members in messages in lowerCamel case: `tags.1.member.key`.
pub(crate) fn camel(name: &str) -> String {
    let mut c = name.chars();
    match c.next() {
        Some(f) => f.to_lowercase().chain(c).collect(),
        None => String::new(),
    }
}

/// Shows a value in a message without echoing megabytes back.
/// A launch template's name or id may end in `@<cloud>` (Phantom's way to say which cloud holds
/// it, as launch configuration names do): the model's pattern applies to the part before it.
fn without_cloud<'a>(path: &str, raw: &'a str) -> &'a str {
    let member = path.rsplit('.').next().unwrap_or(path).to_ascii_lowercase();
    if member == "launchtemplatename" || member == "launchtemplateid" {
        if let Some((name, _cloud)) = raw.rsplit_once('@') {
            return name;
        }
    }
    raw
}

fn shown(v: &str) -> String {
    const MAX: usize = 64;
    if v.chars().count() > MAX {
        format!("'{}...'", v.chars().take(MAX).collect::<String>())
    } else {
        format!("'{v}'")
    }
}

impl Decoder<'_> {
    fn fail(&mut self, value: Option<&str>, path: &str, constraint: &str) {
        let v = value.map_or("null".to_string(), shown);
        self.errors.push(format!(
            "Value {v} at '{path}' failed to satisfy constraint: {constraint}"
        ));
    }

    fn value(&mut self, shape_name: &str, key: &str, path: &str) -> Option<Value> {
        match self.service.shape(shape_name) {
            Shape::Structure { .. } => self.structure(shape_name, key, path),
            Shape::List { member, min, max } => self.list(member, *min, *max, key, path),
            Shape::Map {
                key: k,
                value: v,
                min,
                max,
            } => self.map((k, v), (*min, *max), key, path),
            scalar => {
                let raw = self.params.get(key)?;
                self.scalar(scalar, raw, path)
            }
        }
    }

    fn structure(&mut self, shape_name: &str, key: &str, path: &str) -> Option<Value> {
        let Shape::Structure { required, .. } = self.service.shape(shape_name) else {
            unreachable!("{shape_name} is a structure")
        };
        let mut out = Map::new();
        for (wire, target) in self.service.members(shape_name) {
            let child_path = join(path, &camel(wire));
            if let Some(v) = self.value(target, &join(key, wire), &child_path) {
                out.insert(wire.to_string(), v);
            }
        }
        // A nested structure that was not sent at all is absent, not an empty object.
        if out.is_empty() && !key.is_empty() && self.params.keys_under(key).next().is_none() {
            return None;
        }
        for name in required {
            let child = join(key, name);
            let sent = self.params.get(&child).is_some()
                || self
                    .params
                    .keys_under(&format!("{child}."))
                    .next()
                    .is_some();
            if !out.contains_key(name) && !sent {
                self.fail(None, &join(path, &camel(name)), "Member must not be null");
            }
        }
        Some(Value::Object(out))
    }

    fn list(
        &mut self,
        member: &shapes::ShapeRef,
        min: Option<i64>,
        max: Option<i64>,
        key: &str,
        path: &str,
    ) -> Option<Value> {
        let item_prefix = format!("{key}.{}.", shapes::list_member_name(member));
        let mut indices = BTreeSet::new();
        let mut bad_index = None;
        for k in self.params.keys_under(&item_prefix) {
            let rest = &k[item_prefix.len()..];
            let idx = rest.split('.').next().unwrap_or("");
            match idx.parse::<usize>() {
                Ok(i) if i >= 1 && idx.bytes().all(|b| b.is_ascii_digit()) => {
                    indices.insert(i);
                }
                _ => bad_index = Some(k.to_string()),
            }
        }
        if indices.is_empty() && bad_index.is_none() {
            // `Name=` (nothing else) is how botocore sends an empty list.
            return self.params.get(key).map(|_| Value::Array(Vec::new()));
        }
        if let Some(k) = bad_index {
            self.fail(
                Some(&k),
                path,
                "List member index must be a positive integer",
            );
            return None;
        }
        let n = indices.len();
        if indices.last() != Some(&n) {
            self.fail(
                None,
                path,
                "List members must be numbered from 1 without gaps",
            );
            return None;
        }
        let mut items = Vec::with_capacity(n);
        for i in 1..=n {
            let item_path = format!("{path}.{i}.member");
            match self.value(&member.shape, &format!("{item_prefix}{i}"), &item_path) {
                Some(v) => items.push(v),
                None => self.fail(None, &item_path, "Member must not be null"),
            }
        }
        let len = items.len() as i64;
        if let Some(min) = min.filter(|m| len < *m) {
            self.fail(
                None,
                path,
                &format!("Member must have length greater than or equal to {min}"),
            );
        }
        if let Some(max) = max.filter(|m| len > *m) {
            self.fail(
                None,
                path,
                &format!("Member must have length less than or equal to {max}"),
            );
        }
        Some(Value::Array(items))
    }

    /// `Name.entry.N.key` and `Name.entry.N.value`, numbered from 1.
    fn map(
        &mut self,
        (k, v): (&shapes::ShapeRef, &shapes::ShapeRef),
        (min, max): (Option<i64>, Option<i64>),
        key: &str,
        path: &str,
    ) -> Option<Value> {
        let prefix = format!("{key}.entry.");
        // Not sent at all: absent.
        self.params.keys_under(&prefix).next()?;
        let mut out = Map::new();
        for i in 1.. {
            let entry = format!("{prefix}{i}");
            let Some(name) = self.params.get(&format!("{entry}.key")).map(str::to_string) else {
                break;
            };
            let entry_path = format!("{path}.{i}");
            let key_shape = self.service.shape(&k.shape);
            if self
                .scalar(key_shape, &name, &format!("{entry_path}.key"))
                .is_none()
            {
                continue;
            }
            match self.value(
                &v.shape,
                &format!("{entry}.value"),
                &format!("{entry_path}.value"),
            ) {
                Some(value) => {
                    out.insert(name, value);
                }
                None => self.fail(
                    None,
                    &format!("{entry_path}.value"),
                    "Member must not be null",
                ),
            }
        }
        let len = out.len() as i64;
        if min.is_some_and(|m| len < m) || max.is_some_and(|m| len > m) {
            self.fail(
                None,
                path,
                &format!(
                    "Member must have between {} and {} entries",
                    min.unwrap_or(0),
                    max.map_or("any".to_string(), |m| m.to_string())
                ),
            );
        }
        Some(Value::Object(out))
    }

    fn scalar(&mut self, shape: &Shape, raw: &str, path: &str) -> Option<Value> {
        match shape {
            Shape::String {
                min,
                max,
                pattern,
                allowed,
            } => {
                let before = self.errors.len();
                let len = raw.chars().count() as i64;
                if let Some(min) = min.filter(|m| len < *m) {
                    self.fail(
                        Some(raw),
                        path,
                        &format!("Member must have length greater than or equal to {min}"),
                    );
                }
                if let Some(max) = max.filter(|m| len > *m) {
                    self.fail(
                        Some(raw),
                        path,
                        &format!("Member must have length less than or equal to {max}"),
                    );
                }
                if let Some(p) = pattern {
                    if !crate::patterns::matches(p, without_cloud(path, raw)) {
                        self.fail(
                            Some(raw),
                            path,
                            &format!("Member must satisfy regular expression pattern: {p}"),
                        );
                    }
                }
                if let Some(allowed) = allowed {
                    if !allowed.iter().any(|a| a == raw) {
                        self.fail(
                            Some(raw),
                            path,
                            &format!(
                                "Member must satisfy enum value set: [{}]",
                                allowed.join(", ")
                            ),
                        );
                    }
                }
                (self.errors.len() == before).then(|| Value::String(raw.to_string()))
            }
            Shape::Integer { min, max } => {
                // The model's integers are 32-bit; anything else is not a number we accept.
                let Ok(n) = raw.trim().parse::<i32>() else {
                    self.fail(Some(raw), path, "Member must be a 32-bit integer");
                    return None;
                };
                let n = i64::from(n);
                if let Some(min) = min.filter(|m| n < *m) {
                    self.fail(
                        Some(raw),
                        path,
                        &format!("Member must have value greater than or equal to {min}"),
                    );
                    return None;
                }
                if let Some(max) = max.filter(|m| n > *m) {
                    self.fail(
                        Some(raw),
                        path,
                        &format!("Member must have value less than or equal to {max}"),
                    );
                    return None;
                }
                Some(Value::from(n))
            }
            Shape::Double { min, max } => {
                let parsed = raw.trim().parse::<f64>().ok().filter(|f| f.is_finite());
                let Some(f) = parsed else {
                    self.fail(Some(raw), path, "Member must be a number");
                    return None;
                };
                if min.is_some_and(|m| f < m) || max.is_some_and(|m| f > m) {
                    self.fail(Some(raw), path, "Member must be within the allowed range");
                    return None;
                }
                serde_json::Number::from_f64(f).map(Value::Number)
            }
            Shape::Boolean {} => match raw.to_ascii_lowercase().as_str() {
                "true" => Some(Value::Bool(true)),
                "false" => Some(Value::Bool(false)),
                _ => {
                    self.fail(Some(raw), path, "Member must be a boolean (true or false)");
                    None
                }
            },
            Shape::Timestamp {} => match phantom_model::time::parse_timestamp(raw) {
                Some(t) => Some(Value::String(phantom_model::time::format_timestamp(t))),
                None => {
                    self.fail(Some(raw), path, "Member must be an ISO 8601 timestamp");
                    None
                }
            },
            Shape::Long { min, max } => {
                let Ok(n) = raw.trim().parse::<i64>() else {
                    self.fail(Some(raw), path, "Member must be a 64-bit integer");
                    return None;
                };
                if min.is_some_and(|m| n < m) || max.is_some_and(|m| n > m) {
                    self.fail(Some(raw), path, "Member must be within the allowed range");
                    return None;
                }
                Some(Value::from(n))
            }
            Shape::Blob {} => Some(Value::String(raw.to_string())),
            Shape::Structure { .. } | Shape::List { .. } | Shape::Map { .. } => {
                unreachable!("handled by value()")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn params(s: &str) -> Params {
        Params::parse(s.as_bytes()).unwrap()
    }

    #[test]
    fn form_decoding_handles_plus_percent_and_empty_values() {
        let p = params("A=a+b%20c&B=&C&D=%E2%9C%93");
        assert_eq!(p.get("A"), Some("a b c"));
        assert_eq!(p.get("B"), Some(""));
        assert_eq!(p.get("C"), Some(""));
        assert_eq!(p.get("D"), Some("✓"));
    }

    #[test]
    fn non_utf8_is_refused() {
        let err = Params::parse(b"A=%FF%FE").unwrap_err();
        assert_eq!(err.code, "MalformedQueryString");
    }

    #[test]
    fn decodes_nested_lists_and_structures() {
        let p = params(
            "Action=CreateLaunchConfiguration&LaunchConfigurationName=web%40hotel&ImageId=ami-1\
             &InstanceType=t2.micro&SecurityGroups.member.1=sg-a&SecurityGroups.member.2=sg-b\
             &BlockDeviceMappings.member.1.DeviceName=%2Fdev%2Fsda1\
             &BlockDeviceMappings.member.1.Ebs.VolumeSize=20\
             &BlockDeviceMappings.member.1.Ebs.DeleteOnTermination=true\
             &InstanceMonitoring.Enabled=false&UserData=aGk%3D",
        );
        let v = decode_input("CreateLaunchConfiguration", &p).unwrap().0;
        assert_eq!(
            v,
            json!({
                "LaunchConfigurationName": "web@hotel",
                "ImageId": "ami-1",
                "InstanceType": "t2.micro",
                "SecurityGroups": ["sg-a", "sg-b"],
                "BlockDeviceMappings": [{"DeviceName": "/dev/sda1", "Ebs": {"VolumeSize": 20, "DeleteOnTermination": true}}],
                "InstanceMonitoring": {"Enabled": false},
                "UserData": "aGk="
            })
        );
    }

    #[test]
    fn empty_list_is_kept() {
        let p = params("LaunchConfigurationName=x&SecurityGroups=");
        let v = decode_input("CreateLaunchConfiguration", &p).unwrap().0;
        assert_eq!(v["SecurityGroups"], json!([]));
    }

    #[test]
    fn constraints_are_reported_in_aws_wording() {
        let long = "x".repeat(256);
        let p = params(&format!(
            "LaunchConfigurationName={long}&BlockDeviceMappings.member.1.Ebs.VolumeSize=0"
        ));
        let err = decode_input("CreateLaunchConfiguration", &p).unwrap_err();
        assert_eq!(err.code, "ValidationError");
        assert!(
            err.message.starts_with("3 validation errors detected: "),
            "{}",
            err.message
        );
        assert!(err.message.contains("at 'launchConfigurationName' failed to satisfy constraint: Member must have length less than or equal to 255"));
        assert!(err.message.contains("at 'blockDeviceMappings.1.member.ebs.volumeSize' failed to satisfy constraint: Member must have value greater than or equal to 1"));
        assert!(err.message.contains("Value null at 'blockDeviceMappings.1.member.deviceName' failed to satisfy constraint: Member must not be null"));
    }

    #[test]
    fn required_members_and_enums() {
        let err = decode_input("SetDesiredCapacity", &params("DesiredCapacity=1")).unwrap_err();
        assert!(
            err.message.contains("Value null at 'autoScalingGroupName'"),
            "{}",
            err.message
        );
        let err = decode_input(
            "CreateLaunchConfiguration",
            &params("LaunchConfigurationName=a&MetadataOptions.HttpTokens=maybe"),
        )
        .unwrap_err();
        assert!(
            err.message
                .contains("Member must satisfy enum value set: [optional, required]"),
            "{}",
            err.message
        );
    }

    #[test]
    fn numbers_and_booleans_are_checked() {
        for bad in [
            "DesiredCapacity=abc",
            "DesiredCapacity=99999999999",
            "HonorCooldown=yes",
        ] {
            let p = params(&format!("AutoScalingGroupName=g&DesiredCapacity=1&{bad}"));
            let err = decode_input("SetDesiredCapacity", &p).unwrap_err();
            assert_eq!(err.code, "ValidationError", "{bad}");
        }
    }

    #[test]
    fn list_gaps_and_bad_indices_are_refused() {
        for bad in [
            "SecurityGroups.member.1=a&SecurityGroups.member.3=c",
            "SecurityGroups.member.0=a",
            "SecurityGroups.member.x=a",
            "SecurityGroups.member.99999999999999999999999=a",
        ] {
            let p = params(&format!("LaunchConfigurationName=n&{bad}"));
            let err = decode_input("CreateLaunchConfiguration", &p).unwrap_err();
            assert_eq!(err.code, "ValidationError", "{bad}");
        }
    }

    #[test]
    fn control_characters_are_refused_but_unicode_is_fine() {
        let p = params("LaunchConfigurationName=a%01b");
        assert!(decode_input("CreateLaunchConfiguration", &p).is_err());
        let p = params("LaunchConfigurationName=caf%C3%A9%20%3C%26%3E%F0%9F%98%80");
        let v = decode_input("CreateLaunchConfiguration", &p).unwrap().0;
        assert_eq!(v["LaunchConfigurationName"], "café <&>😀");
    }
}
