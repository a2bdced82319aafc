use super::{across, launch_config_not_found, lookups};
use crate::App;
use phantom_model::request::{CreateAutoScalingGroup, CreateLaunchConfiguration};
use phantom_rules::group::GroupRules;
use phantom_rules::group::{self, NewGroupContext};
use phantom_rules::identity::Caller;
use phantom_rules::launch_config::{self, unknown_cloud};
use phantom_rules::template;
use phantom_seams::store::{StoreError, MAX_GROUPS};
use phantom_wire::{ApiError, ApiResult};

pub async fn run(app: &App, caller: &Caller, mut input: CreateAutoScalingGroup) -> ApiResult<()> {
    group::check_launch_source(&input)?;
    let Some(id) = input.instance_id.clone() else {
        return create(app, caller, input).await;
    };
    // From an instance: a launch configuration made from it, named after the group (as AWS
    // names it) on the instance's cloud, then the group from that; gone again if the group
    // cannot be made.
    let (cloud, vm) = lookups::find_instance(app, caller, &id).await?;
    let lc_name = format!("{}@{cloud}", input.auto_scaling_group_name);
    // Filled from the instance here, so no InstanceId: the cloud is not asked a second time.
    let mut lc = CreateLaunchConfiguration {
        launch_configuration_name: lc_name.clone(),
        ..Default::default()
    };
    launch_config::from_instance(&mut lc, &vm);
    super::create_launch_configuration::run(app, caller, lc).await?;
    group::from_instance(&mut input, &lc_name, &vm);
    let made = create(app, caller, input).await;
    if made.is_err() {
        if let Err(e) = app.store.delete_launch_config(&caller.user, &lc_name).await {
            tracing::warn!(user = caller.user, launch_config = lc_name, error = %e, "the launch configuration made from the instance could not be deleted");
        }
    }
    made
}

async fn create(app: &App, caller: &Caller, mut input: CreateAutoScalingGroup) -> ApiResult<()> {
    let name = &input.auto_scaling_group_name;
    let s = &input.settings;
    let lc_name = s.launch_configuration_name.as_deref();
    // The launch configuration gives the group its cloud; the write below re-checks that it still
    // exists, so a concurrent DeleteLaunchConfiguration cannot slip in between. Its name says
    // its cloud, read beside it (again below in the rare case the stored one differs: a name
    // without `@` made before the default cloud changed).
    let named =
        lc_name.and_then(|n| launch_config::cloud_of(n, app.config.default_cloud.as_deref()).ok());
    let (lc, named) = futures::join!(
        async {
            match lc_name {
                Some(n) => app.store.launch_config(&caller.user, n).await,
                None => Ok(None),
            }
        },
        async {
            match &named {
                Some(c) => app.store.cloud(c).await,
                None => Ok(None),
            }
        }
    );
    let lc = match lc_name {
        Some(n) => Some(lc?.ok_or_else(|| launch_config_not_found(n))?),
        None => None,
    };
    // Or the launch template's cloud (the cloud resolves the template when it launches).
    let spec = template::of(
        s.launch_template.as_ref(),
        s.mixed_instances_policy.as_ref(),
    )?;
    let cloud_name = match (&lc, &spec) {
        (Some(lc), _) => lc.cloud.clone(),
        (None, Some(spec)) => spec.cloud_or(app.config.default_cloud.as_deref())?,
        (None, None) => return Err(group::no_launch_source().into()),
    };
    let cloud = match named? {
        Some(c) if c.name == cloud_name => Some(c),
        _ => app.store.cloud(&cloud_name).await?,
    }
    .ok_or_else(|| unknown_cloud(&cloud_name, &[]))?;
    // Its templates as their cloud names them (Describe shows both the id and the name).
    let mut template_names = Vec::new();
    if let (None, Some(spec)) = (&lc, &spec) {
        template::check_cloud(&cloud.name, cloud.launch_templates)?;
        template_names = lookups::check_templates(app, caller, &cloud.name, spec).await?;
    }
    lookups::name_zone_ids(app, caller, &cloud.name, &mut input.settings).await?;
    let s = &input.settings;
    let account = &caller.account_id;
    let ctx = NewGroupContext {
        id: phantom_rules::ids::uuid(),
        region: &app.config.region,
        account,
        cloud: cloud.name.clone(),
        default_zone: &cloud.zone,
        now: app.clock.now(),
    };
    let mut g = group::from_input(&input, ctx)?;
    g.settings.template_names = template_names;
    if let Some(found) = lookups::subnet_zones(app, caller, &g.cloud, &g.subnets()).await? {
        let given = s.availability_zones.as_deref();
        group::in_subnet_zones(&mut g.settings, given, &found)?;
    }
    if let Some(z) = lookups::reservation_zones(app, caller, &g.cloud, s).await? {
        g.settings.reservation_zones = z;
        phantom_rules::reservation::check_zones(&g.settings, &g.subnets())?;
    }
    // A fixed group across clouds keeps the sum of its clouds' counts: a DesiredCapacity given
    // must be that sum.
    let asked = input.desired_capacity;
    let g = across::settled(None, g)?;
    if asked.is_some_and(|d| d != g.desired) {
        return Err(ApiError::validation(format!(
            "A fixed group's desired capacity is the sum of its clouds' counts ({}): leave DesiredCapacity out or give that.",
            g.desired
        )));
    }
    across::check(app, caller, &g).await?;
    // Its load balancers, found on its cloud.
    let sources = phantom_rules::traffic::of_create(&input)?;
    let mut g = g;
    if !sources.is_empty() {
        let drains = super::traffic::drains(app, caller, &g, &sources).await?;
        g.settings.traffic = phantom_rules::traffic::attach(&[], &sources, |s| {
            sources.iter().position(|x| x == s).map_or(0, |i| drains[i])
        })?;
        phantom_rules::traffic::show(&mut g.settings);
    }
    // Each hook's target gets AWS's test message before the group is made.
    let now = app.clock.now_ms();
    for t in g
        .settings
        .lifecycle_hooks
        .iter()
        .filter_map(|h| h.notification_target_arn.as_deref())
    {
        let test = phantom_rules::notification::test(name, &g.settings.arn, t, true, now);
        super::notifications::send_test(app, &test).await?;
    }
    match app.store.create_group(&caller.user, &g, Some(now)).await {
        Ok(()) => {
            super::reconcile(app, caller, name, "CreateAutoScalingGroup").await;
            Ok(())
        }
        Err(StoreError::Exists) => Err(ApiError::already_exists(format!(
            "AutoScalingGroup by this name already exists - A group with the name {name} already exists"
        ))),
        Err(StoreError::NotFound) => {
            let names: Vec<String> = g.launch_configurations()?.into_iter().collect();
            Err(launch_config_not_found(&names.join(", ")))
        }
        Err(StoreError::Limit) => Err(ApiError::limit_exceeded(format!(
            "You have requested more Auto Scaling groups than your current limit of {MAX_GROUPS} allows."
        ))),
        Err(e) => Err(e.into()),
    }
}
