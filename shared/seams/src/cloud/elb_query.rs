//! A cloud's load balancers through its Query APIs: classic ELB (2012-06-01) for a load balancer
//! by name, ELBv2 (2015-12-01) for a target group by ARN, signed as `elasticloadbalancing`. The
//! endpoint is the cloud's EC2 endpoint, `ec2.` read as `elasticloadbalancing.` (AWS's regions);
//! an emulator serves both at one. A VPC Lattice target group goes to `lattice_rest`.

use super::lattice_rest::{self, Lattice};
use super::signed::{Node, QueryClient};
use super::{Balancers, CloudError};
use async_trait::async_trait;
use phantom_model::traffic::{Kind, Source};
use std::collections::BTreeMap;

const CLASSIC: &str = "2012-06-01";
const V2: &str = "2015-12-01";

/// One cloud's two load balancing APIs and its VPC Lattice, with a user's credentials there.
pub struct ElbQuery {
    classic: QueryClient,
    v2: QueryClient,
    lattice: Lattice,
}

/// The load balancing endpoint of a cloud whose EC2 endpoint is `ec2`.
pub fn endpoint(ec2: &str) -> String {
    let ec2 = ec2.trim_end_matches('/');
    match ec2.split_once("://ec2.") {
        Some((scheme, rest)) => format!("{scheme}://elasticloadbalancing.{rest}"),
        None => ec2.to_string(),
    }
}

impl ElbQuery {
    /// The APIs of the cloud whose EC2 client is `base` (their endpoints are read from its),
    /// through its connection, credentials and timeout.
    pub(super) fn new(base: &QueryClient) -> Self {
        let at = |endpoint: String, service, version| QueryClient {
            connector: base.connector.clone(),
            endpoint,
            region: base.region.clone(),
            identity: base.identity.clone(),
            service,
            version,
            timeout: base.timeout,
            attempts: base.attempts,
        };
        let elb = endpoint(&base.endpoint);
        let lattice = lattice_rest::endpoint(&base.endpoint);
        Self {
            classic: at(elb.clone(), "elasticloadbalancing", CLASSIC),
            v2: at(elb, "elasticloadbalancing", V2),
            lattice: Lattice::new(at(lattice, "vpc-lattice", "")),
        }
    }

    fn client(&self, api: Api) -> &QueryClient {
        match api {
            Api::Classic => &self.classic,
            Api::V2 => &self.v2,
        }
    }
}

/// Which of ELB's two Query APIs knows a source.
#[derive(Clone, Copy)]
enum Api {
    Classic,
    V2,
}

/// The ELB API of a source's kind; none for a VPC Lattice target group.
fn api(kind: Kind) -> Option<Api> {
    match kind {
        Kind::Elb => Some(Api::Classic),
        Kind::Elbv2 => Some(Api::V2),
        Kind::VpcLattice => None,
    }
}

fn p(k: impl Into<String>, v: impl Into<String>) -> (String, String) {
    (k.into(), v.into())
}

/// Each instance as `<prefix>.member.N.<field>`.
fn listed(prefix: &str, field: &str, ids: &[String]) -> Vec<(String, String)> {
    ids.iter()
        .enumerate()
        .map(|(i, id)| p(format!("{prefix}.member.{}.{field}", i + 1), id))
        .collect()
}

fn not_found(code: &str) -> bool {
    matches!(
        code,
        "LoadBalancerNotFound" | "TargetGroupNotFound" | "AccessPointNotFound" | "ValidationError"
    )
}

fn text<'a>(n: &'a Node, path: &[&str], what: &str) -> Result<&'a str, CloudError> {
    n.path(path)
        .map(|c| c.text.as_str())
        .ok_or_else(|| CloudError::unreadable(format!("an answer without {what}")))
}

impl ElbQuery {
    async fn elb_drain_secs(&self, api: Api, s: &Source) -> Result<Option<i64>, CloudError> {
        // Found first (an emulator answers a missing one's attributes with a 500).
        let find = match api {
            Api::Classic => [
                p("Action", "DescribeLoadBalancers"),
                p("LoadBalancerNames.member.1", &s.identifier),
            ],
            Api::V2 => [
                p("Action", "DescribeTargetGroups"),
                p("TargetGroupArns.member.1", &s.identifier),
            ],
        };
        match self.client(api).call(&find).await {
            Ok(_) => {}
            Err(e) if not_found(&e.code) => return Ok(None),
            Err(e) => return Err(e),
        }
        let (action, params, attrs) = match api {
            Api::Classic => (
                "DescribeLoadBalancerAttributes",
                vec![p("LoadBalancerName", &s.identifier)],
                "LoadBalancerAttributes",
            ),
            Api::V2 => (
                "DescribeTargetGroupAttributes",
                vec![p("TargetGroupArn", &s.identifier)],
                "Attributes",
            ),
        };
        let mut params = params;
        params.push(p("Action", action));
        let doc = self.client(api).call(&params).await?;
        let found = doc
            .find(attrs)
            .ok_or_else(|| CloudError::unreadable(format!("{action} without {attrs}")))?;
        match api {
            Api::Classic => {
                // Connection draining: its timeout while enabled, else none.
                let Some(draining) = found.find("ConnectionDraining") else {
                    return Ok(Some(0));
                };
                let on = text(draining, &["Enabled"], "ConnectionDraining's Enabled")? == "true";
                let secs = match draining.path(&["Timeout"]) {
                    Some(t) if on => t.text.parse().map_err(|_| {
                        CloudError::unreadable(format!("a draining timeout of {:?}", t.text))
                    })?,
                    _ => 0,
                };
                Ok(Some(secs))
            }
            Api::V2 => {
                let delay = found.members().into_iter().find(|m| {
                    m.path(&["Key"])
                        .is_some_and(|k| k.text == "deregistration_delay.timeout_seconds")
                });
                match delay {
                    Some(m) => {
                        let v = text(m, &["Value"], "the deregistration delay's value")?;
                        v.parse().map(Some).map_err(|_| {
                            CloudError::unreadable(format!("a deregistration delay of {v:?}"))
                        })
                    }
                    // ELBv2's default.
                    None => Ok(Some(300)),
                }
            }
        }
    }

