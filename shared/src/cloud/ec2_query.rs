//! The api's EC2 client: the two read-only calls it makes before it answers (DescribeInstances
//! by id, DescribeLaunchTemplateVersions) and a user's catalog for Phantom's own API
//! (DescribeImages, DescribeKeyPairs, ImportKeyPair), as EC2 Query requests signed with aws-sigv4 and sent
//! with hyper, read with quick-xml. The provisioner uses aws-sdk-ec2 (`phantom-cloud`); the api
//! does not link it, which keeps its Lambda package small and its cold start short.

use super::elb_query::{endpoint as elb_endpoint, ElbQuery};
use super::signed::{Node, QueryClient};
use super::{
    template_not_found, Balancers, Catalog, CloudError, ConnectLookup, Image, KeyPair, Lookup,
    Tagged, TAG_GROUP, TAG_GROUP_ID, TAG_OWNER,
};
use crate::model::cloud::{CloudCredentials, CloudRecord};
use crate::model::instance::{CloudState, Seen};
use crate::template::TemplateRef;
use async_trait::async_trait;
use aws_credential_types::Credentials;
use aws_smithy_http_client::Connector;
use aws_smithy_runtime_api::client::http::HttpConnector;
use aws_smithy_runtime_api::client::orchestrator::HttpRequest;
use aws_smithy_types::body::SdkBody;
use std::sync::Arc;
use std::time::Duration;

/// EC2's Query API version.
const VERSION: &str = "2016-11-15";
/// A lookup is part of an api request: it may not hold the caller long.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
const CALL_TIMEOUT: Duration = Duration::from_secs(8);

/// One connection pool for every cloud the api looks at: the SDK's own connector (hyper, rustls
/// with ring), so the api's package carries one HTTP stack.
#[derive(Clone)]
pub struct Ec2Lookups {
    connector: Arc<Connector>,
}

impl Default for Ec2Lookups {
    fn default() -> Self {
        Self {
            connector: Arc::new(crate::config::connector(CONNECT_TIMEOUT, CALL_TIMEOUT)),
        }
    }
}

#[async_trait]
impl ConnectLookup for Ec2Lookups {
    fn lookup(&self, cloud: &CloudRecord, creds: &CloudCredentials) -> Arc<dyn Lookup> {
        Arc::new(self.client(cloud, creds))
    }

    fn balancers(
        &self,
        cloud: &CloudRecord,
        creds: &CloudCredentials,
    ) -> Option<Arc<dyn Balancers>> {
        cloud.load_balancers.then(|| {
            let ec2 = self.client(cloud, creds).client;
            Arc::new(ElbQuery::new(&ec2, elb_endpoint(&cloud.endpoint))) as Arc<dyn Balancers>
        })
    }

    fn catalog(&self, cloud: &CloudRecord, creds: &CloudCredentials) -> Arc<dyn Catalog> {
        Arc::new(self.client(cloud, creds))
    }

    async fn reachable(&self, cloud: &CloudRecord) -> bool {
        let mut req = HttpRequest::new(SdkBody::empty());
        if req
            .set_uri(format!("{}/", cloud.endpoint.trim_end_matches('/')))
            .is_err()
        {
            return false;
        }
        let answer = self.connector.call(req);
        matches!(
            tokio::time::timeout(CONNECT_TIMEOUT, answer).await,
            Ok(Ok(_))
        )
    }
}

impl Ec2Lookups {
    fn client(&self, cloud: &CloudRecord, creds: &CloudCredentials) -> Ec2Lookup {
        Ec2Lookup {
            client: QueryClient {
                connector: self.connector.clone(),
                endpoint: cloud.endpoint.trim_end_matches('/').to_string(),
                region: cloud.region.clone(),
                service: "ec2",
                version: VERSION,
                timeout: CALL_TIMEOUT,
                identity: Credentials::new(
                    &creds.access_key_id,
                    &creds.secret,
                    None,
                    None,
                    "phantom-cloud-credentials",
                )
                .into(),
            },
        }
    }
}

struct Ec2Lookup {
    client: QueryClient,
}

impl Ec2Lookup {
    /// DescribeInstances with these parameters, every page of 1000.
    async fn described(
        &self,
        mut params: Vec<(String, String)>,
    ) -> Result<Vec<Tagged>, CloudError> {
        params.push(("MaxResults".to_string(), "1000".to_string()));
        let mut out = Vec::new();
        loop {
            let doc = self.client.call(&params).await?;
            out.extend(instances(&doc)?);
            match doc.find("nextToken").map(|n| n.text.as_str()) {
                Some(t) if !t.is_empty() => {
                    params.retain(|(k, _)| k != "NextToken");
                    params.push(("NextToken".to_string(), t.to_string()));
                }
                _ => return Ok(out),
            }
        }
    }
}

