//! The README and the guides in docs/, run as written: each of their `sh` blocks runs in order, as
//! a user pastes it into a terminal at the repository's root, against this binary's local stack
//! (started by `localstack/up.sh`, as the set-up says), and what the page promises next to it is
//! checked with the AWS CLI. An edit that breaks a command, or a promise, fails here. The blocks
//! that need LocalStack run in `gateway.rs`, on its stack; `sh on-aws` blocks are for a deployment
//! on AWS and are not run. How blocks are marked, and which pages: `phantom_e2e::readme`.

use phantom_e2e::argv;
use phantom_e2e::readme::{blocks, Block, Ran, ON_AWS, PAGES};
use phantom_e2e::{stack, Stack};
use serde_json::Value;
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

/// The blocks this file runs, on a stack of moto clouds, each checked by `check`.
const HERE: &[&str] = &[
    "first-group",
    "activities",
    "across-clouds",
    "across-clouds-refresh",
    "spot",
    "target-tracking",
    "notifications",
    "own-api",
    "phantomctl",
];
/// The blocks `gateway.rs` runs on its LocalStack stack.
const ON_LOCALSTACK: &[&str] = &["gateway"];
/// The set-up: the commands the suite itself is started with (checked, not run from here).
const SET_UP: &str = "set-up";

#[test]
fn every_sh_block_is_run_or_marked_for_aws() {
    let named: BTreeSet<String> = blocks()
        .into_iter()
        .map(|b| b.name)
        .filter(|n| n != ON_AWS)
        .collect();
    let known: BTreeSet<String> = HERE
        .iter()
        .chain(ON_LOCALSTACK)
        .chain(&[SET_UP])
        .map(|n| n.to_string())
        .collect();
    assert_eq!(
        named, known,
        "the pages' `sh` blocks and the ones this suite runs differ: a new block needs a check \
         here (or `sh {ON_AWS}` when it is for AWS)"
    );
}

