//! Hosted MCP server example: rmcp over Streamable HTTP (or stdio), protocol 2026-07-28 and,
//! in sessions, 2025-11-25 and 2025-06-18, with `requestState` sealed by mrtr. See README.md.

mod admin;
mod auth;
mod booking;
mod config;
#[cfg(feature = "testing")]
mod conformance;
#[cfg(feature = "testing")]
mod faults;
mod http;
mod limits;
mod listen;
mod ops;
mod prompts;
mod resources;
mod server;
mod tools;

use std::sync::Arc;

use anyhow::Context;
use clap::Parser;
use mrtr_replay::AnyReplayCache;
use mrtr_rmcp::Mrtr;
use mrtr_std::core::ErrorDetail;
use mrtr_std::engine::{Engine, EngineConfig};
use mrtr_std::health::Startup;
use mrtr_std::keys::{KeyConfig, KeySource};
use mrtr_std::metrics::Prometheus;
use mrtr_std::quota::Quotas;
use mrtr_std::reload::{KeyReloader, Triggers};
use rmcp::ServiceExt;
use tokio_util::sync::CancellationToken;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{Layer, fmt};

use crate::auth::TokenMap;
use crate::config::{Config, OpsListen, ReplayChoice};
use crate::server::{App, Hosted};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info,rmcp=warn"));
    tracing_subscriber::registry()
        .with(filter)
        .with(
            fmt::layer()
                .with_writer(std::io::stderr)
                .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
                // Whatever RUST_LOG says: never rmcp's whole messages (tokens, answers).
                .with_filter(mrtr_rmcp::log_filter()),
        )
        .init();
    let config = Config::parse();
    // Before the engine exists, so every metric it records is kept.
    let metrics = Prometheus::install().context("metrics recorder")?;
    let (app, source) = build_app(&config, metrics).await?;
    let app = Arc::new(app);
    // Keys from a file reload on SIGHUP and when the file changes; keep the handle alive.
    let _reloads = match source {
        Some(source) if source.is_reloadable() => Some(
            KeyReloader::new(app.mrtr.clone(), source)
                .spawn(Triggers::default())
                .context("key reloader")?,
        ),
        _ => None,
    };
    if config.stdio {
        let service = Hosted::new(app, Hosted::tools())
            .serve(rmcp::transport::stdio())
            .await
            .context("stdio server")?;
        service.waiting().await.context("stdio server")?;
        return Ok(());
    }
    serve_http(&config, app).await
}

async fn build_app(
    config: &Config,
    metrics: Prometheus,
) -> anyhow::Result<(App, Option<KeySource>)> {
    let source = KeySource::from_env().context("key configuration")?;
    let keys = match &source {
        Some(source) => source.load().context("key configuration")?,
        // Warns: tokens then neither survive a restart nor cross nodes.
        None => KeyConfig::from_env_or_ephemeral().context("key configuration")?,
    };
    let replay = match config.replay_choice() {
        ReplayChoice::Memory => AnyReplayCache::Memory(config.memory_replay_cache()),
        ReplayChoice::Off => AnyReplayCache::Off,
        ReplayChoice::Redis => {
            let Some(url) = &config.redis_url else {
                anyhow::bail!("--replay redis needs --redis-url (or MRTR_REDIS_URL)");
            };
            AnyReplayCache::Redis(config.redis_replay_cache(url)?)
        }
    };
    let limits = EngineConfig {
        ttl_ms: config.ttl_ms,
        max_rounds: config.max_rounds,
        error_detail: if config.detailed_errors {
            ErrorDetail::Detailed
        } else {
            ErrorDetail::Uniform
        },
        audience: config.audience(),
        max_lifetime_ms: config.max_lifetime_ms,
        max_clock_skew_ms: config.max_clock_skew_ms,
        accept_v1: config.accept_v1.into(),
        nonce_source: config.nonce_source(),
    };
    let key_id = keys.current_id().to_string();
    let engine = Engine::new(config.cipher, keys, limits.clone(), replay)?;
    tracing::info!(
        cipher = %config.cipher,
        nonce_source = %limits.nonce_source,
        key_id,
        audience = ?limits.audience,
        ttl_ms = limits.ttl_ms,
        max_rounds = limits.max_rounds,
        replay = engine.replay_cache().name(),
        "mrtr configured"
    );
    if config.detailed_errors {
        tracing::warn!("detailed requestState errors are on: clients learn why a token failed");
    }
    // Fail fast on a replay store that cannot serve (unreachable, evicting), unless told to
    // start degraded; /readyz reports it either way.
    let startup = Startup::fail_fast().start_degraded(config.start_degraded);
    engine
        .check_startup(startup)
        .await
        .context("mrtr is not ready to serve (use --start-degraded to start anyway)")?;
    let subs = listen::Subscriptions::start(config.policy());
    #[cfg(feature = "testing")]
    if config.test_hooks {
        tracing::warn!("--test-hooks: POST /admin/test/faults can script authorizer failures");
    }
    let mut mrtr = Mrtr::new(engine);
    match config.limits.quotas() {
        Some(quotas) => {
            tracing::info!(
                pauses = ?quotas.pauses.map(|l| l.to_string()),
                resumes = ?quotas.resumes.map(|l| l.to_string()),
                max_callers = quotas.max_callers,
                "per-caller quotas on"
            );
            mrtr = mrtr.with_quotas(Quotas::new(quotas));
        }
        None => tracing::warn!(
            "--quota-pauses off --quota-resumes off: one caller can fill the replay store for all"
        ),
    }
    let app = App {
        mrtr,
        subs,
        metrics,
    };
    Ok((app, source))
}

