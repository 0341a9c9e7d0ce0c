//! A replay cache in Redis, shared by every node behind a load balancer (feature `redis`).
//!
//! Each accepted token id is recorded with one atomic command,
//!
//! ```text
//! SET <prefix><32 hex digits of the token id> 1 NX PX <ms until the token expires>
//! ```
//!
//! which sets the key only if it does not exist: of any number of concurrent resumes of one
//! token, on any nodes, exactly one gets `OK`; the others get nil and are refused as replays.
//! Redis forgets the key when the token expires.
//!
//! * **Connection reuse**: one multiplexed connection per cache, shared by all callers
//!   (pipelined), opened lazily and reopened after a failure.
//! * **Bounded time**: connecting and each command have their own timeouts (default 250 ms and
//!   100 ms). After a failed connection attempt, calls fail fast for a short back-off (default
//!   500 ms) instead of queueing behind more attempts.
//! * **Fail closed**: Redis down, slow (timeout) or answering an error → the resume is refused
//!   with [`ReplayError::Unavailable`] (reason `replay_store_unavailable`), never accepted.
//! * **Self-healing**: the next call after the back-off reconnects; no restart needed.
//!
//! Memory in Redis 7.0, default 12-byte prefix: `MEMORY USAGE` of one key is 88 bytes, and
//! `used_memory` grows by about 133 bytes per entry (key, value, expiry table), measured by
//! recording 100 000 ids. A blocking variant for servers without an async runtime is in
//! [`crate::replay_redis_sync`].
//!
//! ```no_run
//! use std::time::Duration;
//! use mrtr_std::replay_redis::RedisReplayCache;
//!
//! let cache = RedisReplayCache::builder("redis://127.0.0.1:6379/")
//!     .prefix("myserver:mrtr:")
//!     .command_timeout(Duration::from_millis(50))
//!     .build()?;
//! // engine = Engine::new(mrtr, cache); then `engine.resume_async(&req).await` in handlers.
//! # Ok::<(), mrtr_std::replay_redis::RedisConfigError>(())
//! ```

use std::fmt;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use mrtr_core::TokenId;
use mrtr_core::replay::ReplayError;
use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, Client};

use crate::replay::AsyncReplayCache;

/// Default key prefix.
pub const DEFAULT_PREFIX: &str = "mrtr:replay:";
/// Default timeout for opening a connection.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_millis(250);
/// Default timeout for one command.
pub const DEFAULT_COMMAND_TIMEOUT: Duration = Duration::from_millis(100);
/// Default pause between connection attempts after a failed one.
pub const DEFAULT_RECONNECT_BACKOFF: Duration = Duration::from_millis(500);

/// Why a Redis replay cache could not be configured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RedisConfigError {
    /// The URL is not a valid Redis URL (`redis://host:port/db`, `redis+unix:///path`).
    /// The URL itself is not repeated: it may hold a password.
    BadUrl,
    /// The key prefix is longer than 256 bytes.
    PrefixTooLong,
    /// A timeout is zero.
    ZeroTimeout,
}

impl fmt::Display for RedisConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::BadUrl => {
                "invalid Redis URL (expected redis://host:port/db or redis+unix:///path)"
            }
            Self::PrefixTooLong => "Redis key prefix is longer than 256 bytes",
            Self::ZeroTimeout => "Redis timeouts must be greater than zero",
        })
    }
}

impl std::error::Error for RedisConfigError {}

/// Configures a [`RedisReplayCache`]; see [`RedisReplayCache::builder`].
#[must_use]
pub struct RedisReplayCacheBuilder {
    url: String,
    prefix: String,
    connect_timeout: Duration,
    command_timeout: Duration,
    reconnect_backoff: Duration,
    skew_margin: Duration,
}

impl RedisReplayCacheBuilder {
    /// Key prefix (default [`DEFAULT_PREFIX`]); lets several servers share one Redis.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// Timeout for opening a connection (default [`DEFAULT_CONNECT_TIMEOUT`]).
    pub fn connect_timeout(mut self, t: Duration) -> Self {
        self.connect_timeout = t;
        self
    }

    /// Timeout for one `SET` (default [`DEFAULT_COMMAND_TIMEOUT`]).
    pub fn command_timeout(mut self, t: Duration) -> Self {
        self.command_timeout = t;
        self
    }

    /// How long calls fail fast after a failed connection attempt (default
    /// [`DEFAULT_RECONNECT_BACKOFF`]; zero retries on every call).
    pub fn reconnect_backoff(mut self, t: Duration) -> Self {
        self.reconnect_backoff = t;
        self
    }

