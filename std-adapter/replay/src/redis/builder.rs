//! [`RedisReplayCacheBuilder`]: one Redis, a Redis Cluster, or a primary found through Redis
//! Sentinel, and the settings they share.

use std::sync::Mutex;
use std::time::Duration;

#[cfg(feature = "redis-sentinel")]
use zeroize::Zeroizing;

use super::health::Status;
use super::topology::Target;
use super::{
    ConnState, DEFAULT_COMMAND_TIMEOUT, DEFAULT_CONNECT_TIMEOUT, DEFAULT_MIN_ENTRY_LIFETIME,
    DEFAULT_POLICY_RECHECK, DEFAULT_PREFIX, DEFAULT_RECONNECT_BACKOFF, RedisConfigError,
    RedisReplayCache, Settings, Wait, millis, tls,
};
#[cfg(doc)]
use mrtr_core::replay::ReplayError;

/// Which Redis deployment a cache talks to. Never logged (URLs may hold passwords).
pub(crate) enum Nodes {
    /// One Redis (possibly a replicated primary with a fixed address).
    Single(String),
    /// Seed nodes of a Redis Cluster.
    #[cfg(feature = "redis-cluster")]
    Cluster(Vec<String>),
    /// Sentinels, the monitored primary's name, and the primary's credentials.
    #[cfg(feature = "redis-sentinel")]
    Sentinel {
        sentinels: Vec<String>,
        primary: String,
        auth: Option<(Option<String>, Zeroizing<String>)>,
    },
}

/// Configures a [`RedisReplayCache`]; see [`RedisReplayCache::builder`].
#[must_use]
pub struct RedisReplayCacheBuilder {
    nodes: Nodes,
    settings: Settings,
    tls: tls::TlsMaterial,
}

