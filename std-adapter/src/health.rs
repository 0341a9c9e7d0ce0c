//! Readiness of mrtr as a whole, and the startup check.
//!
//! mrtr cannot serve resumes while its replay store cannot record them (Redis unreachable,
//! evicting, out of memory, replicas behind: [`NotReadyCause`]), and cannot pause while its
//! current key has no seal left. [`Health`] gathers every such cause; a server answers its
//! readiness probe (`/readyz`) with it, and runs [`Engine::check_startup`] before it
//! serves, so that a Redis it cannot use stops the start with a clear message instead of
//! refusing every resume later.
//!
//! **Liveness is another matter**: a liveness probe (`/healthz`) answers 200 as long as the
//! process serves HTTP, whatever [`Health`] says. Restarting a node does not bring Redis
//! back, and an orchestrator that restarts every node while Redis is down turns a degraded
//! service into an outage.
//!
//! Nothing here ever holds the Redis URL (it may hold a password) or key material.
//!
//! ```
//! # #[cfg(all(feature = "aes-gcm", feature = "tokio"))]
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use mrtr_std::engine::{Backend, Engine, EngineConfig};
//! use mrtr_std::health::Startup;
//! use mrtr_std::keys::KeyConfig;
//! use mrtr_replay::AnyReplayCache;
//!
//! let keys = KeyConfig::parse_env("current=k1; k1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=")?;
//! let engine = Engine::new(Backend::Aes256Gcm, keys, EngineConfig::for_audience("my-service"), AnyReplayCache::memory(1_000))?;
//!
//! // Startup: fail fast unless ready (or `Startup::degraded()` to serve anyway).
//! let health = engine.check_startup(Startup::fail_fast()).await?;
//! assert!(health.is_ready());
//!
//! // `/readyz`: 200 or 503, and a JSON body naming the causes.
//! let health = engine.probe().await;
//! assert_eq!(health.status_code(), 200);
//! assert_eq!(health.to_json(), serde_json::json!({"ready": true}));
//! # Ok(()) }
//! # #[cfg(not(all(feature = "aes-gcm", feature = "tokio")))] fn main() {}
//! ```

use std::fmt;
use std::time::Duration;

use mrtr_core::Clock;
use mrtr_core::key::KeyId;
use serde_json::{Value, json};

use crate::engine::{AnyEngine, Engine};
use mrtr_replay::{AnyReplayCache, NotReadyCause, Readiness};

/// Something that stops mrtr from serving.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Cause {
    /// The replay store cannot record resumes: every resume is refused (fail closed).
    ReplayStore(NotReadyCause),
    /// The current key has no seal left in this process: every pause fails. Rotate.
    KeyExhausted(KeyId),
}

impl Cause {
    /// A stable snake_case code for alerts: the replay store's cause code
    /// ([`NotReadyCause::code`]), or `key_exhausted`.
    pub fn code(&self) -> &'static str {
        match self {
            Self::ReplayStore(c) => c.code(),
            Self::KeyExhausted(_) => "key_exhausted",
        }
    }
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ReplayStore(c) => fmt::Display::fmt(c, f),
            Self::KeyExhausted(id) => write!(
                f,
                "keys: the current key {id} has used its whole seal budget in this process; \
                 promote a new key"
            ),
        }
    }
}

/// Whether mrtr can serve, and if not, every cause.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Health {
    causes: Vec<Cause>,
}

impl Health {
    /// The summary of a replay store's readiness and an engine's keys.
    pub fn new<R, Clk: Clock>(replay: Readiness, engine: &AnyEngine<R, Clk>) -> Self {
        let mut causes = Vec::new();
        if let Some(cause) = replay.cause() {
            causes.push(Cause::ReplayStore(cause));
        }
        if engine.seals_left() == 0 {
            causes.push(Cause::KeyExhausted(engine.current_key_id()));
        }
        let health = Self { causes };
        crate::obs::ready(health.is_ready());
        health
    }

    /// Whether nothing stops mrtr from serving.
    pub fn is_ready(&self) -> bool {
        self.causes.is_empty()
    }

    /// Why not, when not ready.
    pub fn causes(&self) -> &[Cause] {
        &self.causes
    }

    /// The HTTP status of a readiness probe: 200 when ready, else 503.
    pub fn status_code(&self) -> u16 {
        if self.is_ready() { 200 } else { 503 }
    }

