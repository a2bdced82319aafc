//! What only administrators do: register, change and remove clouds (and see whether each answers
//! and what Phantom runs there), create users, list them, disable them, rotate their keys, see
//! each user's groups, and set the metric source target tracking reads. Anyone else gets 403
//! AccessDenied.

use super::shapes::{self, CreateUser, Named, OfUser, PutCloud, PutMetricSource};
use super::{answer, read, Failure, Json, Outcome};
use crate::App;
use futures::{StreamExt, TryStreamExt};
use phantom_rules::identity::{self, Caller, User};
use phantom_rules::reconcile::Lifecycle;
use phantom_seams::store::{CloudRecord, MetricAuth, StoreError};
use phantom_wire::ApiError;
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

/// Store reads an admin call has in flight at once.
const READS_AT_ONCE: usize = 16;

pub const OPERATIONS: &[&str] = &[
    "DescribeClouds",
    "PutCloud",
    "DeleteCloud",
    "CreateUser",
    "ListUsers",
    "DisableUser",
    "PutUserLimits",
    "RotateAccessKey",
    "DescribeUserGroups",
    "PutMetricSource",
    "DescribeMetricSource",
    "DeleteMetricSource",
    "GetOperatingMetrics",
];

/// The caller must be an administrator now (read afresh: a revoked administrator is refused at
/// once).
pub async fn require(app: &App, caller: &Caller, operation: &str) -> Result<(), Failure> {
    let admin = app
        .store
        .user(&caller.user)
        .await?
        .is_some_and(|u| u.admin && !u.disabled);
    if admin {
        return Ok(());
    }
    Err(Failure {
        status: 403,
        code: Cow::Borrowed("AccessDenied"),
        message: format!(
            "User {} is not authorized to perform {operation}: it is for administrators.",
            caller.user
        ),
    })
}

pub async fn run(app: &App, caller: &Caller, operation: &str, input: &Json) -> Outcome {
    match operation {
        "DescribeClouds" => answer(describe_clouds(app).await),
        "PutCloud" => answer(async { put_cloud(app, read(input)?).await }.await),
        "DeleteCloud" => answer(async { delete_cloud(app, read(input)?).await }.await),
        "CreateUser" => answer(async { create_user(app, read(input)?).await }.await),
        "ListUsers" => answer(list_users(app).await),
        "DisableUser" => answer(async { disable_user(app, caller, read(input)?).await }.await),
        "PutUserLimits" => answer(async { put_limits(app, read(input)?).await }.await),
        "RotateAccessKey" => answer(async { rotate_key(app, read(input)?).await }.await),
        "DescribeUserGroups" => answer(async { user_groups(app, read(input)?).await }.await),
        "PutMetricSource" => answer(async { put_metric_source(app, read(input)?).await }.await),
        "DescribeMetricSource" => answer(describe_metric_source(app).await),
        "DeleteMetricSource" => answer(delete_metric_source(app).await),
        "GetOperatingMetrics" => {
            answer(async { super::metric::operating(app, read(input)?).await }.await)
        }
        other => Err(ApiError::invalid_action(other, "phantom/v1").into()),
    }
}

/// Each cloud with whether it answers now (asked all at once) and the groups and VMs Phantom has
/// there, from the health check's list and the watched users' instance records: 2 + one Query per
/// watched user (an admin's view, not a hot path; docs/benchmarks.md).
async fn describe_clouds(app: &App) -> Result<shapes::Clouds<shapes::CloudOfAll>, Failure> {
    let clouds = app.store.clouds().await?;
    let watched = app.store.watched().await?;
    let users: BTreeSet<&str> = watched.iter().map(|w| w.user.as_str()).collect();
    // One Query per watched user: a handful at a time, not a burst against the table.
    let reads: Vec<_> = users.iter().map(|u| app.store.all_instances(u)).collect();
    let records: Vec<_> = futures::stream::iter(reads)
        .buffer_unordered(READS_AT_ONCE)
        .try_collect()
        .await?;
    let mut instances: BTreeMap<&str, usize> = BTreeMap::new();
    for (_, member) in records.iter().flatten() {
        *instances.entry(member.cloud.as_str()).or_default() += 1;
    }
    let reachable = futures::future::join_all(clouds.iter().map(|c| app.clouds.reachable(c))).await;
    let list = clouds
        .iter()
        .zip(reachable)
        .map(|(c, reachable)| shapes::CloudOfAll {
            name: c.name.clone(),
            endpoint: c.endpoint.clone(),
            region: c.region.clone(),
            zone: c.zone.clone(),
            launch_templates: c.launch_templates,
            load_balancers: c.load_balancers,
            events: c.events,
            status_checks: c.status_checks,
            reachable,
            groups: watched
                .iter()
                .filter(|w| w.cloud == c.name)
                .map(|w| w.groups)
                .sum(),
            // A cloud no watched user has a VM on has none.
            instances: instances.get(c.name.as_str()).copied().unwrap_or(0),
        })
        .collect();
    Ok(shapes::Clouds { clouds: list })
}

