//! The deployments behind one cache: one Redis, a Redis Cluster (feature `redis-cluster`), or
//! a primary found through Redis Sentinel (feature `redis-sentinel`). Each gives a connection
//! that reads the eviction policy and records an id; the cache's state machine (back-off,
//! single flight, readiness) is the same for all three.

use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, Client, RedisResult};

#[cfg(feature = "redis-cluster")]
use super::RedisConfigError;
use super::health::{self, PolicyRead, Recorded};
use super::{Settings, Wait, set_and_wait};

/// What a cache connects to. Holds URLs and credentials: never logged. One per cache, built
/// once, so the sizes of the variants (which vary with the TLS feature) do not matter.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Target {
    /// One Redis.
    Single(Client),
    /// A Redis Cluster, reached through its seed nodes.
    #[cfg(feature = "redis-cluster")]
    Cluster(redis::cluster::ClusterClient),
    /// The primary that the sentinels name; asked again at every connect.
    #[cfg(feature = "redis-sentinel")]
    Sentinel(tokio::sync::Mutex<redis::sentinel::SentinelClient>),
}

/// The cluster client for `nodes`, with the cache's timeouts.
#[cfg(feature = "redis-cluster")]
pub(crate) fn cluster(nodes: &[String], s: &Settings) -> Result<Target, RedisConfigError> {
    redis::cluster::ClusterClient::builder(nodes.iter().map(String::as_str))
        .connection_timeout(s.connect_timeout)
        .response_timeout(s.call_timeout())
        .build()
        .map(Target::Cluster)
        .map_err(|_| RedisConfigError::BadUrl)
}

/// The Sentinel client for the primary named `primary`, logging in to it with `auth`.
#[cfg(feature = "redis-sentinel")]
pub(crate) fn sentinel(
    sentinels: &[String],
    primary: &str,
    auth: Option<&(Option<String>, zeroize::Zeroizing<String>)>,
) -> Result<Target, super::RedisConfigError> {
    use redis::sentinel::{SentinelClient, SentinelNodeConnectionInfo, SentinelServerType};

    let mut node = SentinelNodeConnectionInfo::default();
    if let Some((user, password)) = auth {
        let mut info = redis::RedisConnectionInfo::default().set_password(password.as_str());
        if let Some(user) = user {
            info = info.set_username(user);
        }
        node = node.set_redis_connection_info(info);
    }
    #[cfg(feature = "redis-tls")]
    if sentinels.iter().any(|url| super::tls::is_tls_url(url)) {
        node = node.set_tls_mode(redis::TlsMode::Secure);
    }
    let urls: Vec<&str> = sentinels.iter().map(String::as_str).collect();
    // The service name is a `String` without TLS and an `impl AsRef<str>` with it.
    let name: String = primary.to_owned();
    SentinelClient::build(urls, name, Some(node), SentinelServerType::Master)
        .map(|c| Target::Sentinel(tokio::sync::Mutex::new(c)))
        .map_err(|_| super::RedisConfigError::BadUrl)
}

impl Target {
    /// Opens a connection (unbounded here: the caller times it out).
    pub(crate) async fn connect(&self, s: &Settings) -> RedisResult<Conn> {
        let config = AsyncConnectionConfig::new()
            .set_connection_timeout(Some(s.connect_timeout))
            .set_response_timeout(Some(s.call_timeout()));
        match self {
            Self::Single(client) => client
                .get_multiplexed_async_connection_with_config(&config)
                .await
                .map(Conn::Plain),
            #[cfg(feature = "redis-cluster")]
            Self::Cluster(client) => {
                let config = redis::cluster::ClusterConfig::new()
                    .set_connection_timeout(s.connect_timeout)
                    .set_response_timeout(s.call_timeout());
                client
                    .get_async_connection_with_config(config)
                    .await
                    .map(Conn::Cluster)
            }
            #[cfg(feature = "redis-sentinel")]
            Self::Sentinel(sentinel) => {
                // Asks the sentinels for the current primary (and checks its ROLE): after a
                // failover, the next connect reaches the promoted replica.
                let client = sentinel.lock().await.async_get_client().await?;
                client
                    .get_multiplexed_async_connection_with_config(&config)
                    .await
                    .map(Conn::Plain)
            }
        }
    }
}

/// A live connection: one multiplexed connection, or a cluster connection (one multiplexed
/// connection per node, routed by slot).
#[derive(Clone)]
pub(crate) enum Conn {
    Plain(MultiplexedConnection),
    #[cfg(feature = "redis-cluster")]
    Cluster(redis::cluster_async::ClusterConnection),
}

impl Conn {
    /// Reads the eviction policy; on a cluster, of every primary, and the worst one counts.
    pub(crate) async fn read_policy(&mut self) -> RedisResult<PolicyRead> {
        match self {
            Self::Plain(conn) => read_policy(conn).await,
            #[cfg(feature = "redis-cluster")]
            Self::Cluster(conn) => cluster::read_policy(conn).await,
        }
    }

    /// Records `key` with `set` (`SET key 1 NX PX ttl`), and with `wait`, `WAIT`s for the
    /// replicas of the node that took it.
    pub(crate) async fn record(
        &mut self,
        key: &str,
        set: redis::Cmd,
        wait: Option<Wait>,
    ) -> RedisResult<Recorded> {
        match self {
            Self::Plain(conn) => {
                let _ = key;
                record(conn, set, wait).await
            }
            #[cfg(feature = "redis-cluster")]
            Self::Cluster(conn) => cluster::record(conn, key, set, wait).await,
        }
    }

