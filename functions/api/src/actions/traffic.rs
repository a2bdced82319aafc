//! Load balancers: AttachLoadBalancers, AttachLoadBalancerTargetGroups, AttachTrafficSources,
//! their Detach and Describe actions. The sources are kept on the group with their states
//! (`phantom_rules::traffic`); the provisioner registers the group's VMs with them and deregisters them.
//! A source is looked up on its cloud (the group's own, or another of its clouds named after `@`)
//! before it is attached (and its drain time read): one the cloud does not have is refused as AWS
//! refuses it.

use super::{change_group, group_named};
use crate::App;
use phantom_model::request::{
    DescribeTrafficSources, GroupPage, LoadBalancerNames, TargetGroupArns, TrafficSourcesOfGroup,
};
use phantom_model::response;
use phantom_rules::group::Group;
use phantom_rules::group::GroupRules;
use phantom_rules::identity::Caller;
use phantom_rules::traffic::{self, Attachment, Kind, Source};
use phantom_seams::cloud::lattice_rest::no_lattice;
use phantom_seams::cloud::CloudError;
use phantom_wire::{paging, ApiError, ApiResult};

/// The load balancers of one of the group's clouds, with the caller's credentials there.
async fn balancers_on(
    app: &App,
    caller: &Caller,
    cloud: &str,
) -> ApiResult<std::sync::Arc<dyn phantom_seams::cloud::Balancers>> {
    let record = app
        .store
        .cloud(cloud)
        .await?
        .ok_or_else(|| ApiError::validation(format!("Cloud {cloud} is not registered.")))?;
    let Some(creds) = app.store.cloud_credentials(&caller.user, cloud).await? else {
        return Err(ApiError::validation(format!(
            "You have no credentials on cloud {cloud}: Phantom registers your VMs with its load balancers with them."
        )));
    };
    app.clouds.balancers(&record, &creds).ok_or_else(|| {
        ApiError::validation(format!(
            "Cloud {cloud} is registered without load balancers: its VMs cannot be put behind one."
        ))
    })
}

/// Each source's drain time on its cloud (one of the group's: `<name>@<cloud>`, or its own); one
/// the cloud does not have is refused.
pub(super) async fn drains(
    app: &App,
    caller: &Caller,
    g: &Group,
    sources: &[Source],
) -> ApiResult<Vec<i64>> {
    let clouds = g.clouds()?;
    let mut on: std::collections::BTreeMap<
        String,
        std::sync::Arc<dyn phantom_seams::cloud::Balancers>,
    > = std::collections::BTreeMap::new();
    let mut out = Vec::new();
    for s in sources {
        let (cloud, local) = traffic::placed(s, &g.cloud);
        if !clouds.contains(&cloud) {
            return Err(ApiError::validation(format!(
                "{} is on cloud {cloud}, which is not one of group {}'s clouds.",
                s.identifier, g.name
            )));
        }
        if !on.contains_key(&cloud) {
            on.insert(cloud.clone(), balancers_on(app, caller, &cloud).await?);
        }
        match on[&cloud].drain_secs(&local).await {
            Ok(Some(secs)) => out.push(secs),
            Ok(None) => {
                return Err(ApiError::validation(match s.kind {
                    Kind::Elb => "Provided Load Balancers may not be valid. Please ensure they exist and try again.",
                    Kind::Elbv2 | Kind::VpcLattice => "Provided Target Groups may not be valid. Please ensure they exist and try again.",
                }))
            }
            Err(e) if s.kind == Kind::VpcLattice && no_lattice(&e) => {
                return Err(ApiError::validation(format!(
                    "Cloud {cloud} has no VPC Lattice (asked for target group {}, it answered {}: {}): attach its ELB load balancers or target groups, or a VPC Lattice target group of a cloud that is an AWS region.",
                    local.identifier, e.code, e.message
                )))
            }
            Err(CloudError { code, message }) => {
                return Err(ApiError::validation(format!(
                    "Cloud {cloud} could not be asked for {} ({code}: {message}); try again.",
                    s.identifier
                )))
            }
        }
    }
    Ok(out)
}

async fn attach(app: &App, caller: &Caller, name: &str, sources: Vec<Source>) -> ApiResult<()> {
    let g = group_named(app, caller, name).await?;
    let drains = drains(app, caller, &g, &sources).await?;
    change_group(app, caller, name, Some("load balancers attached"), |g| {
        let mut next = g.clone();
        next.settings.traffic = traffic::attach(&g.settings.traffic, &sources, |s| {
            sources.iter().position(|x| x == s).map_or(0, |i| drains[i])
        })?;
        traffic::show(&mut next.settings);
        Ok(next)
    })
    .await?;
    Ok(())
}

async fn detach(app: &App, caller: &Caller, name: &str, sources: Vec<Source>) -> ApiResult<()> {
    change_group(app, caller, name, Some("load balancers detached"), |g| {
        let mut next = g.clone();
        next.settings.traffic = traffic::detach(&g.settings.traffic, &sources)?;
        traffic::show(&mut next.settings);
        Ok(next)
    })
    .await?;
    Ok(())
}

fn of_kind(identifiers: &[String], kind: Kind) -> ApiResult<Vec<Source>> {
    Ok(identifiers
        .iter()
        .map(|i| traffic::source(i, Some(kind.as_str())))
        .collect::<Result<_, _>>()?)
}

