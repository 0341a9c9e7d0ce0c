//! The blocking Redis replay cache: the same `SET NX PX` protocol as
//! [`RedisReplayCache`](crate::redis::RedisReplayCache), over synchronous connections,
//! for thread-per-request servers. Build it with
//! [`RedisReplayCacheBuilder::build_blocking`](crate::redis::RedisReplayCacheBuilder::build_blocking).
//!
//! Each call borrows an idle connection from a small pool (or opens one, within the connect
//! timeout), bounds every command by the socket's read and write timeouts, and returns the
//! connection to the pool only if Redis answered. Redis down, slow or erroring →
//! [`ReplayError::Unavailable`]; after a failed connection attempt, calls fail fast for the
//! reconnect back-off, then try again.
//!
//! It keeps the same promises as the async cache (see [`crate::redis`]): every new
//! connection reads Redis's `maxmemory-policy` before it records anything, and the cache
//! refuses every resume unless the policy is `noeviction` (or the explicit, logged override
//! is set); the policy is read again on a live connection every re-check interval; with
//! `wait_for_replicas`, `WAIT` runs with each `SET` and an unacknowledged write is refused
//! (the token is then spent: fail closed). [`BlockingRedisReplayCache::readiness`] and
//! [`BlockingRedisReplayCache::probe`] report readiness.

use std::fmt;
use std::io;
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

use mrtr_core::TokenId;
use mrtr_core::replay::{ReplayCache, ReplayError};
use redis::{Client, Connection, RedisResult};

use crate::Readiness;
use crate::redis::health::{self, Event, PolicyRead, Recorded, Status};
use crate::redis::{Settings, Wait, key_for, millis, set_and_wait, set_nx_px};

/// Idle connections kept for reuse.
const MAX_IDLE: usize = 16;

