//! [`Backend`]: an AEAD provider an engine can run, named for configuration.

use std::fmt;
use std::str::FromStr;

use mrtr_core::cipher::Algorithm;

/// An AEAD implementation an [`AnyEngine`](super::AnyEngine) can run: an algorithm and the crate that provides
/// it. Only the backends whose cargo features are enabled exist (`aes-gcm` and
/// `chacha20poly1305` by default; `aes-gcm-siv`, `aws-lc`).
///
/// Tokens depend on the algorithm only: a token sealed by one provider opens with any other
/// provider of the same algorithm, so a fleet can change providers one node at a time.
///
/// ```
/// # #[cfg(all(feature = "aes-gcm", feature = "chacha20poly1305"))]
/// # fn main() -> Result<(), mrtr_std::engine::UnknownBackend> {
/// use mrtr_std::Algorithm;
/// use mrtr_std::engine::Backend;
///
/// let b: Backend = "chacha20-poly1305".parse()?;
/// assert_eq!(b.algorithm(), Algorithm::ChaCha20Poly1305);
/// assert_eq!(b.to_string(), "chacha20-poly1305");
/// assert!(Backend::enabled().contains(&b));
/// # Ok(()) }
/// # #[cfg(not(all(feature = "aes-gcm", feature = "chacha20poly1305")))] fn main() {}
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Backend {
    /// AES-256-GCM from RustCrypto (`mrtr-aes-gcm`, feature `aes-gcm`).
    #[cfg(feature = "aes-gcm")]
    Aes256Gcm,
    /// ChaCha20-Poly1305 from RustCrypto (`mrtr-chacha20poly1305`, feature
    /// `chacha20poly1305`).
    #[cfg(feature = "chacha20poly1305")]
    ChaCha20Poly1305,
    /// XChaCha20-Poly1305 from RustCrypto (`mrtr-chacha20poly1305`, feature
    /// `chacha20poly1305`).
    #[cfg(feature = "chacha20poly1305")]
    XChaCha20Poly1305,
    /// AES-256-GCM-SIV from RustCrypto (`mrtr-aes-gcm-siv`, feature `aes-gcm-siv`).
    #[cfg(feature = "aes-gcm-siv")]
    Aes256GcmSiv,
    /// AES-256-GCM from aws-lc-rs (`mrtr-aws-lc`, feature `aws-lc`).
    #[cfg(feature = "aws-lc")]
    AwsLcAes256Gcm,
    /// ChaCha20-Poly1305 from aws-lc-rs (`mrtr-aws-lc`, feature `aws-lc`).
    #[cfg(feature = "aws-lc")]
    AwsLcChaCha20Poly1305,
    /// AES-256-GCM-SIV from aws-lc-rs (`mrtr-aws-lc`, feature `aws-lc`).
    #[cfg(feature = "aws-lc")]
    AwsLcAes256GcmSiv,
}

impl Backend {
    /// Every backend this build has, in a stable order.
    pub fn enabled() -> &'static [Backend] {
        &[
            #[cfg(feature = "aes-gcm")]
            Self::Aes256Gcm,
            #[cfg(feature = "chacha20poly1305")]
            Self::ChaCha20Poly1305,
            #[cfg(feature = "chacha20poly1305")]
            Self::XChaCha20Poly1305,
            #[cfg(feature = "aes-gcm-siv")]
            Self::Aes256GcmSiv,
            #[cfg(feature = "aws-lc")]
            Self::AwsLcAes256Gcm,
            #[cfg(feature = "aws-lc")]
            Self::AwsLcChaCha20Poly1305,
            #[cfg(feature = "aws-lc")]
            Self::AwsLcAes256GcmSiv,
        ]
    }

    /// The algorithm (what the token header names).
    pub fn algorithm(self) -> Algorithm {
        match self {
            #[cfg(feature = "aes-gcm")]
            Self::Aes256Gcm => Algorithm::Aes256Gcm,
            #[cfg(feature = "chacha20poly1305")]
            Self::ChaCha20Poly1305 => Algorithm::ChaCha20Poly1305,
            #[cfg(feature = "chacha20poly1305")]
            Self::XChaCha20Poly1305 => Algorithm::XChaCha20Poly1305,
            #[cfg(feature = "aes-gcm-siv")]
            Self::Aes256GcmSiv => Algorithm::Aes256GcmSiv,
            #[cfg(feature = "aws-lc")]
            Self::AwsLcAes256Gcm => Algorithm::Aes256Gcm,
            #[cfg(feature = "aws-lc")]
            Self::AwsLcChaCha20Poly1305 => Algorithm::ChaCha20Poly1305,
            #[cfg(feature = "aws-lc")]
            Self::AwsLcAes256GcmSiv => Algorithm::Aes256GcmSiv,
        }
    }

    /// A stable name for configuration: the algorithm in lowercase (`aes-256-gcm`,
    /// `chacha20-poly1305`, `xchacha20-poly1305`, `aes-256-gcm-siv`), prefixed with `aws-lc-`
    /// for the aws-lc-rs providers.
    pub fn name(self) -> &'static str {
        match self {
            #[cfg(feature = "aes-gcm")]
            Self::Aes256Gcm => "aes-256-gcm",
            #[cfg(feature = "chacha20poly1305")]
            Self::ChaCha20Poly1305 => "chacha20-poly1305",
            #[cfg(feature = "chacha20poly1305")]
            Self::XChaCha20Poly1305 => "xchacha20-poly1305",
            #[cfg(feature = "aes-gcm-siv")]
            Self::Aes256GcmSiv => "aes-256-gcm-siv",
            #[cfg(feature = "aws-lc")]
            Self::AwsLcAes256Gcm => "aws-lc-aes-256-gcm",
            #[cfg(feature = "aws-lc")]
            Self::AwsLcChaCha20Poly1305 => "aws-lc-chacha20-poly1305",
            #[cfg(feature = "aws-lc")]
            Self::AwsLcAes256GcmSiv => "aws-lc-aes-256-gcm-siv",
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A backend name this build does not have (see [`Backend::enabled`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownBackend(String);

impl fmt::Display for UnknownBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown or disabled AEAD backend {:?}; this build has: ",
            self.0
        )?;
        let names: Vec<&str> = Backend::enabled().iter().map(|b| b.name()).collect();
        if names.is_empty() {
            f.write_str("none (enable a backend feature of mrtr-std)")
        } else {
            f.write_str(&names.join(", "))
        }
    }
}

impl std::error::Error for UnknownBackend {}

impl FromStr for Backend {
    type Err = UnknownBackend;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Backend::enabled()
            .iter()
            .copied()
            .find(|b| b.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| UnknownBackend(s.to_owned()))
    }
}
