//! One contract, two adapters of a cloud's load balancers (`phantom_seams::cloud::Balancers`): the
//! memory cloud (in process) and the clouds' Query client (`elb_query`: classic ELB and ELBv2)
//! against a moto server this test starts, its load balancer and target group made with the AWS
//! CLI. What the provisioner relies on: a source's drain time (none for one that does not
//! exist), a running VM registered (twice is no error) and then reported passing, deregistered
//! and then not reported.

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
    vm: String,
}

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
    ];
    for m in &missing {
        assert_eq!(b.drain_secs(m).await.unwrap(), None, "{m:?}");
    }
    assert_eq!(b.drain_secs(&s.classic).await.unwrap(), Some(30));
    assert_eq!(b.drain_secs(&s.group).await.unwrap(), Some(120));
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
        vm: cloud.outside(),
    };
    cloud.add_balancer(&setup.classic, 30);
    cloud.add_balancer(&setup.group, 120);
    contract(&cloud, &setup).await;
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
    Setup {
        classic: source("web", None).unwrap(),
        group: source(&tg, None).unwrap(),
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
