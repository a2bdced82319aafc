//! Structured logs: JSON lines (as Lambda wants them) unless PHANTOM_LOG_FORMAT=text. The level comes
//! from RUST_LOG (default `info`).

use tracing_subscriber::EnvFilter;

pub fn init() {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let text = std::env::var("PHANTOM_LOG_FORMAT").is_ok_and(|f| f == "text");
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(false)
        .with_writer(std::io::stderr);
    let _ = if text {
        builder.try_init()
    } else {
        builder
            .json()
            .flatten_event(true)
            .with_current_span(false)
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
