//! The round of a group across clouds (`phantom:clouds`): observe every cloud it lists (and any
//! other it still has VMs on), count what each has, split the desired capacity between them
//! (`phantom_rules::spread::allot`, pure), then decide, act and record per cloud, in one store write.
//! A cloud that cannot be reached keeps its VMs counted for `UNREACHABLE_GRACE_MS`, then its
//! share goes to the next cloud; its records stay until it is back, when they are judged again.

use crate::balance::Health;
use crate::{On, Provisioner, Round};
use phantom_rules::activity::Context;
use phantom_rules::group::Group;
use phantom_rules::group::GroupRules;
use phantom_rules::health::Checks;
use phantom_rules::on_cloud;
use phantom_rules::reconcile::{
    self, assess, size, size_replacing, Assessed, Cause, Lifecycle, Market, Member, Seen, Target,
};
use phantom_rules::refresh;
use phantom_rules::round::{self, Acted, Before};
use phantom_rules::spread::{allot, pools, CloudView, Hold, Policy, Site, Spread};
use phantom_rules::warm::Pool;
use phantom_rules::weights::Weights;
use phantom_seams::cloud::{Balancers, Cloud, CloudError};
use phantom_seams::store::{Record, StoreError};
use std::sync::Arc;

/// One cloud of the group this round.
/// A cloud and what it shows of the group, or why it could not be looked at.
type Look = Result<(Arc<dyn Cloud>, Vec<Seen>), CloudError>;
/// A cloud's target, its look, and its serving VMs' statuses.
type Looked = (Target, Look, Vec<phantom_model::status::InstanceStatus>);

struct Place {
    site: Site,
    on: On,
    target: Target,
    members: Vec<Member>,
    /// The cloud and what it shows, or why it could not be looked at.
    look: Look,
    hold: Hold,
    /// Its load balancers, if the group has sources there, and what they say of its VMs.
    lbs: Option<Arc<dyn Balancers>>,
    health: Health,
}

