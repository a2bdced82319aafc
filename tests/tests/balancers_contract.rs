//! One contract, two adapters of a cloud's load balancers (`phantom_seams::cloud::Balancers`): the
//! memory cloud (in process) and the clouds' Query client (`elb_query`: classic ELB and ELBv2)
//! against a moto server this test starts, its load balancer and target group made with the AWS
//! CLI. What the provisioner relies on: a source's drain time (none for one that does not
//! exist), a running VM registered (twice is no error) and then reported passing, deregistered
//! and then not reported.
//!
//! VPC Lattice target groups: moto (5.2) finds them (GetTargetGroup) but has none of their
//! targets' calls, so registering, deregistering and ListTargets are held to VPC Lattice's
//! REST-JSON shapes (botocore's model) by a server in this test that answers as the service
//! documents it, pages and refusals included.

use phantom_e2e::argv;
use phantom_e2e::moto::Moto;
use phantom_model::time::ManualClock;
use phantom_rules::traffic::{source, Source};
use phantom_seams::cloud::ec2_query::Ec2Lookups;
use phantom_seams::cloud::memory::MemoryCloud;
use phantom_seams::cloud::{Balancers, ConnectLookup};
use phantom_seams::store::CloudRecord;
use std::sync::Arc;

/// A classic load balancer draining 30 s, a target group with a 120 s deregistration delay, and
/// a running VM, on one cloud.
struct Setup {
    classic: Source,
    group: Source,
    /// A VPC Lattice target group (no drain time to read: 0).
    lattice: Source,
    vm: String,
}

const LATTICE: &str = "arn:aws:vpc-lattice:us-east-1:123456789012:targetgroup/tg-0123456789abcdef0";

async fn contract(b: &dyn Balancers, s: &Setup) {
    let missing = [
        source("no-such-lb", None).unwrap(),
        source(
            &s.group
                .identifier
                .replace("targetgroup/web", "targetgroup/none"),
            None,
        )
        .unwrap(),
        source(
            "arn:aws:vpc-lattice:us-east-1:123456789012:targetgroup/tg-00000000000000000",
            None,
        )
        .unwrap(),
    ];
    for m in &missing {
        assert_eq!(b.drain_secs(m).await.unwrap(), None, "{m:?}");
    }
    assert_eq!(b.drain_secs(&s.classic).await.unwrap(), Some(30));
    assert_eq!(b.drain_secs(&s.group).await.unwrap(), Some(120));
    assert_eq!(b.drain_secs(&s.lattice).await.unwrap(), Some(0));
    for src in [&s.classic, &s.group] {
        b.register(src, std::slice::from_ref(&s.vm)).await.unwrap();
        // Registering again is no error.
        b.register(src, std::slice::from_ref(&s.vm)).await.unwrap();
        let health = b.health(src).await.unwrap();
        assert_eq!(health.get(&s.vm), Some(&true), "{src:?}: {health:?}");
        b.deregister(src, std::slice::from_ref(&s.vm))
            .await
            .unwrap();
        let health = b.health(src).await.unwrap();
        assert_eq!(health.get(&s.vm), None, "{src:?}: {health:?}");
    }
}

#[tokio::test]
async fn the_memory_cloud_keeps_the_load_balancer_contract() {
    let cloud = MemoryCloud::new(
        &["us-east-1a"],
        Arc::new(ManualClock::starting_at(1_000)),
        phantom_seams::fault::none(),
    );
    let setup = Setup {
        classic: source("web", None).unwrap(),
        group: source(
            "arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/web/50dc6c495c0c9188",
            None,
        )
        .unwrap(),
        lattice: source(LATTICE, None).unwrap(),
        vm: cloud.outside(),
    };
    cloud.add_balancer(&setup.classic, 30);
    cloud.add_balancer(&setup.group, 120);
    cloud.add_balancer(&setup.lattice, 0);
    contract(&cloud, &setup).await;
    lattice_targets(&cloud, &setup.lattice, &setup.vm).await;
    // The memory cloud refuses a VM that is not there, as AWS does (InvalidTarget, InvalidInstance;
    // moto takes any id), and fails a VM's check when told to (moto knows no such thing).
    assert!(cloud
        .register(&setup.group, &["i-00000000000000bad".to_string()])
        .await
        .is_err());
    cloud
        .register(&setup.group, std::slice::from_ref(&setup.vm))
        .await
        .unwrap();
    cloud.fail_health_check(&setup.group.identifier, &setup.vm, true);
    let health = cloud.health(&setup.group).await.unwrap();
    assert_eq!(health.get(&setup.vm), Some(&false));
}