    /// Extra lifetime for each entry beyond its token's expiry (default zero).
    ///
    /// An entry lives until the token expires *by the recording node's clock*. A node whose
    /// clock lags by δ still takes the token as unexpired for δ after Redis dropped the entry,
    /// and would accept it once more. Set this to the largest clock skew between your nodes
    /// (for example 5 s) to close that window, at the cost of keeping entries that long.
    pub fn skew_margin(mut self, margin: Duration) -> Self {
        self.skew_margin = margin;
        self
    }

    fn validate(&self) -> Result<Client, RedisConfigError> {
        if self.prefix.len() > 256 {
            return Err(RedisConfigError::PrefixTooLong);
        }
        if self.connect_timeout.is_zero() || self.command_timeout.is_zero() {
            return Err(RedisConfigError::ZeroTimeout);
        }
        Client::open(self.url.as_str()).map_err(|_| RedisConfigError::BadUrl)
    }

    /// The blocking variant, a synchronous [`mrtr_core::replay::ReplayCache`] for servers
    /// without an async runtime (never call it from an async task). Same configuration.
    pub fn build_blocking(
        self,
    ) -> Result<crate::replay_redis_sync::BlockingRedisReplayCache, RedisConfigError> {
        let client = self.validate()?;
        Ok(crate::replay_redis_sync::BlockingRedisReplayCache::new(
            client,
            self.prefix,
            self.connect_timeout,
            self.command_timeout,
            self.reconnect_backoff,
            millis(self.skew_margin),
        ))
    }

    /// Validates the configuration. Does not connect: the first resume does.
    pub fn build(self) -> Result<RedisReplayCache, RedisConfigError> {
        let client = self.validate()?;
        Ok(RedisReplayCache {
            client,
            prefix: self.prefix,
            connect_timeout: self.connect_timeout,
            command_timeout: self.command_timeout,
            reconnect_backoff: self.reconnect_backoff,
            skew_margin_ms: millis(self.skew_margin),
            state: Mutex::new(ConnState::default()),
            connecting: tokio::sync::Mutex::new(()),
        })
    }
}

#[derive(Default)]
struct ConnState {
    /// The shared connection and its generation (bumped on every new connection).
    conn: Option<(u64, MultiplexedConnection)>,
    generation: u64,
    /// When the last connection attempt failed.
    failed_at: Option<Instant>,
}

/// An [`AsyncReplayCache`] in Redis (see the [module docs](self)). Cheap to share: put it in
/// an `Engine` behind an `Arc`, or wrap it in one.
///
/// `Debug` shows the prefix and timeouts, never the URL (it may hold a password).
pub struct RedisReplayCache {
    client: Client,
    prefix: String,
    connect_timeout: Duration,
    command_timeout: Duration,
    reconnect_backoff: Duration,
    skew_margin_ms: u64,
    state: Mutex<ConnState>,
    /// Single flight for connection attempts.
    connecting: tokio::sync::Mutex<()>,
}

impl RedisReplayCache {
    /// Starts a configuration for the Redis at `url` (`redis://[:password@]host:port/db`).
    pub fn builder(url: impl Into<String>) -> RedisReplayCacheBuilder {
        RedisReplayCacheBuilder {
            url: url.into(),
            prefix: DEFAULT_PREFIX.to_owned(),
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            command_timeout: DEFAULT_COMMAND_TIMEOUT,
            reconnect_backoff: DEFAULT_RECONNECT_BACKOFF,
            skew_margin: Duration::ZERO,
        }
    }

    /// A cache for `url` with the defaults.
    pub fn new(url: impl Into<String>) -> Result<Self, RedisConfigError> {
        Self::builder(url).build()
    }

