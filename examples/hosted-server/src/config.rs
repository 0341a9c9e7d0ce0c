//! Command-line configuration.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::{Parser, ValueEnum};
use mrtr_replay::MemoryReplayCache;
use mrtr_replay::redis::RedisReplayCache;
use mrtr_std::core::AcceptV1;
use mrtr_std::engine::{Audience, Backend, NonceSource};

/// Whether format-v1 tokens (sealed before an upgrade, without an audience) still open.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum V1Choice {
    /// For one token lifetime plus the clock skew after start (the default).
    Window,
    /// Always (an operator finishing a slow rollout).
    Always,
    /// Never.
    Never,
}

impl From<V1Choice> for AcceptV1 {
    fn from(c: V1Choice) -> Self {
        match c {
            V1Choice::Window => AcceptV1::ForStartupWindow,
            V1Choice::Always => AcceptV1::Always,
            V1Choice::Never => AcceptV1::Never,
        }
    }
}

/// Where the operations endpoints listen (`--ops-listen`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpsListen {
    /// Not at all: no metrics, no readiness causes.
    Off,
    /// On this address.
    At(SocketAddr),
}

impl std::str::FromStr for OpsListen {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        if s.eq_ignore_ascii_case("off") {
            return Ok(Self::Off);
        }
        s.parse()
            .map(Self::At)
            .map_err(|_| format!("expected HOST:PORT or off, got {s:?}"))
    }
}

/// Where token single use is recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ReplayChoice {
    /// In this process (the default).
    Memory,
    /// In Redis, shared by every node (needs --redis-url).
    Redis,
    /// Not recorded: tokens resume any number of times within their TTL.
    Off,
}

/// Hosted MCP server (protocol 2026-07-28; 2025-11-25 and 2025-06-18 in sessions) whose
/// requestState is sealed by mrtr.
///
/// Keys come from MRTR_KEYS ("current=k1; k1:BASE64; k0:BASE64") or the file MRTR_KEYS_FILE
/// names; with neither, an ephemeral random key is used (with a warning: tokens then do not
/// survive a restart or cross nodes).
#[derive(Debug, Parser)]
#[command(version)]
pub struct Config {
    /// Address to listen on (port 0: a free port).
    #[arg(long, default_value = "127.0.0.1:8808")]
    pub listen: SocketAddr,

    /// Write the bound address (HOST:PORT) to this file once listening.
    #[arg(long)]
    pub addr_file: Option<PathBuf>,

    /// Where the operations endpoints listen: `/metrics`, `/readyz` with its causes and
    /// `/healthz`, or `off`. Loopback by default; any other address requires
    /// `--admin-token`, which every operations request but `/healthz` must then present.
    /// The public listener serves only `/healthz` and the bare `/readyz` status.
    #[arg(long, env = "MRTR_OPS_LISTEN", default_value = "127.0.0.1:8809")]
    pub ops_listen: OpsListen,

    /// Write the operations listener's bound address (HOST:PORT) to this file.
    #[arg(long)]
    pub ops_addr_file: Option<PathBuf>,

    /// A `Host` the server answers besides the loopback ones (localhost, 127.0.0.1, ::1):
    /// the name (or `name:port`) clients and any proxy in front use. Repeatable. Requests
    /// naming any other host get 403 (rmcp's DNS-rebinding protection).
    #[arg(long = "allowed-host", value_name = "HOST")]
    pub allowed_hosts: Vec<String>,

    /// A browser `Origin` allowed to call the server (`https://app.example:443`, `:*` for any
    /// port). Repeatable; with none, `Origin` is not checked.
    #[arg(long = "allowed-origin", value_name = "ORIGIN")]
    pub allowed_origins: Vec<String>,

    /// Serve one client on stdin/stdout instead of HTTP (anonymous caller).
    #[arg(long)]
    pub stdio: bool,

