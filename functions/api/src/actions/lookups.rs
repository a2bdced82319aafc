//! What the api asks a group's cloud before it answers, so that bad input is refused at once as
//! AWS refuses it: AttachInstances of a VM that is not there (or not running, or another
//! group's), a launch template that does not exist there. A cloud that cannot be asked (not
//! reachable, no credentials of the user there) does not block the request: the provisioner asks
//! again when it acts and records a failed activity if the answer is no.

use crate::App;
use phantom_model::instance::LaunchedWith;
use phantom_rules::attach;
use phantom_rules::group::Group;
use phantom_rules::identity::Caller;
use phantom_rules::launch_config;
use phantom_rules::template::TemplateRef;
use phantom_seams::cloud::{Lookup, TemplateName};
use phantom_wire::{ApiError, ApiResult};
use std::sync::Arc;

/// The cloud as the caller's credentials reach it, or `None` if they have none there.
pub(crate) async fn cloud(
    app: &App,
    caller: &Caller,
    name: &str,
) -> ApiResult<Option<Arc<dyn Lookup>>> {
    let Some(cloud) = app.store.cloud(name).await? else {
        return Ok(None);
    };
    let Some(creds) = app.store.cloud_credentials(&caller.user, name).await? else {
        tracing::info!(
            user = caller.user,
            cloud = name,
            "no credentials there: not asked"
        );
        return Ok(None);
    };
    Ok(Some(app.clouds.lookup(&cloud, &creds)))
}

fn not_asked(caller: &Caller, cloud: &str, e: &phantom_seams::cloud::CloudError) {
    tracing::warn!(
        user = caller.user,
        cloud,
        code = e.code,
        message = e.message,
        "the cloud could not be asked: the provisioner will look"
    );
}

/// What VM `id` on `cloud_name` was launched with, for a launch configuration made from it: a
/// cloud that does not have it (or where the caller has no credentials) refuses in EC2's words;
/// one that cannot be asked now is unavailable (nothing can be copied from it).
pub(super) async fn launched_with(
    app: &App,
    caller: &Caller,
    cloud_name: &str,
    id: &str,
) -> ApiResult<LaunchedWith> {
    let Some(lookup) = cloud(app, caller, cloud_name).await? else {
        return Err(launch_config::instance_not_found(id).into());
    };
    match lookup.launched_with(id).await {
        Ok(Some(vm)) => Ok(vm),
        Ok(None) => Err(launch_config::instance_not_found(id).into()),
        Err(e) => Err(ApiError::service_unavailable(format!(
            "Cloud {cloud_name} could not be asked for instance {id}: {e}"
        ))),
    }
}

/// The cloud of the caller's that has VM `id` (the default cloud asked first, then the others
/// in name order), and what the VM was launched with: a group from an instance names no cloud.
pub(super) async fn find_instance(
    app: &App,
    caller: &Caller,
    id: &str,
) -> ApiResult<(String, LaunchedWith)> {
    // Two reads for all clouds: the registered ones and the caller's credentials.
    let mut clouds = app.store.clouds().await?;
    let mine = app.store.all_cloud_credentials(&caller.user).await?;
    let default = app.config.default_cloud.as_deref();
    clouds.sort_by_key(|c| (Some(c.name.as_str()) != default, c.name.clone()));
    let mut unasked = Vec::new();
    for record in clouds {
        let Some(creds) = mine.iter().find(|c| c.cloud == record.name) else {
            continue;
        };
        let name = record.name.clone();
        let lookup = app.clouds.lookup(&record, creds);
        match lookup.launched_with(id).await {
            Ok(Some(vm)) => return Ok((name, vm)),
            Ok(None) => {}
            Err(e) => {
                not_asked(caller, &name, &e);
                unasked.push(name);
            }
        }
    }
    if unasked.is_empty() {
        return Err(launch_config::instance_not_found(id).into());
    }
    Err(ApiError::service_unavailable(format!(
        "Instance {id} is on none of the clouds that answered; {} could not be asked now.",
        unasked.join(", ")
    )))
}

/// Refuses AttachInstances when the cloud shows that one of the VMs cannot join.
pub(super) async fn check_attach(
    app: &App,
    caller: &Caller,
    g: &Group,
    ids: &[String],
) -> ApiResult<()> {
    let Some(lookup) = cloud(app, caller, &g.cloud).await? else {
        return Ok(());
    };
    match lookup.describe(ids).await {
        Ok(found) => match attach::judge(ids, &found, &g.id).1.first() {
            Some((_, why)) => Err(ApiError::validation(why.clone())),
            None => Ok(()),
        },
        Err(e) => {
            not_asked(caller, &g.cloud, &e);
            Ok(())
        }
    }
}

/// The zones of these subnets as the group's cloud has them (subnet, zone; an unknown subnet is
/// absent), or `None` when the cloud cannot be asked now: the group keeps the zones it was given.
pub(super) async fn subnet_zones(
    app: &App,
    caller: &Caller,
    cloud_name: &str,
    subnets: &[String],
) -> ApiResult<Option<Vec<(String, String)>>> {
    if subnets.is_empty() {
        return Ok(None);
    }
    let Some(lookup) = cloud(app, caller, cloud_name).await? else {
        return Ok(None);
    };
    match lookup.subnet_zones(subnets).await {
        Ok(found) => Ok(Some(found)),
        Err(e) => {
            not_asked(caller, cloud_name, &e);
            Ok(None)
        }
    }
}

