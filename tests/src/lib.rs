//! Phantom's test harnesses:
//! - `world`: the whole service in one process over the in-memory store, queue and clouds, driven
//!   by the real aws-sdk-autoscaling client through an HTTP connector of its own (no socket, no
//!   emulator), with a hand-moved clock and crash injection. Most of the suite runs here.
//! - `stack`: the local stack (`localstack/up.sh`: moto for state and clouds, phantom-local),
//!   driven by the AWS CLI, the SDK and raw signed HTTP, for what only the real path shows.
//! - `api_gateway`: API Gateway's proxy event and the Lambda adapter in front of the world's api.
//! - `moto`: a moto server of a contract suite's own.
//! - `exporter`: a metrics exporter a test controls, for the local stack's Prometheus to scrape.
//! - `readme`: the shell blocks of the README and the guides in docs/, run as written against a stack.
//! - `fixtures`: groups as CreateAutoScalingGroup makes them, for the store's own suites.
//! - `lambda`: a function's bootstrap as Lambda starts it, against a Runtime API of its own.

pub mod api_gateway;
pub mod aws_cli;
pub mod chaos;
pub mod clients;
pub mod exporter;
pub mod fault_proxy;
pub mod fixtures;
pub mod lambda;
pub mod moto;
pub mod prometheus;
pub mod readme;
pub mod stack;
pub mod steps;
pub mod world;

pub use stack::*;

/// A real OpenSSH public key (ed25519), for ImportKeyPair: real clouds and moto parse it.
pub const PUBLIC_KEY: &str =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIM1YNyk9TcXmFTOUOsK9nX6eJJP/UW9B8k6WseljSEye me@laptop";

/// A benchmark's sizes: its command line's numbers (each a `what`), or `default` if it has none.
pub fn sizes_from_args(what: &str, default: &[usize]) -> Vec<usize> {
    let given: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| {
            a.parse()
                .unwrap_or_else(|_| panic!("{what} is a number, not {a:?}"))
        })
        .collect();
    if given.is_empty() {
        default.to_vec()
    } else {
        given
    }
}

/// A command's arguments: each string literal split at its spaces, each other expression one
/// argument as it is. `argv!("start-instance-refresh --preferences", &json)`.
#[macro_export]
macro_rules! argv {
    (@into [$($acc:expr),*];) => {
        <[Vec<&str>]>::concat(&[$($acc),*])
    };
    (@into [$($acc:expr),*]; $l:literal $(, $($rest:tt)*)?) => {
        $crate::argv!(@into [$($acc,)* $l.split_whitespace().collect::<Vec<&str>>()]; $($($rest)*)?)
    };
    (@into [$($acc:expr),*]; $e:expr $(, $($rest:tt)*)?) => {
        $crate::argv!(@into [$($acc,)* vec![AsRef::<str>::as_ref($e)]]; $($($rest)*)?)
    };
    ($($t:tt)*) => {
        $crate::argv!(@into []; $($t)*)
    };
}
