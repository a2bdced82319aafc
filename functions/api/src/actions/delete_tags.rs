use super::create_or_update_tags::{change, Change};
use crate::App;
use phantom::identity::Caller;
use phantom::ApiResult;
use serde_json::Value;

/// Removes tags by key (and value, when given) from one or more groups.
pub async fn run(app: &App, caller: &Caller, input: Value) -> ApiResult<Option<Value>> {
    change(app, caller, &input, Change::Remove).await
}
