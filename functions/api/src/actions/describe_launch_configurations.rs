use super::names;
use crate::App;
use phantom_model::launch_config::LaunchConfiguration;
use phantom_model::request::DescribeLaunchConfigurations;
use phantom_model::response;
use phantom_rules::identity::Caller;
use phantom_seams::store::Page;
use phantom_wire::paging;
use phantom_wire::ApiResult;

pub async fn run(
    app: &App,
    caller: &Caller,
    input: DescribeLaunchConfigurations,
) -> ApiResult<response::DescribeLaunchConfigurations> {
    let limit = paging::max_records(input.paging.max_records)?;
    let after = paging::resume_after(input.paging.next_token.as_deref())?;
    let wanted = names(input.launch_configuration_names);
    let found = app
        .store
        .launch_configs(
            &caller.user,
            Page {
                names: wanted.as_deref(),
                after: after.as_deref(),
                want: limit + 1,
            },
        )
        .await?;
    let page = paging::page(found, limit, |lc| &lc.name);
    Ok(response::DescribeLaunchConfigurations {
        launch_configurations: page
            .items
            .into_iter()
            .map(|lc| as_aws_shows(lc.settings))
            .collect(),
        next_token: page.next_token,
    })
}

/// AWS shows KeyName, KernelId, RamdiskId and UserData always, empty when not given, and clients
/// read them so (Ansible's autoscaling_launch_config_find reads `lc["UserData"]`).
fn as_aws_shows(lc: LaunchConfiguration) -> LaunchConfiguration {
    let shown = |v: Option<String>| Some(v.unwrap_or_default());
    LaunchConfiguration {
        key_name: shown(lc.key_name),
        kernel_id: shown(lc.kernel_id),
        ramdisk_id: shown(lc.ramdisk_id),
        user_data: shown(lc.user_data),
        ..lc
    }
}
