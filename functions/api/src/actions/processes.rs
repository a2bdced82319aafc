//! SuspendProcesses, ResumeProcesses, EnableMetricsCollection, DisableMetricsCollection: changes to
//! a group's settings (`phantom_rules::processes`). A suspended process holds back what the provisioner
//! and the health check do (`phantom_rules::reconcile::decide`); resuming one asks for a reconcile.

use super::{change_group, change_group_refusing};
use crate::App;
use phantom_model::request::{DisableMetricsCollection, EnableMetricsCollection, ScalingProcesses};
use phantom_rules::identity::Caller;
use phantom_rules::processes;
use phantom_wire::{ApiError, ApiResult};

/// AWS's words for SuspendProcesses on a group being deleted (cloud-custodian#497 quotes them).
fn not_while_deleting() -> ApiError {
    ApiError::validation(
        "Processes may not be suspended while the AutoScaling group is pending delete",
    )
}

pub async fn suspend(app: &App, caller: &Caller, input: ScalingProcesses) -> ApiResult<()> {
    let now = phantom_model::time::format_seconds(app.clock.now());
    let name = &input.auto_scaling_group_name;
    change_group_refusing(app, caller, name, None, not_while_deleting, |g| {
        let mut next = g.clone();
        next.settings.suspended_processes = processes::suspend(
            &g.settings.suspended_processes,
            input.scaling_processes.as_deref(),
            &now,
        )?;
        Ok(next)
    })
    .await?;
    Ok(())
}

pub async fn resume(app: &App, caller: &Caller, input: ScalingProcesses) -> ApiResult<()> {
    let name = &input.auto_scaling_group_name;
    change_group(app, caller, name, Some("ResumeProcesses"), |g| {
        let mut next = g.clone();
        next.settings.suspended_processes = processes::resume(
            &g.settings.suspended_processes,
            input.scaling_processes.as_deref(),
        )?;
        Ok(next)
    })
    .await?;
    Ok(())
}

/// Phantom has no metrics service (the clouds it serves have no CloudWatch): the enabled metrics
/// are kept and described, for the tools that set and compare them, and nothing is published.
pub async fn enable_metrics(
    app: &App,
    caller: &Caller,
    input: EnableMetricsCollection,
) -> ApiResult<()> {
    let name = &input.auto_scaling_group_name;
    change_group(app, caller, name, None, |g| {
        let mut next = g.clone();
        next.settings.enabled_metrics = processes::enable_metrics(
            &g.settings.enabled_metrics,
            input.metrics.as_deref(),
            &input.granularity,
        )?;
        Ok(next)
    })
    .await?;
    Ok(())
}

pub async fn disable_metrics(
    app: &App,
    caller: &Caller,
    input: DisableMetricsCollection,
) -> ApiResult<()> {
    let name = &input.auto_scaling_group_name;
    change_group(app, caller, name, None, |g| {
        let mut next = g.clone();
        next.settings.enabled_metrics =
            processes::disable_metrics(&g.settings.enabled_metrics, input.metrics.as_deref())?;
        Ok(next)
    })
    .await?;
    Ok(())
}
