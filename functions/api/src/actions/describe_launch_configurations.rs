use super::names;
use crate::App;
use phantom::identity::Caller;
use phantom::paging;
use phantom::ApiResult;
use serde_json::{json, Value};

pub async fn run(app: &App, caller: &Caller, input: Value) -> ApiResult<Option<Value>> {
    let limit = paging::max_records(input["MaxRecords"].as_i64())?;
    let after = paging::resume_after(input["NextToken"].as_str())?;
    let wanted = names(&input, "LaunchConfigurationNames");
    let found = app
        .store
        .launch_configs(&caller.user, wanted.as_deref(), after.as_deref(), limit + 1)
        .await?;
    let page = paging::page(found, limit, |lc| &lc.name);
    let docs: Vec<&Value> = page.items.iter().map(|lc| &lc.doc).collect();
    Ok(Some(json!({
        "LaunchConfigurations": docs,
        "NextToken": page.next_token,
    })))
}