async fn put_cloud(app: &App, input: PutCloud) -> Result<shapes::Done, Failure> {
    let name: &str = &input.name;
    if !identity::valid_user_name(name) {
        return Err(ApiError::validation(format!(
            "Cloud name '{name}' must be 1 to 64 letters, digits, '-', '_' or '.'."
        ))
        .into());
    }
    let endpoint: &str = &input.endpoint;
    let url: http::Uri = endpoint.parse().map_err(|_| bad_endpoint(endpoint))?;
    if !matches!(url.scheme_str(), Some("http" | "https")) || url.host().is_none() {
        return Err(bad_endpoint(endpoint).into());
    }
    let region: &str = &input.region;
    let zone = match &input.zone {
        None => format!("{region}a"),
        Some(zone) => zone.to_string(),
    };
    let cloud = CloudRecord {
        name: name.to_string(),
        endpoint: endpoint.trim_end_matches('/').to_string(),
        region: region.to_string(),
        zone,
        launch_templates: input.launch_templates.unwrap_or(true),
        load_balancers: input.load_balancers.unwrap_or(true),
        events: input.events.unwrap_or(false),
        // Asked again: a cloud put anew may have gained the call.
        status_checks: true,
    };
    app.store.put_cloud(&cloud).await?;
    Ok(shapes::Done {})
}

async fn put_metric_source(app: &App, input: PutMetricSource) -> Result<shapes::Done, Failure> {
    let source = phantom_rules::tracking::metric_source(
        &input.url,
        &input.instance_label,
        input.bearer_token.as_deref(),
        (
            input.basic_auth_user.as_deref(),
            input.basic_auth_password.as_deref(),
        ),
    )
    .map_err(ApiError::from)?;
    app.store.put_metric_source(&source).await?;
    Ok(shapes::Done {})
}

async fn describe_metric_source(app: &App) -> Result<shapes::MetricSourceOf, Failure> {
    let view = app.store.metric_source().await?.map(|s| {
        let (auth, user) = match s.auth {
            None => ("none", None),
            Some(MetricAuth::Bearer(_)) => ("bearer", None),
            Some(MetricAuth::Basic { user, .. }) => ("basic", Some(user)),
        };
        shapes::MetricSourceView {
            url: s.url,
            instance_label: s.instance_label,
            auth,
            basic_auth_user: user,
        }
    });
    Ok(shapes::MetricSourceOf {
        metric_source: view,
    })
}

async fn delete_metric_source(app: &App) -> Result<shapes::Done, Failure> {
    match app.store.delete_metric_source().await {
        Ok(()) => Ok(shapes::Done {}),
        Err(StoreError::NotFound) => {
            Err(ApiError::validation("No metric source is set: there is none to delete.").into())
        }
        Err(e) => Err(e.into()),
    }
}

fn bad_endpoint(endpoint: &str) -> ApiError {
    ApiError::validation(format!(
        "Endpoint '{endpoint}' must be an http or https URL of the cloud's EC2 API."
    ))
}

async fn delete_cloud(app: &App, input: Named) -> Result<shapes::Done, Failure> {
    let name: &str = &input.name;
    match app.store.delete_cloud(name).await {
        Ok(()) => Ok(shapes::Done {}),
        Err(StoreError::NotFound) => {
            Err(ApiError::validation(format!("Cloud '{name}' is not registered.")).into())
        }
        Err(StoreError::InUse(users)) => Err(ApiError::resource_in_use(format!(
            "Cloud '{name}' is in use: {} still have groups or VMs there.",
            users.join(", ")
        ))
        .into()),
        Err(e) => Err(e.into()),
    }
}

fn user_view(u: &User, groups: i64) -> shapes::UserView {
    shapes::UserView {
        user_name: u.name.clone(),
        account: u.account_id.clone(),
        access_key_id: u.access_key_id.clone(),
        created: u.created.clone(),
        admin: u.admin,
        disabled: u.disabled,
        groups,
        limits: shapes::LimitsView::of(u.limits.as_ref()),
    }
}

async fn create_user(app: &App, input: CreateUser) -> Result<shapes::NewUser, Failure> {
    let name: &str = &input.user_name;
    let admin = input.admin.unwrap_or(false);
    let created = phantom_model::time::format_timestamp(app.clock.now());
    let (user, secret) =
        phantom_rules::identity::new_user(name, admin, created).map_err(ApiError::validation)?;
    match app.store.create_user(&user, &secret).await {
        Ok(()) => {
            tracing::info!(user = name, admin, "user created");
            Ok(shapes::NewUser {
                user: user_view(&user, 0),
                access_key: shapes::AccessKey {
                    access_key_id: user.access_key_id,
                    secret_access_key: secret,
                },
            })
        }
        Err(StoreError::Exists) => {
            Err(ApiError::already_exists(format!("User '{name}' already exists.")).into())
        }
        Err(e) => Err(e.into()),
    }
}

