//! One contract, two adapters of the lookups an action makes before it answers
//! (`phantom_seams::cloud::Lookup`): the memory cloud (in process) and the EC2 Query client
//! (`ec2_query`, `ec2_cloud`: the api's and the provisioner's) against a moto server this test
//! starts; one for stopping and starting VMs (a warm pool's), launching spot VMs and reading
//! instance types, which both keep; and one for a user's catalog
//! (`phantom_seams::cloud::Catalog`: images, key pairs), which both have. What the in-process suite relies on of the memory
//! cloud is what EC2 answers.

use phantom_e2e::moto::Moto;
use phantom_model::status::CheckStatus;
use phantom_model::time::ManualClock;
use phantom_rules::reconcile::CloudState;
use phantom_rules::template::TemplateRef;
use phantom_seams::cloud::ec2_cloud::Ec2Clouds;
use phantom_seams::cloud::ec2_query::Ec2Lookups;
use phantom_seams::cloud::memory::MemoryCloud;
use phantom_seams::cloud::{
    Catalog, Cloud, Connect, ConnectLookup, Lookup, Tagged, TAG_GROUP, TAG_GROUP_ID, TAG_OWNER,
};
use phantom_seams::store::{CloudCredentials, CloudRecord};
use std::sync::Arc;

/// What the contract needs on the cloud: a running VM of group `web` (id `g-web`), a stopped VM
/// of no group, a launch template `web` (one version) whose id is given, a subnet (id, zone) and
/// a zone (id, name).
struct Setup {
    running: String,
    stopped: String,
    template_id: String,
    subnet: (String, String),
    zone: (String, String),
}

fn by_name(name: &str, version: &str) -> TemplateRef {
    TemplateRef {
        id: None,
        name: Some(name.into()),
        version: version.into(),
    }
}

async fn contract(cloud: &dyn Lookup, s: &Setup) {
    // describe: the VMs that exist, with their state and Phantom's tags; unknown ids absent.
    let asked = [
        s.running.clone(),
        s.stopped.clone(),
        "i-0123456789abcdef0".to_string(),
    ];
    let mut found: Vec<Tagged> = cloud.describe(&asked).await.expect("describe");
    found.sort_by_key(|t| asked.iter().position(|a| *a == t.seen.id));
    assert_eq!(found.len(), 2, "{found:?}");
    assert_eq!(found[0].seen.id, s.running);
    assert!(found[0].seen.state.alive(), "{:?}", found[0].seen.state);
    assert_eq!(found[0].group.as_deref(), Some("web"));
    assert_eq!(found[0].group_id.as_deref(), Some("g-web"));
    assert!(!found[0].seen.zone.is_empty());
    // Its address, which a probe calls (a private one at least).
    assert!(
        found[0]
            .private_ip
            .as_deref()
            .is_some_and(|ip| ip.parse::<std::net::Ipv4Addr>().is_ok()),
        "{found:?}"
    );
    assert!(found[0].seen.launched_ms > 0);
    assert_eq!(found[1].seen.state, CloudState::Stopped);
    assert_eq!(
        (found[1].group.as_deref(), found[1].group_id.as_deref()),
        (None, None)
    );
    assert!(cloud.describe(&[]).await.expect("nothing asked").is_empty());

    // states: the VMs tagged as the owner's, and only those, with their state (the pulse's look).
    let mine = cloud.states("olga").await.expect("states");
    assert_eq!(mine.len(), 1, "{mine:?}");
    assert_eq!(mine[0].0, s.running);
    assert!(mine[0].1.alive(), "{:?}", mine[0].1);
    assert!(cloud.states("nobody").await.expect("states").is_empty());

    // template: by name or id, at $Latest, $Default or its version, with both its id and its
    // name and the number of that version (it has one); not another version or name.
    let web = phantom_seams::cloud::FoundTemplate {
        name: phantom_seams::cloud::TemplateName {
            launch_template_id: s.template_id.clone(),
            launch_template_name: "web".into(),
        },
        version: "1".into(),
    };
    for version in ["$Latest", "$Default", "1"] {
        assert_eq!(
            cloud
                .template(&by_name("web", version))
                .await
                .expect("asks"),
            Some(web.clone()),
            "web at {version}"
        );
    }
    let by_id = TemplateRef {
        id: Some(s.template_id.clone()),
        name: None,
        version: "$Latest".into(),
    };
    assert_eq!(cloud.template(&by_id).await.expect("asks"), Some(web));
    assert_eq!(
        cloud.template(&by_name("web", "9")).await.expect("asks"),
        None
    );
    assert_eq!(
        cloud
            .template(&by_name("nope", "$Latest"))
            .await
            .expect("asks"),
        None
    );
    let missing_id = TemplateRef {
        id: Some("lt-0123456789abcdef0".into()),
        name: None,
        version: "$Latest".into(),
    };
    assert_eq!(cloud.template(&missing_id).await.expect("asks"), None);

    // subnet_zones: each subnet that exists with its zone; an unknown one absent.
    let asked = [s.subnet.0.clone(), "subnet-0123456789abcdef0".to_string()];
    assert_eq!(
        cloud.subnet_zones(&asked).await.expect("subnets"),
        std::slice::from_ref(&s.subnet)
    );
    assert!(cloud
        .subnet_zones(&[])
        .await
        .expect("nothing asked")
        .is_empty());

    // statuses: a running VM's checks pass (or are still initializing) with nothing scheduled;
    // a stopped VM's do not apply; an unknown id is absent (EC2 refuses a call that names one:
    // the adapter asks again without it); nothing asked, nothing answered.
    // Past 300 ids they are read by pages of the account's VMs, kept to those asked.
    let unknown = "i-0123456789abcdef0".to_string();
    let mut asked = vec![s.running.clone(), s.stopped.clone(), unknown];
    for many in [false, true] {
        if many {
            asked.extend((0..300).map(|i| format!("i-f{i:016x}")));
        }
        let mut found = cloud.statuses(&asked).await.expect("statuses");
        found.sort_by_key(|st| asked.iter().position(|a| *a == st.id));
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(found[0].id, s.running);
        for check in [found[0].instance, found[0].system] {
            assert!(
                matches!(check.status, CheckStatus::Ok | CheckStatus::Initializing),
                "{found:?}"
            );
        }
        assert!(found[0].events.is_empty());
        assert_eq!(found[1].id, s.stopped);
        assert_eq!(found[1].system.status, CheckStatus::NotApplicable);
        assert_eq!(found[1].instance.status, CheckStatus::NotApplicable);
    }
    assert!(cloud.statuses(&[]).await.expect("nothing asked").is_empty());

    // zone_names: each zone id the cloud has with its name; an unknown one absent.
    let asked = [s.zone.0.clone(), "use1-az99".to_string()];
    assert_eq!(
        cloud.zone_names(&asked).await.expect("zones"),
        std::slice::from_ref(&s.zone)
    );
    assert!(cloud
        .zone_names(&[])
        .await
        .expect("nothing asked")
        .is_empty());
}

