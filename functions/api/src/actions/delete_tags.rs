use super::create_or_update_tags::{change, Change};
use crate::App;
use phantom_model::request::Tags;
use phantom_rules::identity::Caller;
use phantom_wire::ApiResult;

/// Removes tags by key (and value, when given) from one or more groups.
pub async fn run(app: &App, caller: &Caller, input: Tags) -> ApiResult<()> {
    change(app, caller, &input, Change::Remove).await
}
