//! Logs without secrets, whatever level the operator asks for.
//!
//! rmcp logs whole JSON-RPC messages at DEBUG and TRACE (`received request`, `response
//! message`, raw SSE events). Each carries what mrtr keeps out of logs: every `requestState`
//! (a bearer credential until it is spent), the answers a client gave, and the tool arguments.
//! [`log_filter`] caps those crates at INFO, so `RUST_LOG=trace` still shows mrtr's own trace
//! events and rmcp's INFO, WARN and ERROR, and never a message body.

use tracing_subscriber::filter::{LevelFilter, Targets};

/// The crates whose DEBUG and TRACE events carry whole messages or headers.
const CAPPED: [&str; 2] = [
    // rmcp: every JSON-RPC message, request and response, at DEBUG and TRACE.
    "rmcp",
    // h2 (HTTP/2, if the server speaks it): frames with their header fields at TRACE.
    "h2",
];

/// A per-layer filter that lets every event through except DEBUG and TRACE events of the crates
/// that log whole messages (rmcp) or header fields (h2). Put it on the layer that writes logs,
/// next to the filter that picks the level:
///
/// ```
/// use tracing_subscriber::layer::SubscriberExt as _;
/// use tracing_subscriber::{Layer as _, Registry};
///
/// let subscriber = Registry::default().with(
///     tracing_subscriber::fmt::layer()
///         .with_writer(std::io::stderr)
///         .with_filter(mrtr_rmcp::log_filter()),
/// );
/// # let _ = subscriber;
/// ```
///
/// It is a static filter: each call site is decided once, not at every event.
pub fn log_filter() -> Targets {
    CAPPED.iter().fold(
        Targets::new().with_default(LevelFilter::TRACE),
        |targets, target| targets.with_target(*target, LevelFilter::INFO),
    )
}

#[cfg(test)]
mod tests {
    use tracing::Level;

    use super::*;

    fn passes(target: &str, level: Level) -> bool {
        log_filter().would_enable(target, &level)
    }

    #[test]
    fn rmcp_and_h2_stop_at_info_everything_else_passes() {
        for target in [
            "rmcp",
            "rmcp::service",
            "rmcp::transport::streamable_http_server",
            "h2",
        ] {
            assert!(passes(target, Level::INFO), "{target}");
            assert!(passes(target, Level::WARN), "{target}");
            assert!(!passes(target, Level::DEBUG), "{target}");
            assert!(!passes(target, Level::TRACE), "{target}");
        }
        for target in ["mrtr", "mrtr_rmcp", "my_server", "hyper", "axum"] {
            assert!(passes(target, Level::TRACE), "{target}");
        }
    }
}
