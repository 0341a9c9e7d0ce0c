//! What both Redis replay caches share besides the `SET`: reading and judging Redis's eviction
//! policy, the state behind [`Readiness`], the outcome of a `SET` (and `WAIT`), and one log
//! line per change of state (never one per refused resume: an attacker must not be able to
//! flood the logs).

use std::time::{Duration, Instant};

use mrtr_core::replay::ReplayError;
use redis::RedisError;

use super::{Settings, Wait};
use crate::{EvictionPolicy, NotReadyCause, Readiness};

/// A probe re-reads the policy at most this often; more frequent probes (a `/readyz` under
/// load) answer from the last reading instead of querying Redis each time.
pub(crate) const PROBE_MIN_INTERVAL: Duration = Duration::from_secs(1);

/// `INFO memory`: managed services that disable `CONFIG` still allow it.
pub(crate) fn info_cmd() -> redis::Cmd {
    let mut cmd = redis::cmd("INFO");
    cmd.arg("memory");
    cmd
}

/// The fallback when `INFO` is refused (renamed or denied by an ACL).
pub(crate) fn config_cmd() -> redis::Cmd {
    let mut cmd = redis::cmd("CONFIG");
    cmd.arg("GET").arg("maxmemory-policy");
    cmd
}

/// `WAIT numreplicas timeout`; the timeout is at least 1 ms (`WAIT n 0` blocks forever).
pub(crate) fn wait_cmd(wait: Wait) -> redis::Cmd {
    let mut cmd = redis::cmd("WAIT");
    cmd.arg(wait.replicas)
        .arg(super::millis(wait.timeout).max(1));
    cmd
}

/// Whether `e` is an error reply from the server (as opposed to a broken connection).
pub(crate) fn is_error_reply(e: &RedisError) -> bool {
    e.code().is_some()
}

/// Whether `e` is Redis refusing a write because `maxmemory` is reached.
pub(crate) fn is_out_of_memory(e: &RedisError) -> bool {
    e.code() == Some("OOM")
}

/// What a policy reading found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Observed {
    NoEviction,
    Evicting(EvictionPolicy),
    Unreadable,
}

/// One reading of the eviction policy (and, from `INFO`, whether memory has room).
#[derive(Clone, Debug)]
pub(crate) struct PolicyRead {
    observed: Observed,
    /// The policy name as Redis reported it, trimmed to a safe alphabet for logs.
    name: String,
    /// `used_memory < maxmemory` (or no `maxmemory`), when `INFO` said.
    room: Option<bool>,
    /// The cluster node (`host:port`) this reading came from; `None` for one Redis.
    node: Option<String>,
}

impl PolicyRead {
    /// From the text of `INFO memory` (`field:value` lines).
    pub(crate) fn from_info(text: &str) -> Self {
        let field = |key: &str| {
            text.lines().find_map(|line| {
                line.strip_prefix(key)
                    .and_then(|rest| rest.strip_prefix(':'))
                    .map(str::trim)
            })
        };
        let number = |key: &str| field(key).and_then(|v| v.parse::<u64>().ok());
        let room = match (number("used_memory"), number("maxmemory")) {
            (_, Some(0)) => Some(true),
            (Some(used), Some(max)) => Some(used < max),
            _ => None,
        };
        match field("maxmemory_policy") {
            Some(name) => Self::named(name, room),
            None => Self::unreadable(),
        }
    }

    /// From the reply of `CONFIG GET maxmemory-policy` (`[name, value]`).
    pub(crate) fn from_config(reply: &[String]) -> Self {
        match reply {
            [_, value] => Self::named(value, None),
            _ => Self::unreadable(),
        }
    }

    /// Neither `INFO` nor `CONFIG GET` answered.
    pub(crate) fn unreadable() -> Self {
        Self {
            observed: Observed::Unreadable,
            name: String::new(),
            room: None,
            node: None,
        }
    }

    /// The same reading, from cluster node `node` (`host:port`, cleaned for logs).
    #[cfg(feature = "redis-cluster")]
    pub(crate) fn at(mut self, node: &str) -> Self {
        let node = node
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | ':' | '-' | '[' | ']'))
            .take(80)
            .collect();
        self.node = Some(node);
        self
    }

    /// The worst of several readings (a cluster's primaries): any evicting or unreadable
    /// policy refuses the whole store, and any full node means no room. No reading at all is
    /// unreadable.
    #[cfg(feature = "redis-cluster")]
    pub(crate) fn worst(reads: Vec<Self>) -> Self {
        let rank = |o: Observed| match o {
            Observed::NoEviction => 0,
            Observed::Unreadable => 1,
            Observed::Evicting(_) => 2,
        };
        let mut reads = reads.into_iter();
        let Some(mut worst) = reads.next() else {
            return Self::unreadable();
        };
        for read in reads {
            let room = match (worst.room, read.room) {
                (Some(false), _) | (_, Some(false)) => Some(false),
                (Some(true), Some(true)) => Some(true),
                _ => None,
            };
            if rank(read.observed) > rank(worst.observed) {
                worst = read;
            }
            worst.room = room;
        }
        if worst.observed == Observed::NoEviction {
            // No node to blame: the log says "connected", not which primary was read first.
            worst.node = None;
        }
        worst
    }

    fn named(name: &str, room: Option<bool>) -> Self {
        let observed = match EvictionPolicy::from_name(name) {
            None => Observed::NoEviction,
            Some(p) => Observed::Evicting(p),
        };
        let name = name
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
            .take(40)
            .collect();
        Self {
            observed,
            name,
            room,
            node: None,
        }
    }
}

