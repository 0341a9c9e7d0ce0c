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
//! # What Redis must guarantee
//!
//! Single use holds only while Redis keeps every entry until it expires.
//!
//! * **No eviction.** Under any `maxmemory-policy` but `noeviction` (`volatile-*` included:
//!   every entry has an expiry), Redis drops live entries under memory pressure, after which
//!   `SET NX` succeeds again and a spent token is accepted; an attacker can create that
//!   pressure by resuming many tokens of their own. So at every connect the cache reads the
//!   policy (`INFO memory`, which managed services allow when `CONFIG` is disabled; then
//!   `CONFIG GET maxmemory-policy`). Unless it is `noeviction`, the cache records nothing: every
//!   resume is refused as "store unavailable", [`RedisReplayCache::readiness`] says why, and an
//!   error (target `mrtr`) names `maxmemory-policy` and the fix (`CONFIG SET maxmemory-policy
//!   noeviction`, or the managed service's parameter group). A policy that cannot be read is
//!   refused the same way.
//! * **Re-checked while connected.** An operator can change the policy without a reconnect,
//!   so the cache reads it again on a live connection at most every
//!   [`policy_recheck_interval`](RedisReplayCacheBuilder::policy_recheck_interval) (default
//!   10 s), before one resume's `SET` and within that resume's command timeout: one extra round
//!   trip for one resume per interval, no background task. While refused, it re-reads after
//!   each reconnect back-off, so fixing the policy heals the cache within a second.
//! * **Full is refused, not forgotten.** Under `noeviction` a full Redis answers writes with
//!   `OOM`: resumes are refused (fail closed) until entries expire, and every recorded id stays
//!   refused.
//! * **The only override is explicit**:
//!   [`allow_evicting_policy`](RedisReplayCacheBuilder::allow_evicting_policy) records under
//!   any policy and logs a warning at every connect. It gives up single use under memory
//!   pressure; there is no silent fallback.
//! * **Failover.** Replication is asynchronous: an id recorded on the primary can be lost when
//!   a replica that had not received it is promoted, and the token accepted once more there.
//!   [`wait_for_replicas`](RedisReplayCacheBuilder::wait_for_replicas) sends `WAIT n timeout`
//!   with each `SET` (same round trip) and refuses the resume unless `n` replicas acknowledged
//!   it in time. Redis's `WAIT` is not a consensus protocol, but it closes the common window
//!   (see [Redis Sentinel](self#redis-sentinel) for a measured failover).
//!
//! ## A refusal after the `SET` landed burns the token
//!
//! When Redis recorded the id but the cache could not confirm it (the command timed out after
//! Redis executed it, the connection broke before the reply, or `WAIT` was not acknowledged in
//! time), the resume is refused as "store unavailable" and the id *stays recorded*: a retry of
//! the same token is then refused as a replay, and the client must start the call over. That
//! is deliberate: the cache cannot tell "recorded" from "not recorded" in those cases, and
//! guessing "not recorded" could accept a token twice. Fail closed.
//!
//! # Redis Cluster
//!
//! `RedisReplayCache::cluster_builder` (feature `redis-cluster`) takes the URLs of one or
//! more nodes of a Redis Cluster (cluster mode, as managed services offer it) and discovers
//! the rest. The `SET NX` of an id goes to the primary that owns the slot of its key; the
//! redis crate's cluster client follows `MOVED` and `ASK`, so during a resharding an id is
//! recorded (or found) on whichever node holds its slot at that moment: `MIGRATE` moves a key
//! atomically, and a resharding re-admits nothing (tested with `redis-cli --cluster reshard`
//! under traffic). The eviction policy is read on **every** primary, at each connect and each
//! re-check: one evicting (or unreadable) primary refuses the whole store, and the log names
//! that node. `WAIT` runs on the primary that took the `SET`. The blocking cache does not
//! support a cluster.
//!
//! # Redis Sentinel
//!
//! `RedisReplayCache::sentinel_builder` (feature `redis-sentinel`) asks the sentinels for
//! the primary monitored under a name at every connect (and checks its `ROLE`). When the
//! primary fails, commands fail (resumes are refused: fail closed) until the sentinels have
//! promoted a replica; the next connect after the reconnect back-off reaches it. Replication
//! is asynchronous, so what the old primary acknowledged but no replica had received is lost
//! at the promotion, and those tokens are accepted once more. `wait_for_replicas(n, …)` with
//! `n` the replica count closes that: nothing is acknowledged before every replica has it.
//! The price: while fewer than `n` replicas are online (after a failover, until the failed
//! node returns as a replica), every resume is refused. A smaller `n` keeps serving with a
//! replica missing; the sentinels promote the replica with the most data, so an acknowledged
//! id is then lost only when every replica that acknowledged it is down at the promotion.
//!
//! # Readiness
//!
//! [`RedisReplayCache::readiness`] is what the cache last saw (no I/O);
//! [`RedisReplayCache::probe`] connects if needed and re-reads the policy (and, with `WAIT`
//! configured, asks the replicas), for a startup check and a `/readyz` route. No cause ever
//! holds the URL.
//!
//! # Memory
//!
//! Memory in Redis 7.0, default 12-byte prefix: `MEMORY USAGE` of one key is 88 bytes, and
//! `used_memory` grows by about 133 bytes per entry (key, value, expiry table), measured by
//! recording 100 000 ids. A blocking variant for servers without an async runtime is in
//! [`BlockingRedisReplayCache`].
//!
//! ```no_run
//! use std::time::Duration;
//! use mrtr_replay::redis::RedisReplayCache;
//!
//! # async fn start() -> Result<(), mrtr_replay::redis::RedisConfigError> {
//! let cache = RedisReplayCache::builder("redis://127.0.0.1:6379/")
//!     .prefix("myserver:mrtr:")
//!     .command_timeout(Duration::from_millis(50))
//!     .wait_for_replicas(1, Duration::from_millis(50))
//!     .build()?;
//! // At startup: connect and check the eviction policy (the server starts either way).
//! if let Some(cause) = cache.probe().await.cause() {
//!     eprintln!("not ready yet: {cause}");
//! }
//! // engine = CipherEngine::new(mrtr, cache); then `engine.resume_async(&req).await` in handlers.
//! # Ok(()) }
//! ```