    /// AEAD backend sealing requestState: aws-lc-aes-256-gcm-siv (the default: AES-256-GCM-SIV
    /// from aws-lc-rs), aes-256-gcm-siv (the same algorithm from RustCrypto, pure Rust; tokens
    /// are byte-identical, so the two interoperate), aes-256-gcm, chacha20-poly1305,
    /// xchacha20-poly1305, aws-lc-aes-256-gcm, aws-lc-chacha20-poly1305.
    #[arg(long, default_value = "aws-lc-aes-256-gcm-siv")]
    pub cipher: Backend,

    /// Where each seal draws its token id and nonce: os (one getrandom system call per seal)
    /// or fast (a per-thread, reseeding, fork-aware userspace generator; AES-256-GCM-SIV only,
    /// any other cipher is refused at startup). Default: fast with either AES-256-GCM-SIV
    /// cipher, os with every other.
    #[arg(long)]
    pub nonce_source: Option<NonceSource>,

    /// Token lifetime in ms.
    #[arg(long, default_value_t = mrtr_std::core::DEFAULT_TTL_MS)]
    pub ttl_ms: u64,

    /// The audience tokens are bound to: this service's identity. Services sharing key
    /// material but not an audience refuse each other's tokens.
    #[arg(
        long,
        default_value = "mrtr-hosted-server",
        conflicts_with = "no_audience"
    )]
    pub audience: String,

    /// Bind tokens to no audience (a deliberate choice; any service with the same keys and
    /// no audience accepts them).
    #[arg(long)]
    pub no_audience: bool,

    /// Longest lifetime (expires − issued) a token may claim, in ms; default: the TTL. Keep
    /// it at the old TTL for one old TTL after lowering --ttl-ms.
    #[arg(long)]
    pub max_lifetime_ms: Option<u64>,

    /// How far a token's issue time may lie in the future, in ms (clock skew between nodes).
    #[arg(long, default_value_t = mrtr_std::core::DEFAULT_MAX_CLOCK_SKEW_MS)]
    pub max_clock_skew_ms: u64,

    /// Whether format-v1 tokens still open during an upgrade.
    #[arg(long, value_enum, default_value_t = V1Choice::Window)]
    pub accept_v1: V1Choice,

    /// Handler invocations per resume chain (the call plus resumes).
    #[arg(long, default_value_t = mrtr_std::core::DEFAULT_MAX_ROUNDS)]
    pub max_rounds: u32,

    /// Replay cache; defaults to redis when --redis-url is set, else memory.
    #[arg(long, value_enum)]
    pub replay: Option<ReplayChoice>,

    /// Memory budget of the in-process replay cache, in MiB: it holds as many live token ids
    /// as fit (48 bytes each; 256 MiB: 5.59 million ids, 18,600 resumes a second at the
    /// 5-minute TTL). Full: resumes are refused (fail closed).
    #[arg(long, env = "MRTR_REPLAY_BUDGET_MIB", default_value_t = 256)]
    pub replay_budget_mib: usize,

    /// Most live token ids the in-process replay cache holds, instead of a budget (replaces
    /// --replay-budget-mib when given).
    #[arg(long, env = "MRTR_REPLAY_CAPACITY")]
    pub replay_capacity: Option<usize>,

    /// Redis URL for the shared replay cache, e.g. redis://127.0.0.1:6379/.
    #[arg(long, env = "MRTR_REDIS_URL", hide_env_values = true)]
    pub redis_url: Option<String>,

    /// PEM CA certificate(s) to verify a rediss:// (TLS) Redis with, instead of the system's
    /// roots (a managed service's CA bundle, a private CA).
    #[arg(long, value_name = "PEM_FILE")]
    pub redis_ca_file: Option<PathBuf>,

    /// PEM client certificate chain for a rediss:// Redis that asks for one (mutual TLS);
    /// needs --redis-client-key.
    #[arg(long, value_name = "PEM_FILE", requires = "redis_client_key")]
    pub redis_client_cert: Option<PathBuf>,

    /// PEM private key of --redis-client-cert.
    #[arg(long, value_name = "PEM_FILE", requires = "redis_client_cert")]
    pub redis_client_key: Option<PathBuf>,

    /// Key prefix in Redis; nodes that share tokens must share it.
    #[arg(long, default_value = "mrtr-hosted:replay:")]
    pub redis_prefix: String,

    /// Refuse a resume unless this many Redis replicas acknowledged its record (WAIT), so a
    /// failover cannot lose it; 0: off. An unacknowledged resume is refused and its token spent.
    #[arg(long, default_value_t = 0)]
    pub redis_wait_replicas: u32,

    /// How long to wait for those replicas, in ms.
    #[arg(long, default_value_t = 100)]
    pub redis_wait_timeout_ms: u64,

    /// How long opening a Redis connection may take, in ms (a distant or TLS-fronted managed
    /// Redis needs more than the default). Past it the store counts as unreachable.
    #[arg(long, default_value_t = duration_ms(mrtr_replay::redis::DEFAULT_CONNECT_TIMEOUT))]
    pub redis_connect_timeout_ms: u64,

    /// How long one Redis command may take, in ms. Past it the resume is refused (fail
    /// closed) and the connection is replaced.
    #[arg(long, default_value_t = duration_ms(mrtr_replay::redis::DEFAULT_COMMAND_TIMEOUT))]
    pub redis_command_timeout_ms: u64,

    /// UNSAFE: use a Redis whose maxmemory-policy can evict keys (refused by default). Under
    /// memory pressure spent tokens are then accepted again. Logs a warning at every connect.
    #[arg(long)]
    pub redis_unsafe_allow_evicting_policy: bool,

    /// Start even if the replay store cannot serve yet (unreachable Redis, an evicting
    /// policy): resumes are refused and /readyz answers 503 until it can. Default: refuse to
    /// start, naming the cause.
    #[arg(long)]
    pub start_degraded: bool,

    /// Bearer token map: lines of `TOKEN ISSUER SUBJECT`. Default: the built-in demo tokens.
    #[arg(long, env = "MRTR_TOKENS_FILE")]
    pub tokens: Option<PathBuf>,

    /// Refuse requests without a bearer token (default: they are anonymous).
    #[arg(long)]
    pub require_auth: bool,

    /// Subscription grant length in ms (the registry caps grants at one minute).
    #[arg(long, default_value_t = 60_000)]
    pub lease_ms: u64,

    /// Longest time a subscription check may take before it fails closed, in ms.
    #[arg(long, default_value_t = mrtr_std::core::lease::DEFAULT_CHECK_TIMEOUT_MS)]
    pub check_timeout_ms: u64,

    /// A 2025-era session with no traffic for this long is closed (its grants released), in
    /// ms. It bounds how long a session and its grants outlive a dropped GET stream.
    #[arg(long, default_value_t = 300_000)]
    pub session_idle_ms: u64,

    /// TEST ONLY (feature `testing`): enables POST /admin/test/faults (admin token required),
    /// which scripts timeouts and failures of the subscription authorizer.
    #[cfg(feature = "testing")]
    #[arg(long)]
    pub test_hooks: bool,

    /// Bearer token for POST /admin/revoke and /admin/restore ({"subject": ...}); off without.
    #[arg(long, env = "MRTR_ADMIN_TOKEN", hide_env_values = true)]
    pub admin_token: Option<String>,

    /// Name the precise rejection reason in error data (development only: an oracle).
    #[arg(long)]
    pub detailed_errors: bool,

    /// Quotas per caller and caps on sessions.
    #[command(flatten)]
    pub limits: crate::limits::LimitArgs,
}