    async fn elb_register(&self, api: Api, s: &Source, ids: &[String]) -> Result<(), CloudError> {
        let params = match api {
            Api::Classic => {
                let mut v = vec![
                    p("Action", "RegisterInstancesWithLoadBalancer"),
                    p("LoadBalancerName", &s.identifier),
                ];
                v.extend(listed("Instances", "InstanceId", ids));
                v
            }
            Api::V2 => {
                let mut v = vec![
                    p("Action", "RegisterTargets"),
                    p("TargetGroupArn", &s.identifier),
                ];
                v.extend(listed("Targets", "Id", ids));
                v
            }
        };
        self.client(api).call(&params).await.map(|_| ())
    }

    async fn elb_deregister(&self, api: Api, s: &Source, ids: &[String]) -> Result<(), CloudError> {
        let params = match api {
            Api::Classic => {
                let mut v = vec![
                    p("Action", "DeregisterInstancesFromLoadBalancer"),
                    p("LoadBalancerName", &s.identifier),
                ];
                v.extend(listed("Instances", "InstanceId", ids));
                v
            }
            Api::V2 => {
                let mut v = vec![
                    p("Action", "DeregisterTargets"),
                    p("TargetGroupArn", &s.identifier),
                ];
                v.extend(listed("Targets", "Id", ids));
                v
            }
        };
        match self.client(api).call(&params).await {
            // A classic load balancer refuses to deregister one it no longer has: done already.
            Err(e) if e.code == "InvalidInstance" => Ok(()),
            other => other.map(|_| ()),
        }
    }

    async fn elb_health(&self, api: Api, s: &Source) -> Result<BTreeMap<String, bool>, CloudError> {
        let mut out = BTreeMap::new();
        match api {
            Api::Classic => {
                let doc = self
                    .classic
                    .call(&[
                        p("Action", "DescribeInstanceHealth"),
                        p("LoadBalancerName", &s.identifier),
                    ])
                    .await?;
                let Some(states) = doc.find("InstanceStates") else {
                    return Ok(out);
                };
                for m in states.members() {
                    let id = text(m, &["InstanceId"], "an instance id")?;
                    match text(m, &["State"], "an instance's state")? {
                        "InService" => out.insert(id.to_string(), true),
                        "OutOfService" => out.insert(id.to_string(), false),
                        _ => None,
                    };
                }
            }
            Api::V2 => {
                let doc = self
                    .v2
                    .call(&[
                        p("Action", "DescribeTargetHealth"),
                        p("TargetGroupArn", &s.identifier),
                    ])
                    .await?;
                let Some(list) = doc.find("TargetHealthDescriptions") else {
                    return Ok(out);
                };
                for m in list.members() {
                    let id = text(m, &["Target", "Id"], "a target's id")?;
                    match text(m, &["TargetHealth", "State"], "a target's state")? {
                        "healthy" => out.insert(id.to_string(), true),
                        "unhealthy" => out.insert(id.to_string(), false),
                        // initial, unused, draining, unavailable: not judged.
                        _ => None,
                    };
                }
            }
        }
        Ok(out)
    }
}

#[async_trait]
impl Balancers for ElbQuery {
    async fn drain_secs(&self, s: &Source) -> Result<Option<i64>, CloudError> {
        match api(s.kind) {
            Some(api) => self.elb_drain_secs(api, s).await,
            // VPC Lattice has no deregistration delay to read: it stops routing to a target once
            // it is deregistered and drains what is in flight on its own.
            None => Ok(self.lattice.exists(s).await?.then_some(0)),
        }
    }

    async fn register(&self, s: &Source, ids: &[String]) -> Result<(), CloudError> {
        match api(s.kind) {
            Some(api) => self.elb_register(api, s, ids).await,
            None => self.lattice.register(s, ids).await,
        }
    }

    async fn deregister(&self, s: &Source, ids: &[String]) -> Result<(), CloudError> {
        match api(s.kind) {
            Some(api) => self.elb_deregister(api, s, ids).await,
            None => self.lattice.deregister(s, ids).await,
        }
    }

    async fn health(&self, s: &Source) -> Result<BTreeMap<String, bool>, CloudError> {
        match api(s.kind) {
            Some(api) => self.elb_health(api, s).await,
            None => self.lattice.health(s).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_endpoint_is_ec2s_with_elasticloadbalancing_for_ec2() {
        assert_eq!(
            endpoint("https://ec2.eu-west-1.amazonaws.com/"),
            "https://elasticloadbalancing.eu-west-1.amazonaws.com"
        );
        assert_eq!(endpoint("http://127.0.0.1:4567"), "http://127.0.0.1:4567");
    }
}
