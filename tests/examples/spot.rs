//! Benchmark (not a test): what spot costs Phantom in calls, against a plain group.
//!
//!   cargo run -p phantom-e2e --example spot
//!
//! In process (the memory store and clouds, which count their calls as the SDKs would), a group
//! of 20 across two clouds (`hotel:10,sierra:10`), created at 20: once from launch configurations
//! (all on-demand), once from a MixedInstancesPolicy with 75 % spot above no base (`lowest-price`
//! over t2.micro and t2.small, the clouds answering spot prices), once the same with weights
//! (t2.small first, weighing 2 units, then t2.micro, 1): 20 units. The calls from creation until
//! all 20 units are InService, the split, and a minute of health sweeps once settled.

use aws_sdk_autoscaling::types::{InstancesDistribution, Tag};
use phantom_e2e::steps::Steps;
use phantom_e2e::world::{weighted_policy, World, IMAGE};
use phantom_model::instance::Market;
use phantom_seams::metrics::calls;
use phantom_seams::store::Fleet;

const VMS: usize = 20;

#[derive(Clone, Copy, PartialEq)]
enum Group {
    Plain,
    Mixed,
    Weighted,
}

impl Group {
    fn name(self) -> &'static str {
        match self {
            Group::Plain => "plain, on-demand",
            Group::Mixed => "mixed, 75 % spot",
            Group::Weighted => "weighted, 75 % spot",
        }
    }
}

async fn create(w: &World, user: &phantom_e2e::User, group: Group) {
    let asg = w.sdk(user);
    let clouds = Tag::builder()
        .resource_id("bench")
        .resource_type("auto-scaling-group")
        .key("phantom:clouds")
        .value("hotel:10,sierra:10")
        .propagate_at_launch(false)
        .build();
    let call = asg
        .create_auto_scaling_group()
        .auto_scaling_group_name("bench")
        .min_size(0)
        .max_size(VMS as i32)
        .desired_capacity(VMS as i32)
        .tags(clouds);
    let call = if group != Group::Plain {
        for cloud in [&w.hotel, &w.sierra] {
            cloud.add_template("bench", IMAGE, "t2.micro");
            cloud.set_spot_price("t2.micro", 0.0035);
            cloud.set_spot_price("t2.small", 0.0069);
        }
        let overrides: &[(&str, Option<&str>)] = if group == Group::Weighted {
            &[("t2.small", Some("2")), ("t2.micro", Some("1"))]
        } else {
            &[("t2.micro", None), ("t2.small", None)]
        };
        call.mixed_instances_policy(weighted_policy(
            "bench@hotel",
            None,
            overrides,
            InstancesDistribution::builder()
                .on_demand_percentage_above_base_capacity(25)
                .build(),
        ))
    } else {
        for cloud in ["hotel", "sierra"] {
            asg.create_lc(&format!("bench@{cloud}")).await;
        }
        call.launch_configuration_name("bench@hotel")
    };
    call.send().await.expect("create-auto-scaling-group");
}

#[tokio::main]
async fn main() {
    for group in [Group::Plain, Group::Mixed, Group::Weighted] {
        let w = World::new().await;
        let u = w.user("sbench").await;
        let before = calls();
        create(&w, &u, group).await;
        let mut secs = 0;
        loop {
            let members = w
                .store
                .instances(&u.name, "bench")
                .await
                .expect("the store");
            let units = |market: Option<Market>| -> usize {
                members
                    .iter()
                    .filter(|m| m.lifecycle == phantom_rules::reconcile::Lifecycle::InService)
                    .filter(|m| market.is_none_or(|k| m.market == k))
                    .map(|m| m.weight.unwrap_or(1) as usize)
                    .sum()
            };
            let settled = members
                .iter()
                .all(|m| m.lifecycle == phantom_rules::reconcile::Lifecycle::InService);
            if units(None) >= VMS && settled {
                let c = calls() - before;
                println!(
                    "{}: {} units InService in {} VMs in {secs} s of the world's clock, {} units on-demand and {} spot; {} DynamoDB, {} EC2, {} SQS calls, of them RunInstances {} on hotel and {} on sierra; {} VMs launched",
                    group.name(),
                    units(None),
                    members.len(),
                    units(Some(Market::OnDemand)),
                    units(Some(Market::Spot)),
                    c.dynamodb,
                    c.ec2,
                    c.sqs,
                    w.hotel.run_instances_calls(),
                    w.sierra.run_instances_calls(),
                    w.hotel.launched_total() + w.sierra.launched_total()
                );
                break;
            }
            w.run_for(1).await;
            secs += 1;
            assert!(secs < 600, "timed out");
        }
        let before = calls();
        w.run_for(60).await;
        let c = calls() - before;
        println!(
            "{}: a minute of 1 s sweeps, settled: {} DynamoDB, {} EC2, {} SQS calls",
            group.name(),
            c.dynamodb,
            c.ec2,
            c.sqs
        );
    }
}