#[test]
fn no_other_page_has_a_shell_block() {
    let docs = phantom_e2e::root().join("docs");
    for entry in std::fs::read_dir(&docs).expect("docs/") {
        let path = entry.expect("an entry of docs/").path();
        let page = format!("docs/{}", path.file_name().unwrap().to_string_lossy());
        if !page.ends_with(".md") || PAGES.contains(&page.as_str()) {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("a page");
        assert!(
            !text.lines().any(|l| l.trim_start().starts_with("```sh")),
            "{page} has a `sh` block: list the page in phantom_e2e::readme::PAGES so it runs"
        );
    }
}

/// The README sends a newcomer to the guides, and they to each other: every relative link lands
/// on a file that exists.
#[test]
fn every_link_between_the_pages_lands() {
    let root = phantom_e2e::root();
    for page in PAGES {
        let text = std::fs::read_to_string(root.join(page)).expect("a page");
        let dir = root.join(page).parent().expect("a folder").to_path_buf();
        for (i, line) in text.lines().enumerate() {
            for target in line.split("](").skip(1).filter_map(|t| t.split(')').next()) {
                let file = target.split('#').next().unwrap_or("");
                if file.is_empty() || file.contains("://") {
                    continue;
                }
                assert!(
                    dir.join(file).exists(),
                    "{page}:{}: the link to {target} lands nowhere",
                    i + 1
                );
            }
        }
    }
}

#[test]
fn the_set_up_is_what_the_suite_and_ci_run() {
    let block = phantom_e2e::readme::block(SET_UP);
    let commands: Vec<&str> = block
        .code
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .collect();
    // The stacks of this suite are started by that script (tests/src/stack.rs), and CI runs the
    // suite by that command.
    assert_eq!(commands, ["localstack/up.sh", "cargo test --workspace"]);
    let ci = std::fs::read_to_string(phantom_e2e::root().join(".ci/run")).expect(".ci/run");
    assert!(
        ci.lines().any(|l| l.trim() == "cargo test --workspace"),
        ".ci/run does not run the README's test command"
    );
}

#[test]
fn the_readmes_commands_work_as_written() {
    let s = stack();
    let mut shell = s.shell();
    let mut ran = Vec::new();
    for block in blocks().iter().filter(|b| HERE.contains(&b.name.as_str())) {
        let out = shell.run(block);
        check(s, block, &out);
        ran.push(block.name.clone());
    }
    assert_eq!(
        ran, HERE,
        "the pages' blocks are not in the order this test expects"
    );
}

/// What the page promises next to each block.
fn check(s: &Stack, block: &Block, out: &Ran) {
    match block.name.as_str() {
        // The first example: the group's VM is launched and InService, as the AWS CLI sees it,
        // and the block's own wait saw it so.
        "first-group" => {
            assert!(
                out.stdout.contains("\tInService") && out.stdout.contains("i-"),
                "the first group's wait did not show its VM InService:\n{}",
                out.stdout
            );
            in_service(s, "web", &[("web@hotel", 1)]);
        }
        // Where to look when a group stays empty: its activities, the launch among them.
        "activities" => {
            assert!(
                out.stdout.contains("Successful")
                    && out.stdout.contains("Launching a new EC2 instance: i-"),
                "the activities block does not show the launch:\n{}",
                out.stdout
            );
        }
        // A group across two clouds: 2 VMs on hotel (its maximum there), the other 3 on sierra.
        "across-clouds" => {
            in_service(s, "web-across", &[("web@hotel", 2), ("web@sierra", 3)]);
        }
        // The refresh of that group: it succeeds, never below 3 of 5 serving and never more
        // than 2 on hotel, and leaves 2 new VMs on hotel and 3 on sierra.
        "across-clouds-refresh" => {
            assert!(
                out.stdout.contains("Pending") || out.stdout.contains("InProgress"),
                "{}",
                out.stdout
            );
            refreshed(s, "web-across", 3, &[("web2@hotel", 2), ("web2@sierra", 3)]);
        }
        // A group of 6 units, each VM weighing 1 as the group shows them, split 4 on-demand and
        // 2 spot as the cloud shows them.
        "spot" => {
            let third: Vec<&str> = out
                .stdout
                .lines()
                .filter(|l| l.starts_with("i-"))
                .filter_map(|l| l.split('\t').nth(2))
                .collect();
            let count = |what: &str| third.iter().filter(|l| **l == what).count();
            assert_eq!(
                (third.len(), count("1"), count("None"), count("spot")),
                (12, 6, 4, 2),
                "{}",
                out.stdout
            );
        }
        // A target tracking policy on the local Prometheus, described as put.
        "target-tracking" => {
            assert!(
                out.stdout.contains("cpu50\tTargetTrackingScaling\t50.0"),
                "{}",
                out.stdout
            );
        }
        // The topic's queue holds SNS's envelope around AWS's test notification.
        "notifications" => {
            assert!(
                out.stdout.contains("autoscaling:TEST_NOTIFICATION")
                    && (out.stdout.contains("\"Type\" : \"Notification\"")
                        || out.stdout.contains("\"Type\": \"Notification\"")),
                "{}",
                out.stdout
            );
        }
        // Phantom's own API through curl: the clouds.
        "own-api" => {
            let answer: Value = serde_json::from_str(&out.stdout)
                .unwrap_or_else(|e| panic!("ListClouds answered no JSON ({e}): {}", out.stdout));
            let names: BTreeSet<&str> = answer["Clouds"]
                .as_array()
                .expect("Clouds")
                .iter()
                .filter_map(|c| c["Name"].as_str())
                .collect();
            assert!(
                names.contains("hotel") && names.contains("sierra"),
                "{answer}"
            );
        }
        // phantomctl: three keys printed (root, alice, alice's new one), the users listed, the
        // cloud registered as given, the metric source shown without its token.
        "phantomctl" => {
            let keys = out
                .stdout
                .lines()
                .filter(|l| {
                    let w: Vec<&str> = l.split(' ').collect();
                    w.len() == 2 && w[0].len() == 20 && w[1].len() == 40
                })
                .count();
            assert_eq!(keys, 3, "{}", out.stdout);
            assert!(
                out.stdout.lines().any(|l| l.starts_with("alice\t")),
                "{}",
                out.stdout
            );
            assert!(
                out.stdout.lines().any(|l| l
                    == "lima\thttps://ec2.lima.example:8443\tus-east-1\tnova\tlaunch-templates\tload-balancers\tno-events\tstatus-checks"),
                "{}",
                out.stdout
            );
            assert!(
                out.stdout
                    .lines()
                    .any(|l| l == "https://prometheus.example\tinstance_id\tbearer"),
                "{}",
                out.stdout
            );
            assert!(!out.stdout.contains("t0ken"), "{}", out.stdout);
        }
        other => panic!("no check for the block `sh {other}`"),
    }
}

/// The demo user's AWS CLI, its answer as JSON.
fn demo_aws(s: &Stack, args: &[&str]) -> Value {
    s.aws_with_keys(
        &s.env["AWS_ACCESS_KEY_ID"],
        &s.env["AWS_SECRET_ACCESS_KEY"],
        args,
    )
    .json()
}

/// The demo user's group `group`'s instances, as DescribeAutoScalingGroups answers them.
fn instances_of(s: &Stack, group: &str) -> Vec<Value> {
    demo_aws(
        s,
        &argv!(
            "describe-auto-scaling-groups --auto-scaling-group-names",
            group
        ),
    )["AutoScalingGroups"][0]["Instances"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// Waits until the demo user's group `group`'s refresh is Successful, checking as it goes that
/// at least `keep` of its VMs serve and that no cloud runs more than `want` gives it; then that
/// its VMs are `want`.
fn refreshed(s: &Stack, group: &str, keep: usize, want: &[(&str, usize)]) {
    let aws = |args: &[&str]| demo_aws(s, args);
    let cloud = |lc: &str| lc.rsplit_once('@').map(|(_, c)| c.to_string());
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let instances = instances_of(s, group);
        let serving = instances
            .iter()
            .filter(|i| i["LifecycleState"] == "InService" && i["HealthStatus"] == "Healthy")
            .count();
        assert!(
            serving >= keep,
            "{serving} serving, below {keep}: {}",
            Value::Array(instances)
        );
        for (lc, most) in want {
            let on = instances
                .iter()
                .filter(|i| {
                    !i["LifecycleState"]
                        .as_str()
                        .is_some_and(|l| l.starts_with("Terminat"))
                })
                .filter(|i| i["LaunchConfigurationName"].as_str().and_then(cloud) == cloud(lc))
                .count();
            assert!(
                on <= *most,
                "{on} on {lc}'s cloud: {}",
                Value::Array(instances)
            );
        }
        let r = aws(&argv!(
            "describe-instance-refreshes --auto-scaling-group-name",
            group
        ));
        match r["InstanceRefreshes"][0]["Status"].as_str() {
            Some("Successful") => break,
            Some("Pending" | "InProgress") if Instant::now() < deadline => {}
            _ => panic!("the refresh of {group} did not succeed within 120 s: {r}"),
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    in_service(s, group, want);
}

/// Waits until the demo user's group `group` has, InService, the given number of VMs of each
/// launch configuration (where each runs), as DescribeAutoScalingGroups answers the AWS CLI; when
/// it does not within a minute, fails with the group's VMs and its activities (where a user looks).
fn in_service(s: &Stack, group: &str, want: &[(&str, usize)]) {
    let aws = |args: &[&str]| demo_aws(s, args);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let instances = instances_of(s, group);
        let count = |lc: &str| {
            instances
                .iter()
                .filter(|i| {
                    i["LaunchConfigurationName"] == lc && i["LifecycleState"] == "InService"
                })
                .count()
        };
        let total: usize = want.iter().map(|(_, n)| n).sum();
        if instances.len() == total && want.iter().all(|(lc, n)| count(lc) == *n) {
            return;
        }
        if Instant::now() > deadline {
            let activities = aws(&argv!(
                "describe-scaling-activities --auto-scaling-group-name",
                group
            ));
            panic!(
                "group {group} is not InService as {want:?} within 60 s: its instances {}, its \
                 activities {}",
                Value::Array(instances),
                activities["Activities"]
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}