async fn list_users(app: &App) -> Result<shapes::Users, Failure> {
    let users = app.store.users().await?;
    let reads: Vec<_> = users.iter().map(|u| app.store.usage(&u.name)).collect();
    let usage: Vec<_> = futures::stream::iter(reads)
        .buffered(READS_AT_ONCE)
        .try_collect()
        .await?;
    Ok(shapes::Users {
        users: users
            .iter()
            .zip(usage)
            .map(|(u, usage)| user_view(u, usage.groups))
            .collect(),
    })
}

async fn existing(app: &App, name: &str) -> Result<User, Failure> {
    app.store
        .user(name)
        .await?
        .ok_or_else(|| ApiError::validation(format!("User '{name}' does not exist.")).into())
}

async fn disable_user(app: &App, caller: &Caller, input: OfUser) -> Result<shapes::Done, Failure> {
    let name: &str = &input.user_name;
    if name == caller.user {
        return Err(ApiError::validation(
            "You cannot disable yourself: another administrator can.",
        )
        .into());
    }
    let user = existing(app, name).await?;
    if !user.disabled {
        app.store.disable_user(&user).await?;
        app.keys.forget(&user.access_key_id);
        // The account's IAM users' keys stop with its root's.
        iam_keys(app, &user, Some(false)).await?;
        tracing::info!(user = name, "user disabled");
    }
    Ok(shapes::Done {})
}

/// A user's own request limits, or (no limits given) the deployment's again. They reach the
/// functions with the user's access key: within `auth::KEY_CACHE_MS`.
async fn put_limits(app: &App, input: shapes::PutUserLimits) -> Result<shapes::Done, Failure> {
    let name: &str = &input.user_name;
    let user = existing(app, name).await?;
    let limits = match (input.describe, input.mutate) {
        (None, None) => None,
        (Some(d), Some(m)) => {
            let l = phantom_rules::throttle::Limits {
                describe: d.rate(),
                mutate: m.rate(),
            };
            l.check().map_err(ApiError::validation)?;
            Some(l)
        }
        _ => {
            return Err(ApiError::validation(
                "Give both Describe and Mutate limits, or neither to use the deployment's.",
            )
            .into())
        }
    };
    app.store.set_limits(&user, limits.as_ref()).await?;
    app.keys.forget(&user.access_key_id);
    let user = existing(app, name).await?;
    iam_keys(app, &user, None).await?;
    tracing::info!(user = name, ?limits, "request limits set");
    Ok(shapes::Done {})
}

/// Rewrites the account's IAM users' keys (`Identities::rewrite_iam_keys`), and forgets them
/// in this instance.
async fn iam_keys(
    app: &App,
    account: &phantom_model::user::User,
    active: Option<bool>,
) -> Result<(), ApiError> {
    app.store.rewrite_iam_keys(account, active).await?;
    for u in app.store.iam_users(&account.name).await? {
        for k in &u.keys {
            app.keys.forget(&k.access_key_id);
        }
    }
    Ok(())
}

async fn rotate_key(app: &App, input: OfUser) -> Result<shapes::Rotated, Failure> {
    let name: &str = &input.user_name;
    let user = existing(app, name).await?;
    let (key, secret) = (identity::new_access_key_id(), identity::new_secret());
    app.store.rotate_access_key(&user, &key, &secret).await?;
    app.keys.forget(&user.access_key_id);
    tracing::info!(user = name, "access key rotated");
    Ok(shapes::Rotated {
        access_key: shapes::AccessKey {
            access_key_id: key,
            secret_access_key: secret,
        },
    })
}

/// A user's groups at a glance: sizes and how many of their VMs are in service.
async fn user_groups(app: &App, input: OfUser) -> Result<shapes::Groups, Failure> {
    let name: &str = &input.user_name;
    existing(app, name).await?;
    let groups = app.store.all_groups(name).await?;
    let members = app.store.all_instances(name).await?;
    let list = groups
        .iter()
        .map(|g| {
            let mine = members.iter().filter(|(group, _)| *group == g.name);
            let (all, in_service) = mine.fold((0, 0), |(all, ok), (_, m)| {
                (
                    all + 1,
                    ok + usize::from(m.lifecycle == Lifecycle::InService),
                )
            });
            shapes::GroupAtAGlance {
                name: g.name.clone(),
                launch_configuration: g.launch_configuration().map(str::to_string),
                min_size: g.min,
                max_size: g.max,
                desired_capacity: g.desired,
                instances: all,
                in_service,
            }
        })
        .collect();
    Ok(shapes::Groups { groups: list })
}