/// Why the policy is being read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Event {
    /// On a new connection: always logged.
    Connect,
    /// On a live connection (periodic re-check or probe): logged when it changed.
    Recheck,
}

/// The outcome of a `SET` (and `WAIT`) that Redis answered.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Recorded {
    /// `SET NX` set the key: the id was new.
    pub(crate) new: bool,
    /// Replicas that acknowledged, when `WAIT` ran.
    pub(crate) acked: Option<i64>,
}

/// What a cache knows about its Redis, behind [`Readiness`].
#[derive(Debug, Default)]
pub(crate) struct Status {
    attempted: bool,
    connected: bool,
    observed: Option<Observed>,
    read_at: Option<Instant>,
    /// When a probe last asked Redis (its own clock: a probe right after a connect still
    /// runs its `WAIT` check).
    probed_at: Option<Instant>,
    /// A condition that a later success clears (out of memory, replicas behind).
    degraded: Option<NotReadyCause>,
    /// The `store` label of the metrics (`redis` or `redis_blocking`).
    store: &'static str,
    /// The readiness last published to the metrics.
    published: Option<Readiness>,
}

impl Status {
    /// The status of a store, named `store` in the metrics.
    pub(crate) fn for_store(store: &'static str) -> Self {
        Self {
            store,
            ..Self::default()
        }
    }