    /// The key prefix.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The Redis key for a token id: the prefix and the id in lowercase hex.
    pub fn key_for(&self, id: &TokenId) -> String {
        key_for(&self.prefix, id)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ConnState> {
        // The guarded data is a cache of a connection: a poisoned lock holds nothing unsafe.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The shared connection, opening one if needed (one attempt at a time, bounded, with
    /// back-off after a failure).
    async fn connection(&self) -> Result<(u64, MultiplexedConnection), ReplayError> {
        if let Some(c) = self.cached()? {
            return Ok(c);
        }
        let _single_flight = tokio::time::timeout(self.connect_timeout, self.connecting.lock())
            .await
            .map_err(|_| ReplayError::Unavailable)?;
        // Someone else may have connected, or failed, while we waited.
        if let Some(c) = self.cached()? {
            return Ok(c);
        }
        let config = AsyncConnectionConfig::new()
            .set_connection_timeout(Some(self.connect_timeout))
            .set_response_timeout(Some(self.command_timeout));
        let attempt = tokio::time::timeout(
            self.connect_timeout,
            self.client
                .get_multiplexed_async_connection_with_config(&config),
        )
        .await;
        let mut st = self.lock();
        match attempt {
            Ok(Ok(conn)) => {
                st.generation += 1;
                st.failed_at = None;
                st.conn = Some((st.generation, conn.clone()));
                tracing::info!(target: "mrtr", prefix = %self.prefix, "replay store: connected to Redis");
                Ok((st.generation, conn))
            }
            Ok(Err(e)) => {
                st.failed_at = Some(Instant::now());
                tracing::warn!(target: "mrtr", error_kind = ?e.kind(), "replay store: cannot connect to Redis");
                Err(ReplayError::Unavailable)
            }
            Err(_) => {
                st.failed_at = Some(Instant::now());
                tracing::warn!(target: "mrtr", timeout_ms = self.connect_timeout.as_millis() as u64,
                    "replay store: connecting to Redis timed out");
                Err(ReplayError::Unavailable)
            }
        }
    }

    /// The cached connection; `Err` while backing off after a failed attempt.
    fn cached(&self) -> Result<Option<(u64, MultiplexedConnection)>, ReplayError> {
        let st = self.lock();
        if let Some(c) = &st.conn {
            return Ok(Some(c.clone()));
        }
        match st.failed_at {
            Some(t) if t.elapsed() < self.reconnect_backoff => Err(ReplayError::Unavailable),
            _ => Ok(None),
        }
    }

    /// Forgets connection `generation` after it failed, so the next call reconnects.
    fn discard(&self, generation: u64) {
        let mut st = self.lock();
        if matches!(&st.conn, Some((g, _)) if *g == generation) {
            st.conn = None;
        }
    }
}

impl AsyncReplayCache for RedisReplayCache {
    async fn check_and_record(
        &self,
        id: &TokenId,
        expires_at_ms: u64,
        now_ms: u64,
    ) -> Result<(), ReplayError> {
        let (generation, mut conn) = self.connection().await?;
        let cmd = set_nx_px(self.key_for(id), expires_at_ms, now_ms, self.skew_margin_ms);
        let reply = tokio::time::timeout(
            self.command_timeout,
            cmd.query_async::<Option<String>>(&mut conn),
        )
        .await;
        match reply {
            Ok(Ok(Some(_))) => Ok(()),
            Ok(Ok(None)) => Err(ReplayError::Replayed),
            Ok(Err(e)) => {
                tracing::warn!(target: "mrtr", error_kind = ?e.kind(), "replay store: Redis SET failed");
                self.discard(generation);
                Err(ReplayError::Unavailable)
            }
            Err(_) => {
                tracing::warn!(target: "mrtr", timeout_ms = self.command_timeout.as_millis() as u64,
                    "replay store: Redis SET timed out");
                self.discard(generation);
                Err(ReplayError::Unavailable)
            }
        }
    }
}

/// `prefix` followed by the token id in lowercase hex.
pub(crate) fn key_for(prefix: &str, id: &TokenId) -> String {
    let mut key = String::with_capacity(prefix.len() + 2 * id.len());
    key.push_str(prefix);
    for b in id {
        key.push(char::from(b"0123456789abcdef"[usize::from(b >> 4)]));
        key.push(char::from(b"0123456789abcdef"[usize::from(b & 0xf)]));
    }
    key
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// The `SET key 1 NX PX ttl` command: the entry lives until the token expires, plus `margin_ms`.
pub(crate) fn set_nx_px(
    key: String,
    expires_at_ms: u64,
    now_ms: u64,
    margin_ms: u64,
) -> redis::Cmd {
    let ttl_ms = expires_at_ms
        .saturating_sub(now_ms)
        .saturating_add(margin_ms)
        .max(1);
    let mut cmd = redis::cmd("SET");
    cmd.arg(key).arg(1).arg("NX").arg("PX").arg(ttl_ms);
    cmd
}

impl fmt::Debug for RedisReplayCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisReplayCache")
            .field("prefix", &self.prefix)
            .field("connect_timeout", &self.connect_timeout)
            .field("command_timeout", &self.command_timeout)
            .field("reconnect_backoff", &self.reconnect_backoff)
            .field("skew_margin_ms", &self.skew_margin_ms)
            .finish_non_exhaustive()
    }
}
