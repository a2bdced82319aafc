//! Structured logs: JSON lines (as Lambda wants them) unless PHANTOM_LOG_FORMAT=text. The level comes
//! from RUST_LOG (default `info`): a level, or `target=level` pairs (`info,aws_smithy_runtime=warn`).

use tracing_subscriber::filter::Targets;
use tracing_subscriber::prelude::*;

pub fn init() {
    let filter = match std::env::var("RUST_LOG") {
        Err(_) => Targets::new().with_default(tracing::Level::INFO),
        Ok(directives) => match directives.parse::<Targets>() {
            Ok(filter) => filter,
            // Said on stderr, where the logs go: no subscriber exists yet to say it.
            Err(e) => {
                eprintln!("RUST_LOG={directives:?} cannot be read ({e}): logging at info");
                Targets::new().with_default(tracing::Level::INFO)
            }
        },
    };
    let text = std::env::var("PHANTOM_LOG_FORMAT").is_ok_and(|f| f == "text");
    let layer = tracing_subscriber::fmt::layer()
        .with_target(false)
        .with_writer(std::io::stderr);
    let _ = if text {
        tracing_subscriber::registry()
            .with(layer.with_filter(filter))
            .try_init()
    } else {
        let json = layer.json().flatten_event(true).with_current_span(false);
        tracing_subscriber::registry()
            .with(json.with_filter(filter))
            .try_init()
    };
}

/// One log line of a report's counts, each under its field's name, then the rest as tracing takes
/// it: `counts!(info, report, [pairs, looked], seq, "beat")`.
#[macro_export]
macro_rules! counts {
    ($level:ident, $report:expr, [$($field:ident),+ $(,)?], $($rest:tt)+) => {
        ::tracing::$level!($($field = $report.$field,)+ $($rest)+)
    };
}