/// A user's catalog: the images (the one the setup has), key pairs imported and listed, a second
/// import of a name refused.
async fn catalog_contract(cloud: &dyn Catalog) {
    let images = cloud.images().await.expect("images");
    assert!(images.iter().any(|i| i.id == "ami-1e749f67"), "{images:?}");
    assert!(images.iter().all(|i| !i.id.is_empty()));
    assert!(cloud.key_pairs().await.expect("key pairs").is_empty());
    let fingerprint = cloud
        .import_key_pair("laptop", phantom_e2e::PUBLIC_KEY)
        .await
        .expect("import");
    assert!(!fingerprint.is_empty());
    let pairs = cloud.key_pairs().await.expect("key pairs");
    assert_eq!(pairs.len(), 1);
    assert_eq!(
        (pairs[0].name.as_str(), pairs[0].fingerprint.as_str()),
        ("laptop", fingerprint.as_str())
    );
    let e = cloud
        .import_key_pair("laptop", phantom_e2e::PUBLIC_KEY)
        .await
        .expect_err("the name is taken");
    assert_eq!(e.code, "InvalidKeyPair.Duplicate", "{e}");
    // (Material that is no key never reaches a cloud: the api checks it, and moto answers 500.)
}

#[tokio::test]
async fn the_memory_cloud_keeps_the_catalog_contract() {
    let cloud = MemoryCloud::new(
        &["us-east-1a"],
        Arc::new(ManualClock::starting_at(1_000)),
        phantom_seams::fault::none(),
    )
    .with_images(&["ami-1e749f67"]);
    catalog_contract(&cloud).await;
}

#[tokio::test]
async fn the_api_client_keeps_the_catalog_contract_on_moto() {
    let moto = Moto::start();
    let (cloud, creds) = record(&moto);
    let clouds = Ec2Lookups::default();
    catalog_contract(clouds.catalog(&cloud, &creds).as_ref()).await;
    assert!(clouds.reachable(&cloud).await);
}

