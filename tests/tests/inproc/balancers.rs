//! Load balancers through aws-sdk-autoscaling, in process: a group's VMs registered with its
//! classic load balancer and target group while they serve, deregistered and drained before they
//! go, the attachments' states as AWS shows them, a VM its load balancer calls unhealthy
//! replaced (HealthCheckType ELB; VPC_LATTICE for a VPC Lattice target group), and what is
//! refused.

use crate::provisioning::converges;
use crate::{create_group, create_lc, group, invalid, Given};
use aws_sdk_autoscaling::types::{LifecycleState, TrafficSourceIdentifier};
use phantom_e2e::steps::Steps;
use phantom_e2e::world::World;
use phantom_e2e::User;
use phantom_rules::traffic::{source, Source};

const TG: &str =
    "arn:aws:elasticloadbalancing:us-east-1:000000000000:targetgroup/web/0123456789abcdef";
const LATTICE: &str = "arn:aws:vpc-lattice:us-east-1:000000000000:targetgroup/tg-0123456789abcdef0";

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

async fn states(w: &World, u: &User) -> Vec<(String, String)> {
    let c = w.sdk(u);
    let mut out: Vec<(String, String)> = c
        .describe_traffic_sources()
        .auto_scaling_group_name("web")
        .send()
        .await
        .unwrap()
        .traffic_sources()
        .iter()
        .map(|t| {
            (
                t.identifier().unwrap().to_string(),
                t.state().unwrap().to_string(),
            )
        })
        .collect();
    out.sort();
    out
}

/// Scales the group of `two` in to one: the VM that leaves, once the target group has let it go.
async fn scale_in_to_one(w: &World, u: &User, two: &[String]) -> String {
    w.sdk(u).desire("web", 1).await;
    w.until(10, "one VM deregistered", async || {
        let now = w.hotel.registered(TG);
        (now.len() == 1).then(|| two.iter().find(|id| !now.contains(id)).unwrap().clone())
    })
    .await
}

/// The StatusCode of the newest activity naming instance `id` (its termination's, once it leaves).
async fn newest_status(w: &World, u: &User, id: &str) -> Option<String> {
    crate::provisioning::activities(w, u, "web")
        .await
        .into_iter()
        .find(|a| a.description().is_some_and(|d| d.contains(id)))
        .and_then(|a| a.status_code().map(|s| s.as_str().to_string()))
}

/// A group of 2 on hotel behind a classic load balancer `web` (no draining) and target group
/// TG (30 s deregistration delay).
async fn behind_both(w: &World, u: &User) -> (Source, Source) {
    let classic = source("web", None).unwrap();
    let tg = source(TG, None).unwrap();
    w.hotel.add_balancer(&classic, 0);
    w.hotel.add_balancer(&tg, 30);
    create_lc(w, u, "web@hotel").await;
    create_group(w, u, "web", "web@hotel", 0, 4, 2).await;
    converges(w, u, "hotel", "web", 2).await;
    let c = w.sdk(u);
    c.attach_load_balancers()
        .auto_scaling_group_name("web")
        .load_balancer_names("web")
        .send()
        .await
        .expect("attach-load-balancers");
    c.attach_load_balancer_target_groups()
        .auto_scaling_group_name("web")
        .target_group_arns(TG)
        .send()
        .await
        .expect("attach-load-balancer-target-groups");
    (classic, tg)
}