    /// The `store` label.
    pub(crate) fn store(&self) -> &'static str {
        self.store
    }

    /// Counts a store error of `kind` in the metrics.
    pub(crate) fn error(&self, kind: &'static str) {
        super::obs::replay_store_error(self.store, kind);
    }

    /// Publishes the readiness to the metrics when it changed.
    fn publish(&mut self, settings: &Settings) {
        let now = self.readiness(settings);
        if self.published != Some(now) {
            self.published = Some(now);
            super::obs::replay_store_readiness(self.store, &settings.prefix, now);
        }
    }

    /// A connection is up (or a command just succeeded on one).
    pub(crate) fn connected(&mut self, settings: &Settings) {
        self.attempted = true;
        self.connected = true;
        self.publish(settings);
    }

    /// Connecting failed, or the connection broke.
    pub(crate) fn unreachable(&mut self, settings: &Settings) {
        self.attempted = true;
        self.connected = false;
        self.publish(settings);
    }

    /// Why the policy forbids recording, if it does.
    fn refusal(&self, allow: bool) -> Option<NotReadyCause> {
        match self.observed? {
            Observed::NoEviction => None,
            _ if allow => None,
            Observed::Evicting(p) => Some(NotReadyCause::EvictingPolicy(p)),
            Observed::Unreadable => Some(NotReadyCause::PolicyUnreadable),
        }
    }

    pub(crate) fn readiness(&self, settings: &Settings) -> Readiness {
        if !self.connected {
            return Readiness::NotReady(if self.attempted {
                NotReadyCause::Unreachable
            } else {
                NotReadyCause::NotConnected
            });
        }
        if self.observed.is_none() {
            return Readiness::NotReady(NotReadyCause::NotConnected);
        }
        match self
            .refusal(settings.allow_evicting_policy)
            .or(self.degraded)
        {
            Some(cause) => Readiness::NotReady(cause),
            None => Readiness::Ready,
        }
    }

    /// Before a `SET`: refuses while the policy forbids recording and no re-read is due;
    /// otherwise says whether this caller must re-read the policy first (it claims the
    /// re-read, so concurrent callers do not all do it). A refused policy is re-read after
    /// the reconnect back-off, an accepted one after the re-check interval.
    pub(crate) fn plan(&mut self, settings: &Settings, now: Instant) -> Result<bool, ReplayError> {
        let refused =
            self.observed.is_none() || self.refusal(settings.allow_evicting_policy).is_some();
        let every = if refused {
            settings.reconnect_backoff
        } else {
            settings.policy_recheck
        };
        let due = self
            .read_at
            .is_none_or(|at| now.saturating_duration_since(at) >= every);
        if due {
            self.read_at = Some(now);
            Ok(true)
        } else if refused {
            Err(ReplayError::Unavailable)
        } else {
            Ok(false)
        }
    }

    /// Whether a probe should ask Redis now (and claims it).
    pub(crate) fn claim_probe(&mut self, now: Instant) -> bool {
        let due = self
            .probed_at
            .is_none_or(|at| now.saturating_duration_since(at) >= PROBE_MIN_INTERVAL);
        if due {
            self.probed_at = Some(now);
        }
        due
    }

    /// Takes a policy reading; returns whether recording is allowed. Logs at every connect,
    /// and on a live connection whenever the reading changed.
    pub(crate) fn apply(
        &mut self,
        read: &PolicyRead,
        settings: &Settings,
        event: Event,
        now: Instant,
    ) -> bool {
        let changed = self.observed != Some(read.observed);
        self.observed = Some(read.observed);
        self.read_at = Some(now);
        if read.room == Some(true) && self.degraded == Some(NotReadyCause::OutOfMemory) {
            self.degraded = None;
            tracing::info!(target: "mrtr", prefix = %settings.prefix,
                "replay store: Redis has memory again; resumes are recorded again");
        }
        if event == Event::Connect || changed {
            log_policy(read, settings, event);
        }
        self.publish(settings);
        self.refusal(settings.allow_evicting_policy).is_none()
    }

    /// Judges what Redis answered to the `SET` (and `WAIT`).
    pub(crate) fn outcome(
        &mut self,
        recorded: Recorded,
        settings: &Settings,
    ) -> Result<(), ReplayError> {
        self.connected(settings);
        if self.degraded == Some(NotReadyCause::OutOfMemory) {
            self.degraded = None;
            tracing::info!(target: "mrtr", prefix = %settings.prefix,
                "replay store: Redis accepts writes again");
        }
        if let (Some(wait), Some(acked)) = (settings.wait, recorded.acked)
            && !self.replicas(acked, wait, settings)
            && recorded.new
        {
            // The SET landed but may not survive a failover: fail closed. The token is
            // spent (a retry finds the entry), which is the price of not accepting it twice.
            self.error("replicas_unacknowledged");
            return Err(ReplayError::Unavailable);
        }
        if recorded.new {
            Ok(())
        } else {
            Err(ReplayError::Replayed)
        }
    }

    /// Takes a `WAIT` answer; returns whether enough replicas acknowledged.
    pub(crate) fn replicas(&mut self, acked: i64, wait: Wait, settings: &Settings) -> bool {
        let enough = acked >= i64::from(wait.replicas);
        let flagged = self.degraded == Some(NotReadyCause::ReplicasUnacknowledged);
        if !enough && !flagged {
            self.degraded = Some(NotReadyCause::ReplicasUnacknowledged);
            tracing::warn!(target: "mrtr", prefix = %settings.prefix, acked,
                wanted = wait.replicas, timeout_ms = super::millis(wait.timeout),
                "replay store: too few Redis replicas acknowledged a recorded token within the \
                 WAIT timeout; refusing resumes (fail closed) until they catch up");
        } else if enough && flagged {
            self.degraded = None;
            tracing::info!(target: "mrtr", prefix = %settings.prefix, acked,
                "replay store: Redis replicas acknowledge writes again");
        }
        self.publish(settings);
        enough
    }

    /// Redis refused a write with `OOM`.
    pub(crate) fn out_of_memory(&mut self, settings: &Settings) {
        self.error("out_of_memory");
        self.connected(settings);
        if self.degraded != Some(NotReadyCause::OutOfMemory) {
            self.degraded = Some(NotReadyCause::OutOfMemory);
            tracing::error!(target: "mrtr", prefix = %settings.prefix,
                "replay store: Redis refuses writes (OOM: maxmemory reached under noeviction); \
                 every resume is refused until entries expire or maxmemory is raised");
        }
    }
}

const FIX: &str = "fix: CONFIG SET maxmemory-policy noeviction (and persist it in redis.conf), \
                   or set maxmemory-policy to noeviction in the managed service's parameter group";

