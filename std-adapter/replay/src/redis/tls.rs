//! TLS to Redis: `rediss://` URLs (feature `redis-tls`; rustls with aws-lc-rs).
//!
//! Managed Redis services (ElastiCache with in-transit encryption, Azure Cache for Redis,
//! Memorystore, Upstash, Redis Cloud) speak TLS only, often on a private CA. A `rediss://` URL
//! connects over TLS and verifies the server's certificate and host name, against the
//! system's roots or against the CA certificates given with the builder's
//! `tls_root_certificates`; a client certificate (`tls_client_certificate`) answers a server
//! that asks for mutual TLS. Both exist only with the feature. Verification cannot be turned off: the redis
//! crate's `#insecure` URL option is refused when the cache is built.
//!
//! A certificate that does not verify, or a server that refuses the client's, is a connection
//! that fails: resumes are refused (fail closed) and readiness names the cause, as for any
//! unreachable store.

use std::fmt;

use redis::Client;
use zeroize::Zeroizing;

use super::RedisConfigError;

/// Certificates for a `rediss://` connection. `Debug` shows which are set, never their bytes.
#[derive(Clone, Default)]
pub(crate) struct TlsMaterial {
    /// PEM certificates to trust instead of the system's roots.
    pub(crate) roots: Option<Vec<u8>>,
    /// PEM certificate chain and private key presented to the server.
    pub(crate) client: Option<(Vec<u8>, Zeroizing<Vec<u8>>)>,
}

impl TlsMaterial {
    /// Whether anything was configured.
    pub(crate) fn is_set(&self) -> bool {
        self.roots.is_some() || self.client.is_some()
    }
}

impl fmt::Debug for TlsMaterial {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsMaterial")
            .field("custom_roots", &self.roots.is_some())
            .field("client_certificate", &self.client.is_some())
            .finish()
    }
}

/// Whether `url` asks for TLS (`rediss://` or `valkeys://`, in any case).
pub(crate) fn is_tls_url(url: &str) -> bool {
    let scheme = url.split_once("://").map_or("", |(s, _)| s);
    scheme.eq_ignore_ascii_case("rediss") || scheme.eq_ignore_ascii_case("valkeys")
}

/// Whether a TLS URL turns certificate verification off (the redis crate's `#insecure`
/// fragment).
#[cfg(any(feature = "redis-tls", test))]
fn asks_insecure(url: &str) -> bool {
    url.split_once('#')
        .is_some_and(|(_, fragment)| fragment.eq_ignore_ascii_case("insecure"))
}

/// The client for `url`, with `tls` when it is a TLS URL. Errors never repeat the URL (it
/// may hold a password) or any certificate or key.
#[cfg(feature = "redis-tls")]
pub(crate) fn client(url: &str, tls: &TlsMaterial) -> Result<Client, RedisConfigError> {
    if !is_tls_url(url) {
        if tls.is_set() {
            return Err(RedisConfigError::TlsWithoutRediss);
        }
        return Client::open(url).map_err(|_| RedisConfigError::BadUrl);
    }
    if asks_insecure(url) {
        return Err(RedisConfigError::TlsInsecure);
    }
    ensure_crypto_provider();
    if !tls.is_set() {
        return Client::open(url).map_err(|_| RedisConfigError::BadUrl);
    }
    // Parsed here, so a bad file fails the build instead of every connection.
    check_pem(tls)?;
    let certificates = redis::TlsCertificates {
        client_tls: tls
            .client
            .as_ref()
            .map(|(cert, key)| redis::ClientTlsConfig {
                client_cert: cert.clone(),
                client_key: key.to_vec(),
            }),
        root_cert: tls.roots.clone(),
    };
    redis::Client::build_with_tls(url, certificates).map_err(|_| RedisConfigError::BadTlsMaterial)
}

/// The client for `url` in a build without TLS: a `rediss://` URL is refused with a cause
/// that says so.
#[cfg(not(feature = "redis-tls"))]
pub(crate) fn client(url: &str, tls: &TlsMaterial) -> Result<Client, RedisConfigError> {
    if is_tls_url(url) {
        return Err(RedisConfigError::TlsUnsupported);
    }
    debug_assert!(
        !tls.is_set(),
        "TLS material is only settable with redis-tls"
    );
    Client::open(url).map_err(|_| RedisConfigError::BadUrl)
}