pub async fn attach_load_balancers(
    app: &App,
    caller: &Caller,
    input: LoadBalancerNames,
) -> ApiResult<()> {
    let sources = of_kind(&input.load_balancer_names, Kind::Elb)?;
    attach(app, caller, &input.auto_scaling_group_name, sources).await
}

pub async fn detach_load_balancers(
    app: &App,
    caller: &Caller,
    input: LoadBalancerNames,
) -> ApiResult<()> {
    let sources = of_kind(&input.load_balancer_names, Kind::Elb)?;
    detach(app, caller, &input.auto_scaling_group_name, sources).await
}

pub async fn attach_target_groups(
    app: &App,
    caller: &Caller,
    input: TargetGroupArns,
) -> ApiResult<()> {
    let sources = of_kind(&input.target_group_arns, Kind::Elbv2)?;
    attach(app, caller, &input.auto_scaling_group_name, sources).await
}

pub async fn detach_target_groups(
    app: &App,
    caller: &Caller,
    input: TargetGroupArns,
) -> ApiResult<()> {
    let sources = of_kind(&input.target_group_arns, Kind::Elbv2)?;
    detach(app, caller, &input.auto_scaling_group_name, sources).await
}

pub async fn attach_traffic_sources(
    app: &App,
    caller: &Caller,
    input: TrafficSourcesOfGroup,
) -> ApiResult<()> {
    let sources = traffic::sources(&input.traffic_sources)?;
    attach(app, caller, &input.auto_scaling_group_name, sources).await
}

pub async fn detach_traffic_sources(
    app: &App,
    caller: &Caller,
    input: TrafficSourcesOfGroup,
) -> ApiResult<()> {
    let sources = traffic::sources(&input.traffic_sources)?;
    detach(app, caller, &input.auto_scaling_group_name, sources).await
}

/// The group's sources of `kind` (all with none), by identifier, a page of them.
async fn page_of(
    app: &App,
    caller: &Caller,
    name: &str,
    kind: Option<Kind>,
    page: &phantom_model::request::Paging,
) -> ApiResult<(Vec<Attachment>, Option<String>)> {
    let limit = paging::max_records_within(page.max_records, 100, 100)?;
    let after = paging::resume_after(page.next_token.as_deref())?;
    let g = group_named(app, caller, name).await?;
    let mut list: Vec<Attachment> = g
        .settings
        .traffic
        .into_iter()
        .filter(|a| kind.is_none_or(|k| a.source.kind == k))
        .filter(|a| {
            after
                .as_deref()
                .is_none_or(|x| a.source.identifier.as_str() > x)
        })
        .collect();
    list.sort_by(|a, b| a.source.identifier.cmp(&b.source.identifier));
    let page = paging::page(list, limit, |a| &a.source.identifier);
    Ok((page.items, page.next_token))
}

pub async fn describe_load_balancers(
    app: &App,
    caller: &Caller,
    input: GroupPage,
) -> ApiResult<response::DescribeLoadBalancers> {
    let (list, next_token) = page_of(
        app,
        caller,
        &input.auto_scaling_group_name,
        Some(Kind::Elb),
        &input.paging,
    )
    .await?;
    Ok(response::DescribeLoadBalancers {
        load_balancers: list
            .into_iter()
            .map(|a| response::LoadBalancerState {
                load_balancer_name: a.source.identifier,
                state: a.state.as_str(),
            })
            .collect(),
        next_token,
    })
}

pub async fn describe_target_groups(
    app: &App,
    caller: &Caller,
    input: GroupPage,
) -> ApiResult<response::DescribeLoadBalancerTargetGroups> {
    let (list, next_token) = page_of(
        app,
        caller,
        &input.auto_scaling_group_name,
        Some(Kind::Elbv2),
        &input.paging,
    )
    .await?;
    Ok(response::DescribeLoadBalancerTargetGroups {
        load_balancer_target_groups: list
            .into_iter()
            .map(|a| response::LoadBalancerTargetGroupState {
                load_balancer_target_group_arn: a.source.identifier,
                state: a.state.as_str(),
            })
            .collect(),
        next_token,
    })
}

pub async fn describe_traffic_sources(
    app: &App,
    caller: &Caller,
    input: DescribeTrafficSources,
) -> ApiResult<response::DescribeTrafficSources> {
    let kind = match input.traffic_source_type.as_deref() {
        None => None,
        Some("elb") => Some(Kind::Elb),
        Some("elbv2") => Some(Kind::Elbv2),
        Some("vpc-lattice") => Some(Kind::VpcLattice),
        Some(other) => {
            return Err(ApiError::validation(format!(
                "Traffic source type {other} is not valid: give elb, elbv2 or vpc-lattice."
            )))
        }
    };
    let (list, next_token) = page_of(
        app,
        caller,
        &input.auto_scaling_group_name,
        kind,
        &input.paging,
    )
    .await?;
    Ok(response::DescribeTrafficSources {
        traffic_sources: list
            .into_iter()
            .map(|a| response::TrafficSourceState {
                traffic_source: a.source.identifier.clone(),
                state: a.state.as_str(),
                identifier: a.source.identifier,
                r#type: a.source.kind.as_str(),
            })
            .collect(),
        next_token,
    })
}
