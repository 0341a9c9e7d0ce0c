//! The blocking Redis replay cache: the same `SET NX PX` protocol as
//! [`RedisReplayCache`](crate::replay_redis::RedisReplayCache), over synchronous connections,
//! for thread-per-request servers. Build it with
//! [`RedisReplayCacheBuilder::build_blocking`](crate::replay_redis::RedisReplayCacheBuilder::build_blocking).
//!
//! Each call borrows an idle connection from a small pool (or opens one, within the connect
//! timeout), sets the socket's read and write timeouts to the command timeout, and returns the
//! connection to the pool only if the command succeeded. Redis down, slow or erroring →
//! [`ReplayError::Unavailable`]; after a failed connection attempt, calls fail fast for the
//! reconnect back-off, then try again.

use std::fmt;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use mrtr_core::TokenId;
use mrtr_core::replay::{ReplayCache, ReplayError};
use redis::{Client, Connection};

use crate::replay_redis::{key_for, set_nx_px};

/// Idle connections kept for reuse.
const MAX_IDLE: usize = 16;

/// A synchronous [`ReplayCache`] in Redis. Blocks the calling thread for at most the connect
/// timeout plus the command timeout: never use it from an async task (use
/// [`RedisReplayCache`](crate::replay_redis::RedisReplayCache) there).
pub struct BlockingRedisReplayCache {
    client: Client,
    prefix: String,
    connect_timeout: Duration,
    command_timeout: Duration,
    reconnect_backoff: Duration,
    skew_margin_ms: u64,
    idle: Mutex<Vec<Connection>>,
    failed_at: Mutex<Option<Instant>>,
}

impl BlockingRedisReplayCache {
    pub(crate) fn new(
        client: Client,
        prefix: String,
        connect_timeout: Duration,
        command_timeout: Duration,
        reconnect_backoff: Duration,
        skew_margin_ms: u64,
    ) -> Self {
        Self {
            client,
            prefix,
            connect_timeout,
            command_timeout,
            reconnect_backoff,
            skew_margin_ms,
            idle: Mutex::new(Vec::new()),
            failed_at: Mutex::new(None),
        }
    }

    /// The key prefix.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    fn take(&self) -> Result<Connection, ReplayError> {
        if let Some(conn) = self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop() {
            return Ok(conn);
        }
        let mut failed_at = self.failed_at.lock().unwrap_or_else(|e| e.into_inner());
        if failed_at.is_some_and(|t| t.elapsed() < self.reconnect_backoff) {
            return Err(ReplayError::Unavailable);
        }
        let opened = self
            .client
            .get_connection_with_timeout(self.connect_timeout)
            .and_then(|c| {
                c.set_read_timeout(Some(self.command_timeout))?;
                c.set_write_timeout(Some(self.command_timeout))?;
                Ok(c)
            });
        match opened {
            Ok(c) => {
                *failed_at = None;
                Ok(c)
            }
            Err(e) => {
                *failed_at = Some(Instant::now());
                tracing::warn!(target: "mrtr", error_kind = ?e.kind(), "replay store: cannot connect to Redis");
                Err(ReplayError::Unavailable)
            }
        }
    }

    fn give_back(&self, conn: Connection) {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        if idle.len() < MAX_IDLE {
            idle.push(conn);
        }
    }
}

impl ReplayCache for BlockingRedisReplayCache {
    fn check_and_record(
        &self,
        id: &TokenId,
        expires_at_ms: u64,
        now_ms: u64,
    ) -> Result<(), ReplayError> {
        let mut conn = self.take()?;
        let cmd = set_nx_px(
            key_for(&self.prefix, id),
            expires_at_ms,
            now_ms,
            self.skew_margin_ms,
        );
        match cmd.query::<Option<String>>(&mut conn) {
            Ok(reply) => {
                self.give_back(conn);
                match reply {
                    Some(_) => Ok(()),
                    None => Err(ReplayError::Replayed),
                }
            }
            Err(e) => {
                // Dropped, not returned: a timed-out connection may hold a late reply.
                tracing::warn!(target: "mrtr", error_kind = ?e.kind(), "replay store: Redis SET failed");
                Err(ReplayError::Unavailable)
            }
        }
    }
}

impl fmt::Debug for BlockingRedisReplayCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BlockingRedisReplayCache")
            .field("prefix", &self.prefix)
            .field("connect_timeout", &self.connect_timeout)
            .field("command_timeout", &self.command_timeout)
            .field("reconnect_backoff", &self.reconnect_backoff)
            .finish_non_exhaustive()
    }
}