impl Config {
    /// The audience chosen on the command line.
    pub fn audience(&self) -> Audience {
        if self.no_audience {
            Audience::None
        } else {
            Audience::Named(self.audience.clone())
        }
    }

    /// The nonce source: as given, else `fast` for AES-256-GCM-SIV (which tolerates a
    /// repeated nonce) and `os` for every other cipher.
    pub fn nonce_source(&self) -> NonceSource {
        self.nonce_source.unwrap_or(match self.cipher.algorithm() {
            mrtr_std::core::cipher::Algorithm::Aes256GcmSiv => NonceSource::Fast,
            _ => NonceSource::Os,
        })
    }

    /// How the example subscription policy runs.
    pub fn policy(&self) -> crate::listen::PolicyConfig {
        crate::listen::PolicyConfig {
            lease: Duration::from_millis(self.lease_ms),
            check_timeout: Duration::from_millis(self.check_timeout_ms),
            #[cfg(feature = "testing")]
            test_hooks: self.test_hooks,
        }
    }

    /// The replay cache to use.
    pub fn replay_choice(&self) -> ReplayChoice {
        self.replay.unwrap_or(if self.redis_url.is_some() {
            ReplayChoice::Redis
        } else {
            ReplayChoice::Memory
        })
    }

    /// The in-process replay cache: `--replay-capacity` ids if given, else as many as
    /// `--replay-budget-mib` holds.
    pub fn memory_replay_cache(&self) -> MemoryReplayCache {
        match self.replay_capacity {
            Some(capacity) => MemoryReplayCache::new(capacity),
            None => MemoryReplayCache::with_memory_budget(
                self.replay_budget_mib.saturating_mul(1 << 20),
            ),
        }
    }