impl RedisReplayCacheBuilder {
    /// Key prefix (default [`DEFAULT_PREFIX`]); lets several servers share one Redis.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.settings.prefix = prefix.into();
        self
    }

    /// Trusts these PEM certificates (one or more: a managed service's CA bundle, a private
    /// CA) for a `rediss://` URL instead of the system's roots. Feature `redis-tls`; see
    /// [`tls`].
    #[cfg(feature = "redis-tls")]
    pub fn tls_root_certificates(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.tls.roots = Some(pem.into());
        self
    }

    /// Presents a client certificate to a `rediss://` server that asks for one (mutual TLS):
    /// `cert_pem` the certificate chain, `key_pem` its private key (PKCS#8, PKCS#1 or SEC1
    /// PEM; the cache's copy is zeroized when dropped). Feature `redis-tls`.
    #[cfg(feature = "redis-tls")]
    pub fn tls_client_certificate(
        mut self,
        cert_pem: impl Into<Vec<u8>>,
        key_pem: impl Into<Vec<u8>>,
    ) -> Self {
        self.tls.client = Some((cert_pem.into(), zeroize::Zeroizing::new(key_pem.into())));
        self
    }

    /// Timeout for opening a connection (default [`DEFAULT_CONNECT_TIMEOUT`]).
    pub fn connect_timeout(mut self, t: Duration) -> Self {
        self.settings.connect_timeout = t;
        self
    }

    /// Timeout for one `SET` (default [`DEFAULT_COMMAND_TIMEOUT`]).
    pub fn command_timeout(mut self, t: Duration) -> Self {
        self.settings.command_timeout = t;
        self
    }

    /// How long calls fail fast after a failed connection attempt (default
    /// [`DEFAULT_RECONNECT_BACKOFF`]; zero retries on every call). Also how often a refused
    /// eviction policy is read again.
    pub fn reconnect_backoff(mut self, t: Duration) -> Self {
        self.settings.reconnect_backoff = t;
        self
    }

    /// Extra lifetime for each entry beyond its token's expiry (default zero).
    ///
    /// An entry lives until the token expires *by the recording node's clock*. A node whose
    /// clock lags by δ still takes the token as unexpired for δ after Redis dropped the entry,
    /// and would accept it once more. Set this to the largest clock skew between your nodes
    /// (for example 5 s) to close that window, at the cost of keeping entries that long.
    pub fn skew_margin(mut self, margin: Duration) -> Self {
        self.settings.skew_margin_ms = millis(margin);
        self
    }

    /// The shortest time an entry lives, whatever the token's expiry says (default
    /// [`DEFAULT_MIN_ENTRY_LIFETIME`], mrtr's default TTL). Set it to your token TTL.
    ///
    /// An entry normally lives `expires_at − now` by the recording node's clock. If that clock
    /// has jumped ahead, the difference is small (or negative), Redis drops the entry at once,
    /// and once the clock is corrected (or on a node with a correct clock) the spent token is
    /// live again and would be accepted. A token's remaining life never exceeds the TTL it was
    /// sealed with, so keeping every entry at least one TTL closes that hole, for at most one
    /// TTL of extra memory per entry.
    pub fn min_entry_lifetime(mut self, at_least: Duration) -> Self {
        self.settings.min_entry_ms = millis(at_least);
        self
    }

    /// How often the eviction policy is read again on a live connection (default
    /// [`DEFAULT_POLICY_RECHECK`]). The reading happens before one resume's `SET`, within its
    /// command timeout; zero reads it before every `SET`.
    pub fn policy_recheck_interval(mut self, every: Duration) -> Self {
        self.settings.policy_recheck = every;
        self
    }

    /// **Unsafe**: records even when Redis's `maxmemory-policy` can evict keys (or cannot be
    /// read). Under memory pressure, which an attacker can create by resuming many tokens of
    /// their own, Redis then drops live entries and spent tokens are accepted again. Logs a
    /// warning at every connect. Default off: such a Redis is refused.
    pub fn allow_evicting_policy(mut self, allow: bool) -> Self {
        self.settings.allow_evicting_policy = allow;
        self
    }

    /// After each `SET`, waits until `replicas` replicas acknowledged it (`WAIT replicas
    /// timeout`, in the same round trip), and refuses the resume ([`ReplayError::Unavailable`])
    /// when fewer did within `timeout`. Then the id *is* recorded on the primary, so the token
    /// is spent: fail closed (see the [module docs](super)). `replicas == 0` turns it off (the
    /// default). A resume may then take up to the command timeout plus `timeout`.
    pub fn wait_for_replicas(mut self, replicas: u32, timeout: Duration) -> Self {
        self.settings.wait = (replicas > 0).then_some(Wait { replicas, timeout });
        self
    }

    /// Logs in to the primary found through the sentinels with this password (and ACL user
    /// name, if any); the sentinel URLs carry the sentinels' own credentials. Does nothing for
    /// the other builders. Feature `redis-sentinel`.
    #[cfg(feature = "redis-sentinel")]
    pub fn sentinel_primary_auth(mut self, username: Option<&str>, password: &str) -> Self {
        if let Nodes::Sentinel { auth, .. } = &mut self.nodes {
            *auth = Some((
                username.map(str::to_owned),
                Zeroizing::new(password.to_owned()),
            ));
        }
        self
    }

    fn validate(&self) -> Result<Target, RedisConfigError> {
        let s = &self.settings;
        if s.prefix.len() > 256 {
            return Err(RedisConfigError::PrefixTooLong);
        }
        if s.connect_timeout.is_zero()
            || s.command_timeout.is_zero()
            || s.wait.is_some_and(|w| w.timeout.is_zero())
        {
            return Err(RedisConfigError::ZeroTimeout);
        }
        match &self.nodes {
            Nodes::Single(url) => tls::client(url, &self.tls).map(Target::Single),
            #[cfg(feature = "redis-cluster")]
            Nodes::Cluster(nodes) => {
                self.plain_tls_only(nodes)?;
                super::topology::cluster(nodes, s)
            }
            #[cfg(feature = "redis-sentinel")]
            Nodes::Sentinel {
                sentinels,
                primary,
                auth,
            } => {
                self.plain_tls_only(sentinels)?;
                super::topology::sentinel(sentinels, primary, auth.as_ref())
            }
        }
    }

    /// Checks each URL as [`tls::client`] does; certificates given with the builder are for
    /// a single Redis only.
    #[cfg(any(feature = "redis-cluster", feature = "redis-sentinel"))]
    fn plain_tls_only(&self, urls: &[String]) -> Result<(), RedisConfigError> {
        if urls.is_empty() {
            return Err(RedisConfigError::NoNodes);
        }
        if self.tls.is_set() {
            return Err(RedisConfigError::Unsupported(
                "TLS certificates given with the builder (use rediss:// URLs and the system's roots)",
            ));
        }
        for url in urls {
            tls::client(url, &self.tls)?;
        }
        Ok(())
    }

    /// The blocking variant, a synchronous [`mrtr_core::replay::ReplayCache`] for servers
    /// without an async runtime (never call it from an async task). Same configuration; one
    /// Redis only ([`RedisConfigError::Unsupported`] for a cluster or Sentinel).
    pub fn build_blocking(self) -> Result<super::BlockingRedisReplayCache, RedisConfigError> {
        match self.validate()? {
            Target::Single(client) => {
                Ok(super::BlockingRedisReplayCache::new(client, self.settings))
            }
            #[allow(unreachable_patterns)]
            _ => Err(RedisConfigError::Unsupported(
                "the blocking cache with Redis Cluster or Sentinel",
            )),
        }
    }

    /// Validates the configuration. Does not connect: the first resume or
    /// [`RedisReplayCache::probe`] does.
    pub fn build(self) -> Result<RedisReplayCache, RedisConfigError> {
        let target = self.validate()?;
        Ok(RedisReplayCache {
            target,
            settings: self.settings,
            state: Mutex::new(ConnState {
                status: Status::for_store("redis"),
                ..ConnState::default()
            }),
            connecting: tokio::sync::Mutex::new(()),
        })
    }
}

