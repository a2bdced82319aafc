use super::names;
use crate::App;
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
        launch_configurations: page.items.into_iter().map(|lc| lc.settings).collect(),
        next_token: page.next_token,
    })
}