/// What a warm pool asks of a cloud (`Cloud::stop`, `Cloud::start`), on a running VM: stopped,
/// stopped again (a no-op), started, started again (a no-op); an unknown VM is EC2's NotFound.
async fn power_contract(cloud: &dyn Cloud, running: &str) {
    let vm = [running.to_string()];
    let state = async || cloud.describe(&vm).await.expect("describe")[0].seen.state;
    cloud.stop(&vm, false).await.expect("stop a running VM");
    assert!(
        matches!(state().await, CloudState::Stopping | CloudState::Stopped),
        "stopped"
    );
    cloud.stop(&vm, false).await.expect("stop a stopped VM");
    assert_eq!(state().await, CloudState::Stopped);
    cloud.start(&vm).await.expect("start a stopped VM");
    assert!(state().await.alive(), "started");
    cloud.start(&vm).await.expect("start a started VM");
    let unknown = ["i-0123456789abcdef0".to_string()];
    let e = cloud.start(&unknown).await.expect_err("no such VM");
    assert_eq!(e.code, "InvalidInstanceID.NotFound", "{e}");
    let e = cloud.stop(&unknown, false).await.expect_err("no such VM");
    assert_eq!(e.code, "InvalidInstanceID.NotFound", "{e}");
}

/// What a MixedInstancesPolicy asks of a cloud: a spot VM from template `web` (RunInstances with
/// InstanceMarketOptions) shown as spot, an on-demand one as on-demand, by the provisioner's
/// client and by `lookup` (the api's, or the same); and t2.micro's spot prices.
async fn spot_contract(cloud: &dyn Cloud, lookup: &dyn Lookup) {
    use phantom_model::instance::{Market, Placement};
    use phantom_seams::cloud::launch::{requests, Source};
    let spec = phantom_rules::template::Spec {
        template: by_name("web", "$Latest"),
        cloud: None,
        instance_types: vec!["t2.micro".into()],
        weights: phantom_rules::weights::Weights::none(),
        by_type: Default::default(),
        requirements: Vec::new(),
    };
    let launch = async |market: Market, token: &str| {
        let place = Placement {
            zone: None,
            subnet: None,
            market,
            units: 1,
        };
        let types = ["t2.micro".to_string()];
        let req = &requests(
            &Source::Template(spec.clone()),
            &types,
            &place,
            None,
            token.into(),
            vec![("contract".into(), token.into())],
        )[0];
        assert_eq!(req.spot.is_some(), market == Market::Spot);
        cloud.launch(req).await.expect("run-instances")[0]
            .id
            .clone()
    };
    let spot = launch(Market::Spot, "spot-contract").await;
    let on_demand = launch(Market::OnDemand, "on-demand-contract").await;
    for shown in [
        cloud.describe(&[spot.clone(), on_demand.clone()]).await,
        lookup.describe(&[spot.clone(), on_demand.clone()]).await,
    ] {
        let mut markets: Vec<(String, Market)> = shown
            .expect("describe")
            .into_iter()
            .map(|t| (t.seen.id, t.seen.market))
            .collect();
        markets.sort();
        let mut want = vec![
            (spot.clone(), Market::Spot),
            (on_demand.clone(), Market::OnDemand),
        ];
        want.sort();
        assert_eq!(markets, want);
    }
    let prices = cloud
        .spot_prices(&["t2.micro".into()])
        .await
        .expect("spot prices");
    assert!(
        !prices.is_empty()
            && prices
                .iter()
                .all(|p| p.instance_type == "t2.micro" && p.price > 0.0),
        "{prices:?}"
    );
    cloud
        .terminate(&[spot, on_demand])
        .await
        .expect("terminate");
}