fn moto_setup(moto: &Moto) -> Setup {
    let vpc = moto.aws(&["ec2", "describe-vpcs"])["Vpcs"][0]["VpcId"]
        .as_str()
        .unwrap()
        .to_string();
    moto.aws(&argv!("elb create-load-balancer --load-balancer-name web --listeners Protocol=HTTP,LoadBalancerPort=80,InstanceProtocol=HTTP,InstancePort=80 --availability-zones us-east-1a"));
    moto.aws(&[
        "elb",
        "modify-load-balancer-attributes",
        "--load-balancer-name",
        "web",
        "--load-balancer-attributes",
        "ConnectionDraining={Enabled=true,Timeout=30}",
    ]);
    let tg = moto.aws(&argv!(
        "elbv2 create-target-group --name web --protocol HTTP --port 80 --vpc-id",
        &vpc,
        "--target-type instance"
    ))["TargetGroups"][0]["TargetGroupArn"]
        .as_str()
        .unwrap()
        .to_string();
    moto.aws(&argv!(
        "elbv2 modify-target-group-attributes --target-group-arn",
        &tg,
        "--attributes Key=deregistration_delay.timeout_seconds,Value=120"
    ));
    let vm = moto.aws(&argv!(
        "ec2 run-instances --image-id ami-1e749f67 --count 1 --instance-type t2.micro"
    ))["Instances"][0]["InstanceId"]
        .as_str()
        .unwrap()
        .to_string();
    let lattice = moto.aws(&argv!(
        "vpc-lattice create-target-group --name web --type INSTANCE --config",
        &format!("port=80,protocol=HTTP,vpcIdentifier={vpc}")
    ))["arn"]
        .as_str()
        .unwrap()
        .to_string();
    Setup {
        classic: source("web", None).unwrap(),
        group: source(&tg, None).unwrap(),
        lattice: source(&lattice, None).unwrap(),
        vm,
    }
}

#[tokio::test]
async fn the_query_client_keeps_the_load_balancer_contract_on_moto() {
    let moto = Moto::start();
    let setup = moto_setup(&moto);
    let (cloud, creds) = phantom_e2e::moto::cloud("contract", &moto.url);
    let lookups = Ec2Lookups::default();
    let b = lookups
        .balancers(&cloud, &creds)
        .expect("a cloud with load balancers");
    contract(b.as_ref(), &setup).await;
    let without = CloudRecord {
        load_balancers: false,
        events: false,
        status_checks: true,
        ..cloud
    };
    assert!(lookups.balancers(&without, &creds).is_none());
}

/// What the provisioner relies on of a VPC Lattice target group's targets: a VM registered (twice
/// is no error) is reported by its health once known, deregistered is not reported.
async fn lattice_targets(b: &dyn Balancers, tg: &Source, vm: &str) {
    let vm = vm.to_string();
    b.register(tg, std::slice::from_ref(&vm)).await.unwrap();
    b.register(tg, std::slice::from_ref(&vm)).await.unwrap();
    assert_eq!(b.health(tg).await.unwrap().get(&vm), Some(&true));
    b.deregister(tg, std::slice::from_ref(&vm)).await.unwrap();
    assert_eq!(b.health(tg).await.unwrap().get(&vm), None);
}

/// VPC Lattice's target calls as the service answers them (botocore's `vpc-lattice` model):
/// `POST /targetgroups/{id}/registertargets`, `.../deregistertargets` and `.../listtargets`
/// (a page of one target, then `nextToken`), a refused target in `unsuccessful`, and an unknown
/// target group a 404 with `x-amzn-ErrorType`. Each request is checked to be signed for
/// `vpc-lattice`.
mod lattice_service {
    use http_body_util::BodyExt;
    use hyper::{Request, Response};
    use serde_json::{json, Value};
    use std::collections::BTreeMap;
    use std::sync::{Arc, Mutex};

    pub const TG: &str = "tg-0123456789abcdef0";

    type Targets = Arc<Mutex<BTreeMap<String, &'static str>>>;