use std::fmt;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use mrtr_core::TokenId;
use mrtr_core::replay::ReplayError;

use crate::{AsyncReplayCache, Readiness};

mod blocking;
mod builder;
pub(crate) mod health;
mod obs;
pub mod tls;
mod topology;

pub use blocking::BlockingRedisReplayCache;
pub use builder::RedisReplayCacheBuilder;

use health::{Event, Status};
use topology::{Conn, Target};

/// Default key prefix.
pub const DEFAULT_PREFIX: &str = "mrtr:replay:";
/// Default timeout for opening a connection.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_millis(250);
/// Default timeout for one command.
pub const DEFAULT_COMMAND_TIMEOUT: Duration = Duration::from_millis(100);
/// Default pause between connection attempts after a failed one.
pub const DEFAULT_RECONNECT_BACKOFF: Duration = Duration::from_millis(500);
/// Default shortest life of an entry: mrtr's default token TTL (see
/// [`RedisReplayCacheBuilder::min_entry_lifetime`]).
pub const DEFAULT_MIN_ENTRY_LIFETIME: Duration = Duration::from_millis(mrtr_core::DEFAULT_TTL_MS);
/// Default interval between readings of the eviction policy on a live connection.
pub const DEFAULT_POLICY_RECHECK: Duration = Duration::from_secs(10);

/// Why a Redis replay cache could not be configured.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RedisConfigError {
    /// The URL is not a valid Redis URL (`redis://host:port/db`, `rediss://…` for TLS,
    /// `redis+unix:///path`). The URL itself is not repeated: it may hold a password.
    BadUrl,
    /// The key prefix is longer than 256 bytes.
    PrefixTooLong,
    /// A timeout is zero.
    ZeroTimeout,
    /// A `rediss://` URL in a build without the `redis-tls` feature.
    TlsUnsupported,
    /// TLS certificates were given for a URL that is not `rediss://`.
    TlsWithoutRediss,
    /// The URL turns certificate verification off (`#insecure`): refused.
    TlsInsecure,
    /// A TLS certificate or key does not parse (or a set of roots holds no certificate, or
    /// a client certificate has no key). The material is not repeated.
    BadTlsMaterial,
    /// A cluster or Sentinel builder was given no node or sentinel URL.
    NoNodes,
    /// This combination is not supported; the text says which.
    Unsupported(&'static str),
}

