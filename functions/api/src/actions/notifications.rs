//! PutNotificationConfiguration, DescribeNotificationConfigurations,
//! DeleteNotificationConfiguration: the SNS topics a group tells of its launches and
//! terminations, kept on the group (`phantom_rules::notification`); the provisioner sends the messages.
//! A put sends the topic AWS's test notification first: a topic that cannot take it is refused.

use super::{change_group, group_named, groups_named_or_all, names};
use crate::App;
use phantom_model::request::{
    DeleteNotificationConfiguration, DescribeNotificationConfigurations,
    PutNotificationConfiguration,
};
use phantom_model::response::{self, NotificationConfigurationRow};
use phantom_rules::identity::Caller;
use phantom_rules::notification::{self, Notice};
use phantom_seams::publish::PublishError;
use phantom_wire::{paging, ApiError, ApiResult};

pub async fn put(app: &App, caller: &Caller, input: PutNotificationConfiguration) -> ApiResult<()> {
    let name = &input.auto_scaling_group_name;
    let topic = &input.topic_arn;
    let g = group_named(app, caller, name).await?;
    // Checked before anything is sent or written.
    notification::put(
        &g.settings.notifications,
        &g.settings.arn,
        topic,
        &input.notification_types,
    )?;
    let now = app.clock.now_ms();
    send_test(
        app,
        &notification::test(name, &g.settings.arn, topic, false, now),
    )
    .await?;
    change_group(app, caller, name, None, |g| {
        let mut next = g.clone();
        next.settings.notifications = notification::put(
            &g.settings.notifications,
            &g.settings.arn,
            topic,
            &input.notification_types,
        )?;
        Ok(next)
    })
    .await?;
    Ok(())
}

/// Sends a test notification as a put does: a target that refuses it refuses the put, as AWS
/// refuses a topic it cannot publish to.
pub(crate) async fn send_test(app: &App, test: &Notice) -> ApiResult<()> {
    match app.publisher.publish(test).await {
        Ok(()) => Ok(()),
        Err(PublishError::Refused(why)) => Err(ApiError::validation(format!(
            "Failed to publish a test notification to {}: {why}",
            test.target
        ))),
        Err(PublishError::Unavailable(why)) => Err(ApiError::internal(format!(
            "Could not publish a test notification to {}: {why}",
            test.target
        ))),
    }
}

pub async fn delete(
    app: &App,
    caller: &Caller,
    input: DeleteNotificationConfiguration,
) -> ApiResult<()> {
    let name = &input.auto_scaling_group_name;
    change_group(app, caller, name, None, |g| {
        let mut next = g.clone();
        next.settings.notifications =
            notification::delete(&g.settings.notifications, name, &input.topic_arn)?;
        Ok(next)
    })
    .await?;
    Ok(())
}

/// One row per (group, topic, type), by group, topic and type; paged by the last row's key.
pub async fn describe(
    app: &App,
    caller: &Caller,
    input: DescribeNotificationConfigurations,
) -> ApiResult<response::DescribeNotificationConfigurations> {
    let limit = paging::max_records_within(input.paging.max_records, 50, 100)?;
    let after = paging::resume_after(input.paging.next_token.as_deref())?;
    let mut groups = Vec::new();
    match names(input.auto_scaling_group_names) {
        // Named groups that do not exist are left out, as AWS leaves them out.
        Some(wanted) => {
            for name in wanted {
                if let Some(g) = app.store.group(&caller.user, &name).await? {
                    groups.push(g);
                }
            }
        }
        None => groups = groups_named_or_all(app, caller, None).await?,
    }
    let mut rows: Vec<(String, NotificationConfigurationRow)> = groups
        .iter()
        .flat_map(|g| {
            g.settings.notifications.iter().flat_map(move |c| {
                c.notification_types.iter().map(move |t| {
                    (
                        format!("{}\n{}\n{}", g.name, c.topic_arn, t.as_str()),
                        NotificationConfigurationRow {
                            auto_scaling_group_name: g.name.clone(),
                            topic_arn: c.topic_arn.clone(),
                            notification_type: t.as_str(),
                        },
                    )
                })
            })
        })
        .filter(|(k, _)| after.as_deref().is_none_or(|a| k.as_str() > a))
        .collect();
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    let page = paging::page(rows, limit, |(k, _)| k);
    Ok(response::DescribeNotificationConfigurations {
        notification_configurations: page.items.into_iter().map(|(_, r)| r).collect(),
        next_token: page.next_token,
    })
}