    async fn answer(
        req: Request<hyper::body::Incoming>,
        targets: Targets,
    ) -> Result<Response<String>, std::convert::Infallible> {
        let signed = req
            .headers()
            .get("authorization")
            .and_then(|a| a.to_str().ok())
            .is_some_and(|a| a.contains("/vpc-lattice/aws4_request"));
        let (method, path) = (req.method().clone(), req.uri().path().to_string());
        let query = req.uri().query().unwrap_or_default().to_string();
        let body = req.into_body().collect().await.unwrap().to_bytes();
        let input: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let reply = |status: u16, error: Option<&str>, v: Value| {
            let mut r = Response::builder().status(status);
            if let Some(e) = error {
                r = r.header(
                    "x-amzn-ErrorType",
                    format!("{e}:http://internal.amazon.com/"),
                );
            }
            Ok(r.body(v.to_string()).unwrap())
        };
        if !signed {
            return reply(
                403,
                Some("AccessDeniedException"),
                json!({"message": "unsigned"}),
            );
        }
        let Some(rest) = path.strip_prefix(&format!("/targetgroups/{TG}")) else {
            return reply(
                404,
                Some("ResourceNotFoundException"),
                json!({"message": "Target group not found", "resourceId": path, "resourceType": "TARGET_GROUP"}),
            );
        };
        let ids = || -> Vec<String> {
            input["targets"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["id"].as_str().unwrap().to_string())
                .collect()
        };
        let mut held = targets.lock().unwrap();
        match (method.as_str(), rest) {
            ("GET", "") => reply(
                200,
                None,
                json!({"id": TG, "type": "INSTANCE", "status": "ACTIVE"}),
            ),
            ("POST", "/registertargets") => {
                let (bad, good): (Vec<String>, Vec<String>) =
                    ids().into_iter().partition(|id| id.contains("bad"));
                for id in &good {
                    held.insert(id.clone(), "HEALTHY");
                }
                let unsuccessful: Vec<Value> = bad
                    .iter()
                    .map(|id| json!({"id": id, "failureCode": "InvalidTarget", "failureMessage": "The target is not running"}))
                    .collect();
                let successful: Vec<Value> = good
                    .iter()
                    .map(|id| json!({"id": id, "port": 80}))
                    .collect();
                reply(
                    200,
                    None,
                    json!({"successful": successful, "unsuccessful": unsuccessful}),
                )
            }
            ("POST", "/deregistertargets") => {
                for id in ids() {
                    held.remove(&id);
                }
                reply(200, None, json!({"successful": [], "unsuccessful": []}))
            }
            ("POST", "/listtargets") => {
                // One target a page: the second page is asked for by the token.
                let after = query
                    .split('&')
                    .find_map(|kv| kv.strip_prefix("nextToken="))
                    .map(|t| t.replace("%2F", "/"));
                let mut rest = held
                    .iter()
                    .filter(|(id, _)| after.as_ref().is_none_or(|a| *id > a));
                let page: Vec<Value> = rest
                    .next()
                    .map(|(id, status)| json!({"id": id, "port": 80, "status": status}))
                    .into_iter()
                    .collect();
                let next = rest.next().and(page.first().map(|p| p["id"].clone()));
                let mut out = json!({"items": page});
                if let Some(n) = next {
                    out["nextToken"] = n;
                }
                reply(200, None, out)
            }
            _ => reply(
                404,
                Some("UnknownOperationException"),
                json!({"message": "no such call"}),
            ),
        }
    }

    /// Serves on a free port of 127.0.0.1: its URL and the targets it holds.
    pub async fn start() -> (String, Targets) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let targets: Targets = Arc::default();
        let held = targets.clone();
        tokio::spawn(async move {
            loop {
                let (conn, _) = listener.accept().await.unwrap();
                let held = held.clone();
                tokio::spawn(async move {
                    let io = hyper_util::rt::TokioIo::new(conn);
                    let service = hyper::service::service_fn(move |r| answer(r, held.clone()));
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(io, service)
                        .await;
                });
            }
        });
        (url, targets)
    }
}

#[tokio::test]
async fn the_lattice_client_keeps_the_target_contract_in_vpc_lattices_shapes() {
    let (url, targets) = lattice_service::start().await;
    let (cloud, creds) = phantom_e2e::moto::cloud("contract", &url);
    let b = Ec2Lookups::default()
        .balancers(&cloud, &creds)
        .expect("a cloud with load balancers");
    let tg = source(
        &format!(
            "arn:aws:vpc-lattice:us-east-1:123456789012:targetgroup/{}",
            lattice_service::TG
        ),
        None,
    )
    .unwrap();
    assert_eq!(b.drain_secs(&tg).await.unwrap(), Some(0));
    lattice_targets(b.as_ref(), &tg, "i-0000000000000000a").await;
    // Three targets come back over three pages, each judged; UNAVAILABLE is not.
    let three: Vec<String> = ["i-1", "i-2", "i-3"].map(String::from).to_vec();
    b.register(&tg, &three).await.unwrap();
    targets.lock().unwrap().insert("i-2".into(), "UNHEALTHY");
    targets.lock().unwrap().insert("i-3".into(), "UNAVAILABLE");
    let health = b.health(&tg).await.unwrap();
    assert_eq!(
        health.into_iter().collect::<Vec<_>>(),
        [("i-1".to_string(), true), ("i-2".to_string(), false)]
    );
    // A target the service refuses is the call's error, in its words.
    let e = b.register(&tg, &["i-bad".to_string()]).await.unwrap_err();
    assert_eq!(e.code, "InvalidTarget", "{e}");
    // An unknown target group: none (ResourceNotFoundException from its header).
    let other = source(
        "arn:aws:vpc-lattice:us-east-1:123456789012:targetgroup/tg-11111111111111111",
        None,
    )
    .unwrap();
    assert_eq!(b.drain_secs(&other).await.unwrap(), None);
}