/// AWS's order for a leaving VM behind a load balancer: deregistered and drained first
/// (`Terminating`), then held by the termination hooks (`Terminating:Wait`), whose target is
/// told only then: a hook's consumer finds the VM out of its load balancers.
#[tokio::test]
async fn a_leaving_vm_is_drained_before_its_termination_hooks_hold_it() {
    let Given { w, u, c } = Given::user("lb-hook").await;
    let queue = "arn:aws:sqs:us-east-1:000000000000:lb-hook";
    w.publisher.create(queue);
    let (_, tg) = behind_both(&w, &u).await;
    let two = converges(&w, &u, "hotel", "web", 2).await;
    w.until(10, "both registered", async || {
        (sorted(w.hotel.registered(&tg.identifier)) == two).then_some(())
    })
    .await;
    c.put_lifecycle_hook()
        .auto_scaling_group_name("web")
        .lifecycle_hook_name("down")
        .lifecycle_transition("autoscaling:EC2_INSTANCE_TERMINATING")
        .notification_target_arn(queue)
        .role_arn("arn:aws:iam::000000000000:role/hooks")
        .heartbeat_timeout(300)
        .send()
        .await
        .unwrap();
    let told = || {
        w.publisher
            .sent(queue)
            .iter()
            .filter(|n| n.body.contains("autoscaling:EC2_INSTANCE_TERMINATING"))
            .count()
    };
    let state = async |id: &str| {
        group(&w, &u, "web")
            .await
            .unwrap()
            .instances()
            .iter()
            .find(|i| i.instance_id() == Some(id))
            .and_then(|i| i.lifecycle_state().cloned())
    };
    let leaving = scale_in_to_one(&w, &u, &two).await;
    assert_eq!(state(&leaving).await, Some(LifecycleState::Terminating));
    w.run_for(25).await;
    assert_eq!(told(), 0, "no hook told while it drains");
    assert_eq!(state(&leaving).await, Some(LifecycleState::Terminating));
    w.until(10, "held by the hook once drained", async || {
        (state(&leaving).await == Some(LifecycleState::TerminatingWait)).then_some(())
    })
    .await;
    assert_eq!(told(), 1, "the hook's target told once, now");
    assert_eq!(
        newest_status(&w, &u, &leaving).await.as_deref(),
        Some("MidLifecycleAction")
    );
    c.complete_lifecycle_action()
        .auto_scaling_group_name("web")
        .lifecycle_hook_name("down")
        .instance_id(&leaving)
        .lifecycle_action_result("CONTINUE")
        .send()
        .await
        .unwrap();
    w.until(10, "terminated once its hook answered", async || {
        (!w.hotel.alive().contains(&leaving)).then_some(())
    })
    .await;
}