    /// The Redis replay cache these options describe (connected and checked at startup by
    /// the engine's startup check).
    pub fn redis_replay_cache(&self, url: &str) -> anyhow::Result<RedisReplayCache> {
        let mut builder = RedisReplayCache::builder(url);
        if let Some(path) = &self.redis_ca_file {
            builder = builder.tls_root_certificates(read_pem("--redis-ca-file", path)?);
        }
        if let (Some(cert), Some(key)) = (&self.redis_client_cert, &self.redis_client_key) {
            builder = builder.tls_client_certificate(
                read_pem("--redis-client-cert", cert)?,
                read_pem("--redis-client-key", key)?,
            );
        }
        let cache = builder
            .prefix(self.redis_prefix.as_str())
            .connect_timeout(Duration::from_millis(self.redis_connect_timeout_ms))
            .command_timeout(Duration::from_millis(self.redis_command_timeout_ms))
            // An entry outlives a recording clock that jumped ahead: at least one TTL.
            .min_entry_lifetime(Duration::from_millis(self.ttl_ms))
            .wait_for_replicas(
                self.redis_wait_replicas,
                Duration::from_millis(self.redis_wait_timeout_ms),
            )
            .allow_evicting_policy(self.redis_unsafe_allow_evicting_policy)
            .build()
            .context("Redis replay cache")?;
        Ok(cache)
    }
}

/// A PEM file named by `flag`; the error names the flag and the path, never the contents.
fn read_pem(flag: &str, path: &std::path::Path) -> anyhow::Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("{flag} {}: cannot read the file", path.display()))
}

/// A default duration as the whole milliseconds a flag takes.
const fn duration_ms(d: Duration) -> u64 {
    d.as_millis() as u64
}

#[cfg(test)]
mod tests {
    use mrtr_replay::AnyReplayCache;
    use mrtr_std::engine::{Engine, EngineConfig, EngineConfigError};
    use mrtr_std::keys::KeyConfig;

    use super::*;

    fn parse(args: &[&str]) -> Config {
        Config::try_parse_from(std::iter::once("mrtr-hosted-server").chain(args.iter().copied()))
            .unwrap()
    }

    #[test]
    fn the_nonce_source_follows_the_cipher_unless_given() {
        let default = parse(&[]);
        assert_eq!(default.cipher, Backend::AwsLcAes256GcmSiv);
        assert_eq!(default.nonce_source(), NonceSource::Fast);
        let rustcrypto = parse(&["--cipher", "aes-256-gcm-siv"]);
        assert_eq!(rustcrypto.nonce_source(), NonceSource::Fast);
        for cipher in ["aes-256-gcm", "chacha20-poly1305", "aws-lc-aes-256-gcm"] {
            assert_eq!(parse(&["--cipher", cipher]).nonce_source(), NonceSource::Os);
        }
        let os = parse(&["--nonce-source", "os"]);
        assert_eq!(
            (os.cipher, os.nonce_source()),
            (Backend::AwsLcAes256GcmSiv, NonceSource::Os)
        );
        assert!(
            Config::try_parse_from(["mrtr-hosted-server", "--nonce-source", "rdrand"]).is_err()
        );
    }