impl Provisioner {
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn round_across(
        &self,
        owner: &str,
        g: &Group,
        spread: &Spread,
        ctx: &Context<'_>,
        before: Before,
        members: Vec<Member>,
        looks_again: bool,
    ) -> Result<Round, StoreError> {
        let now = ctx.now_ms;
        // The listed clouds in rank order, then any other the group still has VMs on (drained).
        let mut sites = spread.sites.clone();
        for m in &members {
            if !sites.iter().any(|s| s.cloud == m.cloud) {
                sites.push(Site {
                    cloud: m.cloud.clone(),
                    max: 0,
                });
            }
        }

        // Observe, every cloud at once.
        let on = |cloud: &str| -> Vec<Member> {
            members
                .iter()
                .filter(|m| m.cloud == cloud)
                .cloned()
                .collect()
        };
        let looks = futures::future::join_all(
            sites
                .iter()
                .map(|s| self.look_at(owner, g, &s.cloud, on(&s.cloud))),
        )
        .await;
        let mut places = Vec::with_capacity(sites.len());
        let mut look_again: Option<i64> = None;
        for (site, look) in sites.into_iter().zip(looks) {
            let (mut target, look, statuses) = look?;
            let here = on(&site.cloud);
            let lbs = match &look {
                Ok(_) => self.balancers(owner, g, &site.cloud).await?,
                Err(_) => None,
            };
            let health = self.lb_health(g, &site.cloud, lbs.as_ref()).await;
            target.failing = phantom_rules::traffic::unhealthy(
                Checks::of(g),
                &g.settings.traffic,
                &here,
                &health,
                target.grace_ms,
                now,
            );
            let judged = crate::status::judge(g, &mut target, &here, &statuses, now);
            look_again = match (look_again, judged.look_again_ms) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            let hold = g
                .holds
                .get(&site.cloud)
                .cloned()
                .unwrap_or_default()
                .seen(look.is_ok(), now);
            places.push(Place {
                on: On {
                    cloud: site.cloud.clone(),
                    // What it launches from now (a refresh's DesiredConfiguration), there.
                    launch_configuration: g
                        .launching()
                        .launch_configuration
                        .map(|lc| on_cloud::launch_configuration(lc, &site.cloud)),
                    launch_template: target.launch_template.clone(),
                    token: format!("{}-{}-{}", g.id, hold.token_seq(g.launch_seq), site.cloud),
                    // Set below, once it is known which clouds can launch.
                    fallback: false,
                },
                members: here,
                site,
                target,
                look,
                hold,
                lbs,
                health,
            });
        }

        if let Some(at) = look_again.filter(|_| looks_again) {
            // An impairment not yet confirmed: the round looks again once it would be.
            let msg =
                phantom_seams::queue::Reconcile::new(owner, &g.name, crate::status::LOOK_AGAIN);
            self.enqueue(&msg, crate::status::delay_secs(at - now))
                .await;
        }

        // Decide: what each cloud has, then what each should have.
        let assessed: Vec<Option<Assessed>> = places
            .iter()
            .map(|p| {
                p.look
                    .as_ref()
                    .ok()
                    .map(|(_, seen)| assess(&p.target, &p.members, seen, now))
            })
            .collect();
        // With CapacityRebalance, at-risk VMs count for no cloud's share: their replacements go
        // where the group's next VMs would, and they leave as those serve (`phantom_rules::rebalance`).
        let weights = g.weights();
        let rebalancing = g.settings.capacity_rebalance
            && !g.deleting()
            && refresh::active(&g.settings.instance_refreshes).is_none();
        // A cloud that cannot be seen counts its recorded VMs, at risk or not as they were
        // (counted as running for a round, a VM at risk made another cloud's share sink and
        // launch again; found by the simulator, seed 4745).
        let unseen: Vec<Vec<Member>> = places
            .iter()
            .map(|p| match p.hold.counted_out(now) {
                true => Vec::new(),
                false => unseen_live(&p.members),
            })
            .collect();
        let risky: Vec<(i64, i64)> = assessed
            .iter()
            .zip(&unseen)
            .map(|(a, unseen)| match a {
                _ if !rebalancing => (0, 0),
                Some(a) => phantom_rules::rebalance::at_risk(&a.live, &weights),
                None => phantom_rules::rebalance::at_risk(unseen, &weights),
            })
            .collect();
        let views: Vec<CloudView> = places
            .iter()
            .zip(&assessed)
            .zip(&risky)
            .zip(&unseen)
            .map(|(((p, a), (at_risk, at_risk_serving)), unseen)| {
                let (have, in_service, replaced) = match a {
                    // A VM replaced launch-first counts for no share either: its replacement
                    // does (found by the simulator, seed 1787: a share kept for it while another
                    // cloud's VM died made room for a second replacement, let go a second later).
                    Some(a) => {
                        let (have, in_service) = a.counts(&weights);
                        (
                            have - at_risk - a.replaced(&weights),
                            in_service - at_risk_serving,
                            a.replaced(&weights),
                        )
                    }
                    None => {
                        let serving = unseen
                            .iter()
                            .filter(|m| m.healthy && m.lifecycle == Lifecycle::InService);
                        (
                            weights.sum(unseen) - at_risk,
                            serving.map(|m| weights.units(m)).sum::<i64>() - at_risk_serving,
                            0,
                        )
                    }
                };
                // Protected VMs serving there stay there (spread::shares).
                let protected = p
                    .members
                    .iter()
                    .filter(|m| m.protected && m.healthy && m.lifecycle == Lifecycle::InService)
                    .map(|m| weights.units(m))
                    .sum();
                CloudView {
                    max: p.site.max,
                    have,
                    in_service,
                    protected,
                    usable: p.look.is_ok() && p.hold.usable(now),
                    outgoing: at_risk + replaced,
                    reserved: if p.hold.counted_out(now) {
                        0
                    } else {
                        p.hold.reserved(now)
                    },
                }
            })
            .collect();
        let shares = if g.deleting() {
            vec![0; places.len()]
        } else {
            let rebalance = !g.target().suspended.iter().any(|p| p == "AZRebalance");
            allot(spread.policy, g.desired, g.max, rebalance, &views)
        };
        // Where the group's VMs would be if moving cost nothing: a cloud above it holds VMs
        // only until the move lands, and replaces none of them past their lifetime but those
        // whose replacements are on their way (`spread::replaces_expired`).
        let ideal = phantom_rules::spread::shares(spread.policy, g.desired, &views);
        let have: i64 = views.iter().map(|v| v.have).sum();
        let desired = if g.deleting() {
            0
        } else if spread.policy == Policy::Fixed {
            spread.total()
        } else {
            g.desired
        };
        // The at-risk VMs the group can spare, let go from the worst-ranked cloud first.
        let mut spare = phantom_rules::rebalance::spare(
            views.iter().map(|v| v.in_service).sum(),
            risky.iter().map(|r| r.0).sum(),
            desired,
        );
        let mut leaving = vec![0; places.len()];
        for (i, (at_risk, _)) in risky.iter().enumerate().rev() {
            leaving[i] = spare.min(*at_risk);
            spare -= leaving[i];
        }
        // What each cloud may run while the others run theirs: the group's bound (its MaxSize
        // and headroom, or its maintenance policy's MaxHealthyPercentage) less what they run,
        // as each cloud's plan leaves it (the better-ranked clouds' launches first).
        let bound = phantom_rules::rebalance::ceiling(desired, g.max).max(
            g.settings
                .instance_maintenance_policy
                .as_ref()
                .map_or(0, |p| phantom_rules::maintenance::most(desired, p)),
        );
        let mut runs_there: Vec<i64> = views
            .iter()
            .map(|v| v.have + v.outgoing + v.reserved)
            .collect();
        // A warm pool is kept where the group's next VMs would go.
        let pool_parts = match g.target().pool {
            Some(pool) => pools(spread.policy, desired, pool.size, &views),
            None => vec![0; places.len()],
        };

        // A running refresh is decided for the whole group, then split per cloud; while a cloud
        // cannot be seen it waits (its old instances would otherwise look replaced).
        let running = refresh::active(&g.settings.instance_refreshes).filter(|_| !g.deleting());
        let mut refresh_next = None;
        let mut refresh_idle = false;
        let seen: Option<Vec<&Assessed>> = assessed.iter().map(Option::as_ref).collect();
        let steps: Vec<Option<refresh::Step>> = match (running, seen) {
            (Some(running), Some(seen)) => {
                let live: Vec<Member> = seen.iter().flat_map(|a| a.live.clone()).collect();
                let standby: Vec<Member> = seen.iter().flat_map(|a| a.standby.clone()).collect();
                let when = phantom_model::time::format_timestamp(phantom_model::time::from_ms(now));
                let step = refresh::step(running, desired, &weights, &live, &standby, now, &when);
                refresh_next = step.next.clone();
                refresh_idle = step.terminate.is_empty() && step.capacity <= desired;
                // An unhealthy VM goes this round and is replaced: it is no VM a cloud keeps
                // for the group (found by the simulator, seed 4058: kept in a cloud's capacity,
                // its replacement was launched beside a move's, 5 VMs for a bound of 4).
                let sound: Vec<Vec<Member>> = seen
                    .iter()
                    .map(|a| {
                        let sick = |m: &Member| a.sick.iter().any(|(id, _)| *id == m.id);
                        a.live.iter().filter(|m| !sick(m)).cloned().collect()
                    })
                    .collect();
                let parts: Vec<refresh::Part> = places
                    .iter()
                    .zip(&seen)
                    .zip(&sound)
                    .zip(&shares)
                    .map(|(((p, a), sound), share)| refresh::Part {
                        share: *share,
                        max: p.site.max,
                        live: sound,
                        standby: &a.standby,
                    })
                    .collect();
                refresh::split(running, &step, desired, &weights, &parts, now)
                    .into_iter()
                    .map(Some)
                    .collect()
            }
            // A cloud out of sight: the refresh waits, the others holding what they run.
            (Some(_), None) => assessed
                .iter()
                .zip(&shares)
                .map(|(a, share)| a.as_ref().map(|a| refresh::wait(*share, &weights, &a.live)))
                .collect(),
            (None, _) => vec![None; places.len()],
        };

        // Each cloud's on-demand and spot VMs, as the clouds before it in this round leave
        // theirs: the group's split is kept across all of them.
        let mut markets: Vec<(i64, i64)> = assessed
            .iter()
            .zip(&places)
            .map(|(a, p)| match a {
                Some(a) => reconcile::by_market(&a.live, &weights),
                None => reconcile::by_market(&p.members, &weights),
            })
            .collect();

        // On-demand where no spot can be had only on the last cloud that can launch: the
        // clouds before it are tried for spot first (a failed one is held, the next takes over).
        let last_usable = views.iter().rposition(|v| v.usable);
        let fallback = g.distribution().fallback;

        // Act and record, cloud by cloud.
        let mut r = Record::default();
        let mut traffic = g.settings.traffic.clone();
        let mut refresh_failed: Option<String> = None;
        let mut holds = g.holds.clone();
        let (mut launched, mut terminated, mut waiting, mut all_gone) = (0, 0, false, true);
        // VMs found dead, on every cloud: owed a replacement by the group.
        let mut deaths = 0;
        let mut unhealthy = Vec::new();
        let mut pool_empty = true;
        let mut held_above: Vec<String> = Vec::new();
        for (i, (((p, a), share), step)) in places
            .iter()
            .zip(assessed)
            .zip(&shares)
            .zip(steps)
            .enumerate()
        {
            let mut hold = p.hold.clone();
            let (Ok((cloud, seen)), Some(a)) = (&p.look, a) else {
                all_gone = false;
                pool_empty = false;
                waiting = true;
                if let Err(e) = &p.look {
                    tracing::warn!(group = g.name, cloud = p.site.cloud, error = %e, "cloud not seen");
                    hold.last_error = Some(e.to_string());
                }
                held_above.push(describe_hold(&p.site.cloud, &hold));
                put_hold(&mut holds, &p.site.cloud, hold);
                continue;
            };
            // Falling back, and so moving back, happen on one cloud only.
            let may_fall_back = fallback && last_usable.is_none_or(|l| i >= l);
            let elsewhere = markets
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .fold((0, 0), |(od, sp), (_, m)| (od + m.0, sp + m.1));
            let target = Target {
                desired: *share,
                pool: p.target.pool.map(|pool| Pool {
                    size: pool_parts[i],
                    ..pool
                }),
                elsewhere,
                rebalance_leaving: Some(leaving[i]),
                room: Some(bound - (runs_there.iter().sum::<i64>() - runs_there[i])),
                distribution: phantom_rules::distribution::Distribution {
                    fallback: may_fall_back,
                    ..p.target.distribution.clone()
                },
                max_lifetime_ms: p.target.max_lifetime_ms.filter(|_| {
                    phantom_rules::spread::replaces_expired(*share, ideal[i], weights.sum(&a.live))
                }),
                ..p.target.clone()
            };
            let live = a.live.clone();
            let mut plan = match (running, step) {
                (Some(_), step) => {
                    // While the whole refresh replaces nothing, VMs past their lifetime are.
                    let step = step.map(|s| match refresh_idle {
                        true => reconcile::refreshing(&target, &a, now, s),
                        false => (s, Cause::Refresh),
                    });
                    size_replacing(&target, a, now, step)
                }
                (None, _) => size(&target, a, now),
            };
            plan.capacity_from = have;
            plan.capacity_to = desired;
            markets[i] = after_plan(&live, &plan, &weights);
            runs_there[i] = markets[i].0 + markets[i].1;
            all_gone &= reconcile::nothing_left(&p.members, seen, &plan);
            pool_empty &= plan.drop_pool;
            // The load balancers first: a VM stops receiving traffic before it goes.
            traffic = self
                .balance(
                    g,
                    &p.site.cloud,
                    p.lbs.as_ref(),
                    &traffic,
                    &p.members,
                    &plan,
                    &p.health,
                )
                .await;
            let mut acted = Acted::default();
            let ids = crate::terminate(cloud.as_ref(), &plan, &mut acted).await;
            if !plan.launch.is_empty() || !plan.launch_warm.is_empty() {
                let on = On {
                    fallback: may_fall_back,
                    ..p.on.clone()
                };
                self.launch(owner, g, &on, cloud.as_ref(), &plan, &mut acted)
                    .await?;
                let seq = hold.token_seq(g.launch_seq);
                // Answered (made, or refused): that launch is settled; unanswered, retried so.
                hold = acted.remembered(
                    hold.launched(acted.launch_failed.is_none(), now),
                    seq,
                    &plan,
                    &weights,
                    now,
                );
                if let Some(why) = &acted.launch_failed {
                    tracing::warn!(
                        group = g.name,
                        cloud = p.site.cloud,
                        error = why,
                        "launch failed; the next cloud takes the rest"
                    );
                    hold.last_error = Some(why.clone());
                    waiting = true;
                }
            }
            crate::stop_and_start(g, cloud.as_ref(), &plan).await;
            if !plan.attach.is_empty() {
                crate::attach(g, owner, cloud.as_ref(), &plan.attach, &mut acted).await;
                // They serve from now: the next round registers them with the load balancers.
                waiting |= !acted.attached.is_empty() && !g.settings.traffic.is_empty();
            }
            if !plan.detach.is_empty() {
                crate::detach(g, cloud.as_ref(), &plan.detach, &mut acted).await;
            }
            deaths += phantom_rules::replacement::deaths(&plan);
            unhealthy.extend(crate::status::unhealthy_checks(&plan));
            let mut part = round::record(ctx, before, &p.members, &plan, &acted);
            // A refusal that a lower-ranked cloud can make up for (or a move back that has to
            // wait) is an overflow, not a failure of the group (a Failed activity would stop
            // Terraform's capacity wait): it is told in the cause of the launches below instead.
            let room_below = views[i + 1..].iter().any(|v| v.usable && v.max > v.have);
            if acted.launch_failed.is_some() && (room_below || have >= desired) {
                part.activities.retain(|a| a.doc.status_code != "Failed");
            } else if let Some(why) = acted
                .launch_failed
                .as_ref()
                .filter(|_| !acted.launch_unanswered)
            {
                // A launch without an answer may have happened: it does not fail a refresh.
                refresh_failed.get_or_insert_with(|| why.clone());
            }
            for act in &mut part.activities {
                // The Details say the cloud.
                act.doc.details.cloud = Some(p.site.cloud.clone());
                // Why a VM went to a lower-ranked cloud.
                let launching = act.doc.description.starts_with("Launching");
                if launching && !held_above.is_empty() {
                    act.doc.cause = format!(
                        "{} {}; launching on {}.",
                        act.doc.cause,
                        held_above.join("; "),
                        p.site.cloud
                    );
                }
            }
            if !hold.usable(now) && p.site.max > 0 {
                held_above.push(describe_hold(&p.site.cloud, &hold));
            }
            launched += acted.launched.len();
            terminated += if acted.terminate_failed.is_some() {
                0
            } else {
                ids.len()
            };
            waiting |= round::still_waiting(&p.members, &part);
            put_hold(&mut holds, &p.site.cloud, hold);
            r.put.append(&mut part.put);
            r.forget.append(&mut part.forget);
            r.activities.append(&mut part.activities);
            r.notices.append(&mut part.notices);
            r.launch_seq = r.launch_seq.or(part.launch_seq);
        }
        // Failures are remembered per cloud here, not by the group's own backoff.
        if holds != g.holds {
            r.holds = Some(holds);
        }
        let took = phantom_rules::replacement::settle(
            &g.unreplaced_ms,
            deaths,
            g.desired,
            &members,
            now,
            &mut r,
        );
        match self.write(owner, g, &mut r).await {
            Ok(()) => {
                crate::replaced(&took);
                crate::status::count_unhealthy(&unhealthy);
            }
            Err(StoreError::Conflict) | Err(StoreError::NotFound) => {
                tracing::warn!(
                    group = g.name,
                    "the group moved under this round; looking again"
                );
                return Ok(Round::Acted {
                    launched,
                    terminated,
                    waiting: true,
                });
            }
            Err(e) => return Err(e),
        }
        self.write_traffic(owner, g, traffic).await?;
        if pool_empty
            && places
                .iter()
                .any(|p| p.target.pool.is_some_and(|p| p.deleting))
        {
            self.drop_pool(owner, g).await?;
        }
        let refreshing = self
            .advance_refresh(
                owner,
                g,
                refresh_next.as_ref(),
                &members,
                refresh_failed.as_deref(),
            )
            .await?;
        if g.deleting() && all_gone {
            return match self.store.delete_group(owner, g).await {
                Ok(()) => Ok(Round::Deleted),
                Err(StoreError::Conflict) => Ok(Round::Acted {
                    launched,
                    terminated,
                    waiting: true,
                }),
                Err(e) => Err(e),
            };
        }
        tracing::info!(
            group = g.name,
            ?shares,
            launched,
            terminated,
            "round across clouds"
        );
        let waiting = waiting || refreshing || g.deleting();
        if !waiting {
            // Each cloud's VMs past their lifetime may wait on a warm-up there, as on one cloud.
            let at = places
                .iter()
                .filter_map(|p| {
                    let here = round::after(&members, &r).filter(|m| m.cloud == p.site.cloud);
                    reconcile::look_again_at(&p.target, here, now)
                })
                .min();
            self.look_when_warm(owner, g, at, now).await;
        }
        Ok(Round::Acted {
            launched,
            terminated,
            waiting,
        })
    }