#[tokio::test]
async fn the_memory_cloud_keeps_the_contract() {
    let cloud = MemoryCloud::new(
        &["us-east-1a"],
        Arc::new(ManualClock::starting_at(1_000)),
        phantom_seams::fault::none(),
    );
    let running = cloud.outside();
    let tags = [
        (TAG_OWNER, "olga"),
        (TAG_GROUP, "web"),
        (TAG_GROUP_ID, "g-web"),
    ]
    .map(|(k, v)| (k.to_string(), v.to_string()));
    cloud
        .tag(std::slice::from_ref(&running), &tags)
        .await
        .unwrap();
    let stopped = cloud.outside();
    cloud.stop_outside(&stopped);
    let template_id = cloud.add_template("web", "ami-1", "t2.micro");
    let setup = Setup {
        running,
        stopped,
        template_id,
        subnet: ("subnet-us-east-1a".into(), "us-east-1a".into()),
        zone: ("az1".into(), "us-east-1a".into()),
    };
    contract(&cloud, &setup).await;
    // reservation_zones: each reservation's zone; one the cloud does not have is its error, as
    // EC2's (moto 5.2.1 has no capacity reservations: it answers 500).
    cloud.add_capacity_reservation("cr-1", "us-east-1a", 1);
    assert_eq!(
        cloud.reservation_zones(&["cr-1".into()]).await.unwrap(),
        [("cr-1".to_string(), "us-east-1a".to_string())]
    );
    let e = cloud.reservation_zones(&["cr-9".into()]).await.unwrap_err();
    assert_eq!(e.code, "InvalidCapacityReservationId.NotFound");
    power_contract(&cloud, &setup.running).await;
    cloud.set_spot_price("t2.micro", 0.0035);
    spot_contract(&cloud, &cloud).await;
    types_contract(&cloud).await;
}

/// DescribeInstanceTypes: t2.micro as EC2 describes it (1 vCPU, 1 GiB, burstable, Intel), what
/// InstanceRequirements choose from.
async fn types_contract(cloud: &dyn Cloud) {
    let types = cloud.instance_types().await.unwrap();
    let micro = types
        .iter()
        .find(|t| t.name == "t2.micro")
        .expect("t2.micro is offered");
    assert_eq!((micro.vcpus, micro.memory_mib), (1, 1024));
    assert!(micro.burstable && !micro.bare_metal);
    assert_eq!(
        phantom_rules::requirements::cpu_manufacturer(micro),
        "intel"
    );
    assert!(types.len() > 5, "{} types", types.len());
}

/// The same on moto's EC2, set up with the AWS CLI.
async fn moto_setup(moto: &Moto) -> Setup {
    let run = |tags: &str| {
        let mut args = vec![
            "ec2",
            "run-instances",
            "--image-id",
            "ami-1e749f67",
            "--instance-type",
            "t2.micro",
            "--count",
            "1",
        ];
        if !tags.is_empty() {
            args.extend(["--tag-specifications", tags]);
        }
        let out = moto.aws(&args);
        out["Instances"][0]["InstanceId"]
            .as_str()
            .expect("run-instances gives an instance id")
            .to_string()
    };
    let running = run(&format!(
        "ResourceType=instance,Tags=[{{Key={TAG_OWNER},Value=olga}},{{Key={TAG_GROUP},Value=web}},{{Key={TAG_GROUP_ID},Value=g-web}}]"
    ));
    let stopped = run("");
    moto.aws(&["ec2", "stop-instances", "--instance-ids", &stopped]);
    let template_id = moto.aws(&[
        "ec2",
        "create-launch-template",
        "--launch-template-name",
        "web",
        "--launch-template-data",
        r#"{"ImageId":"ami-1e749f67","InstanceType":"t2.micro"}"#,
    ])["LaunchTemplate"]["LaunchTemplateId"]
        .as_str()
        .expect("create-launch-template gives an id")
        .to_string();
    let subnets = moto.aws(&["ec2", "describe-subnets"]);
    let first = &subnets["Subnets"][0];
    let subnet = (
        first["SubnetId"].as_str().unwrap().to_string(),
        first["AvailabilityZone"].as_str().unwrap().to_string(),
    );
    let zones = moto.aws(&["ec2", "describe-availability-zones"]);
    let z = &zones["AvailabilityZones"][0];
    let zone = (
        z["ZoneId"].as_str().unwrap().to_string(),
        z["ZoneName"].as_str().unwrap().to_string(),
    );
    Setup {
        running,
        stopped,
        template_id,
        subnet,
        zone,
    }
}

fn record(moto: &Moto) -> (CloudRecord, CloudCredentials) {
    phantom_e2e::moto::cloud("contract", &moto.url)
}

#[tokio::test]
async fn the_ec2_query_client_keeps_the_contract_on_moto() {
    let moto = Moto::start();
    let setup = moto_setup(&moto).await;
    let (cloud, creds) = record(&moto);
    // The provisioner's client (longer timeouts, calls made again); the api's is the same code.
    let ec2 = Ec2Clouds::default().connect(&cloud, &creds);
    contract(ec2.as_ref(), &setup).await;
    power_contract(ec2.as_ref(), &setup.running).await;
    let api = Ec2Lookups::default().lookup(&cloud, &creds);
    spot_contract(ec2.as_ref(), api.as_ref()).await;
    types_contract(ec2.as_ref()).await;
}

