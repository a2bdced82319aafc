use super::{change_group, group_not_found, pending_delete};
use crate::App;
use phantom_model::request::Tags;
use phantom_rules::identity::Caller;
use phantom_rules::tags::{self, TagChange};
use phantom_wire::ApiResult;
use std::collections::BTreeMap;

/// Adds or replaces tags of one or more groups; each group's change is a compare-and-set. A tag
/// that propagates reaches the VMs launched from now on.
pub async fn run(app: &App, caller: &Caller, input: Tags) -> ApiResult<()> {
    change(app, caller, &input, Change::Upsert).await
}

#[derive(Clone, Copy)]
pub enum Change {
    Upsert,
    Remove,
}

pub async fn change(app: &App, caller: &Caller, input: &Tags, how: Change) -> ApiResult<()> {
    let changes = tags::parse(&input.tags)?;
    let mut by_group: BTreeMap<&str, Vec<&TagChange>> = BTreeMap::new();
    for c in &changes {
        by_group.entry(c.group.as_str()).or_default().push(c);
    }
    // Every group first, so an unknown one changes nothing.
    for name in by_group.keys() {
        match app.store.group(&caller.user, name).await? {
            None => return Err(group_not_found(name)),
            Some(g) if g.deleting() => return Err(pending_delete()),
            Some(_) => {}
        }
    }
    for (name, changes) in by_group {
        apply(app, caller, name, &changes, how).await?;
    }
    Ok(())
}

async fn apply(
    app: &App,
    caller: &Caller,
    name: &str,
    changes: &[&TagChange],
    how: Change,
) -> ApiResult<()> {
    // A propagated tag reaches VMs launched later: no reconcile is needed.
    change_group(app, caller, name, None, |g| {
        let mut next = g.clone();
        next.settings.tags = match how {
            Change::Upsert => tags::upsert(&g.settings.tags, name, changes)?,
            Change::Remove => tags::remove(&g.settings.tags, changes),
        };
        Ok(next)
    })
    .await?;
    Ok(())
}