    /// A cloud of the group with the owner's credentials, and the group's target there (the
    /// group's own zones on its own cloud, the cloud's default zone elsewhere).
    /// The cloud's VMs of the group, and the statuses of those among `here` (its records there)
    /// that serve.
    async fn look_at(
        &self,
        owner: &str,
        g: &Group,
        name: &str,
        here: Vec<Member>,
    ) -> Result<Looked, StoreError> {
        let mut target = g.target();
        // A refresh is decided for the whole group, never by one cloud alone.
        target.refresh = None;
        target.cloud = name.to_string();
        target.launch_configuration = target
            .launch_configuration
            .map(|lc| on_cloud::launch_configuration(&lc, name));
        // The template of the group's template's name there.
        target.launch_template = target
            .launch_template
            .map(|t| on_cloud::launch_template(&t, name));
        let look = match self.connect_record(owner, name).await? {
            Ok((record, cloud)) => {
                if name != g.cloud {
                    target.zones = Some(record.zone.clone())
                        .into_iter()
                        .filter(|z| !z.is_empty())
                        .collect();
                    target.subnets = Vec::new();
                }
                let listed = match crate::ended::tagged(cloud.as_ref(), owner, Some(&g.id)).await {
                    Ok(t) => {
                        let recorded = here.iter().map(|m| m.id.as_str());
                        crate::ended::with_ended(cloud.as_ref(), t, recorded).await
                    }
                    Err(e) => Err(e),
                };
                match listed {
                    Ok(t) => {
                        let seen: Vec<Seen> = t.into_iter().map(|t| t.seen).collect();
                        let running = crate::status::judged_ids(&here)
                            .into_iter()
                            .filter(|id| {
                                seen.iter().any(|s| {
                                    &s.id == id
                                        && s.state == phantom_model::instance::CloudState::Running
                                })
                            })
                            .collect();
                        let statuses = self.statuses(&record, cloud.as_ref(), running).await;
                        return Ok((target, Ok((cloud, seen)), statuses));
                    }
                    Err(e) => Err(e),
                }
            }
            Err(e) => Err(e),
        };
        Ok((target, look, Vec::new()))
    }
}

