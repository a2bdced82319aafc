//! EC2's Query API without its SDK: the lookups the api makes before it answers (DescribeInstances
//! by id, DescribeLaunchTemplateVersions, ...), the health check's looks, and a user's catalog for
//! Phantom's own API (DescribeImages, DescribeKeyPairs, ImportKeyPair), as requests signed with
//! aws-sigv4, sent with hyper and read with quick-xml. The provisioner's calls that change a cloud
//! are in `ec2_cloud`, on the same client. No function links aws-sdk-ec2 (1.2 M lines of generated
//! Rust: most of a first build), which keeps the packages small and the cold starts short.

use super::elb_query::ElbQuery;
use super::signed::{answer, Node, QueryClient};
use super::{
    template_not_found, without_unknown, Balancers, Catalog, CloudError, ConnectLookup,
    FoundTemplate, Image, InstanceStatus, KeyPair, Lookup, Tagged, STATUS_BY_ID_MAX,
    STATUS_IDS_PER_CALL, TAG_GROUP, TAG_GROUP_ID, TAG_OWNER, TAG_WARM_POOL,
};
use async_trait::async_trait;
use aws_credential_types::Credentials;
use aws_smithy_http_client::Connector;
use aws_smithy_runtime_api::client::http::HttpConnector;
use aws_smithy_runtime_api::client::orchestrator::HttpRequest;
use aws_smithy_types::body::SdkBody;
use phantom_model::cloud::{CloudCredentials, CloudRecord};
use phantom_model::instance::{CloudState, LaunchedWith, Market, Seen};
use phantom_model::launch_template::TemplateName;
use phantom_model::status::{Check, CheckStatus, EventCode, ScheduledEvent};
use phantom_rules::template::TemplateRef;
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
            Arc::new(ElbQuery::new(&ec2)) as Arc<dyn Balancers>
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
        Ec2Lookup::new(self.connector.clone(), cloud, creds, CALL_TIMEOUT, 1)
    }
}

/// One cloud's EC2 with a user's credentials there: the api's lookups and catalog, and the
/// provisioner's `Cloud` (`ec2_cloud`).
pub(crate) struct Ec2Lookup {
    pub(crate) client: QueryClient,
}