#[tokio::test]
async fn a_groups_vms_are_registered_while_they_serve_and_drained_before_they_go() {
    let Given { w, u, c } = Given::user("lb").await;
    let (classic, tg) = behind_both(&w, &u).await;
    let two = converges(&w, &u, "hotel", "web", 2).await;
    w.until(10, "both registered with both", async || {
        (sorted(w.hotel.registered(&classic.identifier)) == two
            && sorted(w.hotel.registered(&tg.identifier)) == two)
            .then_some(())
    })
    .await;
    assert_eq!(
        states(&w, &u).await,
        [
            (TG.to_string(), "Added".to_string()),
            ("web".to_string(), "Added".to_string())
        ]
    );
    let g = group(&w, &u, "web").await.unwrap();
    assert_eq!(g.load_balancer_names(), ["web"]);
    assert_eq!(g.target_group_arns(), [TG]);
    let lbs = c
        .describe_load_balancers()
        .auto_scaling_group_name("web")
        .send()
        .await
        .unwrap();
    assert_eq!(lbs.load_balancers()[0].load_balancer_name(), Some("web"));
    assert_eq!(lbs.load_balancers()[0].state(), Some("Added"));
    let tgs = c
        .describe_load_balancer_target_groups()
        .auto_scaling_group_name("web")
        .send()
        .await
        .unwrap();
    assert_eq!(
        tgs.load_balancer_target_groups()[0].load_balancer_target_group_arn(),
        Some(TG)
    );

    // Scale in: the leaving VM is deregistered at once and held for the target group's 30 s.
    let leaving = scale_in_to_one(&w, &u, &two).await;
    assert!(!w.hotel.registered("web").contains(&leaving));
    let g = group(&w, &u, "web").await.unwrap();
    let held = g
        .instances()
        .iter()
        .find(|i| i.instance_id() == Some(leaving.as_str()))
        .expect("still in the group while it drains");
    // AWS's Terminating while its load balancers drain it (Terminating:Wait is for hooks).
    assert_eq!(held.lifecycle_state(), Some(&LifecycleState::Terminating));
    assert_eq!(
        newest_status(&w, &u, &leaving).await.as_deref(),
        Some("WaitingForELBConnectionDraining")
    );
    w.run_for(20).await;
    assert!(
        w.hotel.alive().contains(&leaving),
        "draining: not terminated yet"
    );
    w.until(20, "terminated once drained", async || {
        (!w.hotel.alive().contains(&leaving)).then_some(())
    })
    .await;
    let one = converges(&w, &u, "hotel", "web", 1).await;
    // Scale out: the new VM is registered once it serves.
    c.desire("web", 2).await;
    let again = converges(&w, &u, "hotel", "web", 2).await;
    assert!(again.contains(&one[0]));
    w.until(10, "the new VM registered", async || {
        (sorted(w.hotel.registered(TG)) == again && sorted(w.hotel.registered("web")) == again)
            .then_some(())
    })
    .await;

    // Detached: Removing while its VMs are deregistered, then gone.
    c.detach_traffic_sources()
        .auto_scaling_group_name("web")
        .traffic_sources(
            TrafficSourceIdentifier::builder()
                .identifier("web")
                .r#type("elb")
                .build(),
        )
        .send()
        .await
        .expect("detach-traffic-sources");
    w.until(10, "the classic load balancer gone", async || {
        (states(&w, &u).await == [(TG.to_string(), "Added".to_string())]
            && w.hotel.registered("web").is_empty())
        .then_some(())
    })
    .await;
    assert!(group(&w, &u, "web")
        .await
        .unwrap()
        .load_balancer_names()
        .is_empty());
    // Detaching it again: it is not the group's.
    let message = invalid(
        c.detach_load_balancers()
            .auto_scaling_group_name("web")
            .load_balancer_names("web")
            .send()
            .await,
    );
    assert!(message.contains("not part of the group"), "{message}");
}

#[tokio::test]
async fn a_vm_its_load_balancer_calls_unhealthy_is_replaced_with_health_check_type_elb() {
    let Given { w, u, c } = Given::user("lb-health").await;
    let tg = source(TG, None).unwrap();
    w.hotel.add_balancer(&tg, 0);
    create_lc(&w, &u, "web@hotel").await;
    // Created behind the target group, its health judged by it too.
    c.create_auto_scaling_group()
        .auto_scaling_group_name("web")
        .launch_configuration_name("web@hotel")
        .min_size(0)
        .max_size(4)
        .desired_capacity(2)
        .health_check_type("ELB")
        .health_check_grace_period(10)
        .target_group_arns(TG)
        .send()
        .await
        .expect("create-auto-scaling-group behind a target group");
    let two = converges(&w, &u, "hotel", "web", 2).await;
    w.until(
        10,
        "registered, and InService by its health check",
        async || {
            (sorted(w.hotel.registered(TG)) == two
                && states(&w, &u).await == [(TG.to_string(), "InService".to_string())])
            .then_some(())
        },
    )
    .await;
    // Past the grace period, the target group calls one unhealthy: it is replaced.
    w.run_for(10).await;
    w.hotel.fail_health_check(TG, &two[0], true);
    failing_replaced(
        &w,
        &u,
        &two[0],
        &two[1],
        "an ELB system health check failure",
    )
    .await;
}

