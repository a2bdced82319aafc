//! The pulse in process (`phantom_rules::pulse`, `health_check::pulse`): a dead VM seen by a look and
//! replaced within seconds, a quiet pair never swept between its turns, and the chain's safety:
//! the holder killed at every step, two starters at once, a lost tick.

use crate::Given;
use crate::{create_group, create_lc};
use health_check::HealthCheck;
use phantom_e2e::steps::Steps;
use phantom_e2e::world::{World, PULSE_MS, PULSE_VISIBILITY_MS};
use phantom_model::time::Clock;
use phantom_rules::pulse::Cadence;
use phantom_seams::store::{Claim, Directory, Fleet, Lease};

/// A beat every 5 s (the tests' world's pulse, `PULSE_MS`), a look every 10 s, a busy pair swept
/// every minute, every pair every hour: the deployment's defaults until issue 64 (now 4 s and 8 s;
/// the pulse's logic is the same for any whole number of beats).
fn aws_cadence() -> Cadence {
    Cadence::of_secs(5, 10, 60, 60, 3600).expect("whole periods")
}

/// A world with one user's group of 3 on hotel, brought up and settled under the pulse.
async fn settled(w: &World) -> (HealthCheck, phantom_e2e::User) {
    let u = w.user("pulse").await;
    create_lc(w, &u, "web").await;
    create_group(w, &u, "web", "web", 0, 5, 3).await;
    let h = w.pulsed(aws_cadence());
    h.run().await.expect("the schedule starts the pulse");
    w.pulse_for(&h, 120).await;
    assert_eq!(w.hotel.alive().len(), 3);
    let watched = w.store.watched().await.expect("the list");
    let view = watched[0].view.as_ref().expect("the pair was swept");
    assert!(!view.busy, "a settled pair is not busy: {view:?}");
    (h, u)
}

#[tokio::test]
async fn a_dead_vm_is_seen_by_a_look_and_replaced_within_seconds() {
    let w = World::new().await;
    let (h, _) = settled(&w).await;
    // Quiet: two minutes of beats ask for no sweep (the pair's sweep turn is every hour).
    let sent = w.queue.sent();
    let lookups = w.hotel.describe_calls();
    w.pulse_for(&h, 120).await;
    assert!(
        w.queue.sent() - sent <= 1,
        "{} sweeps",
        w.queue.sent() - sent
    );
    assert!(
        (11..=13).contains(&(w.hotel.describe_calls() - lookups)),
        "one look every 10 s: {}",
        w.hotel.describe_calls() - lookups
    );
    for _ in 0..5 {
        let launched = w.hotel.launched_total();
        let victim = w.hotel.alive()[0].clone();
        w.hotel.terminate_outside(&victim);
        let mut secs = 0;
        while w.hotel.launched_total() == launched {
            w.pulse_for(&h, 1).await;
            secs += 1;
            assert!(secs <= 11, "no replacement within 11 s of the death");
        }
        w.pulse_for(&h, 37).await;
        assert_eq!(w.hotel.alive().len(), 3);
    }
}