/// The on-demand and spot units a cloud keeps once `plan` is carried out.
fn after_plan(live: &[Member], plan: &reconcile::Plan, w: &Weights) -> (i64, i64) {
    let leaving = |m: &&Member| {
        plan.terminate
            .iter()
            .chain(&plan.hold)
            .any(|(id, _)| *id == m.id)
            || plan.to_pool.contains(&m.id)
    };
    let staying: Vec<Member> = live.iter().filter(|m| !leaving(m)).cloned().collect();
    let (od, sp) = reconcile::by_market(&staying, w);
    plan.launch
        .iter()
        .fold((od, sp), |(od, sp), p| match p.market {
            Market::OnDemand => (od + p.units, sp),
            Market::Spot => (od, sp + p.units),
        })
}

/// What a cloud that cannot be seen has, by its records: the VMs that count, and those serving.
/// The recorded VMs of a cloud that cannot be seen that count as running there. Counted in units
/// as a seen cloud's are (counted in VMs, a weighted group's share there sank and another cloud
/// launched it, to let it go again the next round; found by the simulator, seed 2955).
fn unseen_live(members: &[Member]) -> Vec<Member> {
    members
        .iter()
        .filter(|m| {
            !m.lifecycle.is_leaving() && m.lifecycle != Lifecycle::Standby && !m.lifecycle.is_warm()
        })
        .cloned()
        .collect()
}

fn describe_hold(cloud: &str, h: &Hold) -> String {
    match (&h.last_error, h.unreachable_since_ms) {
        (_, Some(_)) => format!(
            "{cloud} cannot be reached ({})",
            h.last_error.as_deref().unwrap_or("no answer")
        ),
        (Some(e), None) => format!("{cloud} refused: {e}"),
        (None, None) => format!("{cloud} is held after failing launches"),
    }
}

pub(crate) fn put_hold(holds: &mut phantom_rules::spread::Holds, cloud: &str, hold: Hold) {
    if hold.is_clear() {
        holds.remove(cloud);
    } else {
        holds.insert(cloud.to_string(), hold);
    }
}