fn log_policy(read: &PolicyRead, settings: &Settings, event: Event) {
    let prefix = settings.prefix.as_str();
    let policy = read.name.as_str();
    // On a cluster, the primary whose reading decided (the worst one).
    let node = read.node.as_deref();
    let allow = settings.allow_evicting_policy;
    match (read.observed, allow) {
        (Observed::NoEviction, false) => match event {
            Event::Connect => tracing::info!(target: "mrtr", prefix, node, policy,
                "replay store: connected to Redis (maxmemory-policy noeviction)"),
            Event::Recheck => tracing::info!(target: "mrtr", prefix, node, policy,
                "replay store: Redis maxmemory-policy is noeviction again; resumes are recorded again"),
        },
        (Observed::NoEviction, true) => tracing::warn!(target: "mrtr", prefix, node, policy,
            "replay store: connected to Redis (maxmemory-policy noeviction), but \
             allow_evicting_policy is set: should the policy ever allow eviction, spent tokens \
             could be accepted again without any refusal; remove the override"),
        (Observed::Evicting(_), false) => tracing::error!(target: "mrtr", prefix, node, policy,
            "replay store: Redis maxmemory-policy is {policy}: under memory pressure Redis may \
             evict live replay entries, and a spent token would then be accepted again. Every \
             resume is refused until maxmemory-policy is noeviction; {FIX}"),
        (Observed::Evicting(_), true) => tracing::warn!(target: "mrtr", prefix, node, policy,
            "replay store: Redis maxmemory-policy is {policy}, which can evict live replay \
             entries so that spent tokens are accepted again; recording anyway because \
             allow_evicting_policy is set. Single use is NOT guaranteed; {FIX}"),
        (Observed::Unreadable, false) => tracing::error!(target: "mrtr", prefix, node,
            "replay store: cannot read Redis maxmemory-policy (INFO memory and CONFIG GET both \
             refused), so eviction cannot be ruled out; every resume is refused. Allow INFO for \
             this Redis user (ACL +info), and make sure maxmemory-policy is noeviction"),
        (Observed::Unreadable, true) => tracing::warn!(target: "mrtr", prefix, node,
            "replay store: cannot read Redis maxmemory-policy; recording anyway because \
             allow_evicting_policy is set. Single use is NOT guaranteed if Redis can evict; {FIX}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_policy_and_the_room_from_info() {
        let text = "# Memory\r\nused_memory:1000\r\nused_memory_human:1000B\r\nmaxmemory:4000\r\n\
                    maxmemory_human:3.91K\r\nmaxmemory_policy:allkeys-lru\r\n";
        let read = PolicyRead::from_info(text);
        assert_eq!(
            read.observed,
            Observed::Evicting(EvictionPolicy::AllkeysLru)
        );
        assert_eq!(read.name, "allkeys-lru");
        assert_eq!(read.room, Some(true));
        let full = PolicyRead::from_info(
            "used_memory:5000\nmaxmemory:4000\nmaxmemory_policy:noeviction\n",
        );
        assert_eq!(full.observed, Observed::NoEviction);
        assert_eq!(full.room, Some(false));
        let unlimited =
            PolicyRead::from_info("used_memory:5000\nmaxmemory:0\nmaxmemory_policy:noeviction");
        assert_eq!(unlimited.room, Some(true));
        // `maxmemory_policy` must not be taken for `maxmemory`, nor the reverse.
        assert_eq!(
            PolicyRead::from_info("maxmemory:0\n").observed,
            Observed::Unreadable
        );
    }

    #[cfg(feature = "redis-cluster")]
    #[test]
    fn the_worst_primary_decides_for_a_cluster() {
        let ok =
            || PolicyRead::from_info("used_memory:1\nmaxmemory:0\nmaxmemory_policy:noeviction");
        assert_eq!(
            PolicyRead::worst(vec![ok(), ok()]).observed,
            Observed::NoEviction
        );
        let lru = PolicyRead::from_info("maxmemory_policy:allkeys-lru");
        let mixed = PolicyRead::worst(vec![ok(), lru, ok()]);
        assert_eq!(
            mixed.observed,
            Observed::Evicting(EvictionPolicy::AllkeysLru)
        );
        assert_eq!(mixed.room, None);
        let full = PolicyRead::from_info("used_memory:9\nmaxmemory:4\nmaxmemory_policy:noeviction");
        let some_full = PolicyRead::worst(vec![ok(), full]);
        assert_eq!(some_full.observed, Observed::NoEviction);
        assert_eq!(some_full.room, Some(false));
        assert_eq!(PolicyRead::worst(Vec::new()).observed, Observed::Unreadable);
        let unreadable = PolicyRead::worst(vec![ok(), PolicyRead::unreadable()]);
        assert_eq!(unreadable.observed, Observed::Unreadable);
    }

    #[test]
    fn reads_the_policy_from_config_get_and_cleans_names_for_logs() {
        let read = PolicyRead::from_config(&["maxmemory-policy".into(), "noeviction".into()]);
        assert_eq!(read.observed, Observed::NoEviction);
        assert_eq!(PolicyRead::from_config(&[]).observed, Observed::Unreadable);
        let odd = PolicyRead::from_info("maxmemory_policy:x\u{1b}[31m\"=evil\n");
        assert_eq!(
            odd.observed,
            Observed::Evicting(EvictionPolicy::Unrecognized)
        );
        assert_eq!(odd.name, "x31mevil");
    }
}