/// The TLS failure behind a connection error (an untrusted or misnamed certificate, a
/// refused client certificate, a protocol mismatch), as text for the log: rustls's errors
/// name certificates and names, never keys or passwords. `None` when TLS is not the cause.
#[cfg(feature = "redis-tls")]
pub(crate) fn failure(e: &redis::RedisError) -> Option<String> {
    use std::error::Error;
    use std::sync::Arc;

    let mut next: Option<&(dyn Error + 'static)> = e.source();
    while let Some(mut err) = next {
        // The redis crate keeps its cause behind an `Arc`, which is the error `source` gives.
        if let Some(shared) = err.downcast_ref::<Arc<dyn Error + Send + Sync>>() {
            err = &**shared;
        }
        if let Some(tls) = err.downcast_ref::<rustls::Error>() {
            return Some(tls.to_string());
        }
        // io::Error hides what it wraps from `source`; look inside.
        if let Some(tls) = err
            .downcast_ref::<std::io::Error>()
            .and_then(std::io::Error::get_ref)
            .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        {
            return Some(tls.to_string());
        }
        next = err.source();
    }
    None
}

/// Without TLS support no connection error is a TLS one.
#[cfg(not(feature = "redis-tls"))]
pub(crate) fn failure(_: &redis::RedisError) -> Option<String> {
    None
}

/// Every PEM block parses, there is at least one root certificate when roots are given, and a
/// client certificate comes with exactly one private key.
#[cfg(feature = "redis-tls")]
fn check_pem(tls: &TlsMaterial) -> Result<(), RedisConfigError> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};

    let certs = |pem: &[u8]| -> Result<usize, RedisConfigError> {
        let mut n = 0;
        for cert in CertificateDer::pem_slice_iter(pem) {
            cert.map_err(|_| RedisConfigError::BadTlsMaterial)?;
            n += 1;
        }
        Ok(n)
    };
    if let Some(roots) = &tls.roots
        && certs(roots)? == 0
    {
        return Err(RedisConfigError::BadTlsMaterial);
    }
    if let Some((cert, key)) = &tls.client {
        if certs(cert)? == 0 {
            return Err(RedisConfigError::BadTlsMaterial);
        }
        PrivateKeyDer::from_pem_slice(key).map_err(|_| RedisConfigError::BadTlsMaterial)?;
    }
    Ok(())
}

/// rustls needs a process-wide crypto provider. The redis crate asks for the default one; with
/// more than one provider compiled into the program (another dependency may enable `ring`)
/// there is none until someone installs one, and rustls would panic at the first connection.
/// Installs aws-lc-rs unless the application already installed its own.
#[cfg(feature = "redis-tls")]
fn ensure_crypto_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Losing a race to another installer is fine: a provider is installed either way.
        let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tls_urls_by_scheme_in_any_case() {
        for url in [
            "rediss://h:6380/",
            "REDISS://h/",
            "valkeys://h/",
            "rediss://:pw@h/0",
        ] {
            assert!(is_tls_url(url), "{url}");
        }
        for url in ["redis://h/", "redis+unix:///tmp/r.sock", "rediss", ""] {
            assert!(!is_tls_url(url), "{url}");
        }
        assert!(asks_insecure("rediss://h/#insecure"));
        assert!(!asks_insecure("rediss://h/"));
    }

    #[test]
    fn debug_names_what_is_set_and_never_the_bytes() {
        let tls = TlsMaterial {
            roots: Some(b"ROOT-PEM-BYTES".to_vec()),
            client: Some((
                b"CERT-PEM-BYTES".to_vec(),
                Zeroizing::new(b"KEY-PEM-BYTES".to_vec()),
            )),
        };
        let shown = format!("{tls:?}");
        assert!(shown.contains("custom_roots: true"), "{shown}");
        for secret in ["ROOT-PEM", "CERT-PEM", "KEY-PEM", "75"] {
            assert!(!shown.contains(secret), "{shown}");
        }
    }
}