/// A synchronous [`ReplayCache`] in Redis. Blocks the calling thread for at most the connect
/// timeout plus the command timeout (plus the `WAIT` timeout when configured): never use it
/// from an async task (use [`RedisReplayCache`](crate::redis::RedisReplayCache) there).
pub struct BlockingRedisReplayCache {
    client: Client,
    settings: Settings,
    idle: Mutex<Vec<Connection>>,
    /// When the last connection attempt failed; held while connecting (one attempt at a time).
    failed_at: Mutex<Option<Instant>>,
    status: Mutex<Status>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Connections and status flags: a poisoned lock holds nothing unsafe.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl BlockingRedisReplayCache {
    pub(crate) fn new(client: Client, settings: Settings) -> Self {
        Self {
            client,
            settings,
            idle: Mutex::new(Vec::new()),
            failed_at: Mutex::new(None),
            status: Mutex::new(Status::for_store("redis_blocking")),
        }
    }

    /// The key prefix.
    pub fn prefix(&self) -> &str {
        &self.settings.prefix
    }

    /// Whether resumes can be recorded, from what the cache last saw (no I/O); see
    /// [`RedisReplayCache::readiness`](crate::redis::RedisReplayCache::readiness).
    pub fn readiness(&self) -> Readiness {
        lock(&self.status).readiness(&self.settings)
    }

    /// Connects if needed, reads the eviction policy again (at most once a second) and, with
    /// `wait_for_replicas`, checks that the replicas acknowledge; then answers
    /// [`BlockingRedisReplayCache::readiness`]. Blocks for at most the connect timeout plus the
    /// command (and `WAIT`) timeout.
    pub fn probe(&self) -> Readiness {
        let Ok(mut conn) = self.take() else {
            return self.readiness();
        };
        if !lock(&self.status).claim_probe(Instant::now()) {
            self.give_back(conn);
            return self.readiness();
        }
        let deadline = Instant::now() + self.settings.call_timeout();
        let checked = (|| {
            let read = read_policy(&mut conn, deadline)?;
            let allowed =
                lock(&self.status).apply(&read, &self.settings, Event::Recheck, Instant::now());
            if let (true, Some(wait)) = (allowed, self.settings.wait) {
                arm(&conn, deadline)?;
                let acked: i64 = health::wait_cmd(wait).query(&mut conn)?;
                lock(&self.status).replicas(acked, wait, &self.settings);
            }
            Ok(())
        })();
        match checked {
            Ok(()) => self.give_back(conn),
            Err(e) => self.failed_command(conn, &e),
        }
        self.readiness()
    }

    /// An idle connection, or a new one whose eviction policy has been read.
    fn take(&self) -> Result<Connection, ReplayError> {
        if let Some(conn) = lock(&self.idle).pop() {
            return Ok(conn);
        }
        let s = &self.settings;
        let mut failed_at = lock(&self.failed_at);
        if failed_at.is_some_and(|t| t.elapsed() < s.reconnect_backoff) {
            return Err(ReplayError::Unavailable);
        }
        let opened = self
            .client
            .get_connection_with_timeout(s.connect_timeout)
            .and_then(|mut conn| {
                let read = read_policy(&mut conn, Instant::now() + s.command_timeout)?;
                Ok((conn, read))
            });
        match opened {
            Ok((conn, read)) => {
                *failed_at = None;
                let mut status = lock(&self.status);
                status.connected(s);
                status.apply(&read, s, Event::Connect, Instant::now());
                Ok(conn)
            }
            Err(e) => {
                *failed_at = Some(Instant::now());
                let mut status = lock(&self.status);
                status.error("connect");
                status.unreachable(s);
                drop(status);
                match crate::redis::tls::failure(&e) {
                    Some(tls_error) => tracing::warn!(target: "mrtr", %tls_error,
                        "replay store: the TLS handshake with Redis failed (its certificate is not \
                         trusted or not for this host, or it refused ours)"),
                    None => tracing::warn!(target: "mrtr", error_kind = ?e.kind(),
                        "replay store: cannot connect to Redis (or read its maxmemory-policy)"),
                }
                Err(ReplayError::Unavailable)
            }
        }
    }

    fn give_back(&self, conn: Connection) {
        let mut idle = lock(&self.idle);
        if idle.len() < MAX_IDLE {
            idle.push(conn);
        }
    }

    /// A command failed: `OOM` keeps the connection (Redis answered, it is only full);
    /// anything else drops it and every idle one (likely as dead after a Redis restart), and
    /// a timed-out one may hold a late reply.
    fn failed_command(&self, conn: Connection, e: &redis::RedisError) {
        if health::is_out_of_memory(e) {
            self.give_back(conn);
            lock(&self.status).out_of_memory(&self.settings);
            return;
        }
        drop(conn);
        lock(&self.idle).clear();
        let mut status = lock(&self.status);
        status.error(if e.is_timeout() { "timeout" } else { "command" });
        status.unreachable(&self.settings);
        drop(status);
        tracing::warn!(target: "mrtr", error_kind = ?e.kind(), code = e.code(),
            timeout_ms = millis(self.settings.call_timeout()),
            "replay store: Redis command failed or timed out");
    }
}

impl ReplayCache for BlockingRedisReplayCache {
    fn check_and_record(
        &self,
        id: &TokenId,
        expires_at_ms: u64,
        now_ms: u64,
    ) -> Result<(), ReplayError> {
        let started = Instant::now();
        let answer = self.record_id(id, expires_at_ms, now_ms);
        let store = lock(&self.status).store();
        super::obs::replay_store_call(store, &answer, started.elapsed());
        answer
    }
}

impl BlockingRedisReplayCache {
    fn record_id(&self, id: &TokenId, expires_at_ms: u64, now_ms: u64) -> Result<(), ReplayError> {
        let mut conn = self.take()?;
        let planned = lock(&self.status).plan(&self.settings, Instant::now());
        let recheck = match planned {
            Ok(recheck) => recheck,
            Err(refused) => {
                self.give_back(conn);
                lock(&self.status).error("policy");
                return Err(refused);
            }
        };
        let deadline = Instant::now() + self.settings.call_timeout();
        let set = set_nx_px(
            key_for(&self.settings.prefix, id),
            expires_at_ms,
            now_ms,
            &self.settings,
        );
        let answered = (|| {
            if recheck {
                let read = read_policy(&mut conn, deadline)?;
                let allowed =
                    lock(&self.status).apply(&read, &self.settings, Event::Recheck, Instant::now());
                if !allowed {
                    return Ok(None);
                }
            }
            record(&mut conn, set, self.settings.wait, deadline).map(Some)
        })();
        match answered {
            Ok(Some(recorded)) => {
                self.give_back(conn);
                lock(&self.status).outcome(recorded, &self.settings)
            }
            // The policy forbids recording: nothing was sent.
            Ok(None) => {
                self.give_back(conn);
                lock(&self.status).error("policy");
                Err(ReplayError::Unavailable)
            }
            Err(e) => {
                self.failed_command(conn, &e);
                Err(ReplayError::Unavailable)
            }
        }
    }
}

/// Bounds the next command by what is left until `deadline`.
fn arm(conn: &Connection, deadline: Instant) -> RedisResult<()> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(io::Error::from(io::ErrorKind::TimedOut).into());
    }
    conn.set_read_timeout(Some(left))?;
    conn.set_write_timeout(Some(left))?;
    Ok(())
}

/// Reads the eviction policy: `INFO memory`, or `CONFIG GET` if `INFO` is refused.
fn read_policy(conn: &mut Connection, deadline: Instant) -> RedisResult<PolicyRead> {
    arm(conn, deadline)?;
    match health::info_cmd().query::<String>(conn) {
        Ok(text) => Ok(PolicyRead::from_info(&text)),
        Err(e) if health::is_error_reply(&e) => {
            arm(conn, deadline)?;
            match health::config_cmd().query::<Vec<String>>(conn) {
                Ok(reply) => Ok(PolicyRead::from_config(&reply)),
                Err(e) if health::is_error_reply(&e) => Ok(PolicyRead::unreadable()),
                Err(e) => Err(e),
            }
        }
        Err(e) => Err(e),
    }
}

/// `SET`, and with `wait`, `WAIT` in the same round trip.
fn record(
    conn: &mut Connection,
    set: redis::Cmd,
    wait: Option<Wait>,
    deadline: Instant,
) -> RedisResult<Recorded> {
    arm(conn, deadline)?;
    match wait {
        None => {
            let reply: Option<String> = set.query(conn)?;
            Ok(Recorded {
                new: reply.is_some(),
                acked: None,
            })
        }
        Some(wait) => {
            let (reply, acked): (RedisResult<Option<String>>, RedisResult<i64>) =
                set_and_wait(set, wait).query(conn)?;
            Ok(Recorded {
                new: reply?.is_some(),
                acked: Some(acked?),
            })
        }
    }
}

impl fmt::Debug for BlockingRedisReplayCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BlockingRedisReplayCache")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}