/// The request's AvailabilityZoneIds named as the group's cloud names them (the group launches
/// into zones by name): without credentials there, or with a cloud that cannot be asked now,
/// they cannot be named, and the request is refused.
pub(super) async fn name_zone_ids(
    app: &App,
    caller: &Caller,
    cloud_name: &str,
    s: &mut phantom_model::request::GroupSettings,
) -> ApiResult<()> {
    let ids = phantom_rules::group::zone_ids(s)?.to_vec();
    if ids.is_empty() {
        return Ok(());
    }
    let found = zone_names(app, caller, cloud_name, &ids).await?;
    Ok(phantom_rules::group::name_zone_ids(s, &found)?)
}

/// The zones of the capacity reservations a request's CapacityReservationSpecification targets,
/// as the group's cloud answers (None: the request gives no specification). A cloud that does
/// not have them, or has no capacity reservations, refuses in its own words; one that cannot be
/// asked now is unavailable (a launch could not be placed without them).
pub(super) async fn reservation_zones(
    app: &App,
    caller: &Caller,
    cloud_name: &str,
    s: &phantom_model::request::GroupSettings,
) -> ApiResult<Option<Vec<phantom_model::group::ReservationZone>>> {
    let Some(spec) = &s.capacity_reservation_specification else {
        return Ok(None);
    };
    let ids = phantom_rules::reservation::check(spec)?;
    if ids.is_empty() {
        return Ok(Some(Vec::new()));
    }
    let Some(lookup) = cloud(app, caller, cloud_name).await? else {
        return Err(ApiError::validation(format!(
            "CapacityReservationIds need the reservations of cloud '{cloud_name}', and you have no credentials there."
        )));
    };
    match lookup.reservation_zones(&ids).await {
        Ok(found) => Ok(Some(phantom_rules::reservation::zones(&ids, &found)?)),
        Err(e) if e.code == "CloudUnreachable" => Err(ApiError::service_unavailable(format!(
            "Cloud {cloud_name} could not be asked for its capacity reservations: {e}"
        ))),
        Err(e) => Err(ApiError::validation(format!(
            "Cloud {cloud_name} did not find the capacity reservations: {e}"
        ))),
    }
}

/// The names of these zone ids on `cloud_name` (id, name; an unknown id absent).
pub(super) async fn zone_names(
    app: &App,
    caller: &Caller,
    cloud_name: &str,
    ids: &[String],
) -> ApiResult<Vec<(String, String)>> {
    let Some(lookup) = cloud(app, caller, cloud_name).await? else {
        return Err(ApiError::validation(format!(
            "AvailabilityZoneIds need the zones of cloud '{cloud_name}', and you have no credentials there: give AvailabilityZones."
        )));
    };
    lookup.zone_names(ids).await.map_err(|e| {
        ApiError::service_unavailable(format!(
            "Cloud {cloud_name} could not be asked for its zones: {e}"
        ))
    })
}

/// The registered cloud a launch template lives on (its `@<cloud>`, else the default cloud),
/// checked to have launch templates.
pub(super) async fn template_cloud(
    app: &App,
    spec: &phantom_rules::template::Spec,
) -> ApiResult<phantom_seams::store::CloudRecord> {
    let name = spec.cloud_or(app.config.default_cloud.as_deref())?;
    let cloud = app
        .store
        .cloud(&name)
        .await?
        .ok_or_else(|| phantom_rules::launch_config::unknown_cloud(&name, &[]))?;
    phantom_rules::template::check_cloud(&cloud.name, cloud.launch_templates)?;
    Ok(cloud)
}

/// Refuses a launch template that its cloud does not have (at that version); the template as the
/// cloud names it (id and name), unless the cloud could not be asked.
pub(super) async fn check_template(
    app: &App,
    caller: &Caller,
    cloud_name: &str,
    t: &TemplateRef,
) -> ApiResult<Option<TemplateName>> {
    let Some(lookup) = cloud(app, caller, cloud_name).await? else {
        return Ok(None);
    };
    match lookup.template(t).await {
        Ok(Some(found)) => Ok(Some(found.name)),
        Ok(None) => {
            let which = match (&t.id, &t.name) {
                (Some(id), _) => format!("template ID {id}"),
                (None, Some(name)) => format!("template name {name}"),
                (None, None) => "neither a template ID nor a name".to_string(),
            };
            Err(ApiError::validation(format!(
                "You must use a valid fully-formed launch template. The specified launch template, with {which} (version {}), does not exist on cloud '{cloud_name}'.",
                t.version
            )))
        }
        Err(e) => {
            not_asked(caller, cloud_name, &e);
            Ok(None)
        }
    }
}

/// The templates of a group as their cloud names them, each asked of it (refused if it has one
/// not); those it could not be asked for are left out (shown as given).
pub(super) async fn check_templates(
    app: &App,
    caller: &Caller,
    cloud_name: &str,
    spec: &phantom_rules::template::Spec,
) -> ApiResult<Vec<TemplateName>> {
    let mut names = Vec::new();
    for t in spec.templates() {
        if let Some(found) = check_template(app, caller, cloud_name, t).await? {
            if !names.contains(&found) {
                names.push(found);
            }
        }
    }
    Ok(names)
}
