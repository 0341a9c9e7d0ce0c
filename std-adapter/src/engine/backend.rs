//! [`Backend`]: an AEAD provider an engine can run, named for configuration.
//!
//! Every provider is one entry of the table at the end of this file: its cargo feature, its
//! variant of [`Backend`], its cipher type and its configuration name. The algorithm comes from
//! the cipher ([`Cipher::ALGORITHM`]). Adding a provider is one entry there, plus its crate and
//! its feature in `Cargo.toml`; nothing else in the engine names a provider.

// Built without any backend feature, `Backend` has no value: nothing here can run.
#![cfg_attr(
    not(any(
        feature = "aes-gcm",
        feature = "chacha20poly1305",
        feature = "aes-gcm-siv",
        feature = "aws-lc"
    )),
    allow(unused_variables, dead_code)
)]

use std::fmt;
use std::str::FromStr;

use mrtr_core::cipher::{Algorithm, Cipher};

/// What a [`Backend`] runs: a computation generic over the provider's cipher, run once with
/// the chosen cipher type ([`Backend::with_cipher`]). The engine is built this way.
pub(super) trait WithCipher {
    /// What the computation gives.
    type Output;
    /// Runs the computation for cipher `C`.
    fn run<C: Cipher + Send + Sync + 'static>(self) -> Self::Output;
}

/// Declares [`Backend`] from the provider table: one variant per entry, and the lookups
/// (`enabled`, `algorithm`, `name`, `with_cipher`), each a match over the table.
macro_rules! providers {
    ($($(#[doc = $doc:literal])* $feature:literal $variant:ident => $cipher:ty, $name:literal;)*) => {
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
        /// use mrtr_std::core::cipher::Algorithm;
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
            $($(#[doc = $doc])* #[cfg(feature = $feature)] $variant,)*
        }

        impl Backend {
            /// Every backend this build has, in a stable order.
            pub fn enabled() -> &'static [Backend] {
                &[$(#[cfg(feature = $feature)] Self::$variant,)*]
            }

            /// The algorithm (what the token header names).
            pub fn algorithm(self) -> Algorithm {
                match self {
                    $(#[cfg(feature = $feature)] Self::$variant => <$cipher as Cipher>::ALGORITHM,)*
                }
            }

            /// A stable name for configuration: the algorithm in lowercase (`aes-256-gcm`,
            /// `chacha20-poly1305`, `xchacha20-poly1305`, `aes-256-gcm-siv`), prefixed with
            /// `aws-lc-` for the aws-lc-rs providers.
            pub fn name(self) -> &'static str {
                match self {
                    $(#[cfg(feature = $feature)] Self::$variant => $name,)*
                }
            }

            /// Runs `work` with this backend's cipher type.
            pub(super) fn with_cipher<W: WithCipher>(self, work: W) -> W::Output {
                match self {
                    $(#[cfg(feature = $feature)] Self::$variant => work.run::<$cipher>(),)*
                }
            }
        }
    };
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

providers! {
    /// AES-256-GCM from RustCrypto (`mrtr-aes-gcm`, feature `aes-gcm`).
    "aes-gcm" Aes256Gcm => mrtr_aes_gcm::Aes256Gcm, "aes-256-gcm";
    /// ChaCha20-Poly1305 from RustCrypto (`mrtr-chacha20poly1305`, feature
    /// `chacha20poly1305`).
    "chacha20poly1305" ChaCha20Poly1305 => mrtr_chacha20poly1305::ChaCha20Poly1305, "chacha20-poly1305";
    /// XChaCha20-Poly1305 from RustCrypto (`mrtr-chacha20poly1305`, feature
    /// `chacha20poly1305`).
    "chacha20poly1305" XChaCha20Poly1305 => mrtr_chacha20poly1305::XChaCha20Poly1305, "xchacha20-poly1305";
    /// AES-256-GCM-SIV from RustCrypto (`mrtr-aes-gcm-siv`, feature `aes-gcm-siv`).
    "aes-gcm-siv" Aes256GcmSiv => mrtr_aes_gcm_siv::Aes256GcmSiv, "aes-256-gcm-siv";
    /// AES-256-GCM from aws-lc-rs (`mrtr-aws-lc`, feature `aws-lc`).
    "aws-lc" AwsLcAes256Gcm => mrtr_aws_lc::Aes256Gcm, "aws-lc-aes-256-gcm";
    /// ChaCha20-Poly1305 from aws-lc-rs (`mrtr-aws-lc`, feature `aws-lc`).
    "aws-lc" AwsLcChaCha20Poly1305 => mrtr_aws_lc::ChaCha20Poly1305, "aws-lc-chacha20-poly1305";
    /// AES-256-GCM-SIV from aws-lc-rs (`mrtr-aws-lc`, feature `aws-lc`).
    "aws-lc" AwsLcAes256GcmSiv => mrtr_aws_lc::Aes256GcmSiv, "aws-lc-aes-256-gcm-siv";
}
