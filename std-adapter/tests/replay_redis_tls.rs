//! The Redis replay cache over TLS (`rediss://`, feature `redis-tls`) against a real
//! `redis-server` serving TLS on loopback, with a CA and certificates made by the test: what a
//! managed Redis (TLS only, often on a private CA, sometimes mutual TLS) asks of a client.

mod support;

use std::path::PathBuf;
use std::time::Duration;

use mrtr_replay::redis::{RedisConfigError, RedisReplayCache, RedisReplayCacheBuilder};
use mrtr_replay::{AsyncReplayCache, NotReadyCause};
use mrtr_std::core::replay::{ReplayCache, ReplayError};
use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
use support::redis::RedisServer;

const NOW: u64 = 1_000_000;

fn id(n: u8) -> [u8; 16] {
    [n; 16]
}

/// A CA and what it signed, as PEM files in a directory of their own.
struct Pki {
    dir: PathBuf,
}

impl Pki {
    /// A CA named `name`, a server certificate for `server_names` and a client certificate,
    /// all written to a fresh directory.
    fn new(name: &str, server_names: &[&str]) -> Self {
        let dir = std::env::temp_dir().join(format!("mrtr-tls-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ca_key = KeyPair::generate().unwrap();
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(rcgen::DnType::CommonName, format!("mrtr test CA {name}"));
        let ca_cert = ca_params.self_signed(&ca_key).unwrap();
        let issuer = Issuer::new(ca_params, ca_key);
        let leaf = |names: Vec<String>| {
            let key = KeyPair::generate().unwrap();
            let cert = CertificateParams::new(names)
                .unwrap()
                .signed_by(&key, &issuer)
                .unwrap();
            (cert.pem(), key.serialize_pem())
        };
        let (server, server_key) = leaf(server_names.iter().map(|s| (*s).to_owned()).collect());
        let (client, client_key) = leaf(vec!["mrtr-client".to_owned()]);
        for (file, pem) in [
            ("ca.pem", ca_cert.pem()),
            ("server.pem", server),
            ("server.key", server_key),
            ("client.pem", client),
            ("client.key", client_key),
        ] {
            std::fs::write(dir.join(file), pem).unwrap();
        }
        Self { dir }
    }

    fn path(&self, file: &str) -> String {
        self.dir.join(file).display().to_string()
    }

    fn read(&self, file: &str) -> Vec<u8> {
        std::fs::read(self.dir.join(file)).unwrap()
    }

    /// A redis-server serving TLS with this PKI's server certificate; `clients` asks every
    /// client for a certificate signed by the CA.
    fn server(&self, clients: bool) -> (RedisServer, u16) {
        let (cert, key, ca) = (
            self.path("server.pem"),
            self.path("server.key"),
            self.path("ca.pem"),
        );
        RedisServer::start_tls(&[
            "--tls-cert-file",
            &cert,
            "--tls-key-file",
            &key,
            "--tls-ca-cert-file",
            &ca,
            "--tls-auth-clients",
            if clients { "yes" } else { "no" },
        ])
    }
}

impl Drop for Pki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn rediss(port: u16) -> String {
    format!("rediss://127.0.0.1:{port}/")
}

/// Short timeouts: a failed handshake must fail fast, not hang.
fn quick(builder: RedisReplayCacheBuilder) -> RedisReplayCacheBuilder {
    builder
        .prefix("tls:")
        .min_entry_lifetime(Duration::ZERO)
        .connect_timeout(Duration::from_secs(2))
        .command_timeout(Duration::from_secs(1))
        .reconnect_backoff(Duration::from_millis(10))
}

async fn refuses_and_is_unreachable(cache: &RedisReplayCache) {
    assert_eq!(
        cache.check_and_record(&id(9), NOW + 60_000, NOW).await,
        Err(ReplayError::Unavailable)
    );
    assert_eq!(
        cache.probe().await.cause(),
        Some(NotReadyCause::Unreachable)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rediss_with_the_servers_ca_records_once_and_refuses_the_replay() {
    let pki = Pki::new("ok", &["127.0.0.1", "localhost"]);
    let (server, port) = pki.server(false);
    let cache = quick(RedisReplayCache::builder(rediss(port)))
        .tls_root_certificates(pki.read("ca.pem"))
        .build()
        .unwrap();
    assert!(cache.probe().await.is_ready());
    assert_eq!(
        cache.check_and_record(&id(1), NOW + 60_000, NOW).await,
        Ok(())
    );
    assert_eq!(
        cache.check_and_record(&id(1), NOW + 60_000, NOW + 1).await,
        Err(ReplayError::Replayed)
    );
    // Recorded in that Redis (read back over its plain port).
    let key = cache.key_for(&id(1));
    assert_eq!(server.command(&["EXISTS", &key]).as_deref(), Some(":1"));
    // So is the blocking cache, over TLS too.
    let blocking = quick(RedisReplayCache::builder(rediss(port)))
        .tls_root_certificates(pki.read("ca.pem"))
        .build_blocking()
        .unwrap();
    let spent = blocking.check_and_record(&id(1), NOW + 60_000, NOW + 2);
    assert_eq!(spent, Err(ReplayError::Replayed));
    assert_eq!(blocking.check_and_record(&id(2), NOW + 60_000, NOW), Ok(()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_certificate_no_trusted_root_signed_fails_closed() {
    let pki = Pki::new("untrusted", &["127.0.0.1"]);
    let other = Pki::new("other", &["127.0.0.1"]);
    let (_server, port) = pki.server(false);
    // Another CA's certificate as the only root.
    let wrong_ca = quick(RedisReplayCache::builder(rediss(port)))
        .tls_root_certificates(other.read("ca.pem"))
        .build()
        .unwrap();
    refuses_and_is_unreachable(&wrong_ca).await;
    // The system's roots do not know a private CA either.
    let system = quick(RedisReplayCache::builder(rediss(port)))
        .build()
        .unwrap();
    refuses_and_is_unreachable(&system).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_certificate_for_another_host_fails_closed() {
    // Signed by the trusted CA, but for a name that is not the one connected to.
    let pki = Pki::new("name", &["redis.internal.example"]);
    let (_server, port) = pki.server(false);
    let cache = quick(RedisReplayCache::builder(rediss(port)))
        .tls_root_certificates(pki.read("ca.pem"))
        .build()
        .unwrap();
    refuses_and_is_unreachable(&cache).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mutual_tls_works_with_the_client_certificate_and_fails_closed_without() {
    let pki = Pki::new("mutual", &["127.0.0.1"]);
    let (_server, port) = pki.server(true);
    let without = quick(RedisReplayCache::builder(rediss(port)))
        .tls_root_certificates(pki.read("ca.pem"))
        .build()
        .unwrap();
    refuses_and_is_unreachable(&without).await;
    let with = quick(RedisReplayCache::builder(rediss(port)))
        .tls_root_certificates(pki.read("ca.pem"))
        .tls_client_certificate(pki.read("client.pem"), pki.read("client.key"))
        .build()
        .unwrap();
    assert_eq!(
        with.check_and_record(&id(3), NOW + 60_000, NOW).await,
        Ok(())
    );
    assert_eq!(
        with.check_and_record(&id(3), NOW + 60_000, NOW).await,
        Err(ReplayError::Replayed)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_and_tls_ports_mixed_up_fail_closed() {
    let pki = Pki::new("mixed", &["127.0.0.1"]);
    let (server, tls_port) = pki.server(false);
    // redis:// to the TLS port: the server never answers in plain text.
    let plain = quick(RedisReplayCache::builder(format!(
        "redis://127.0.0.1:{tls_port}/"
    )))
    .build()
    .unwrap();
    refuses_and_is_unreachable(&plain).await;
    // rediss:// to the plain port: no TLS server there.
    let tls = quick(RedisReplayCache::builder(rediss(server.port())))
        .tls_root_certificates(pki.read("ca.pem"))
        .build()
        .unwrap();
    refuses_and_is_unreachable(&tls).await;
}

#[test]
fn tls_configuration_errors_are_named_and_never_echo_the_material() {
    let pki = Pki::new("config", &["127.0.0.1"]);
    let build = |b: RedisReplayCacheBuilder| b.build().map(|_| ()).unwrap_err();
    // Certificates for a plain URL: a mistake, refused at startup.
    assert_eq!(
        build(
            RedisReplayCache::builder("redis://127.0.0.1:6379/")
                .tls_root_certificates(pki.read("ca.pem"))
        ),
        RedisConfigError::TlsWithoutRediss
    );
    // Verification cannot be switched off.
    assert_eq!(
        build(RedisReplayCache::builder(
            "rediss://127.0.0.1:6380/#insecure"
        )),
        RedisConfigError::TlsInsecure
    );
    // Not PEM, PEM without a certificate, a certificate without its key.
    let garbage =
        b"-----BEGIN CERTIFICATE-----\nnot base64 SECRET-CANARY\n-----END CERTIFICATE-----\n";
    for (roots, client) in [
        (garbage.to_vec(), None),
        (b"no PEM here SECRET-CANARY".to_vec(), None),
        (
            pki.read("ca.pem"),
            Some((pki.read("client.pem"), b"SECRET-CANARY".to_vec())),
        ),
        (
            pki.read("ca.pem"),
            Some((pki.read("client.key"), pki.read("client.key"))),
        ),
    ] {
        let mut b =
            RedisReplayCache::builder("rediss://127.0.0.1:6380/").tls_root_certificates(roots);
        if let Some((cert, key)) = client {
            b = b.tls_client_certificate(cert, key);
        }
        let err = build(b);
        assert_eq!(err, RedisConfigError::BadTlsMaterial);
        assert!(!err.to_string().contains("SECRET-CANARY"), "{err}");
    }
    // A valid set builds; its Debug shows no certificate or key bytes.
    let cache = RedisReplayCache::builder("rediss://:s3cret@127.0.0.1:6380/")
        .tls_root_certificates(pki.read("ca.pem"))
        .tls_client_certificate(pki.read("client.pem"), pki.read("client.key"))
        .build()
        .unwrap();
    let shown = format!("{cache:?}");
    assert!(
        !shown.contains("s3cret") && !shown.contains("BEGIN"),
        "{shown}"
    );
}

#[test]
fn a_failed_handshake_is_logged_as_tls_with_its_cause_and_no_secret() {
    let pki = Pki::new("logged", &["127.0.0.1"]);
    let other = Pki::new("logged-other", &["127.0.0.1"]);
    let (_server, port) = pki.server(false);
    let cache = quick(RedisReplayCache::builder(format!(
        "rediss://:pa55-SECRET@127.0.0.1:{port}/"
    )))
    .tls_root_certificates(other.read("ca.pem"))
    .build_blocking()
    .unwrap();
    let (refused, logs) =
        support::capture_logs(|| cache.check_and_record(&id(5), NOW + 60_000, NOW));
    assert_eq!(refused, Err(ReplayError::Unavailable));
    assert!(logs.contains("TLS handshake with Redis failed"), "{logs}");
    assert!(logs.contains("UnknownIssuer"), "{logs}");
    assert!(!logs.contains("pa55-SECRET"), "{logs}");
}
