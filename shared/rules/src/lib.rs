//! Phantom's pure rules: the decisions, as functions of the model (`phantom_model`). No I/O and no
//! AWS types: the handlers read the store and the clouds, ask a rule, and act on its answer.
//! docs/architecture.md shows the layers.

pub mod activity;
pub mod alarm;
pub mod attach;
pub mod distribution;
pub mod ec2_metrics;
#[doc(hidden)]
pub mod fixtures;
pub mod forecast;
pub mod group;
pub mod group_metrics;
pub mod health;
pub mod heartbeat;
pub mod iam;
pub mod identity;
pub mod ids;
#[cfg(test)]
mod imports;
pub mod launch_config;
pub mod launching;
pub mod lifecycle;
pub mod maintenance;
pub mod metric_alarm;
pub mod metric_data;
pub mod metric_math;
pub mod notification;
pub mod on_cloud;
pub mod policy;
pub mod policy_alarms;
pub mod predictive;
pub mod probe;
pub mod processes;
pub mod pulse;
pub mod rebalance;
pub mod reconcile;
pub mod refresh;
pub mod replacement;
pub mod requirements;
pub mod reservation;
pub mod round;
pub mod schedule;
pub mod scrape;
pub mod spread;
pub mod sync_launch;
pub mod tags;
pub mod template;
pub mod throttle;
pub mod tracking;
pub mod traffic;
pub mod trail;
pub mod warm;
pub mod webhook;
pub mod weights;