async fn serve_http(config: &Config, app: Arc<App>) -> anyhow::Result<()> {
    let tokens = match &config.tokens {
        Some(path) => TokenMap::load(path, config.require_auth)?,
        None => {
            tracing::warn!(
                "using the built-in demo bearer tokens (see README); \
                 configure --tokens for anything but a demo"
            );
            TokenMap::demo(config.require_auth)
        }
    };
    tracing::info!(
        tokens = tokens.len(),
        require_auth = config.require_auth,
        "bearer tokens loaded"
    );
    let shutdown = CancellationToken::new();
    if config.admin_token.is_none() {
        tracing::info!("no --admin-token: the revocation endpoints are off");
    }
    let exposure = http::Exposure {
        hosts: config.allowed_hosts.clone(),
        origins: config.allowed_origins.clone(),
    };
    if !config.listen.ip().is_loopback() && exposure.hosts.is_empty() {
        tracing::warn!(listen = %config.listen,
            "listening beyond loopback, but only loopback Host headers are allowed: requests \
             by name or through a proxy get 403; name the public host with --allowed-host");
    }
    let ops = bind_ops(config, &app, &shutdown).await?;
    let router = http::router(
        app,
        Arc::new(tokens),
        config.admin_token.clone(),
        std::time::Duration::from_millis(config.session_idle_ms),
        config.limits.sessions(),
        &exposure,
        &shutdown,
    );
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .with_context(|| format!("cannot listen on {}", config.listen))?;
    let addr = listener.local_addr()?;
    if let Some(path) = &config.addr_file {
        // Write then rename, so a watcher never reads a half-written address.
        let tmp = path.with_extension("tmp");
        std::fs::write(&tmp, addr.to_string())?;
        std::fs::rename(&tmp, path)?;
    }
    tracing::info!("listening on http://{addr}/mcp");
    let stop = shutdown.clone();
    tokio::spawn(async move {
        wait_for_signal().await;
        stop.cancel();
    });
    // With each connection's address: an anonymous caller's quotas are kept by it.
    let service = router.into_make_service_with_connect_info::<std::net::SocketAddr>();
    axum::serve(listener, service)
        .with_graceful_shutdown(async move { shutdown.cancelled_owned().await })
        .await
        .context("http server")?;
    if let Some(ops) = ops {
        ops.await.context("operations listener")??;
    }
    Ok(())
}

/// Binds the operations listener (`--ops-listen`) and serves it until `shutdown`. Beyond
/// loopback it requires the admin token, and refuses to start without one.
async fn bind_ops(
    config: &Config,
    app: &Arc<App>,
    shutdown: &CancellationToken,
) -> anyhow::Result<Option<tokio::task::JoinHandle<anyhow::Result<()>>>> {
    let OpsListen::At(at) = config.ops_listen else {
        tracing::info!("--ops-listen off: no metrics and no readiness causes are served");
        return Ok(None);
    };
    let token = if at.ip().is_loopback() {
        None
    } else {
        let Some(token) = &config.admin_token else {
            anyhow::bail!(
                "--ops-listen {at} is beyond loopback: it needs --admin-token, which every \
                 operations request must then present (metrics name each resume's outcome)"
            );
        };
        Some(Arc::<str>::from(token.as_str()))
    };
    let listener = tokio::net::TcpListener::bind(at)
        .await
        .with_context(|| format!("cannot listen on {at} (--ops-listen; off disables it)"))?;
    let addr = listener.local_addr()?;
    if let Some(path) = &config.ops_addr_file {
        let tmp = path.with_extension("tmp");
        std::fs::write(&tmp, addr.to_string())?;
        std::fs::rename(&tmp, path)?;
    }
    tracing::info!(
        guarded = token.is_some(),
        "operations endpoints on http://{addr}/metrics"
    );
    let router = ops::router(app.clone(), token);
    let stop = shutdown.clone();
    Ok(Some(tokio::spawn(async move {
        axum::serve(listener, router)
            .with_graceful_shutdown(async move { stop.cancelled_owned().await })
            .await
            .context("operations listener")
    })))
}

async fn wait_for_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(s) => s,
                Err(_) => return std::future::pending().await,
            };
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
}