impl RedisReplayCache {
    /// Starts a configuration for the Redis at `url` (`redis://[:password@]host:port/db`).
    pub fn builder(url: impl Into<String>) -> RedisReplayCacheBuilder {
        Self::builder_for(Nodes::Single(url.into()))
    }

    /// Starts a configuration for a Redis Cluster (cluster mode enabled, as managed services
    /// offer it), given the URLs of one or more of its nodes (`redis://host:port`, or
    /// `rediss://` with TLS): the rest of the cluster is discovered from them. Each id's `SET`
    /// goes to the primary of its key's slot (following `MOVED` and `ASK` redirections during
    /// a resharding); the eviction policy is read on every primary. Feature `redis-cluster`;
    /// see the [module docs](super#redis-cluster).
    #[cfg(feature = "redis-cluster")]
    pub fn cluster_builder<I, S>(nodes: I) -> RedisReplayCacheBuilder
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self::builder_for(Nodes::Cluster(nodes.into_iter().map(Into::into).collect()))
    }

    /// Starts a configuration for the primary that Redis Sentinel names `primary_name` (the
    /// `sentinel monitor` name), given the URLs of the sentinels (`redis://host:26379`). The
    /// cache asks the sentinels for the primary at every connect, so after a failover it
    /// reconnects to the promoted replica. Feature `redis-sentinel`; see the
    /// [module docs](super#redis-sentinel).
    #[cfg(feature = "redis-sentinel")]
    pub fn sentinel_builder<I, S>(
        sentinels: I,
        primary_name: impl Into<String>,
    ) -> RedisReplayCacheBuilder
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self::builder_for(Nodes::Sentinel {
            sentinels: sentinels.into_iter().map(Into::into).collect(),
            primary: primary_name.into(),
            auth: None,
        })
    }

    fn builder_for(nodes: Nodes) -> RedisReplayCacheBuilder {
        RedisReplayCacheBuilder {
            nodes,
            tls: tls::TlsMaterial::default(),
            settings: Settings {
                prefix: DEFAULT_PREFIX.to_owned(),
                connect_timeout: DEFAULT_CONNECT_TIMEOUT,
                command_timeout: DEFAULT_COMMAND_TIMEOUT,
                reconnect_backoff: DEFAULT_RECONNECT_BACKOFF,
                skew_margin_ms: 0,
                min_entry_ms: millis(DEFAULT_MIN_ENTRY_LIFETIME),
                policy_recheck: DEFAULT_POLICY_RECHECK,
                allow_evicting_policy: false,
                wait: None,
            },
        }
    }

    /// A cache for `url` with the defaults.
    pub fn new(url: impl Into<String>) -> Result<Self, RedisConfigError> {
        Self::builder(url).build()
    }
}