#[async_trait]
impl Lookup for Ec2Lookup {
    async fn describe(&self, ids: &[String]) -> Result<Vec<Tagged>, CloudError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        // By filter rather than by InstanceId: an unknown id is then absent, not an error for all.
        self.described(by_filter("DescribeInstances", "instance-id", ids))
            .await
    }

    async fn owned(&self, owner: &str) -> Result<Vec<Tagged>, CloudError> {
        self.described(by_filter(
            "DescribeInstances",
            &format!("tag:{TAG_OWNER}"),
            &[owner.to_string()],
        ))
        .await
    }

    async fn template_exists(&self, t: &TemplateRef) -> Result<bool, CloudError> {
        let mut params = vec![
            (
                "Action".to_string(),
                "DescribeLaunchTemplateVersions".to_string(),
            ),
            ("LaunchTemplateVersion.1".to_string(), t.version.clone()),
        ];
        match (&t.id, &t.name) {
            (Some(id), _) => params.push(("LaunchTemplateId".to_string(), id.clone())),
            (None, Some(name)) => params.push(("LaunchTemplateName".to_string(), name.clone())),
            (None, None) => return Ok(false),
        }
        match self.client.call(&params).await {
            Ok(doc) => Ok(doc
                .find("launchTemplateVersionSet")
                .is_some_and(|set| set.children.iter().any(|c| c.name == "item"))),
            Err(e) if template_not_found(&e.code) => Ok(false),
            Err(e) => Err(e),
        }
    }

    async fn subnet_zones(&self, ids: &[String]) -> Result<Vec<(String, String)>, CloudError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        // By filter: an unknown id is absent, not an error for all.
        let params = by_filter("DescribeSubnets", "subnet-id", ids);
        let doc = self.client.call(&params).await?;
        items_of(&doc, "subnetSet")
            .into_iter()
            .map(|s| {
                let text = |k: &str| s.path(&[k]).map(|n| n.text.clone());
                match (text("subnetId"), text("availabilityZone")) {
                    (Some(id), Some(zone)) => Ok((id, zone)),
                    _ => Err(CloudError::unreadable("a subnet without its id or zone")),
                }
            })
            .collect()
    }
}

#[async_trait]
impl Catalog for Ec2Lookup {
    async fn images(&self) -> Result<Vec<Image>, CloudError> {
        let params = by_filter("DescribeImages", "state", &["available".to_string()]);
        let doc = self.client.call(&params).await?;
        let mut images: Vec<Image> = items_of(&doc, "imagesSet")
            .into_iter()
            .map(|i| Image {
                id: text(i, "imageId"),
                name: text(i, "name"),
                description: text(i, "description"),
                architecture: text(i, "architecture"),
            })
            .collect();
        images.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(images)
    }

    async fn key_pairs(&self) -> Result<Vec<KeyPair>, CloudError> {
        let params = [("Action".to_string(), "DescribeKeyPairs".to_string())];
        let doc = self.client.call(&params).await?;
        let mut pairs: Vec<KeyPair> = items_of(&doc, "keySet")
            .into_iter()
            .map(|k| KeyPair {
                name: text(k, "keyName"),
                fingerprint: text(k, "keyFingerprint"),
            })
            .collect();
        pairs.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(pairs)
    }

    async fn import_key_pair(&self, name: &str, public_key: &str) -> Result<String, CloudError> {
        // A blob member: base64 on the wire, as the AWS CLI sends a key file.
        let params = [
            ("Action".to_string(), "ImportKeyPair".to_string()),
            ("KeyName".to_string(), name.to_string()),
            (
                "PublicKeyMaterial".to_string(),
                aws_smithy_types::base64::encode(public_key.trim()),
            ),
        ];
        let doc = self.client.call(&params).await?;
        doc.find("keyFingerprint")
            .map(|f| f.text.clone())
            .ok_or_else(|| CloudError::unreadable("an imported key pair without its fingerprint"))
    }
}

/// An EC2 `action` with one filter `name` matching any of `values`.
fn by_filter(action: &str, name: &str, values: &[String]) -> Vec<(String, String)> {
    let mut params = vec![
        ("Action".to_string(), action.to_string()),
        ("Filter.1.Name".to_string(), name.to_string()),
    ];
    for (i, v) in values.iter().enumerate() {
        params.push((format!("Filter.1.Value.{}", i + 1), v.clone()));
    }
    params
}

/// The `item`s of the first element so named; none where it is absent (EC2 leaves an empty set
/// out of its answer).
fn items_of<'a>(doc: &'a Node, set: &str) -> Vec<&'a Node> {
    doc.find(set).map(|s| s.items()).unwrap_or_default()
}

/// The text of a direct child, empty if it has none (the catalogues' optional members: an image
/// without a description).
fn text(node: &Node, child: &str) -> String {
    node.path(&[child])
        .map(|n| n.text.clone())
        .unwrap_or_default()
}

