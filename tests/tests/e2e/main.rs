//! The end-to-end suite: Phantom on the local stack (`localstack/up.sh`: emulators, phantom-local)
//! driven by the AWS CLI, aws-sdk-autoscaling, raw signed HTTP, Ansible and a browser. One binary,
//! so the suite links once and its files run side by side: each file has a local stack of its own
//! (`phantom_e2e::stack`, started when the file's first test asks for it), and its tests share it.
//! The files mostly wait on clouds, queues and clients, so the waits overlap.

mod across;
mod ansible;
mod balancers;
mod cli;
mod cloudwatch;
mod concurrency;
mod console;
mod faults;
mod gateway;
mod hostile;
mod iam;
mod lambda;
mod provisioning;
mod readme;
mod sdk;
mod tracking;
mod wire;