impl Ec2Lookup {
    /// A client of `cloud`'s EC2 endpoint signing with `creds`, each attempt of a call within
    /// `timeout`, `attempts` in all (`QueryClient::attempts`).
    pub(crate) fn new(
        connector: Arc<Connector>,
        cloud: &CloudRecord,
        creds: &CloudCredentials,
        timeout: Duration,
        attempts: u32,
    ) -> Self {
        Self {
            client: QueryClient {
                connector,
                endpoint: cloud.endpoint.trim_end_matches('/').to_string(),
                region: cloud.region.clone(),
                service: "ec2",
                version: VERSION,
                timeout,
                attempts,
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

    /// A call's answer unread (the looks read it as a stream), or the error it is.
    async fn text_of(&self, params: &[(String, String)]) -> Result<String, CloudError> {
        let (status, text) = self.client.send(params).await?;
        if !status.is_success() {
            return Err(answer(&self.client.endpoint, status, &text)
                .err()
                .unwrap_or_else(|| CloudError::unreadable("an error status with no error")));
        }
        Ok(text)
    }

    /// DescribeInstances with these parameters, every page of 1000.
    pub(crate) async fn described(
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

    async fn launched_with(&self, id: &str) -> Result<Option<LaunchedWith>, CloudError> {
        let doc = self
            .client
            .call(&by_filter(
                "DescribeInstances",
                "instance-id",
                &[id.to_string()],
            ))
            .await?;
        launched_with(&doc, id)
    }

    async fn states(&self, owner: &str) -> Result<Vec<(String, CloudState)>, CloudError> {
        let mut params = by_owner_alive(owner);
        params.push(("MaxResults".to_string(), "1000".to_string()));
        let mut out = Vec::new();
        loop {
            let (page, token) = instance_states(&self.text_of(&params).await?)?;
            out.extend(page);
            match token {
                Some(t) => {
                    params.retain(|(k, _)| k != "NextToken");
                    params.push(("NextToken".to_string(), t));
                }
                None => return Ok(out),
            }
        }
    }

    async fn template(&self, t: &TemplateRef) -> Result<Option<FoundTemplate>, CloudError> {
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
            (None, None) => return Ok(None),
        }
        match self.client.call(&params).await {
            Ok(doc) => {
                let Some(v) = items_of(&doc, "launchTemplateVersionSet")
                    .into_iter()
                    .next()
                else {
                    return Ok(None);
                };
                let text = |k: &str| {
                    v.path(&[k]).map(|n| n.text.clone()).ok_or_else(|| {
                        CloudError::unreadable(format!("a launch template version without {k}"))
                    })
                };
                Ok(Some(FoundTemplate {
                    name: TemplateName {
                        launch_template_id: text("launchTemplateId")?,
                        launch_template_name: text("launchTemplateName")?,
                    },
                    version: text("versionNumber")?,
                }))
            }
            Err(e) if template_not_found(&e.code) => Ok(None),
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

    async fn reservation_zones(&self, ids: &[String]) -> Result<Vec<(String, String)>, CloudError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut params = vec![(
            "Action".to_string(),
            "DescribeCapacityReservations".to_string(),
        )];
        for (i, id) in ids.iter().enumerate() {
            params.push((format!("CapacityReservationId.{}", i + 1), id.clone()));
        }
        let doc = self.client.call(&params).await?;
        items_of(&doc, "capacityReservationSet")
            .into_iter()
            .map(|r| {
                let text = |k: &str| r.path(&[k]).map(|n| n.text.clone());
                match (text("capacityReservationId"), text("availabilityZone")) {
                    (Some(id), Some(zone)) => Ok((id, zone)),
                    _ => Err(CloudError::unreadable(
                        "a capacity reservation without its id or zone",
                    )),
                }
            })
            .collect()
    }

    async fn zone_names(&self, ids: &[String]) -> Result<Vec<(String, String)>, CloudError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let params = by_filter("DescribeAvailabilityZones", "zone-id", ids);
        let doc = self.client.call(&params).await?;
        items_of(&doc, "availabilityZoneInfo")
            .into_iter()
            .map(|z| {
                let text = |k: &str| z.path(&[k]).map(|n| n.text.clone());
                match (text("zoneId"), text("zoneName")) {
                    (Some(id), Some(name)) => Ok((id, name)),
                    _ => Err(CloudError::unreadable("a zone without its id or name")),
                }
            })
            .collect()
    }
    async fn statuses(&self, ids: &[String]) -> Result<Vec<InstanceStatus>, CloudError> {
        let base = || {
            vec![
                ("Action".to_string(), "DescribeInstanceStatus".to_string()),
                ("IncludeAllInstances".to_string(), "true".to_string()),
            ]
        };
        let mut out = Vec::new();
        if ids.len() <= STATUS_BY_ID_MAX {
            for chunk in ids.chunks(STATUS_IDS_PER_CALL) {
                let found = without_unknown(chunk.to_vec(), |chunk| async move {
                    let mut params = base();
                    for (i, id) in chunk.iter().enumerate() {
                        params.push((format!("InstanceId.{}", i + 1), id.clone()));
                    }
                    Ok(instance_statuses(&self.text_of(&params).await?)?.0)
                })
                .await?;
                out.extend(found);
            }
            return Ok(out);
        }
        let wanted: std::collections::BTreeSet<&String> = ids.iter().collect();
        let mut params = base();
        params.push(("MaxResults".to_string(), "1000".to_string()));
        loop {
            let (page, token) = instance_statuses(&self.text_of(&params).await?)?;
            out.extend(page.into_iter().filter(|s| wanted.contains(&s.id)));
            match token {
                Some(t) => {
                    params.retain(|(k, _)| k != "NextToken");
                    params.push(("NextToken".to_string(), t));
                }
                None => return Ok(out),
            }
        }
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

/// The states a VM that is not terminated is in.
const ALIVE: [&str; 5] = ["pending", "running", "shutting-down", "stopping", "stopped"];

/// DescribeInstances of the owner's VMs that are not terminated: filters 1 (the owner's tag) and
/// 2 (the state); a caller's next filter is 3.
pub(crate) fn by_owner_alive(owner: &str) -> Vec<(String, String)> {
    let mut params = by_filter(
        "DescribeInstances",
        &format!("tag:{TAG_OWNER}"),
        &[owner.to_string()],
    );
    params.push((
        "Filter.2.Name".to_string(),
        "instance-state-name".to_string(),
    ));
    for (i, state) in ALIVE.iter().enumerate() {
        params.push((format!("Filter.2.Value.{}", i + 1), state.to_string()));
    }
    params
}

/// An EC2 `action` with one filter `name` matching any of `values`.
pub(crate) fn by_filter(action: &str, name: &str, values: &[String]) -> Vec<(String, String)> {
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
pub(crate) fn items_of<'a>(doc: &'a Node, set: &str) -> Vec<&'a Node> {
    doc.find(set).map(|s| s.items()).unwrap_or_default()
}

/// The text of a direct child, empty if it has none (the catalogues' optional members: an image
/// without a description).
fn text(node: &Node, child: &str) -> String {
    node.path(&[child])
        .map(|n| n.text.clone())
        .unwrap_or_default()
}

/// One page of statuses, and the next page's token.
type StatusPage = (Vec<InstanceStatus>, Option<String>);

/// The statuses of a DescribeInstanceStatus answer, and its next page's token, read as a stream of
/// events as a look reads DescribeInstances (`instance_states`): every look asks them, and a tree
/// costs about three times as much (docs/benchmarks.md, "Looks"). A status without a VM's id, or a
/// check, event code or time EC2 does not write, is an error.
fn instance_statuses(text: &str) -> Result<StatusPage, CloudError> {
    use quick_xml::events::Event;
    let unreadable =
        |e: &dyn std::fmt::Display| CloudError::unreadable(format!("XML that does not read: {e}"));
    let mut reader = quick_xml::Reader::from_str(text);
    let mut read = StatusReading::default();
    loop {
        match reader.read_event().map_err(|e| unreadable(&e))? {
            Event::Start(e) => read.open(e.local_name().as_ref()),
            Event::Empty(e) => {
                read.open(e.local_name().as_ref());
                read.close()?;
            }
            Event::End(_) => read.close()?,
            Event::Text(t) => read.text(&t.xml10_content()),
            Event::CData(t) => read.text(&t.xml10_content()),
            Event::GeneralRef(r) => {
                let c = super::signed::referenced(&r)
                    .ok_or_else(|| unreadable(&format!("the reference &{};", r.xml10_content())))?;
                read.text(c.encode_utf8(&mut [0; 4]));
            }
            Event::Eof => break,
            _ => {}
        }
    }
    Ok((read.out, read.token.filter(|t| !t.trim().is_empty())))
}

/// Where a DescribeInstanceStatus answer's reading is: `path` from the answer's root, the status
/// being read, and what is read so far.
#[derive(Default)]
struct StatusReading {
    path: Vec<At>,
    vm: StatusRead,
    token: Option<String>,
    out: Vec<InstanceStatus>,
}

/// An element of a status answer, as far as a status is read from it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum At {
    Set,
    Item,
    Id,
    /// One of the three checks (`CHECKS`' index).
    Check(usize),
    Status,
    Details,
    /// A check's first impairedSince; a later one is `Other`.
    Since,
    Events,
    Code,
    Description,
    NotBefore,
    Token,
    Other,
}

/// The checks a status has, by their element's name.
const CHECKS: [&str; 3] = ["instanceStatus", "systemStatus", "attachedEbsStatus"];

/// One status as read so far: each check written (its status word and first impairedSince), and
/// each event (its code, description and notBefore).
#[derive(Default)]
struct StatusRead {
    id: Option<String>,
    checks: [Option<(String, Option<String>)>; 3],
    events: Vec<(String, String, Option<String>)>,
}

impl StatusReading {
    fn open(&mut self, name: &str) {
        let p = &self.path;
        let under = |depth: usize, at: At| p.len() > depth && p[depth] == at;
        let check = match p.get(3) {
            Some(At::Check(i)) => Some(*i),
            _ => None,
        };
        let at = match (p.len(), name) {
            (1, "instanceStatusSet") => At::Set,
            (1, "nextToken") => At::Token,
            (2, "item") if under(1, At::Set) => At::Item,
            (3, "instanceId") if under(2, At::Item) => At::Id,
            (3, "eventsSet") if under(2, At::Item) => At::Events,
            (3, name) if under(2, At::Item) => CHECKS
                .iter()
                .position(|c| *c == name)
                .map_or(At::Other, At::Check),
            (4, "status") if check.is_some() => At::Status,
            (4, "details") if check.is_some() => At::Details,
            (4, "item") if under(3, At::Events) => At::Item,
            (5, "item") if under(4, At::Details) => At::Item,
            (5, "code") if under(3, At::Events) => At::Code,
            (5, "description") if under(3, At::Events) => At::Description,
            (5, "notBefore") if under(3, At::Events) => At::NotBefore,
            (6, "impairedSince") if under(4, At::Details) => At::Since,
            _ => At::Other,
        };
        let vm = &mut self.vm;
        let at = match at {
            At::Check(i) => {
                vm.checks[i] = Some((String::new(), None));
                at
            }
            At::Item if p.len() == 4 => {
                vm.events.push(Default::default());
                at
            }
            At::Id => {
                vm.id = Some(String::new());
                at
            }
            At::Token => {
                self.token = Some(String::new());
                at
            }
            At::NotBefore => {
                vm.events.last_mut().expect("in an event").2 = Some(String::new());
                at
            }
            At::Since => match check.and_then(|i| vm.checks[i].as_mut()) {
                Some((_, since @ None)) => {
                    *since = Some(String::new());
                    at
                }
                _ => At::Other,
            },
            _ => at,
        };
        self.path.push(at);
    }

    fn text(&mut self, text: &str) {
        let vm = &mut self.vm;
        let check = match self.path.get(3) {
            Some(At::Check(i)) => vm.checks[*i].as_mut(),
            _ => None,
        };
        let into = match (self.path.last(), check) {
            (Some(At::Id), _) => vm.id.as_mut(),
            (Some(At::Status), Some((status, _))) => Some(status),
            (Some(At::Since), Some((_, since))) => since.as_mut(),
            (Some(At::Code), _) => vm.events.last_mut().map(|e| &mut e.0),
            (Some(At::Description), _) => vm.events.last_mut().map(|e| &mut e.1),
            (Some(At::NotBefore), _) => vm.events.last_mut().and_then(|e| e.2.as_mut()),
            (Some(At::Token), _) if self.path.len() == 2 => self.token.as_mut(),
            _ => None,
        };
        if let Some(into) = into {
            into.push_str(text);
        }
    }

    fn close(&mut self) -> Result<(), CloudError> {
        if self.path.len() == 3 && self.path[2] == At::Item {
            let vm = std::mem::take(&mut self.vm);
            self.out.push(vm.status()?);
        }
        self.path.pop();
        Ok(())
    }
}

impl StatusRead {
    fn status(self) -> Result<InstanceStatus, CloudError> {
        let id = self
            .id
            .map(|i| i.trim().to_string())
            .filter(|i| !i.is_empty())
            .ok_or_else(|| CloudError::unreadable("an instance status without an instanceId"))?;
        let mut checks = [Check::NOT_APPLICABLE; 3];
        for (i, read) in self.checks.into_iter().enumerate() {
            let Some((word, since)) = read else { continue };
            let word = word.trim();
            let status = CheckStatus::parse(word).ok_or_else(|| {
                CloudError::unreadable(format!("instance {id}'s {} as '{word}'", CHECKS[i]))
            })?;
            checks[i] = Check {
                status,
                impaired_since_ms: since.map(|t| stamp_ms(t.trim(), &id)).transpose()?,
            };
        }
        let mut events = Vec::new();
        for (code, description, not_before) in self.events {
            let description = description.trim().to_string();
            if ScheduledEvent::is_over(&description) {
                continue;
            }
            let code = EventCode::parse(code.trim()).ok_or_else(|| {
                CloudError::unreadable(format!("instance {id}'s event code '{}'", code.trim()))
            })?;
            let not_before = not_before.ok_or_else(|| {
                CloudError::unreadable(format!("instance {id}'s event without notBefore"))
            })?;
            events.push(ScheduledEvent {
                code,
                not_before_ms: stamp_ms(not_before.trim(), &id)?,
                description,
            });
        }
        let [instance, system, ebs] = checks;
        Ok(InstanceStatus {
            instance,
            system,
            ebs,
            events,
            id,
        })
    }
}

/// An ISO 8601 time of EC2's, in Unix ms.
fn stamp_ms(text: &str, id: &str) -> Result<i64, CloudError> {
    phantom_model::time::parse_timestamp(text)
        .map(|t| (t.unix_timestamp_nanos() / 1_000_000) as i64)
        .ok_or_else(|| CloudError::unreadable(format!("instance {id}'s status time '{text}'")))
}

/// The VMs of a DescribeInstances answer; one without a member EC2 always gives is an error.
fn instances(doc: &Node) -> Result<Vec<Tagged>, CloudError> {
    items_of(doc, "reservationSet")
        .into_iter()
        .flat_map(|r| items_of(r, "instancesSet"))
        .map(tagged)
        .collect()
}

/// One instance element (DescribeInstances', RunInstances'), with Phantom's tags; one without a
/// member EC2 always gives is an error.
pub(crate) fn tagged(i: &Node) -> Result<Tagged, CloudError> {
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
    Ok(Tagged {
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
            market: Market::of_lifecycle(i.path(&["instanceLifecycle"]).map(|n| n.text.as_str())),
            id: id.clone(),
            pool: tag(TAG_WARM_POOL).is_some(),
        },
        owner: tag(TAG_OWNER),
        group: tag(TAG_GROUP),
        group_id: tag(TAG_GROUP_ID),
        private_ip: i.path(&["privateIpAddress"]).map(|n| n.text.clone()),
        public_ip: i.path(&["ipAddress"]).map(|n| n.text.clone()),
    })
}

/// What instance `id` of a DescribeInstances answer was launched with (None if absent); a member
/// EC2 always gives missing is an error.
fn launched_with(doc: &Node, id: &str) -> Result<Option<LaunchedWith>, CloudError> {
    let Some(i) = items_of(doc, "reservationSet")
        .into_iter()
        .flat_map(|r| items_of(r, "instancesSet"))
        .find(|i| i.path(&["instanceId"]).is_some_and(|n| n.text == id))
    else {
        return Ok(None);
    };
    let some = |path: &[&str]| {
        i.path(path)
            .map(|n| n.text.clone())
            .filter(|t| !t.is_empty())
    };
    let needed = |path: &[&str], what: &str| {
        some(path).ok_or_else(|| CloudError::unreadable(format!("instance {id} without {what}")))
    };
    Ok(Some(LaunchedWith {
        image_id: needed(&["imageId"], "an image")?,
        instance_type: needed(&["instanceType"], "an instance type")?,
        key_name: some(&["keyName"]),
        security_groups: items_of(i, "groupSet")
            .into_iter()
            .filter_map(|g| g.path(&["groupId"]).map(|n| n.text.clone()))
            .collect(),
        kernel_id: some(&["kernelId"]),
        ramdisk_id: some(&["ramdiskId"]),
        monitoring: some(&["monitoring", "state"])
            .is_some_and(|m| m == "enabled" || m == "pending"),
        ebs_optimized: some(&["ebsOptimized"]).is_some_and(|b| b == "true"),
        iam_instance_profile: some(&["iamInstanceProfile", "arn"]),
        tenancy: some(&["placement", "tenancy"]),
        zone: needed(&["placement", "availabilityZone"], "an availability zone")?,
        subnet: some(&["subnetId"]),
    }))
}

/// One page of a look: each VM's id and state, and the next page's token.
type StatesPage = (Vec<(String, CloudState)>, Option<String>);

/// The id and state of each instance of a DescribeInstances answer, and its next page's token,
/// read as a stream of events: a look reads tens of megabytes a second at 100,000 VMs, and a tree
/// of every element costs several times as much (docs/benchmarks.md, "Looks"). An instance
/// without an id or a state is an error, never skipped.
pub(crate) fn instance_states(text: &str) -> Result<StatesPage, CloudError> {
    use quick_xml::events::Event;
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum At {
        Reservations,
        Item,
        Instances,
        Id,
        State,
        Name,
        Token,
        Other,
    }
    let unreadable =
        |e: &dyn std::fmt::Display| CloudError::unreadable(format!("XML that does not read: {e}"));
    let mut reader = quick_xml::Reader::from_str(text);
    let mut path: Vec<At> = Vec::with_capacity(16);
    let (mut id, mut state): (Option<String>, Option<String>) = (None, None);
    let mut token = None;
    let mut out = Vec::new();
    // The instance element: <Response><reservationSet><item><instancesSet><item>.
    let instance = [At::Reservations, At::Item, At::Instances, At::Item];
    let in_instance = |path: &[At]| path.len() >= 5 && path[1..5] == instance;
    loop {
        match reader.read_event().map_err(|e| unreadable(&e))? {
            Event::Start(e) => {
                let at = match e.local_name().as_ref() {
                    "reservationSet" => At::Reservations,
                    "item" => At::Item,
                    "instancesSet" => At::Instances,
                    "instanceId" => At::Id,
                    "instanceState" => At::State,
                    "name" => At::Name,
                    "nextToken" => At::Token,
                    _ => At::Other,
                };
                path.push(at);
            }
            Event::Text(t) => {
                let text = || t.xml10_content().trim().to_string();
                if in_instance(&path) && path.len() == 6 && path[5] == At::Id {
                    id = Some(text());
                } else if in_instance(&path)
                    && path.len() == 7
                    && path[5..7] == [At::State, At::Name]
                {
                    state = Some(text());
                } else if path.len() == 2 && path[1] == At::Token {
                    token = Some(text()).filter(|t| !t.is_empty());
                }
            }
            Event::End(_) => {
                if path.len() == 5 && in_instance(&path) {
                    match (id.take(), state.take()) {
                        (Some(i), Some(s)) => out.push((i, CloudState::parse(&s))),
                        (i, _) => {
                            return Err(CloudError::unreadable(format!(
                                "an instance without an instanceId or a state ({i:?})"
                            )))
                        }
                    }
                }
                path.pop();
            }
            Event::Eof => break,
            _ => {}
        }
    }
    Ok((out, token))
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
    fn a_look_reads_what_the_tree_reads_of_each_instance() {
        let (states, token) = instance_states(INSTANCES).expect("readable");
        let tree: Vec<(String, CloudState)> = instances(&parse(INSTANCES).expect("xml"))
            .expect("readable")
            .into_iter()
            .map(|t| (t.seen.id, t.seen.state))
            .collect();
        assert_eq!(states, tree);
        assert_eq!(states[1], ("i-2".to_string(), CloudState::Stopped));
        assert_eq!(token, None);
        let paged = INSTANCES.replace(
            "<requestId>r</requestId>",
            "<requestId>r</requestId><nextToken>t-2</nextToken>",
        );
        assert_eq!(
            instance_states(&paged).expect("readable").1.as_deref(),
            Some("t-2")
        );
        let stateless =
            INSTANCES.replace("<instanceState><name>stopped</name></instanceState>", "");
        assert!(instance_states(&stateless).is_err());
        assert!(instance_states("<a><b></a>").is_err());
    }

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

    /// One VM's statuses as EC2 answers DescribeInstanceStatus (2016-11-15,
    /// `IncludeAllInstances`): three checks with their details, about 900 bytes; `impaired` has
    /// its system check failing since a time and a scheduled reboot.
    fn ec2_status(i: usize, impaired: bool) -> String {
        let (system, since, events) = if impaired {
            (
                "impaired",
                "<impairedSince>2026-11-22T10:05:00.000Z</impairedSince>",
                "<eventsSet><item><code>system-reboot</code><description>scheduled reboot</description>\
<notBefore>2026-11-30T02:00:00.000Z</notBefore><notAfter>2026-11-30T04:00:00.000Z</notAfter></item></eventsSet>",
            )
        } else {
            ("ok", "", "")
        };
        let passed = if impaired { "failed" } else { "passed" };
        format!(
            r#"<item><instanceId>i-0{i:016x}</instanceId><availabilityZone>us-east-1a</availabilityZone>
<availabilityZoneId>use1-az1</availabilityZoneId><instanceState><code>16</code><name>running</name></instanceState>
<systemStatus><status>{system}</status><details><item><name>reachability</name><status>{passed}</status>{since}</item></details></systemStatus>
<instanceStatus><status>ok</status><details><item><name>reachability</name><status>passed</status></item></details></instanceStatus>
<attachedEbsStatus><status>ok</status><details><item><name>reachability</name><status>passed</status></item></details></attachedEbsStatus>
{events}</item>"#
        )
    }

    fn ec2_status_answer(vms: usize) -> String {
        let items: String = (0..vms).map(|i| ec2_status(i, i == 1)).collect();
        format!(
            r#"<?xml version="1.0" encoding="UTF-8"?>
<DescribeInstanceStatusResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"><requestId>r</requestId>
<instanceStatusSet>{items}</instanceStatusSet><nextToken>t-2</nextToken></DescribeInstanceStatusResponse>"#
        )
    }

    #[test]
    fn reads_each_vms_checks_and_scheduled_events() {
        let (statuses, token) = instance_statuses(&ec2_status_answer(2)).expect("readable");
        assert_eq!(token.as_deref(), Some("t-2"));
        assert_eq!(statuses.len(), 2);
        assert_eq!(statuses[0].id, "i-00000000000000000");
        assert_eq!(statuses[0].system, Check::OK);
        assert!(statuses[0].events.is_empty());
        let sick = &statuses[1];
        assert_eq!(sick.system.status, CheckStatus::Impaired);
        assert_eq!(sick.system.impaired_since_ms, Some(1_795_341_900_000));
        assert_eq!(sick.instance, Check::OK);
        assert_eq!(sick.ebs, Check::OK);
        assert_eq!(sick.events.len(), 1);
        assert_eq!(sick.events[0].code, EventCode::SystemReboot);
        assert_eq!(sick.events[0].not_before_ms, 1_796_004_000_000);
        // A check EC2 does not write is an error, not a pass; so is a check with no status.
        let odd = ec2_status_answer(1).replacen("<status>ok</status>", "<status>fine</status>", 1);
        let e = instance_statuses(&odd).unwrap_err();
        assert_eq!(e.code, "UnreadableAnswer");
        assert!(e.message.contains("systemStatus as 'fine'"), "{e}");
        let empty = ec2_status_answer(1).replacen(
            "<attachedEbsStatus><status>ok</status><details><item><name>reachability</name>\
             <status>passed</status></item></details></attachedEbsStatus>",
            "<attachedEbsStatus/>",
            1,
        );
        assert!(empty.contains("<attachedEbsStatus/>"));
        assert!(instance_statuses(&empty).is_err());
        // A check not written at all is not applicable (a cloud without EBS checks).
        let absent = empty.replace("<attachedEbsStatus/>", "");
        let (read, _) = instance_statuses(&absent).expect("readable");
        assert_eq!(read[0].ebs, Check::NOT_APPLICABLE);
        // A status without its VM's id, or an event without its time, is an error.
        assert!(
            instance_statuses(&ec2_status_answer(1).replace("i-00000000000000000", "")).is_err()
        );
        let timeless =
            ec2_status_answer(2).replace("<notBefore>2026-11-30T02:00:00.000Z</notBefore>", "");
        assert!(instance_statuses(&timeless).is_err());
        // An event that is over is not one to come; entities read as their characters; the first
        // impairedSince is the check's.
        let over = ec2_status_answer(2).replace(
            "<description>scheduled reboot</description>",
            "<description>[Completed] reboot &amp; patch</description>",
        );
        assert!(instance_statuses(&over).expect("readable").0[1]
            .events
            .is_empty());
        let amp = ec2_status_answer(2).replace(
            "<description>scheduled reboot</description>",
            "<description>reboot &amp; patch &#x263A;</description>",
        );
        let read = instance_statuses(&amp).expect("readable").0;
        assert_eq!(read[1].events[0].description, "reboot & patch \u{263A}");
        let twice = ec2_status_answer(2).replace(
            "</impairedSince>",
            "</impairedSince><impairedSince>2026-11-22T11:00:00.000Z</impairedSince>",
        );
        let read = instance_statuses(&twice).expect("readable").0;
        assert_eq!(read[1].system.impaired_since_ms, Some(1_795_341_900_000));
        assert!(instance_statuses("<a><b></a>").is_err());
    }

    /// One instance as EC2 answers DescribeInstances (2016-11-15), with a network interface, a
    /// volume and Phantom's tags: about 5 KB.
    fn ec2_instance(i: usize) -> String {
        format!(
            r#"<item><instanceId>i-0{i:016x}</instanceId><imageId>ami-0abcdef1234567890</imageId>
<instanceState><code>16</code><name>running</name></instanceState>
<privateDnsName>ip-10-0-1-17.ec2.internal</privateDnsName><dnsName>ec2-3-91-1-17.compute-1.amazonaws.com</dnsName>
<reason/><keyName>deploy</keyName><amiLaunchIndex>0</amiLaunchIndex><productCodes/>
<instanceType>t3.micro</instanceType><launchTime>2026-11-22T10:00:00.000Z</launchTime>
<placement><availabilityZone>us-east-1a</availabilityZone><groupName/><tenancy>default</tenancy></placement>
<monitoring><state>disabled</state></monitoring><subnetId>subnet-0123456789abcdef0</subnetId>
<vpcId>vpc-0123456789abcdef0</vpcId><privateIpAddress>10.0.1.17</privateIpAddress>
<ipAddress>3.91.1.17</ipAddress><sourceDestCheck>true</sourceDestCheck>
<groupSet><item><groupId>sg-0123456789abcdef0</groupId><groupName>web</groupName></item></groupSet>
<architecture>x86_64</architecture><rootDeviceType>ebs</rootDeviceType><rootDeviceName>/dev/xvda</rootDeviceName>
<blockDeviceMapping><item><deviceName>/dev/xvda</deviceName><ebs><volumeId>vol-0123456789abcdef0</volumeId>
<status>attached</status><attachTime>2026-11-22T10:00:01.000Z</attachTime><deleteOnTermination>true</deleteOnTermination></ebs></item></blockDeviceMapping>
<virtualizationType>hvm</virtualizationType><clientToken>web-0001-0000000000000000000000000000</clientToken>
<tagSet><item><key>phantom:owner</key><value>olga</value></item><item><key>phantom:group</key><value>web</value></item>
<item><key>phantom:group-id</key><value>g-0123456789abcdef</value></item><item><key>Name</key><value>web</value></item></tagSet>
<hypervisor>xen</hypervisor>
<networkInterfaceSet><item><networkInterfaceId>eni-0123456789abcdef0</networkInterfaceId><subnetId>subnet-0123456789abcdef0</subnetId>
<vpcId>vpc-0123456789abcdef0</vpcId><description/><ownerId>123456789012</ownerId><status>in-use</status>
<macAddress>0e:12:34:56:78:9a</macAddress><privateIpAddress>10.0.1.17</privateIpAddress><privateDnsName>ip-10-0-1-17.ec2.internal</privateDnsName>
<sourceDestCheck>true</sourceDestCheck><groupSet><item><groupId>sg-0123456789abcdef0</groupId><groupName>web</groupName></item></groupSet>
<attachment><attachmentId>eni-attach-0123456789abcdef0</attachmentId><deviceIndex>0</deviceIndex><status>attached</status>
<attachTime>2026-11-22T10:00:00.000Z</attachTime><deleteOnTermination>true</deleteOnTermination><networkCardIndex>0</networkCardIndex></attachment>
<association><publicIp>3.91.1.17</publicIp><publicDnsName>ec2-3-91-1-17.compute-1.amazonaws.com</publicDnsName><ipOwnerId>amazon</ipOwnerId></association>
<privateIpAddressesSet><item><privateIpAddress>10.0.1.17</privateIpAddress><privateDnsName>ip-10-0-1-17.ec2.internal</privateDnsName><primary>true</primary>
<association><publicIp>3.91.1.17</publicIp><publicDnsName>ec2-3-91-1-17.compute-1.amazonaws.com</publicDnsName><ipOwnerId>amazon</ipOwnerId></association></item></privateIpAddressesSet>
<ipv6AddressesSet/><interfaceType>interface</interfaceType></item></networkInterfaceSet>
<ebsOptimized>false</ebsOptimized><enaSupport>true</enaSupport><cpuOptions><coreCount>1</coreCount><threadsPerCore>2</threadsPerCore></cpuOptions>
<capacityReservationSpecification><capacityReservationPreference>open</capacityReservationPreference></capacityReservationSpecification>
<hibernationOptions><configured>false</configured></hibernationOptions><licenseSet/>
<metadataOptions><state>applied</state><httpTokens>required</httpTokens><httpPutResponseHopLimit>2</httpPutResponseHopLimit>
<httpEndpoint>enabled</httpEndpoint><httpProtocolIpv6>disabled</httpProtocolIpv6><instanceMetadataTags>disabled</instanceMetadataTags></metadataOptions>
<enclaveOptions><enabled>false</enabled></enclaveOptions><bootMode>uefi-preferred</bootMode><platformDetails>Linux/UNIX</platformDetails>
<usageOperation>RunInstances</usageOperation><usageOperationUpdateTime>2026-11-22T10:00:00.000Z</usageOperationUpdateTime>
<privateDnsNameOptions><hostnameType>ip-name</hostnameType><enableResourceNameDnsARecord>false</enableResourceNameDnsARecord>
<enableResourceNameDnsAAAARecord>false</enableResourceNameDnsAAAARecord></privateDnsNameOptions>
<maintenanceOptions><autoRecovery>default</autoRecovery></maintenanceOptions><currentInstanceBootMode>legacy-bios</currentInstanceBootMode></item>"#
        )
    }

    fn ec2_answer(vms: usize) -> String {
        let items: String = (0..vms).map(ec2_instance).collect();
        format!(
            r#"<?xml version="1.0" encoding="UTF-8"?>
<DescribeInstancesResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"><requestId>r</requestId>
<reservationSet><item><reservationId>r-1</reservationId><ownerId>123456789012</ownerId><groupSet/>
<instancesSet>{items}</instancesSet></item></reservationSet></DescribeInstancesResponse>"#
        )
    }

    /// Benchmark (docs/benchmarks.md, "Looks"): `cargo test --release -p phantom-seams --lib
    /// look_reading_speed -- --ignored --nocapture`; a look's two answers, DescribeInstances' and
    /// DescribeInstanceStatus'.
    #[test]
    #[ignore]
    fn look_reading_speed() {
        for vms in [25, 1000] {
            let text = ec2_answer(vms);
            let runs = 20_000 / vms;
            let t = std::time::Instant::now();
            for _ in 0..runs {
                let tree = parse(&text).expect("xml");
                assert_eq!(instances(&tree).expect("readable").len(), vms);
            }
            let tree_s = t.elapsed().as_secs_f64();
            let t = std::time::Instant::now();
            for _ in 0..runs {
                assert_eq!(instance_states(&text).expect("readable").0.len(), vms);
            }
            let stream_s = t.elapsed().as_secs_f64();
            let mb = (text.len() * runs) as f64 / 1e6;
            println!(
                "{vms} VMs an answer ({} bytes): tree {:.0} MB/s ({:.1} us a VM), stream {:.0} MB/s ({:.1} us a VM)",
                text.len(),
                mb / tree_s,
                tree_s * 1e6 / (vms * runs) as f64,
                mb / stream_s,
                stream_s * 1e6 / (vms * runs) as f64,
            );
            // The look's other call: DescribeInstanceStatus of the same VMs, as a tree of every
            // element and as the look reads it.
            let text = ec2_status_answer(vms);
            let t = std::time::Instant::now();
            for _ in 0..runs {
                assert_eq!(parse(&text).expect("xml").children.len(), 3);
            }
            let tree_s = t.elapsed().as_secs_f64();
            let t = std::time::Instant::now();
            for _ in 0..runs {
                assert_eq!(instance_statuses(&text).expect("readable").0.len(), vms);
            }
            let stream_s = t.elapsed().as_secs_f64();
            let mb = (text.len() * runs) as f64 / 1e6;
            println!(
                "{vms} VMs' statuses ({} bytes): tree (the elements alone) {:.0} MB/s ({:.1} us a VM), stream {:.0} MB/s ({:.1} us a VM)",
                text.len(),
                mb / tree_s,
                tree_s * 1e6 / (vms * runs) as f64,
                mb / stream_s,
                stream_s * 1e6 / (vms * runs) as f64,
            );
        }
    }
}
