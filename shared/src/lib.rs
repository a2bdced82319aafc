//! Phantom's shared library: the Auto Scaling Query protocol (decoding requests, rendering
//! responses), SigV4 verification, the model of launch configurations and groups with their
//! validation, and the DynamoDB store. Everything here but `store` and `config` is pure.

pub mod activity;
pub mod attach;
pub mod cloud;
pub mod config;
pub mod error;
pub mod fault;
pub mod group;
pub mod identity;
pub mod launch_config;
pub mod lifecycle;
pub mod logging;
pub mod metrics;
pub mod model;
pub mod paging;
pub mod patterns;
pub mod policy;
pub mod processes;
pub mod query;
pub mod queue;
pub mod reconcile;
pub mod round;
pub mod schedule;
pub mod secrets;
pub mod shapes;
pub mod sigv4;
pub mod spread;
pub mod store;
pub mod tags;
pub mod template;
pub mod time;
pub mod webhook;
pub mod xml;

pub use error::{ApiError, ApiResult};
