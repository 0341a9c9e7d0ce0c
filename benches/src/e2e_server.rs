//! What the end-to-end comparison servers (`e2e-rmcp-codec`, `e2e-mrtr-rmcp`) share: their
//! command line, rmcp's transport configuration (the hosted server's: stateless 2026-07-28
//! requests with JSON responses, sessions for 2025 clients), the protocol revisions they
//! serve, and the loop serving `/mcp` until Ctrl-C.

use std::borrow::Cow;
use std::net::SocketAddr;
use std::path::PathBuf;

use rmcp::model::ProtocolVersion;
use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use tokio_util::sync::CancellationToken;

/// The protocol revisions the comparison servers serve (the hosted server's), as
/// `ServerHandler::supported_protocol_versions` returns them.
pub fn versions() -> Cow<'static, [ProtocolVersion]> {
    Cow::Borrowed(&[
        ProtocolVersion::V_2026_07_28,
        ProtocolVersion::V_2025_11_25,
        ProtocolVersion::V_2025_06_18,
    ])
}

/// The command line: `--listen ADDR` (default 127.0.0.1:0), `--addr-file PATH`, where a server
/// has a replay cache `--replay-capacity N`, and where it seals JSON state
/// `--state-padding BYTES`.
#[derive(Debug)]
pub struct Options {
    /// Where to listen.
    pub listen: SocketAddr,
    /// Where to write the bound address (for a port chosen by the OS).
    pub addr_file: Option<PathBuf>,
    /// `--replay-capacity`, if given.
    pub replay_capacity: Option<usize>,
    /// `--state-padding`: bytes of filler added to every sealed state (0: none), at most
    /// [`MAX_STATE_PADDING`].
    pub state_padding: usize,
}

/// The largest `--state-padding`.
pub const MAX_STATE_PADDING: usize = 4096;

impl Options {
    /// Parses `args` (without the program name). Every option takes a value.
    pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Self, String> {
        let mut o = Self {
            listen: ([127, 0, 0, 1], 0).into(),
            addr_file: None,
            replay_capacity: None,
            state_padding: 0,
        };
        let mut args = args.into_iter();
        while let Some(a) = args.next() {
            let value = args.next().ok_or(format!("{a} needs a value"))?;
            match a.as_str() {
                "--listen" => o.listen = value.parse().map_err(|e| format!("--listen: {e}"))?,
                "--addr-file" => o.addr_file = Some(PathBuf::from(value)),
                "--replay-capacity" => {
                    let n = value
                        .parse()
                        .map_err(|e| format!("--replay-capacity: {e}"))?;
                    o.replay_capacity = Some(n);
                }
                "--state-padding" => {
                    let n = value
                        .parse()
                        .ok()
                        .filter(|n| *n <= MAX_STATE_PADDING)
                        .ok_or(format!(
                            "--state-padding: a number of bytes from 0 to {MAX_STATE_PADDING}"
                        ))?;
                    o.state_padding = n;
                }
                other => return Err(format!("unknown option {other}")),
            }
        }
        Ok(o)
    }
}

/// rmcp's transport configuration of the hosted server, stopped by `shutdown`.
pub fn http_config(shutdown: &CancellationToken) -> StreamableHttpServerConfig {
    StreamableHttpServerConfig::default()
        .with_legacy_session_mode(true)
        .with_json_response(true)
        .with_cancellation_token(shutdown.child_token())
}

/// Serves `router` on `options.listen` until Ctrl-C (then cancels `shutdown`), after writing
/// the bound address to `options.addr_file` (atomically: written aside, then renamed).
pub async fn serve(
    options: &Options,
    router: axum::Router,
    shutdown: CancellationToken,
) -> Result<(), Box<dyn std::error::Error>> {
    let listener = tokio::net::TcpListener::bind(options.listen).await?;
    let addr = listener.local_addr()?;
    if let Some(path) = &options.addr_file {
        let tmp = path.with_extension("tmp");
        std::fs::write(&tmp, addr.to_string())?;
        std::fs::rename(&tmp, path)?;
    }
    eprintln!("listening on http://{addr}/mcp");
    axum::serve(listener, router)
        .with_graceful_shutdown(async move {
            let _ = tokio::signal::ctrl_c().await;
            shutdown.cancel();
        })
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Options, String> {
        Options::parse(args.iter().map(|a| (*a).to_owned()))
    }

    #[test]
    fn options_parse_and_refuse_what_they_do_not_know() {
        let o = parse(&["--listen", "127.0.0.1:8080", "--replay-capacity", "7"]).unwrap();
        assert_eq!(o.listen, SocketAddr::from(([127, 0, 0, 1], 8080)));
        assert_eq!(o.replay_capacity, Some(7));
        assert!(o.addr_file.is_none());
        assert_eq!(parse(&[]).unwrap().listen.port(), 0);
        assert!(parse(&["--listen"]).unwrap_err().contains("needs a value"));
        assert!(
            parse(&["--port", "1"])
                .unwrap_err()
                .contains("unknown option")
        );
        assert!(parse(&["--replay-capacity", "-1"]).is_err());
        assert_eq!(parse(&[]).unwrap().state_padding, 0);
        assert_eq!(parse(&["--state-padding", "73"]).unwrap().state_padding, 73);
        assert!(parse(&["--state-padding", "4097"]).is_err());
        assert!(parse(&["--state-padding", "x"]).is_err());
    }
}