    /// The body of a readiness probe: `{"ready": true}`, or `{"ready": false, "cause": "...",
    /// "causes": [{"code": "...", "message": "..."}]}` (`cause` is every message, joined).
    pub fn to_json(&self) -> Value {
        if self.is_ready() {
            return json!({"ready": true});
        }
        let causes: Vec<Value> = self
            .causes
            .iter()
            .map(|c| json!({"code": c.code(), "message": c.to_string()}))
            .collect();
        json!({"ready": false, "cause": self.to_string(), "causes": causes})
    }
}

impl fmt::Display for Health {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_ready() {
            return f.write_str("ready");
        }
        for (i, cause) in self.causes.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            fmt::Display::fmt(cause, f)?;
        }
        Ok(())
    }
}

/// How [`Engine::check_startup`] treats a dependency that is not ready.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Startup {
    degraded: bool,
    wait: Duration,
}

impl Startup {
    /// Fail unless ready (the default): the server exits with the cause.
    pub fn fail_fast() -> Self {
        Self {
            degraded: false,
            wait: Duration::ZERO,
        }
    }

    /// Start anyway, logging a warning with each cause: resumes are refused and readiness
    /// says not ready until the causes clear (the operator asked for it, e.g.
    /// `--start-degraded`).
    pub fn degraded() -> Self {
        Self::fail_fast().start_degraded(true)
    }

    /// [`Startup::degraded`] when `degraded`, else [`Startup::fail_fast`] (for a flag).
    pub fn start_degraded(mut self, degraded: bool) -> Self {
        self.degraded = degraded;
        self
    }

    /// Probe again until ready for up to `wait` before giving up (for a Redis that starts
    /// with the server; default zero: one probe). Needs feature `tokio`, which the Redis
    /// store implies; without it there is nothing a wait could change.
    pub fn wait_up_to(mut self, wait: Duration) -> Self {
        self.wait = wait;
        self
    }
}

impl Default for Startup {
    fn default() -> Self {
        Self::fail_fast()
    }
}

/// mrtr is not ready to serve at startup, and the operator did not ask to start degraded.
/// Its message names every cause, never the Redis URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StartupError {
    health: Health,
}

impl StartupError {
    /// What was not ready.
    pub fn health(&self) -> &Health {
        &self.health
    }
}

impl fmt::Display for StartupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "mrtr is not ready to serve: {}. Fix the cause, or start degraded to serve anyway \
             (resumes are refused and readiness reports not ready until it clears)",
            self.health
        )
    }
}

impl std::error::Error for StartupError {}

impl<Clk: Clock + Clone + Send + Sync + 'static> Engine<AnyReplayCache, Clk> {
    /// Whether mrtr can serve, from what the replay store last saw (no I/O).
    pub fn readiness(&self) -> Health {
        Health::new(self.replay_cache().readiness(), &self.current())
    }

    /// Whether mrtr can serve, asking the replay store first (a Redis store connects if
    /// needed and re-reads its eviction policy, at most once a second however often it is
    /// called; bounded by its timeouts). For `/readyz`.
    pub async fn probe(&self) -> Health {
        let replay = self.replay_cache().probe().await;
        Health::new(replay, &self.current())
    }

    /// The startup check: probes the replay store (retrying for up to
    /// [`Startup::wait_up_to`]) and the keys. Ready: logs it and returns the [`Health`]. Not
    /// ready: with [`Startup::degraded`], logs a warning per cause and returns the `Health`;
    /// otherwise returns a [`StartupError`] naming the causes, for the server to exit with.
    pub async fn check_startup(&self, startup: Startup) -> Result<Health, StartupError> {
        let health = self.probe_until_ready(startup.wait).await;
        if health.is_ready() {
            tracing::info!(target: "mrtr", replay = self.replay_cache().name(),
                key = %self.current().current_key_id(), "mrtr ready");
            return Ok(health);
        }
        if startup.degraded {
            for cause in health.causes() {
                tracing::warn!(target: "mrtr", cause = cause.code(),
                    "starting degraded as asked: {cause}; resumes are refused and readiness \
                     reports not ready until it clears");
            }
            return Ok(health);
        }
        Err(StartupError { health })
    }

    #[cfg(feature = "tokio")]
    async fn probe_until_ready(&self, wait: Duration) -> Health {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let health = self.probe().await;
            let now = tokio::time::Instant::now();
            if health.is_ready() || now >= deadline {
                return health;
            }
            let pause = (deadline - now).min(Duration::from_millis(250));
            tokio::time::sleep(pause).await;
        }
    }

    #[cfg(not(feature = "tokio"))]
    async fn probe_until_ready(&self, _wait: Duration) -> Health {
        self.probe().await
    }
}