    #[test]
    fn redis_timeouts_default_to_the_library_and_zero_is_refused() {
        let default = parse(&[]);
        assert_eq!(
            (
                default.redis_connect_timeout_ms,
                default.redis_command_timeout_ms
            ),
            (250, 100)
        );
        let url = "redis://127.0.0.1:1/";
        let slow = parse(&[
            "--redis-connect-timeout-ms",
            "5000",
            "--redis-command-timeout-ms",
            "2000",
        ]);
        assert!(slow.redis_replay_cache(url).is_ok());
        for flag in ["--redis-connect-timeout-ms", "--redis-command-timeout-ms"] {
            let err = parse(&[flag, "0"]).redis_replay_cache(url).unwrap_err();
            assert!(format!("{err:#}").contains("timeout"), "{flag}: {err:#}");
        }
    }

    #[test]
    fn redis_tls_files_are_checked_at_startup_and_never_echoed() {
        let dir = std::env::temp_dir().join(format!("mrtr-hosted-tls-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let garbage = dir.join("garbage.pem");
        std::fs::write(&garbage, "SECRET-CANARY, not a certificate").unwrap();
        let missing = dir.join("missing.pem");
        let url = "rediss://127.0.0.1:1/";
        let err = parse(&["--redis-ca-file", missing.to_str().unwrap()])
            .redis_replay_cache(url)
            .unwrap_err();
        let text = format!("{err:#}");
        assert!(
            text.contains("--redis-ca-file") && text.contains("missing.pem"),
            "{text}"
        );
        let err = parse(&["--redis-ca-file", garbage.to_str().unwrap()])
            .redis_replay_cache(url)
            .unwrap_err();
        let text = format!("{err:#}");
        assert!(text.contains("does not parse"), "{text}");
        assert!(!text.contains("SECRET-CANARY"), "{text}");
        // A client certificate needs its key (and the key its certificate).
        for flag in ["--redis-client-cert", "--redis-client-key"] {
            let args = ["mrtr-hosted-server", flag, garbage.to_str().unwrap()];
            assert!(Config::try_parse_from(args).is_err(), "{flag} alone");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_replay_cache_is_sized_by_budget_unless_a_capacity_is_given() {
        let default = parse(&[]).memory_replay_cache();
        // 256 MiB: at least 10,000 resumes a second for a 5-minute TTL.
        assert!(default.capacity() >= 3_000_000, "{default:?}");
        let small = parse(&["--replay-budget-mib", "1"]).memory_replay_cache();
        assert_eq!(
            small.capacity(),
            MemoryReplayCache::capacity_for_budget(1 << 20)
        );
        let fixed = parse(&["--replay-budget-mib", "1", "--replay-capacity", "4"]);
        assert_eq!(fixed.memory_replay_cache().capacity(), 4);
        let limits = parse(&["--quota-resumes", "off", "--max-sessions-per-caller", "3"]).limits;
        assert!(
            limits
                .quotas()
                .is_some_and(|q| q.resumes.is_none() && q.pauses.is_some())
        );
        assert_eq!(limits.sessions().per_caller, Some(3));
        assert!(Config::try_parse_from(["mrtr-hosted-server", "--quota-pauses", "0/1"]).is_err());
    }

    #[test]
    fn fast_with_another_cipher_is_refused_at_startup() {
        let config = parse(&["--cipher", "aes-256-gcm", "--nonce-source", "fast"]);
        let limits = EngineConfig {
            nonce_source: config.nonce_source(),
            ..EngineConfig::for_audience("t")
        };
        let keys = KeyConfig::ephemeral().unwrap();
        let err = Engine::new(config.cipher, keys, limits, AnyReplayCache::Off).unwrap_err();
        assert!(
            matches!(err, EngineConfigError::NonceSourceUnsafe { .. }),
            "{err:?}"
        );
        assert!(err.to_string().contains("aes-256-gcm"), "{err}");
    }
}
