//! A cloud's VPC Lattice target groups through VPC Lattice's REST-JSON API (2022-11-30), signed
//! as `vpc-lattice`: found (GetTargetGroup), the group's VMs registered and deregistered by
//! instance id (at the target group's own port), and their health (ListTargets). The endpoint is
//! the cloud's EC2 endpoint, `ec2.` read as `vpc-lattice.` (AWS's regions); an emulator serves
//! every API at one.

use super::signed::QueryClient;
use super::CloudError;
use phantom_model::traffic::Source;
use serde::Deserialize;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// How many targets one RegisterTargets or DeregisterTargets names at most (VPC Lattice's limit).
const TARGETS_PER_CALL: usize = 100;

/// The VPC Lattice endpoint of a cloud whose EC2 endpoint is `ec2`.
pub fn endpoint(ec2: &str) -> String {
    let ec2 = ec2.trim_end_matches('/');
    match ec2.split_once("://ec2.") {
        Some((scheme, rest)) => format!("{scheme}://vpc-lattice.{rest}"),
        None => ec2.to_string(),
    }
}

/// Whether a cloud's error says it has no VPC Lattice at all (an endpoint that does not know the
/// API), not that the target group is missing.
pub fn no_lattice(e: &CloudError) -> bool {
    e.code.starts_with("HTTP")
        || matches!(
            e.code.as_str(),
            "UnknownOperationException" | "UnknownOperation" | "InvalidAction" | "NotImplemented"
        )
}

/// One cloud's VPC Lattice, with a user's credentials there.
pub struct Lattice {
    client: QueryClient,
}

impl Lattice {
    pub(super) fn new(client: QueryClient) -> Self {
        Self { client }
    }

    /// The target group's path: its id, the last part of its ARN (the API takes either, and the
    /// id needs no escaping).
    fn path(s: &Source) -> String {
        let id = s.identifier.rsplit('/').next().unwrap_or(&s.identifier);
        format!("/targetgroups/{id}")
    }

    /// Whether the cloud has the target group.
    pub async fn exists(&self, s: &Source) -> Result<bool, CloudError> {
        match self.client.rest("GET", &Self::path(s), None).await {
            Ok(_) => Ok(true),
            Err(e) if e.code == "ResourceNotFoundException" => Ok(false),
            Err(e) => Err(e),
        }
    }

    pub async fn register(&self, s: &Source, ids: &[String]) -> Result<(), CloudError> {
        for chunk in ids.chunks(TARGETS_PER_CALL) {
            let path = format!("{}/registertargets", Self::path(s));
            let answer = self
                .client
                .rest("POST", &path, Some(&targets(chunk)))
                .await?;
            let answer: Registered = read(answer, "RegisterTargets")?;
            // A target the call refused (not running, not in the target group's VPC) is the
            // cloud's error, in its words: the next round tries again.
            if let Some(failed) = answer.unsuccessful.first() {
                return Err(CloudError::new(
                    failed
                        .failure_code
                        .as_deref()
                        .unwrap_or("RegisterTargetsFailed"),
                    format!(
                        "{}: {}",
                        failed.id.as_deref().unwrap_or("a target"),
                        failed.failure_message.as_deref().unwrap_or("(no message)")
                    ),
                ));
            }
        }
        Ok(())
    }

    pub async fn deregister(&self, s: &Source, ids: &[String]) -> Result<(), CloudError> {
        for chunk in ids.chunks(TARGETS_PER_CALL) {
            let path = format!("{}/deregistertargets", Self::path(s));
            // A target it lists as unsuccessful is one no longer registered: what was wanted.
            self.client
                .rest("POST", &path, Some(&targets(chunk)))
                .await?;
        }
        Ok(())
    }

    /// The targets whose health is known (HEALTHY or UNHEALTHY; INITIAL, DRAINING, UNAVAILABLE
    /// and UNUSED are not judged, as ELBv2's like states are not), every page.
    pub async fn health(&self, s: &Source) -> Result<BTreeMap<String, bool>, CloudError> {
        let mut out = BTreeMap::new();
        let mut next: Option<String> = None;
        loop {
            let mut path = format!("{}/listtargets?maxResults=100", Self::path(s));
            if let Some(token) = &next {
                path.push_str("&nextToken=");
                path.extend(form_urlencoded::byte_serialize(token.as_bytes()));
            }
            let answer = self.client.rest("POST", &path, Some(&json!({}))).await?;
            let page: Listed = read(answer, "ListTargets")?;
            for item in page.items {
                match item.status.as_deref() {
                    Some("HEALTHY") => out.insert(item.id, true),
                    Some("UNHEALTHY") => out.insert(item.id, false),
                    _ => None,
                };
            }
            next = page.next_token;
            if next.is_none() {
                return Ok(out);
            }
        }
    }
}

/// RegisterTargets' answer: the targets it refused (botocore's `TargetFailure`).
#[derive(Deserialize)]
struct Registered {
    #[serde(default)]
    unsuccessful: Vec<Refused>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Refused {
    id: Option<String>,
    failure_code: Option<String>,
    failure_message: Option<String>,
}

/// A page of ListTargets' answer.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Listed {
    items: Vec<Listing>,
    next_token: Option<String>,
}

/// One target: its id (always given for a target of instances), and its status once judged.
#[derive(Deserialize)]
struct Listing {
    id: String,
    status: Option<String>,
}

/// An answer read as its type: one without what the service always gives is an error.
fn read<T: serde::de::DeserializeOwned>(answer: Value, call: &str) -> Result<T, CloudError> {
    serde_json::from_value(answer)
        .map_err(|e| CloudError::unreadable(format!("a {call} answer that does not read: {e}")))
}

/// Instances as a target list, each at the target group's default port.
fn targets(ids: &[String]) -> Value {
    json!({ "targets": ids.iter().map(|id| json!({ "id": id })).collect::<Vec<_>>() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_endpoint_is_ec2s_with_vpc_lattice_for_ec2() {
        assert_eq!(
            endpoint("https://ec2.eu-west-1.amazonaws.com/"),
            "https://vpc-lattice.eu-west-1.amazonaws.com"
        );
        assert_eq!(endpoint("http://127.0.0.1:4567"), "http://127.0.0.1:4567");
    }

    #[test]
    fn a_target_group_is_named_by_its_id() {
        let s = Source {
            identifier: "arn:aws:vpc-lattice:us-east-1:0:targetgroup/tg-0abc".into(),
            kind: phantom_model::traffic::Kind::VpcLattice,
        };
        assert_eq!(Lattice::path(&s), "/targetgroups/tg-0abc");
        assert!(no_lattice(&CloudError::new("HTTP404", "not found")));
        assert!(!no_lattice(&CloudError::new(
            "ResourceNotFoundException",
            "x"
        )));
    }
}