/// Delivers due ticks to `h` for `secs` seconds with the `k`-th adapter step of the first
/// delivery armed to crash (a killed Lambda: the tick comes back after the visibility timeout);
/// returns the seconds at which a beat ran, and checks that the queue never holds two ticks.
async fn beats_with_a_crash(w: &World, h: &HealthCheck, k: u64, secs: u64) -> (Vec<u64>, bool) {
    let mut beats = Vec::new();
    let mut armed = k > 0;
    let mut crashed = false;
    for s in 0..secs {
        w.clock.advance_ms(1_000);
        while let Some(tick) = w.pulse.receive() {
            if armed {
                armed = false;
                w.trip.arm(k);
                let done = tokio::select! {
                    r = h.tick(tick) => Some(r),
                    _ = w.trip.tripped() => None,
                };
                w.trip.disarm();
                match done {
                    Some(Ok(b)) if !b.stale => beats.push(s),
                    Some(Ok(_)) => {}
                    Some(Err(_)) | None => {
                        crashed |= done.is_none();
                        w.pulse.redeliver(tick, PULSE_VISIBILITY_MS);
                    }
                }
                continue;
            }
            match h.tick(tick).await {
                Ok(b) if !b.stale => beats.push(s),
                Ok(_) => {}
                Err(_) => w.pulse.redeliver(tick, PULSE_VISIBILITY_MS),
            }
        }
        // One chain: at most one tick on the queue that can take the lease (a crashed one given
        // back finds the lease moved past it, or resends a tick the queue drops).
        let held = w.store.pulse().await.unwrap().map_or(0, |l| l.seq);
        let ahead: Vec<_> = w
            .pulse
            .waiting()
            .into_iter()
            .filter(|t| t.seq > held)
            .collect();
        assert!(ahead.len() <= 1, "two chains: {ahead:?} past {held}");
        w.settle().await;
        if w.clock.now_ms() % 60_000 < 1_000 {
            h.run().await.expect("the schedule's run");
        }
    }
    (beats, crashed)
}

fn longest_gap(beats: &[u64]) -> u64 {
    beats.windows(2).map(|b| b[1] - b[0]).max().unwrap_or(0)
}

#[tokio::test]
async fn the_chain_survives_its_holder_killed_at_every_step() {
    let w = World::new().await;
    let (h, _) = settled(&w).await;
    let mut k = 1;
    loop {
        let (beats, crashed) = beats_with_a_crash(&w, &h, k, 150).await;
        // A crash is delivered again within the visibility timeout: never a minute without a
        // beat, and the chain goes on.
        let gap = longest_gap(&beats);
        assert!(
            gap <= PULSE_VISIBILITY_MS as u64 / 1000 + PULSE_MS as u64 / 1000,
            "step {k}: {gap} s without a beat"
        );
        assert!(beats.len() >= 15, "step {k}: {} beats", beats.len());
        if !crashed {
            break;
        }
        k += 1;
    }
    assert!(k > 4, "the beat has more steps than {k}");
}

#[tokio::test]
async fn two_starters_at_once_make_one_chain() {
    let Given { w, u, .. } = Given::user("pulse").await;
    create_lc(&w, &u, "web").await;
    create_group(&w, &u, "web", "web", 0, 5, 1).await;
    // Two Lambda instances of the schedule, at once, with no chain alive.
    let (a, b) = (w.pulsed(aws_cadence()), w.pulsed(aws_cadence()));
    let (ra, rb) = tokio::join!(a.keep_pulse(), b.keep_pulse());
    let started: Vec<u64> = [ra, rb]
        .into_iter()
        .filter_map(|r| r.expect("the store answers"))
        .collect();
    assert_eq!(started.len(), 1, "{started:?}");
    assert_eq!(w.pulse.waiting().len(), 1);
    // While it lives, the schedule starts none.
    w.pulse_for(&a, 30).await;
    assert_eq!(b.keep_pulse().await.expect("the store"), None);
    assert_eq!(w.pulse.waiting().len(), 1);
    // Both instances take ticks in turn: still one chain.
    for s in 0..60 {
        w.clock.advance_ms(1_000);
        let h = if s % 2 == 0 { &a } else { &b };
        while let Some(t) = w.pulse.receive() {
            h.tick(t).await.expect("a beat");
        }
        assert!(w.pulse.waiting().len() <= 1);
    }
}

#[tokio::test]
async fn a_lost_tick_is_replaced_by_the_schedule_and_a_late_one_dies() {
    let w = World::new().await;
    let (h, _) = settled(&w).await;
    let held = w.store.pulse().await.unwrap().expect("a lease").seq;
    w.pulse.lose_next(1);
    let (beats, _) = beats_with_a_crash(&w, &h, 0, 240).await;
    // Lost at the next beat: restarted by the first run of the schedule after the lease ran out
    // (the period and 20 s), then it beats on.
    let gap = longest_gap(&beats);
    assert!(gap <= 5 + 20 + 60 + 5, "{gap} s without a beat");
    assert!(beats.len() >= 30, "{} beats", beats.len());
    let now = w.store.pulse().await.unwrap().expect("a lease").seq;
    assert!(now > held + 30);
    // A tick of the old chain that was only late finds itself stale, and sends nothing.
    let late = phantom_rules::pulse::Tick { seq: held + 1 };
    let report = h.tick(late).await.expect("a stale tick is dropped");
    assert!(report.stale);
    assert_eq!(w.pulse.waiting().len(), 1);
}