    /// How many replicas acknowledge (`WAIT`); on a cluster, the fewest of any primary.
    pub(crate) async fn replicas(&mut self, wait: Wait) -> RedisResult<i64> {
        match self {
            Self::Plain(conn) => health::wait_cmd(wait).query_async(conn).await,
            // WAIT is routed to every primary, and the smallest answer kept.
            #[cfg(feature = "redis-cluster")]
            Self::Cluster(conn) => health::wait_cmd(wait).query_async(conn).await,
        }
    }
}

/// Reads the eviction policy: `INFO memory`, or `CONFIG GET` if `INFO` is refused.
async fn read_policy(conn: &mut MultiplexedConnection) -> RedisResult<PolicyRead> {
    match health::info_cmd().query_async::<String>(conn).await {
        Ok(text) => Ok(PolicyRead::from_info(&text)),
        Err(e) if health::is_error_reply(&e) => {
            match health::config_cmd().query_async::<Vec<String>>(conn).await {
                Ok(reply) => Ok(PolicyRead::from_config(&reply)),
                Err(e) if health::is_error_reply(&e) => Ok(PolicyRead::unreadable()),
                Err(e) => Err(e),
            }
        }
        Err(e) => Err(e),
    }
}

/// `SET`, and with `wait`, `WAIT` in the same round trip.
async fn record(
    conn: &mut MultiplexedConnection,
    set: redis::Cmd,
    wait: Option<Wait>,
) -> RedisResult<Recorded> {
    match wait {
        None => {
            let reply: Option<String> = set.query_async(conn).await?;
            Ok(Recorded {
                new: reply.is_some(),
                acked: None,
            })
        }
        Some(wait) => {
            let (reply, acked): (RedisResult<Option<String>>, RedisResult<i64>) =
                set_and_wait(set, wait).query_async(conn).await?;
            Ok(Recorded {
                new: reply?.is_some(),
                acked: Some(acked?),
            })
        }
    }
}

#[cfg(feature = "redis-cluster")]
mod cluster {
    use redis::cluster_async::ClusterConnection;
    use redis::cluster_routing::{
        MultipleNodeRoutingInfo, Route, RoutingInfo, SingleNodeRoutingInfo, Slot, SlotAddr,
    };
    use redis::{RedisResult, Value};

    use super::super::Wait;
    use super::super::health::{self, PolicyRead, Recorded};

    fn all_primaries() -> RoutingInfo {
        RoutingInfo::MultiNode((MultipleNodeRoutingInfo::AllMasters, None))
    }

    /// The per-node answers of a command sent to every primary: the node's address, and its
    /// answer (`None`: that node answered with an error reply).
    fn per_node(reply: Value) -> Vec<(String, Option<Value>)> {
        match reply {
            Value::Map(pairs) => pairs
                .into_iter()
                .map(|(node, v)| {
                    let node = redis::from_redis_value::<String>(node).unwrap_or_default();
                    match v {
                        Value::ServerError(_) => (node, None),
                        v => (node, Some(v)),
                    }
                })
                .collect(),
            _ => Vec::new(),
        }
    }

    /// `INFO memory` on every primary (`CONFIG GET` on all of them when one refuses `INFO`);
    /// the worst reading counts (and names its node in the log), and no primary at all is
    /// unreadable.
    pub(super) async fn read_policy(conn: &mut ClusterConnection) -> RedisResult<PolicyRead> {
        let infos = per_node(
            conn.route_command(health::info_cmd(), all_primaries())
                .await?,
        );
        let mut reads = Vec::with_capacity(infos.len());
        let mut refused = false;
        for (node, info) in infos {
            match info.map(redis::from_redis_value::<String>) {
                Some(Ok(text)) => reads.push(PolicyRead::from_info(&text).at(&node)),
                Some(Err(_)) => reads.push(PolicyRead::unreadable().at(&node)),
                None => refused = true,
            }
        }
        if refused {
            reads.clear();
            let configs = per_node(
                conn.route_command(health::config_cmd(), all_primaries())
                    .await?,
            );
            for (node, config) in configs {
                let read = match config.map(redis::from_redis_value::<Vec<String>>) {
                    Some(Ok(reply)) => PolicyRead::from_config(&reply),
                    _ => PolicyRead::unreadable(),
                };
                reads.push(read.at(&node));
            }
        }
        Ok(PolicyRead::worst(reads))
    }

    /// `SET` routed by its key's slot (the cluster client follows `MOVED` and `ASK`), then
    /// with `wait`, `WAIT` on the primary that owns the slot, over the connection the `SET`
    /// used.
    pub(super) async fn record(
        conn: &mut ClusterConnection,
        key: &str,
        set: redis::Cmd,
        wait: Option<Wait>,
    ) -> RedisResult<Recorded> {
        let reply: Option<String> = set.query_async(conn).await?;
        let acked = match wait {
            None => None,
            Some(wait) => {
                let owner = RoutingInfo::SingleNode(SingleNodeRoutingInfo::SpecificNode(
                    Route::with_slot(Slot::for_key(key), SlotAddr::Master),
                ));
                let answer = conn.route_command(health::wait_cmd(wait), owner).await?;
                Some(redis::from_redis_value::<i64>(answer)?)
            }
        };
        Ok(Recorded {
            new: reply.is_some(),
            acked,
        })
    }
}
