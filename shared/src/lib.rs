//! Phantom's shared library: the model (`model`: plain data), the pure rules over it (groups,
//! policies, schedules, hooks, the provisioner's decisions), the Auto Scaling Query protocol
//! (`query`, `xml`, `shapes`), SigV4 verification, and the seams with their adapters (`store`,
//! `cloud`, `queue`, `secrets`). docs/architecture.md shows the layers and what each may import.

pub mod activity;
pub mod alarm;
pub mod attach;
pub mod backoff;
pub mod cloud;
pub mod config;
pub mod distribution;
pub mod emf;
pub mod error;
pub mod exposition;
pub mod fault;
pub mod group;
pub mod group_metrics;
pub mod identity;
#[cfg(test)]
mod imports;
pub mod launch_config;
pub mod lifecycle;
pub mod logging;
pub mod metrics;
pub mod model;
pub mod notification;
pub mod ops;
pub mod paging;
pub mod patterns;
pub mod policy;
pub mod processes;
pub mod prometheus;
pub mod publish;
pub mod pulse;
pub mod query;
pub mod queue;
pub mod rebalance;
pub mod reconcile;
pub mod refresh;
pub mod replacement;
pub mod requirements;
pub mod round;
pub mod schedule;
pub mod scrape;
pub mod secrets;
pub mod shapes;
pub mod sigv4;
pub mod spread;
pub mod store;
pub mod tags;
pub mod template;
pub mod throttle;
pub mod time;
pub mod tracking;
pub mod traffic;
pub mod warm;
pub mod webhook;
pub mod weights;
pub mod xml;

pub use error::{ApiError, ApiResult};
