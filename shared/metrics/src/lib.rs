//! The metric formats Phantom writes and its own operating metrics: `emf` (CloudWatch's Embedded
//! Metric Format), `exposition` (Prometheus's text format), `ops` (requests, throttles, launches,
//! sweeps and runs, kept by each process).

pub mod emf;
pub mod exposition;
pub mod ops;
