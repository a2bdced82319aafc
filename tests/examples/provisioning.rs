//! Benchmark (not a test): how fast Phantom reacts, and what a health sweep costs.
//!
//!   PHANTOM_PROFILE=release [PHANTOM_HEALTH_INTERVAL_SECS=5] cargo run -p phantom-e2e --example provisioning -- [RUNS [USERS]]
//!
//! On the local stack (health check every PHANTOM_HEALTH_INTERVAL_SECS, 1 s unless set), with
//! USERS other users present (default 0), 200 of them with a group of 5 VMs (1,000 VMs at 1,000
//! users: the sizes issue 64 names):
//! 0. CreateAutoScalingGroup of MinSize 1 (the README's first group): time until its VM is
//!    InService, RUNS times.
//! 1. SetDesiredCapacity 0 -> 5: time from the call returning until all 5 VMs exist on the cloud
//!    (polled every 10 ms with DescribeInstances), and until DescribeAutoScalingGroups shows all 5
//!    InService, RUNS times.
//! 2. A VM of a group of 3 terminated on the cloud: time until its replacement exists, and until
//!    the group shows 3 InService without it, RUNS times.
//! 3. One health sweep of (this user, hotel) (the provisioner's sweep handler, called here) with
//!    10, 100 and 1000 VMs in a group: its EC2, DynamoDB and SQS call counts.

use aws_sdk_autoscaling::Client as Asg;
use phantom_e2e::stack;
use phantom_e2e::steps::Steps;
use phantom_rules::reconcile::CloudState;
use phantom_seams::cloud::ec2_cloud::Ec2Clouds;
use phantom_seams::cloud::{Cloud, Connect};
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

/// Of the other users: how many get a group, and its size.
const CROWD_GROUPS: usize = 200;
const CROWD_VMS: i32 = 5;

async fn live(ec2: &dyn Cloud, owner: &str, group: &str) -> BTreeSet<String> {
    ec2.tagged(owner, None)
        .await
        .expect("DescribeInstances")
        .into_iter()
        .filter(|t| t.group.as_deref() == Some(group))
        .filter(|t| matches!(t.seen.state, CloudState::Pending | CloudState::Running))
        .map(|t| t.seen.id)
        .collect()
}

