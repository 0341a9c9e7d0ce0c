//! [`NonceSource`]: where an engine draws each token's id and nonce, and which algorithms may
//! use which source.

use std::fmt;
use std::str::FromStr;

use mrtr_core::cipher::Algorithm;

/// Where an engine draws each token's id and nonce (one draw per seal). Part of [`EngineConfig`]
/// (`EngineConfig::nonce_source`); [`NonceSource::Os`] by default.
///
/// * [`NonceSource::Os`]: [`OsRng`](crate::rng::OsRng), one `getrandom` system call per seal. Safe
///   with every algorithm, after `fork` and after a VM snapshot restore.
/// * [`NonceSource::Fast`]: [`FastRng`](crate::rng_fast::FastRng), this thread's reseeding,
///   fork-aware ChaCha20 generator. It cannot detect a VM snapshot restored twice, after which
///   clones repeat each other's nonces until their next reseed. Only AES-256-GCM-SIV tolerates
///   a repeated nonce (it reveals whether two sealed states were equal, no more), so an engine
///   built with `Fast` and any other algorithm is refused
///   ([`EngineConfigError::NonceSourceUnsafe`](super::EngineConfigError::NonceSourceUnsafe)).
///
/// `SECURITY.md`, "Nonces and randomness", has the reasoning.
///
/// [`EngineConfig`]: super::EngineConfig
///
/// ```
/// use mrtr_std::core::cipher::Algorithm;
/// use mrtr_std::engine::NonceSource;
///
/// let fast: NonceSource = "fast".parse()?;
/// assert_eq!(fast.to_string(), "fast");
/// assert_eq!(NonceSource::default(), NonceSource::Os);
/// assert!(fast.allows(Algorithm::Aes256GcmSiv));
/// assert!(!fast.allows(Algorithm::Aes256Gcm));
/// assert!(NonceSource::Os.allows(Algorithm::Aes256Gcm));
/// # Ok::<(), mrtr_std::engine::UnknownNonceSource>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NonceSource {
    /// The operating system's generator, one system call per seal (the default).
    #[default]
    Os,
    /// The per-thread reseeding, fork-aware userspace generator: AES-256-GCM-SIV only.
    Fast,
}

impl NonceSource {
    /// Every source, in a stable order.
    pub const ALL: [NonceSource; 2] = [Self::Os, Self::Fast];

    /// A stable name for configuration: `os` or `fast`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Os => "os",
            Self::Fast => "fast",
        }
    }

    /// Whether an engine sealing with `algorithm` may draw its nonces from this source:
    /// [`NonceSource::Os`] always, [`NonceSource::Fast`] only for the nonce-misuse-resistant
    /// AES-256-GCM-SIV.
    pub fn allows(self, algorithm: Algorithm) -> bool {
        match self {
            Self::Os => true,
            Self::Fast => algorithm == Algorithm::Aes256GcmSiv,
        }
    }
}

impl fmt::Display for NonceSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A nonce source name other than `os` and `fast`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownNonceSource(String);

impl fmt::Display for UnknownNonceSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown nonce source {:?}; expected os or fast (fast only with aes-256-gcm-siv)",
            self.0
        )
    }
}

impl std::error::Error for UnknownNonceSource {}

impl FromStr for NonceSource {
    type Err = UnknownNonceSource;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|n| n.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| UnknownNonceSource(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back_and_unknown_names_are_refused() {
        for n in NonceSource::ALL {
            assert_eq!(n.name().parse::<NonceSource>(), Ok(n));
            assert_eq!(n.name().to_uppercase().parse::<NonceSource>(), Ok(n));
        }
        let err = "userspace".parse::<NonceSource>().unwrap_err();
        assert!(err.to_string().contains("\"userspace\""), "{err}");
    }

    #[test]
    fn fast_is_allowed_with_gcm_siv_only() {
        for a in [
            Algorithm::Aes256Gcm,
            Algorithm::ChaCha20Poly1305,
            Algorithm::XChaCha20Poly1305,
            Algorithm::Aes256GcmSiv,
        ] {
            assert!(NonceSource::Os.allows(a));
            assert_eq!(
                NonceSource::Fast.allows(a),
                a == Algorithm::Aes256GcmSiv,
                "{a:?}"
            );
        }
    }
}