impl fmt::Display for RedisConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::BadUrl => {
                "invalid Redis URL (expected redis://host:port/db, rediss://host:port/db for TLS, \
                 or redis+unix:///path)"
            }
            Self::PrefixTooLong => "Redis key prefix is longer than 256 bytes",
            Self::ZeroTimeout => "Redis timeouts must be greater than zero",
            Self::TlsUnsupported => {
                "a rediss:// (TLS) URL needs mrtr-std built with the `redis-tls` feature"
            }
            Self::TlsWithoutRediss => {
                "TLS certificates were given, but the Redis URL is not rediss:// (TLS)"
            }
            Self::TlsInsecure => {
                "the Redis URL turns TLS certificate verification off (#insecure): refused; \
                 give the server's CA with the TLS root certificates instead"
            }
            Self::BadTlsMaterial => {
                "a Redis TLS certificate or key does not parse (expected PEM: certificates, and \
                 one private key for a client certificate)"
            }
            Self::NoNodes => "no Redis Cluster node or Sentinel URL was given",
            Self::Unsupported(what) => return write!(f, "not supported: {what}"),
        })
    }
}

impl std::error::Error for RedisConfigError {}

/// `WAIT` after each `SET`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Wait {
    pub(crate) replicas: u32,
    pub(crate) timeout: Duration,
}

/// Everything but the URL; shared by both caches.
#[derive(Clone, Debug)]
pub(crate) struct Settings {
    pub(crate) prefix: String,
    pub(crate) connect_timeout: Duration,
    pub(crate) command_timeout: Duration,
    pub(crate) reconnect_backoff: Duration,
    pub(crate) skew_margin_ms: u64,
    pub(crate) min_entry_ms: u64,
    pub(crate) policy_recheck: Duration,
    pub(crate) allow_evicting_policy: bool,
    pub(crate) wait: Option<Wait>,
}

impl Settings {
    /// The time one resume may spend on Redis once connected: the command timeout, plus the
    /// `WAIT` timeout when configured.
    pub(crate) fn call_timeout(&self) -> Duration {
        self.command_timeout + self.wait.map_or(Duration::ZERO, |w| w.timeout)
    }
}

#[derive(Default)]
struct ConnState {
    /// The shared connection and its generation (bumped on every new connection).
    conn: Option<(u64, Conn)>,
    generation: u64,
    /// When the last connection attempt failed.
    failed_at: Option<Instant>,
    status: Status,
}

/// An [`AsyncReplayCache`] in Redis (see the [module docs](self)). Cheap to share: put it in
/// an `CipherEngine` behind an `Arc`, or wrap it in one.
///
/// `Debug` shows the prefix and timeouts, never the URL (it may hold a password).
pub struct RedisReplayCache {
    target: Target,
    settings: Settings,
    state: Mutex<ConnState>,
    /// Single flight for connection attempts.
    connecting: tokio::sync::Mutex<()>,
}

impl RedisReplayCache {
    /// The key prefix.
    pub fn prefix(&self) -> &str {
        &self.settings.prefix
    }

    /// The Redis key for a token id: the prefix and the id in lowercase hex.
    pub fn key_for(&self, id: &TokenId) -> String {
        key_for(&self.settings.prefix, id)
    }

    /// Whether resumes can be recorded, from what the cache last saw (no I/O):
    /// [`NotConnected`](crate::NotReadyCause::NotConnected) before the first resume or
    /// probe, then ready, or not ready with the cause (unreachable, evicting or unreadable
    /// policy, out of memory, replicas not acknowledging).
    pub fn readiness(&self) -> Readiness {
        self.lock().status.readiness(&self.settings)
    }