#[tokio::test]
async fn a_resize_whose_message_was_lost_is_swept_at_the_next_look() {
    let w = World::new().await;
    let (h, u) = settled(&w).await;
    // The queue refuses the api's reconcile: the api marks the pair busy instead.
    w.queue.refuse_sends(true);
    w.sdk(&u).desire("web", 5).await;
    w.queue.refuse_sends(false);
    let mut secs = 0;
    while w.hotel.alive().len() < 5 {
        w.pulse_for(&h, 1).await;
        secs += 1;
        assert!(secs <= 11, "not launched within 11 s of the resize");
    }
}

#[tokio::test]
async fn a_cloud_that_tells_of_its_vms_is_looked_at_each_minute_and_its_events_replace_at_once() {
    let w = World::new().await;
    let mut hotel = w.store.cloud("hotel").await.unwrap().expect("hotel");
    hotel.events = true;
    w.store.put_cloud(&hotel).await.unwrap();
    let (h, _) = settled(&w).await;
    // Looks every minute, not every 10 s.
    let lookups = w.hotel.describe_calls();
    w.pulse_for(&h, 120).await;
    let looks = w.hotel.describe_calls() - lookups;
    assert!((2..=3).contains(&looks), "one look a minute: {looks}");
    w.hotel.take_events();
    for _ in 0..3 {
        let launched = w.hotel.launched_total();
        let victim = w.hotel.alive()[0].clone();
        w.hotel.terminate_outside(&victim);
        // EventBridge delivers the event to the work queue within a second or so.
        assert_eq!(w.deliver_events(&w.hotel).await, 1);
        let mut secs = 0;
        while w.hotel.launched_total() == launched {
            w.pulse_for(&h, 1).await;
            w.deliver_events(&w.hotel).await;
            secs += 1;
            assert!(secs <= 2, "no replacement within 2 s of the event");
        }
        w.pulse_for(&h, 40).await;
        w.deliver_events(&w.hotel).await;
        assert_eq!(w.hotel.alive().len(), 3);
    }
    // Without its event, a death waits for the minute's look (the pair's look, then a sweep).
    let launched = w.hotel.launched_total();
    let victim = w.hotel.alive()[0].clone();
    w.hotel.terminate_outside(&victim);
    w.hotel.take_events();
    let mut secs = 0;
    while w.hotel.launched_total() == launched {
        w.pulse_for(&h, 1).await;
        secs += 1;
        assert!(secs <= 62, "not replaced within the minute's look");
    }
    assert!(secs > 2, "replaced in {secs} s without its event");
}

#[tokio::test]
async fn an_event_for_a_vm_of_no_group_or_still_running_does_nothing() {
    let w = World::new().await;
    let (h, _) = settled(&w).await;
    let p = w.provisioner();
    let event = |instance: &str, state: &str| phantom_seams::queue::StateChange {
        instance: instance.into(),
        state: state.into(),
        region: "us-east-1".into(),
        account: "123456789012".into(),
    };
    assert_eq!(
        p.state_changed(&event("i-0000000000000000", "terminated"))
            .await,
        Ok(0)
    );
    let mine = w.hotel.alive()[0].clone();
    assert_eq!(p.state_changed(&event(&mine, "running")).await, Ok(0));
    // A forged "terminated" for a running VM asks for a round, which finds it running.
    assert_eq!(p.state_changed(&event(&mine, "terminated")).await, Ok(1));
    let launched = w.hotel.launched_total();
    w.pulse_for(&h, 5).await;
    assert_eq!(w.hotel.launched_total(), launched);
    assert!(w.hotel.alive().contains(&mine));
}