async fn wait_for(
    ec2: &dyn Cloud,
    owner: &str,
    group: &str,
    ok: impl Fn(&BTreeSet<String>) -> bool,
) -> Duration {
    let t = Instant::now();
    loop {
        if ok(&live(ec2, owner, group).await) {
            return t.elapsed();
        }
        assert!(t.elapsed() < Duration::from_secs(120), "timed out");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Waits until DescribeAutoScalingGroups shows the group with exactly `n` instances, all
/// InService, none of them `gone`.
async fn wait_in_service(asg: &Asg, group: &str, n: usize, gone: Option<&str>) -> Duration {
    let t = Instant::now();
    loop {
        let out = asg
            .describe_auto_scaling_groups()
            .auto_scaling_group_names(group)
            .send()
            .await
            .expect("DescribeAutoScalingGroups");
        let instances = out.auto_scaling_groups()[0].instances();
        let ok = instances.len() == n
            && instances.iter().all(|i| {
                i.lifecycle_state() == Some(&aws_sdk_autoscaling::types::LifecycleState::InService)
                    && i.instance_id() != gone
            });
        if ok {
            return t.elapsed();
        }
        assert!(t.elapsed() < Duration::from_secs(300), "timed out");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn stats(mut v: Vec<Duration>) -> String {
    v.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    format!(
        "p50 {:.0} ms, p90 {:.0} ms, max {:.0} ms (n={})",
        ms(v[v.len() / 2]),
        ms(v[(v.len() * 9 / 10).min(v.len() - 1)]),
        ms(*v.last().unwrap()),
        v.len()
    )
}

#[tokio::main]
async fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(10);
    let others: usize = std::env::args()
        .nth(2)
        .map(|a| a.parse().expect("USERS is a number"))
        .unwrap_or(0);
    let s = stack();
    // The crowd is written straight to the state table (phantomctl would spawn a process for
    // each); CROWD_GROUPS of them get a launch configuration and a group of CROWD_VMS through
    // the API.
    for (k, v) in &s.env {
        std::env::set_var(k, v);
    }
    // DynamoDB Local takes an access key of letters and digits only.
    std::env::set_var("AWS_ACCESS_KEY_ID", "phantomlocal");
    std::env::set_var("AWS_SECRET_ACCESS_KEY", "phantomlocal");
    let store = phantom_seams::store::DynamoStore::from_env(
        &phantom_seams::config::aws_sdk_config().await,
        &s.env["PHANTOM_STATE_TABLE"],
    )
    .expect("the stack's table and key");
    let t = Instant::now();
    let mut crowd = Vec::new();
    for i in 0..others {
        let (user, secret) = phantom_rules::identity::new_user(
            &format!("crowd-{i}"),
            false,
            phantom_model::time::format_timestamp(phantom_model::time::now()),
        )
        .expect("a valid name");
        use phantom_seams::store::Directory;
        store.create_user(&user, &secret).await.expect("a user");
        store
            .put_cloud_credentials(
                &user.name,
                &phantom_seams::store::CloudCredentials {
                    cloud: "hotel".into(),
                    access_key_id: format!("{}-hotel", user.name),
                    secret: "cloud-secret".into(),
                },
            )
            .await
            .expect("credentials");
        crowd.push(phantom_e2e::User {
            name: user.name,
            access_key_id: user.access_key_id,
            secret,
        });
    }
    for u in crowd.iter().take(CROWD_GROUPS) {
        let asg = s.sdk(u);
        asg.create_launch_configuration()
            .launch_configuration_name("crowd@hotel")
            .image_id("ami-1e749f67")
            .instance_type("t2.micro")
            .send()
            .await
            .unwrap();
        asg.create_group("crowd", "crowd@hotel", (CROWD_VMS, CROWD_VMS, CROWD_VMS))
            .await;
    }
    if others > 0 {
        let groups = others.min(CROWD_GROUPS);
        println!(
            "{others} other users ({groups} with a group of {CROWD_VMS}) made in {:.0} s",
            t.elapsed().as_secs_f64()
        );
        // The crowd's VMs all InService before anything is timed.
        let wanted = groups * CROWD_VMS as usize;
        for u in crowd.iter().take(groups) {
            wait_in_service(&s.sdk(u), "crowd", CROWD_VMS as usize, None).await;
        }
        println!(
            "the crowd's {wanted} VMs InService {:.0} s after the first user was made",
            t.elapsed().as_secs_f64()
        );
    }
    let user = s.new_user("pbench");
    let asg = s.sdk(&user);
    let (cloud, creds) = phantom_e2e::moto::cloud("hotel", &s.cloud_url("hotel"));
    let ec2 = Ec2Clouds::default().connect(&cloud, &creds);
    let ec2 = ec2.as_ref();
    asg.create_launch_configuration()
        .launch_configuration_name("bench@hotel")
        .image_id("ami-1e749f67")
        .instance_type("t2.micro")
        .send()
        .await
        .unwrap();
    let owner = user.name.as_str();

    // 0. The README's first group: CreateAutoScalingGroup of MinSize 1 until its VM is InService.
    let mut first = Vec::new();
    for i in 0..runs {
        let name = format!("first-{i}");
        let t = Instant::now();
        asg.create_group(&name, "bench@hotel", (1, 5, 1)).await;
        wait_in_service(&asg, &name, 1, None).await;
        first.push(t.elapsed());
        asg.delete_auto_scaling_group()
            .auto_scaling_group_name(&name)
            .force_delete(true)
            .send()
            .await
            .expect("DeleteAutoScalingGroup");
    }

    // 1. Scale-out latency.
    asg.create_group("out", "bench@hotel", (0, 10, 0)).await;
    let mut scale_out = Vec::new();
    let mut out_in_service = Vec::new();
    for _ in 0..runs {
        asg.desire("out", 5).await;
        let t = Instant::now();
        scale_out.push(wait_for(ec2, owner, "out", |ids| ids.len() >= 5).await);
        wait_in_service(&asg, "out", 5, None).await;
        out_in_service.push(t.elapsed());
        asg.desire("out", 0).await;
        wait_for(ec2, owner, "out", |ids| ids.is_empty()).await;
        // Let the terminated VMs' records be forgotten before the next run.
        tokio::time::sleep(Duration::from_millis(1500)).await;
    }

    // 2. Replacement latency.
    asg.create_group("heal", "bench@hotel", (3, 3, 3)).await;
    wait_for(ec2, owner, "heal", |ids| ids.len() == 3).await;
    // Phantom's own measure of the same replacements, from its operating metrics.
    let out = stack().phantomctl(&["user", "scrape", "admin"]);
    assert!(out.status.success(), "phantomctl user scrape admin");
    let admin = String::from_utf8(out.stdout).unwrap().trim().to_string();
    let (count_before, sum_before) = replacements(&admin);
    let mut replace = Vec::new();
    let mut heal_in_service = Vec::new();
    for _ in 0..runs {
        let before = live(ec2, owner, "heal").await;
        let victim = before.iter().next().unwrap().clone();
        ec2.terminate(std::slice::from_ref(&victim)).await.unwrap();
        let t = Instant::now();
        replace.push(
            wait_for(ec2, owner, "heal", |ids| {
                ids.len() == 3 && !ids.contains(&victim)
            })
            .await,
        );
        wait_in_service(&asg, "heal", 3, Some(&victim)).await;
        heal_in_service.push(t.elapsed());
        tokio::time::sleep(Duration::from_millis(1500)).await;
    }

    let (count, sum) = replacements(&admin);
    let own = (count - count_before, sum - sum_before);

    // Sections 1 and 2 are printed now, so a run cut short in section 3 still reports them.
    let profile = std::env::var("PHANTOM_PROFILE").unwrap_or_else(|_| "debug".into());
    let interval = std::env::var("PHANTOM_HEALTH_INTERVAL_SECS").unwrap_or_else(|_| "1".into());
    println!("\ncommand: PHANTOM_PROFILE={profile} PHANTOM_HEALTH_INTERVAL_SECS={interval} cargo run -p phantom-e2e --example provisioning -- {runs} {others}");
    println!(
        "CreateAutoScalingGroup (MinSize 1) until its VM is InService: {}",
        stats(first)
    );
    println!(
        "SetDesiredCapacity 0->5 until 5 VMs exist on the cloud: {}",
        stats(scale_out)
    );
    println!(
        "SetDesiredCapacity 0->5 until the group shows 5 InService: {}",
        stats(out_in_service)
    );
    println!(
        "VM terminated on the cloud until its replacement exists (health check every {interval} s): {}",
        stats(replace)
    );
    println!(
        "VM terminated on the cloud until the group shows 3 InService without it: {}",
        stats(heal_in_service)
    );
    println!(
        "Phantom's phantom_replacement_seconds over those runs (found dead to InService): {} observations, mean {:.2} s",
        own.0,
        own.1 / own.0.max(1.0)
    );

    // 3. Health sweep cost with the handler itself, against the same stack.
    let seams = phantom_seams::wiring::Seams::from_env()
        .await
        .expect("the provisioner's configuration");
    let clouds = std::sync::Arc::new(phantom_seams::cloud::ec2_cloud::Ec2Clouds::default());
    let fleet = provisioner::Provisioner::new(&seams, clouds);
    let pair = phantom_seams::queue::Sweep {
        owner: owner.to_string(),
        cloud: "hotel".into(),
        view: None,
    };
    asg.create_group("big", "bench@hotel", (0, 1000, 0)).await;
    let mut sweeps = Vec::new();
    for n in [10usize, 100, 1000] {
        asg.desire("big", n as i32).await;
        wait_for(ec2, owner, "big", |ids| ids.len() == n).await;
        tokio::time::sleep(Duration::from_secs(3)).await; // records settle
        let before = phantom_seams::metrics::calls();
        let t = Instant::now();
        let r = fleet.sweep(&pair).await.expect("sweep");
        sweeps.push((n, r, t.elapsed(), phantom_seams::metrics::calls() - before));
    }

    println!(
        "\n| VMs in the group | VMs seen (the user's on hotel) | EC2 calls | DynamoDB calls | SQS calls | sweep time |"
    );
    println!("|---|---|---|---|---|---|");
    for (n, r, t, calls) in sweeps {
        println!(
            "| {n} | {} | {} | {} | {} | {:.0} ms |",
            r.vms_seen,
            calls.ec2,
            calls.dynamodb,
            calls.sqs,
            t.as_secs_f64() * 1e3
        );
    }
}

/// The count and sum of `phantom_replacement_seconds` in an administrator's scrape of the
/// operating metrics (0 and 0 before the first replacement).
fn replacements(password: &str) -> (f64, f64) {
    let url = format!("{}/phantom/v1/metrics?scope=operations", stack().url);
    let out = std::process::Command::new("curl")
        .args(["-sf", "-u", &format!("admin:{password}"), &url])
        .output()
        .expect("curl runs");
    assert!(out.status.success(), "the operating metrics are scraped");
    let text = String::from_utf8(out.stdout).unwrap();
    let value = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .map_or(0.0, |v| v.trim().parse::<f64>().unwrap())
    };
    (
        value("phantom_replacement_seconds_count "),
        value("phantom_replacement_seconds_sum "),
    )
}