    /// Connects if needed, reads the eviction policy again (at most once a second; more
    /// frequent probes answer from the last reading) and, with
    /// [`wait_for_replicas`](RedisReplayCacheBuilder::wait_for_replicas), checks that the
    /// replicas acknowledge; then answers [`RedisReplayCache::readiness`]. Takes at most the
    /// connect timeout plus the command (and `WAIT`) timeout. For a startup check and `/readyz`.
    pub async fn probe(&self) -> Readiness {
        let Ok((generation, mut conn)) = self.connection().await else {
            return self.readiness();
        };
        if !self.lock().status.claim_probe(Instant::now()) {
            return self.readiness();
        }
        let work = async {
            let read = conn.read_policy().await?;
            let allowed =
                self.lock()
                    .status
                    .apply(&read, &self.settings, Event::Recheck, Instant::now());
            if let (true, Some(wait)) = (allowed, self.settings.wait) {
                let acked = conn.replicas(wait).await?;
                self.lock().status.replicas(acked, wait, &self.settings);
            }
            Ok(())
        };
        match tokio::time::timeout(self.settings.call_timeout(), work).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => self.failed_command(generation, &e),
            Err(_) => self.timed_out(generation),
        }
        self.readiness()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ConnState> {
        // The guarded data is a cache of a connection: a poisoned lock holds nothing unsafe.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The shared connection, opening one if needed (one attempt at a time, bounded, with
    /// back-off after a failure). A new connection's eviction policy is read before anyone
    /// records through it.
    async fn connection(&self) -> Result<(u64, Conn), ReplayError> {
        if let Some(c) = self.cached()? {
            return Ok(c);
        }
        let s = &self.settings;
        let _single_flight = tokio::time::timeout(s.connect_timeout, self.connecting.lock())
            .await
            .map_err(|_| ReplayError::Unavailable)?;
        // Someone else may have connected, or failed, while we waited.
        if let Some(c) = self.cached()? {
            return Ok(c);
        }
        let attempt = tokio::time::timeout(s.connect_timeout, self.target.connect(s)).await;
        let mut conn = match attempt {
            Ok(Ok(conn)) => conn,
            Ok(Err(e)) => {
                match tls::failure(&e) {
                    Some(tls_error) => tracing::warn!(target: "mrtr", %tls_error,
                        "replay store: the TLS handshake with Redis failed (its certificate is not \
                         trusted or not for this host, or it refused ours)"),
                    None => tracing::warn!(target: "mrtr", error_kind = ?e.kind(),
                        "replay store: cannot connect to Redis"),
                }
                return Err(self.connect_failed());
            }
            Err(_) => {
                tracing::warn!(target: "mrtr", timeout_ms = millis(s.connect_timeout),
                    "replay store: connecting to Redis timed out");
                return Err(self.connect_failed());
            }
        };
        let read = match tokio::time::timeout(s.command_timeout, conn.read_policy()).await {
            Ok(Ok(read)) => read,
            Ok(Err(e)) => {
                tracing::warn!(target: "mrtr", error_kind = ?e.kind(),
                    "replay store: reading Redis maxmemory-policy failed");
                return Err(self.connect_failed());
            }
            Err(_) => {
                tracing::warn!(target: "mrtr", timeout_ms = millis(s.command_timeout),
                    "replay store: reading Redis maxmemory-policy timed out");
                return Err(self.connect_failed());
            }
        };
        let mut st = self.lock();
        st.generation += 1;
        st.failed_at = None;
        st.conn = Some((st.generation, conn.clone()));
        st.status.connected(s);
        st.status.apply(&read, s, Event::Connect, Instant::now());
        Ok((st.generation, conn))
    }

    fn connect_failed(&self) -> ReplayError {
        let mut st = self.lock();
        st.failed_at = Some(Instant::now());
        st.status.error("connect");
        st.status.unreachable(&self.settings);
        ReplayError::Unavailable
    }

    /// The cached connection; `Err` while backing off after a failed attempt.
    fn cached(&self) -> Result<Option<(u64, Conn)>, ReplayError> {
        let st = self.lock();
        if let Some(c) = &st.conn {
            return Ok(Some(c.clone()));
        }
        match st.failed_at {
            Some(t) if t.elapsed() < self.settings.reconnect_backoff => {
                Err(ReplayError::Unavailable)
            }
            _ => Ok(None),
        }
    }

    /// Forgets connection `generation` after it failed, so the next call reconnects.
    fn discard(&self, generation: u64) {
        let mut st = self.lock();
        if matches!(&st.conn, Some((g, _)) if *g == generation) {
            st.conn = None;
            st.status.unreachable(&self.settings);
        }
    }

    /// A command on connection `generation` failed: `OOM` keeps the connection (Redis is
    /// fine, only full); anything else drops it.
    fn failed_command(&self, generation: u64, e: &redis::RedisError) {
        if health::is_out_of_memory(e) {
            self.lock().status.out_of_memory(&self.settings);
        } else {
            tracing::warn!(target: "mrtr", error_kind = ?e.kind(), code = e.code(),
                "replay store: Redis command failed");
            self.lock()
                .status
                .error(if e.is_timeout() { "timeout" } else { "command" });
            self.discard(generation);
        }
    }

    fn timed_out(&self, generation: u64) {
        self.lock().status.error("timeout");
        tracing::warn!(target: "mrtr", timeout_ms = millis(self.settings.call_timeout()),
            "replay store: Redis command timed out");
        self.discard(generation);
    }
}

impl AsyncReplayCache for RedisReplayCache {
    async fn check_and_record(
        &self,
        id: &TokenId,
        expires_at_ms: u64,
        now_ms: u64,
    ) -> Result<(), ReplayError> {
        let started = Instant::now();
        let answer = self.record_id(id, expires_at_ms, now_ms).await;
        let store = self.lock().status.store();
        obs::replay_store_call(store, &answer, started.elapsed());
        answer
    }
}

impl RedisReplayCache {
    async fn record_id(
        &self,
        id: &TokenId,
        expires_at_ms: u64,
        now_ms: u64,
    ) -> Result<(), ReplayError> {
        let (generation, mut conn) = self.connection().await?;
        let planned = self.lock().status.plan(&self.settings, Instant::now());
        let recheck = planned.inspect_err(|_| self.lock().status.error("policy"))?;
        let key = self.key_for(id);
        let set = set_nx_px(key.clone(), expires_at_ms, now_ms, &self.settings);
        let work = async {
            if recheck {
                let read = conn.read_policy().await?;
                let allowed =
                    self.lock()
                        .status
                        .apply(&read, &self.settings, Event::Recheck, Instant::now());
                if !allowed {
                    return Ok(None);
                }
            }
            conn.record(&key, set, self.settings.wait).await.map(Some)
        };
        match tokio::time::timeout(self.settings.call_timeout(), work).await {
            Ok(Ok(Some(recorded))) => self.lock().status.outcome(recorded, &self.settings),
            // The policy forbids recording: nothing was sent.
            Ok(Ok(None)) => {
                self.lock().status.error("policy");
                Err(ReplayError::Unavailable)
            }
            Ok(Err(e)) => {
                self.failed_command(generation, &e);
                Err(ReplayError::Unavailable)
            }
            Err(_) => {
                self.timed_out(generation);
                Err(ReplayError::Unavailable)
            }
        }
    }
}

/// `SET` then `WAIT`, sent together; each answer is read on its own.
pub(crate) fn set_and_wait(set: redis::Cmd, wait: Wait) -> redis::Pipeline {
    let mut pipe = redis::pipe();
    pipe.add_command(set)
        .add_command(health::wait_cmd(wait))
        .ignore_errors();
    pipe
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

pub(crate) fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// The `SET key 1 NX PX ttl` command: the entry lives until the token expires, at least the
/// configured minimum, plus the skew margin.
pub(crate) fn set_nx_px(
    key: String,
    expires_at_ms: u64,
    now_ms: u64,
    settings: &Settings,
) -> redis::Cmd {
    let ttl_ms = entry_lifetime_ms(expires_at_ms, now_ms, settings);
    let mut cmd = redis::cmd("SET");
    cmd.arg(key).arg(1).arg("NX").arg("PX").arg(ttl_ms);
    cmd
}

/// How long an entry lives: until the token expires by this node's clock, but never less than
/// the configured minimum (a clock jumped ahead must not drop it early), plus the skew margin.
pub(crate) fn entry_lifetime_ms(expires_at_ms: u64, now_ms: u64, settings: &Settings) -> u64 {
    expires_at_ms
        .saturating_sub(now_ms)
        .max(settings.min_entry_ms)
        .saturating_add(settings.skew_margin_ms)
        .max(1)
}

impl fmt::Debug for RedisReplayCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisReplayCache")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}