/// The VMs of a DescribeInstances answer; one without a member EC2 always gives is an error.
fn instances(doc: &Node) -> Result<Vec<Tagged>, CloudError> {
    let mut out = Vec::new();
    for r in items_of(doc, "reservationSet") {
        for i in items_of(r, "instancesSet") {
            let id = i
                .path(&["instanceId"])
                .map(|n| n.text.clone())
                .ok_or_else(|| CloudError::unreadable("an instance without an instanceId"))?;
            let text = |path: &[&str], what: &str| {
                i.path(path)
                    .map(|n| n.text.clone())
                    .ok_or_else(|| CloudError::unreadable(format!("instance {id} without {what}")))
            };
            let tag = |key: &str| {
                items_of(i, "tagSet")
                    .into_iter()
                    .find(|t| t.path(&["key"]).is_some_and(|k| k.text == key))
                    .and_then(|t| t.path(&["value"]).map(|v| v.text.clone()))
            };
            out.push(Tagged {
                seen: Seen {
                    state: CloudState::parse(&text(&["instanceState", "name"], "a state")?),
                    zone: text(&["placement", "availabilityZone"], "an availability zone")?,
                    launched_ms: time::OffsetDateTime::parse(
                        &text(&["launchTime"], "a launch time")?,
                        &time::format_description::well_known::Rfc3339,
                    )
                    .map(|t| (t.unix_timestamp_nanos() / 1_000_000) as i64)
                    .map_err(|e| {
                        CloudError::unreadable(format!(
                            "instance {id} with a launch time that is not RFC 3339: {e}"
                        ))
                    })?,
                    instance_type: text(&["instanceType"], "an instance type")?,
                    id: id.clone(),
                },
                group: tag(TAG_GROUP),
                group_id: tag(TAG_GROUP_ID),
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::signed::parse;
    use super::*;

    const INSTANCES: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<DescribeInstancesResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/">
  <requestId>r</requestId>
  <reservationSet><item><reservationId>r-1</reservationId><instancesSet>
    <item><instanceId>i-1</instanceId><instanceType>t3.micro</instanceType>
      <instanceState><code>16</code><name>running</name></instanceState>
      <placement><availabilityZone>us-east-1a</availabilityZone></placement>
      <launchTime>2026-11-22T10:00:00.000Z</launchTime>
      <tagSet><item><key>phantom:group</key><value>a&amp;b</value></item>
        <item><key>phantom:group-id</key><value>g-1</value></item></tagSet>
    </item>
    <item><instanceId>i-2</instanceId><instanceType>t3.micro</instanceType>
      <instanceState><name>stopped</name></instanceState>
      <placement><availabilityZone>us-east-1b</availabilityZone></placement>
      <launchTime>2026-11-22T10:00:00.000Z</launchTime><tagSet/></item>
  </instancesSet></item></reservationSet>
</DescribeInstancesResponse>"#;

    #[test]
    fn reads_instances_with_their_tags() {
        let vms = instances(&parse(INSTANCES).expect("xml")).expect("readable");
        assert_eq!(vms.len(), 2);
        assert_eq!(vms[0].seen.id, "i-1");
        assert_eq!(vms[0].seen.state, CloudState::Running);
        assert_eq!(vms[0].seen.zone, "us-east-1a");
        assert_eq!(vms[0].seen.instance_type, "t3.micro");
        assert_eq!(vms[0].seen.launched_ms, 1_795_341_600_000);
        assert_eq!(
            (vms[0].group.as_deref(), vms[0].group_id.as_deref()),
            (Some("a&b"), Some("g-1"))
        );
        assert_eq!(vms[1].seen.state, CloudState::Stopped);
        assert_eq!(
            (vms[1].group.as_deref(), vms[1].group_id.as_deref()),
            (None, None)
        );
        // An instance without its launch time is an error, not one launched in 1970.
        let lost = INSTANCES.replace(
            "<launchTime>2026-11-22T10:00:00.000Z</launchTime><tagSet/>",
            "<tagSet/>",
        );
        let e = instances(&parse(&lost).expect("xml")).unwrap_err();
        assert_eq!(e.code, "UnreadableAnswer");
        assert!(e.message.contains("i-2 without a launch time"), "{e}");
    }

    #[test]
    fn reads_an_error_and_refuses_what_is_not_xml() {
        let doc = parse(
            "<Response><Errors><Error><Code>InvalidLaunchTemplateName.NotFoundException</Code>\
             <Message>no &lt;web&gt;</Message></Error></Errors><RequestID>x</RequestID></Response>",
        )
        .expect("xml");
        let e = doc.find("Error").expect("error");
        assert_eq!(
            e.find("Code").map(|c| c.text.as_str()),
            Some("InvalidLaunchTemplateName.NotFoundException")
        );
        assert_eq!(e.find("Message").map(|c| c.text.as_str()), Some("no <web>"));
        assert!(parse("<a><b></a>").is_none());
        assert!(parse("upstream timed out").is_none());
    }
}
