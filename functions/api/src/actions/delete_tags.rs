use super::create_or_update_tags::{change, Change};
use crate::App;
use phantom::identity::Caller;
use phantom::model::request::Tags;
use phantom::ApiResult;

/// Removes tags by key (and value, when given) from one or more groups.
pub async fn run(app: &App, caller: &Caller, input: Tags) -> ApiResult<()> {
    change(app, caller, &input, Change::Remove).await
}