/// Waits for `failing` to be replaced while `kept` stays, the activity's cause saying `words`.
async fn failing_replaced(w: &World, u: &User, failing: &str, kept: &str, words: &str) {
    let replaced = w
        .until(30, "the failing VM replaced", async || {
            let now = converges(w, u, "hotel", "web", 2).await;
            (!now.iter().any(|id| id == failing)).then_some(now)
        })
        .await;
    assert!(replaced.iter().any(|id| id == kept));
    let activities = w.sdk(u).activities("web").await;
    assert!(activities.activities().iter().any(|a| a
        .cause()
        .unwrap_or_default()
        .contains(&format!("in response to {words}"))));
}

/// A VPC Lattice target group, as AWS takes it: attached as a `vpc-lattice` traffic source, the
/// group's VMs registered with it, and with HealthCheckType `VPC_LATTICE` (beside ELB, in AWS's
/// comma-separated list) one it reports unhealthy replaced in VPC Lattice's words; an ELB
/// target group does not judge under VPC_LATTICE alone.
#[tokio::test]
async fn a_vm_its_vpc_lattice_target_group_calls_unhealthy_is_replaced() {
    let Given { w, u, c } = Given::user("lattice").await;
    let lattice = source(LATTICE, None).unwrap();
    let tg = source(TG, None).unwrap();
    w.hotel.add_balancer(&lattice, 0);
    w.hotel.add_balancer(&tg, 0);
    create_lc(&w, &u, "web@hotel").await;
    c.create_auto_scaling_group()
        .auto_scaling_group_name("web")
        .launch_configuration_name("web@hotel")
        .min_size(0)
        .max_size(4)
        .desired_capacity(2)
        .health_check_type("VPC_LATTICE")
        .health_check_grace_period(10)
        .target_group_arns(TG)
        .traffic_sources(
            TrafficSourceIdentifier::builder()
                .identifier(LATTICE)
                .r#type("vpc-lattice")
                .build(),
        )
        .send()
        .await
        .expect("create-auto-scaling-group with a VPC Lattice target group");
    let two = converges(&w, &u, "hotel", "web", 2).await;
    w.until(10, "registered with both", async || {
        (sorted(w.hotel.registered(LATTICE)) == two && sorted(w.hotel.registered(TG)) == two)
            .then_some(())
    })
    .await;
    // The target group VPC Lattice judges by is InService; the ELB one, not judging, Added.
    w.until(10, "the VPC Lattice target group InService", async || {
        let now = states(&w, &u).await;
        (now == [
            (TG.to_string(), "Added".to_string()),
            (LATTICE.to_string(), "InService".to_string()),
        ])
        .then_some(())
    })
    .await;
    let shown = c
        .describe_traffic_sources()
        .auto_scaling_group_name("web")
        .traffic_source_type("vpc-lattice")
        .send()
        .await
        .unwrap();
    assert_eq!(shown.traffic_sources().len(), 1);
    assert_eq!(shown.traffic_sources()[0].r#type(), Some("vpc-lattice"));
    // Past the grace period: the ELB target group failing one changes nothing under VPC_LATTICE.
    w.run_for(10).await;
    w.hotel.fail_health_check(TG, &two[0], true);
    w.run_for(10).await;
    assert_eq!(converges(&w, &u, "hotel", "web", 2).await, two);
    // VPC Lattice failing the other replaces it.
    w.hotel.fail_health_check(LATTICE, &two[1], true);
    failing_replaced(
        &w,
        &u,
        &two[1],
        &two[0],
        "a VPC Lattice health check failure",
    )
    .await;
    // Detached as a traffic source, its VMs deregistered.
    c.detach_traffic_sources()
        .auto_scaling_group_name("web")
        .traffic_sources(
            TrafficSourceIdentifier::builder()
                .identifier(LATTICE)
                .r#type("vpc-lattice")
                .build(),
        )
        .send()
        .await
        .expect("detach-traffic-sources");
    w.until(10, "deregistered", async || {
        w.hotel.registered(LATTICE).is_empty().then_some(())
    })
    .await;
}

#[tokio::test]
async fn load_balancers_the_cloud_has_not_or_cannot_have_are_refused() {
    let Given { w, u, c } = Given::group("lb-refused", 0, 4, 0).await;
    let message = invalid(
        c.attach_load_balancer_target_groups()
            .auto_scaling_group_name("web")
            .target_group_arns(TG)
            .send()
            .await,
    );
    assert_eq!(
        message,
        "Provided Target Groups may not be valid. Please ensure they exist and try again."
    );
    let message = invalid(
        c.attach_load_balancers()
            .auto_scaling_group_name("web")
            .load_balancer_names("nope")
            .send()
            .await,
    );
    assert!(
        message.starts_with("Provided Load Balancers may not be valid"),
        "{message}"
    );
    // A name longer than a classic load balancer's (AWS's model takes 255 characters) is asked
    // of the cloud like any other, and refused in the same words when the cloud has none.
    let message = invalid(
        c.attach_load_balancers()
            .auto_scaling_group_name("web")
            .load_balancer_names("a-load-balancer-name-of-more-than-32-characters")
            .send()
            .await,
    );
    assert!(
        message.starts_with("Provided Load Balancers may not be valid"),
        "{message}"
    );
    // A VPC Lattice target group the cloud has not.
    let message = invalid(
        c.attach_traffic_sources()
            .auto_scaling_group_name("web")
            .traffic_sources(
                TrafficSourceIdentifier::builder()
                    .identifier("arn:aws:vpc-lattice:us-east-1:0:targetgroup/tg-1")
                    .r#type("vpc-lattice")
                    .build(),
            )
            .send()
            .await,
    );
    assert!(
        message.starts_with("Provided Target Groups may not be valid"),
        "{message}"
    );
    // Nothing was attached.
    assert!(states(&w, &u).await.is_empty());
    // One the cloud has, of a name no classic load balancer on AWS could have, attaches.
    let long = "an_elb-of_a cloud:that-names-its-own.balancers";
    w.hotel.add_balancer(&source(long, Some("elb")).unwrap(), 0);
    c.attach_load_balancers()
        .auto_scaling_group_name("web")
        .load_balancer_names(long)
        .send()
        .await
        .expect("attach-load-balancers");
    let attached = group(&w, &u, "web").await.unwrap();
    assert_eq!(attached.load_balancer_names(), [long]);
    // A cloud registered without load balancers says so.
    use phantom_seams::store::Directory;
    let mut plain = w.store.cloud("sierra").await.unwrap().unwrap();
    plain.load_balancers = false;
    w.store.put_cloud(&plain).await.unwrap();
    create_lc(&w, &u, "web@sierra").await;
    create_group(&w, &u, "sierra-web", "web@sierra", 0, 4, 0).await;
    let message = invalid(
        c.attach_load_balancers()
            .auto_scaling_group_name("sierra-web")
            .load_balancer_names("web")
            .send()
            .await,
    );
    assert!(message.contains("without load balancers"), "{message}");
}

/// A provisioner killed at each step of a scale-in behind a target group (every store, cloud,
/// load balancer and queue call is a step), then a new one: the group ends at its size, every VM
/// it serves with registered and nothing else, none launched more.
#[tokio::test]
async fn a_crash_at_any_step_of_a_scale_in_behind_a_target_group_leaves_it_right() {
    for k in 1.. {
        let Given { w, u, .. } = Given::user("lb-crash").await;
        let tg = source(TG, None).unwrap();
        w.hotel.add_balancer(&tg, 0);
        create_lc(&w, &u, "web@hotel").await;
        create_group(&w, &u, "web", "web@hotel", 0, 4, 2).await;
        converges(&w, &u, "hotel", "web", 2).await;
        let c = w.sdk(&u);
        c.attach_load_balancer_target_groups()
            .auto_scaling_group_name("web")
            .target_group_arns(TG)
            .send()
            .await
            .unwrap();
        w.until(10, "both registered", async || {
            (w.hotel.registered(TG).len() == 2).then_some(())
        })
        .await;
        c.desire("web", 1).await;
        w.queue.purge();
        let msg = phantom_seams::queue::Reconcile::new(&u.name, "web", "crash test");
        let crashed = w.reconcile_crashing_at(&msg, k).await;
        w.clock.advance_ms(provisioner::LEASE_MS + 1_000);
        let one = converges(&w, &u, "hotel", "web", 1).await;
        w.until(30, "only the serving VM registered", async || {
            (w.hotel.registered(TG) == one).then_some(())
        })
        .await;
        assert_eq!(w.hotel.launched_total(), 2, "crash at step {k}");
        if !crashed {
            assert!(k > 3, "the reconcile took only {k} steps");
            return;
        }
    }
}

/// A group across hotel and sierra behind a target group on each (`<arn>@sierra` names sierra's):
/// each cloud's VMs registered with that cloud's, the leaving one deregistered there; a source on
/// a cloud the group does not list is refused, and so is dropping a cloud that has one.
#[tokio::test]
async fn a_group_across_clouds_registers_each_clouds_vms_with_that_clouds_source() {
    use aws_sdk_autoscaling::types::Tag;
    let Given { w, u, c } = Given::user("lb-across").await;
    let tg = source(TG, None).unwrap();
    w.hotel.add_balancer(&tg, 0);
    w.sierra.add_balancer(&tg, 0);
    let tag = |value: &str| {
        Tag::builder()
            .resource_id("web")
            .resource_type("auto-scaling-group")
            .key("phantom:clouds")
            .value(value)
            .propagate_at_launch(false)
            .build()
    };
    create_lc(&w, &u, "web@hotel").await;
    create_lc(&w, &u, "web@sierra").await;
    c.create_auto_scaling_group()
        .auto_scaling_group_name("web")
        .launch_configuration_name("web@hotel")
        .min_size(0)
        .max_size(10)
        .desired_capacity(3)
        .tags(tag("hotel:2,sierra:5"))
        .send()
        .await
        .unwrap();
    let there = format!("{TG}@sierra");
    let message = invalid(
        c.attach_load_balancer_target_groups()
            .auto_scaling_group_name("web")
            .target_group_arns(format!("{TG}@lima"))
            .send()
            .await,
    );
    assert!(
        message.contains("not one of group web's clouds"),
        "{message}"
    );
    c.attach_load_balancer_target_groups()
        .auto_scaling_group_name("web")
        .target_group_arns(TG)
        .target_group_arns(&there)
        .send()
        .await
        .expect("a target group on each cloud");
    let (on_hotel, on_sierra) = w
        .until(
            30,
            "2 VMs on hotel and 1 on sierra, each registered there",
            async || {
                let h = sorted(w.hotel.alive());
                let s = sorted(w.sierra.alive());
                (h.len() == 2
                    && s.len() == 1
                    && sorted(w.hotel.registered(TG)) == h
                    && w.sierra.registered(TG) == s)
                    .then_some((h, s))
            },
        )
        .await;
    assert!(!on_hotel.iter().any(|id| on_sierra.contains(id)));
    let g = group(&w, &u, "web").await.unwrap();
    let mut arns: Vec<&str> = g.target_group_arns().iter().map(String::as_str).collect();
    arns.sort();
    assert_eq!(arns, [TG, there.as_str()]);
    // Dropping sierra while it has a target group is refused.
    let message = invalid(c.create_or_update_tags().tags(tag("hotel:4")).send().await);
    assert!(message.contains("would no longer list"), "{message}");
    // Scale in to 2: sierra's VM leaves its cloud's target group.
    c.desire("web", 2).await;
    w.until(30, "sierra's VM deregistered and gone", async || {
        (w.sierra.registered(TG).is_empty() && w.sierra.alive().is_empty()).then_some(())
    })
    .await;
    assert_eq!(sorted(w.hotel.registered(TG)), on_hotel);
}
