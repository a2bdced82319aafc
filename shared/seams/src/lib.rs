//! The seams between Phantom and the outside, each a small trait with its thin AWS adapter and an
//! in-memory twin (feature `memory`): `store` (DynamoDB), `cloud` (EC2's and ELB's Query APIs),
//! `queue` (SQS), `publish` (SNS and SQS), `prometheus` (a
//! metric source's HTTP API), `secrets` (KMS), `probe` (a VM's application, over the network); with `config` (endpoints and clients from the
//! environment), `metrics` (counting each AWS call), `fault` (crash points for the tests) and
//! `logging`; `wiring` (the seams a handler takes, filled from the environment by a main).

pub mod cloud;
pub mod config;
pub mod fault;
pub mod logging;
pub mod metrics;
pub mod probe;
pub mod prometheus;
pub mod publish;
pub mod queue;
pub mod secrets;
pub mod store;
pub mod wiring;
