use crate::App;
use phantom_model::instance::Member;
use phantom_model::launch_template::TemplateName;
use phantom_model::request::DescribeAutoScalingInstances;
use phantom_model::response;
use phantom_rules::identity::Caller;
use phantom_wire::{paging, ApiResult};
use std::collections::BTreeMap;

/// AWS allows at most 50 records a page here.
const MAX: usize = 50;

pub async fn run(
    app: &App,
    caller: &Caller,
    input: DescribeAutoScalingInstances,
) -> ApiResult<response::DescribeAutoScalingInstances> {
    let limit = paging::max_records_within(input.paging.max_records, MAX, MAX)?;
    let after = paging::resume_after(input.paging.next_token.as_deref())?;
    let ids = super::names(input.instance_ids);
    // Instances are few per user: read them all (one Query), page by instance id.
    let wanted: Vec<(String, Member)> = app
        .store
        .all_instances(&caller.user)
        .await?
        .into_iter()
        .filter(|(_, m)| ids.as_ref().is_none_or(|ids| ids.contains(&m.id)))
        .filter(|(_, m)| after.as_ref().is_none_or(|a| m.id > *a))
        .collect();
    // A template's id and name are its group's to know: the groups are read (one Query) only
    // when an instance came from a template.
    let mut names: BTreeMap<String, Vec<TemplateName>> = BTreeMap::new();
    if wanted.iter().any(|(_, m)| m.launch_template.is_some()) {
        for g in app.store.all_groups(&caller.user).await? {
            names.insert(g.name, g.settings.template_names);
        }
    }
    let mut all: Vec<(String, response::Instance)> = wanted
        .into_iter()
        .map(|(group, m)| {
            let mut shown = m.describe_in(&group);
            if let (Some(t), Some(known)) = (&shown.launch_template, names.get(&group)) {
                shown.launch_template = Some(t.named(known));
            }
            (m.id.clone(), shown)
        })
        .collect();
    all.sort_by(|a, b| a.0.cmp(&b.0));
    let page = paging::page(all, limit, |(id, _)| id);
    Ok(response::DescribeAutoScalingInstances {
        auto_scaling_instances: page.items.into_iter().map(|(_, d)| d).collect(),
        next_token: page.next_token,
    })
}