/// A changed pair's sweep is queued as soon as its look finds the change, not once the beat's
/// last look is answered: a slow cloud's look does not hold back another cloud's replacement.
#[tokio::test]
async fn a_look_that_finds_a_death_queues_its_sweep_before_the_beats_slow_looks_end() {
    let w = World::new().await;
    let u = w.user("pulse").await;
    create_lc(&w, &u, "web").await;
    w.sdk(&u).create_lc("web@sierra").await;
    create_group(&w, &u, "web", "web", 0, 5, 2).await;
    create_group(&w, &u, "far", "web@sierra", 0, 5, 2).await;
    // Every pair looked at every beat.
    let h = std::sync::Arc::new(w.pulsed(Cadence::of_secs(5, 5, 60, 60, 3600).expect("whole")));
    h.run().await.expect("the schedule starts the pulse");
    w.pulse_for(&h, 120).await;
    assert_eq!((w.hotel.alive().len(), w.sierra.alive().len()), (2, 2));
    let victim = w.hotel.alive()[0].clone();
    w.hotel.terminate_outside(&victim);
    w.sierra.set_latency(std::time::Duration::from_secs(2));
    let sent = w.queue.sent();
    let beat = tokio::spawn({
        let h = h.clone();
        // A beat that is no pair's sweep turn (those are hourly).
        async move { h.beat(1_000_001).await }
    });
    let began = std::time::Instant::now();
    while w.queue.sent() == sent {
        assert!(
            began.elapsed() < std::time::Duration::from_secs(2),
            "no sweep queued while sierra's look was still out"
        );
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    assert!(
        !beat.is_finished(),
        "the sweep went before sierra's look was answered"
    );
    let report = beat.await.expect("the beat");
    assert_eq!(
        (report.looked, report.changed, report.sweeps_queued),
        (2, 1, 1)
    );
}

/// A beat has at most `look_concurrency` looks in flight (the local runner sets few: its clouds are
/// emulators on one machine); each look is a DescribeInstances and a DescribeInstanceStatus.
#[tokio::test]
async fn a_beat_keeps_its_looks_in_flight_to_its_bound() {
    let w = World::new().await;
    for name in ["ann", "bob", "cat", "dan", "eve", "fay"] {
        let u = w.user(name).await;
        create_lc(&w, &u, "web").await;
        create_group(&w, &u, "web", "web", 0, 5, 1).await;
    }
    let every_beat = Cadence::of_secs(5, 5, 60, 60, 3600).expect("whole");
    let mut most = Vec::new();
    for bound in [2, health_check::pulse::LOOK_CONCURRENCY] {
        let mut h = w.pulsed(every_beat);
        let pulse = h.pulse.as_mut().expect("pulsed");
        std::sync::Arc::get_mut(pulse)
            .expect("not shared yet")
            .look_concurrency = bound;
        h.run().await.expect("the schedule starts the pulse");
        w.pulse_for(&h, 60).await;
        assert_eq!(w.hotel.alive().len(), 6);
        w.hotel.set_latency(std::time::Duration::from_millis(20));
        // A beat that is no pair's sweep turn: six looks.
        let report = h.beat(1_000_001).await;
        w.hotel.set_latency(std::time::Duration::ZERO);
        assert_eq!(report.looked, 6, "{report:?}");
        most.push(w.hotel.most_in_flight());
    }
    assert!(
        most[0] <= 4,
        "two looks at once are at most 4 calls: {most:?}"
    );
    assert!(most[1] > 4, "six looks at once: {most:?}");
}

/// A change whose message was lost (its api died between the write and the send) left the
/// group off its size until the pair's sweep turn, an hour on AWS (seed 368, mix 16). The write
/// keeps an ask on the group, and the pulse queues the round the ask names once it has waited
/// `ASK_GRACE_MS`; the round answers it, and no beat asks again.
#[tokio::test]
async fn a_change_whose_message_was_lost_gets_its_round_from_the_pulse() {
    let w = World::new().await;
    let (h, u) = settled(&w).await;
    w.sdk(&u).desire("web", 5).await;
    assert_eq!(w.queue.len(), 1, "the api's message");
    w.queue.purge();
    let grace = phantom_rules::pulse::ASK_GRACE_MS as u64 / 1000;
    w.pulse_for(&h, grace - 1).await;
    assert_eq!(
        w.hotel.alive().len(),
        3,
        "the message's round may still come"
    );
    w.pulse_for(&h, PULSE_MS as u64 / 1000 + 2).await;
    assert_eq!(w.hotel.alive().len(), 5, "the pulse queued the round");
    assert!(w.store.asked(i64::MAX).await.expect("the asks").is_empty());
}

/// A change written while another round holds the group's lease, one that moves no version (a
/// VM's health set): its message meets the lease and is dropped as the holder's work. The
/// holder, which read the VMs before the change, must not give the lease back as if it had seen
/// it (before the asks it did, and the VM waited for the pair's sweep): its release is refused,
/// and it goes round again. A holder that dies instead leaves the ask, and the pulse brings the
/// round once the lease has run out.
#[tokio::test]
async fn a_change_made_under_a_round_that_cannot_see_it_is_not_lost_with_that_round() {
    let w = World::new().await;
    let (h, u) = settled(&w).await;
    let victim = w.hotel.alive()[0].clone();
    let claim = Claim {
        user: &u.name,
        group: "web",
        holder: "a round at work",
        now_ms: w.clock.now_ms(),
        ttl_ms: 10_000,
    };
    let Lease::Taken(g) = w.store.take_lease(claim).await.expect("the lease") else {
        panic!("the group is free");
    };
    w.sdk(&u)
        .set_instance_health()
        .instance_id(&victim)
        .health_status("Unhealthy")
        .send()
        .await
        .expect("set-instance-health");
    assert_eq!(w.settle().await, 1, "the api's message, dropped as busy");
    assert_eq!(
        w.store
            .release_lease(&u.name, "web", claim.holder, Some(&g))
            .await,
        Err(phantom_seams::store::StoreError::Conflict),
        "an ask came since the holder read the group"
    );
    // The holder dies with the lease.
    let grace = phantom_rules::pulse::ASK_GRACE_MS as u64 / 1000;
    w.pulse_for(&h, grace - 1).await;
    assert!(w.hotel.alive().contains(&victim), "nothing asked yet");
    w.pulse_for(&h, PULSE_MS as u64 / 1000 + 2).await;
    assert!(
        !w.hotel.alive().contains(&victim),
        "the ask's round replaced it"
    );
}

/// A round that died once it had taken the lease, whose message then waits out the queue's
/// visibility timeout (its batch could not hide it for a lease's length: 6 minutes on AWS). The
/// ask it read is answered only when a round gives the lease back having seen it, so it stays,
/// and the pulse brings the round once the dead holder's lease has run out. Before, taking the
/// lease answered the ask, and the group waited for its pair's sweep turn.
#[tokio::test]
async fn a_round_that_died_with_its_message_out_of_sight_leaves_its_ask_to_the_pulse() {
    let w = World::new().await;
    let (h, u) = settled(&w).await;
    w.sdk(&u).desire("web", 5).await;
    // The message out of sight for the queue's visibility timeout.
    w.queue.purge();
    let msg = phantom_seams::queue::Reconcile::new(&u.name, "web", "SetDesiredCapacity");
    assert!(
        w.reconcile_crashing_at(&msg, 1).await,
        "killed once it took the lease"
    );
    assert_eq!(w.hotel.alive().len(), 3);
    let lease = provisioner::LEASE_MS as u64 / 1000;
    let grace = phantom_rules::pulse::ASK_GRACE_MS as u64 / 1000;
    w.pulse_for(&h, lease.max(grace) + PULSE_MS as u64 / 1000 + 2)
        .await;
    assert_eq!(w.hotel.alive().len(), 5, "the ask's round, after the lease");
}