/// EC2 lists a terminated VM for about an hour, then forgets it: `vm` (of owner olga), once
/// terminated, is left out of the owner's list (`tagged`, `states`: live VMs only) and described
/// terminated by id until `pass` has let the cloud's window go by, then unknown.
async fn forget_contract(cloud: &dyn Cloud, vm: &str, pass: impl AsyncFnOnce()) {
    let ids = [vm.to_string()];
    let by_tag = async || {
        let tagged = cloud.tagged("olga", None).await.expect("tagged");
        let states = cloud.states("olga").await.expect("states");
        (
            tagged.iter().any(|t| t.seen.id == vm),
            states.iter().any(|(id, _)| id == vm),
        )
    };
    assert_eq!(by_tag().await, (true, true), "listed while it runs");
    cloud.terminate(&ids).await.expect("terminate");
    let by_id = async || {
        let found = cloud.describe(&ids).await.expect("describe");
        found.first().map(|t| t.seen.state)
    };
    assert_eq!(by_id().await, Some(CloudState::Terminated));
    assert_eq!(by_tag().await, (false, false), "terminated: not listed");
    pass().await;
    assert_eq!(by_id().await, None, "forgotten");
}

#[tokio::test]
async fn the_clouds_forget_a_terminated_vm_as_ec2_does() {
    let clock = Arc::new(ManualClock::starting_at(1_000));
    let memory = MemoryCloud::new(&["us-east-1a"], clock.clone(), phantom_seams::fault::none());
    let vm = memory.outside();
    let owner = [(TAG_OWNER.to_string(), "olga".to_string())];
    memory.tag(std::slice::from_ref(&vm), &owner).await.unwrap();
    let window = phantom_seams::cloud::memory::FORGET_AFTER.as_millis() as i64;
    forget_contract(&memory, &vm, async || {
        clock.advance_ms(window - 1);
        assert_eq!(
            memory
                .describe(std::slice::from_ref(&vm))
                .await
                .unwrap()
                .len(),
            1
        );
        clock.advance_ms(1);
    })
    .await;

    // The local stack's moto (localstack/moto/serve.py), its window made 2 s.
    let moto = Moto::start_with(&[("PHANTOM_CLOUD_FORGET_SECS", "2")]);
    let setup = moto_setup(&moto).await;
    let (cloud, creds) = record(&moto);
    let ec2 = Ec2Clouds::default().connect(&cloud, &creds);
    let ids = [setup.running.clone()];
    forget_contract(ec2.as_ref(), &setup.running, async || {
        let t = std::time::Instant::now();
        while !ec2.describe(&ids).await.expect("describe").is_empty() {
            assert!(t.elapsed().as_secs() < 30, "still listed after 30 s");
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        assert!(
            t.elapsed().as_millis() >= 1_500,
            "forgotten too soon: {:?}",
            t.elapsed()
        );
    })
    .await;
}

/// serve.py's moto, faster at answering, answers as moto does (localstack/moto/check_serve.py:
/// the same requests against the same state, through moto's serializer and serve.py's).
#[test]
fn serve_py_answers_as_moto_does() {
    let out = std::process::Command::new("python3")
        .arg(phantom_e2e::root().join("localstack/moto/check_serve.py"))
        .output()
        .expect("python3 runs localstack/moto/check_serve.py");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
}

#[tokio::test]
async fn an_unreachable_cloud_is_an_error_not_an_answer() {
    let port = phantom_e2e::free_port();
    let (cloud, creds) = phantom_e2e::moto::cloud("gone", &format!("http://127.0.0.1:{port}"));
    let clouds = Ec2Lookups::default();
    assert!(!clouds.reachable(&cloud).await);
    let e = clouds
        .catalog(&cloud, &creds)
        .images()
        .await
        .expect_err("nobody listens");
    assert_eq!(e.code, "CloudUnreachable", "{e}");
    let api = clouds.lookup(&cloud, &creds);
    let e = api
        .template(&by_name("web", "$Latest"))
        .await
        .expect_err("nobody listens");
    assert_eq!(e.code, "CloudUnreachable", "{e}");
    let e = api
        .describe(&["i-1".to_string()])
        .await
        .expect_err("nobody listens");
    assert_eq!(e.code, "CloudUnreachable", "{e}");
}
