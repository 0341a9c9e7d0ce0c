//! Shared helpers for mrtr's test suite.
//!
//! * [`rng`]: deterministic random number generators (a seeded stream, and one that replays
//!   exact bytes, as the golden vectors need);
//! * [`fixture`]: keys, bindings and one-line seal/resume helpers;
//! * [`b64`] and [`hex`]: an independent base64url codec and hex, for taking tokens apart;
//! * [`per_backend!`]: instantiates generic tests once per AEAD backend.

pub mod b64;
pub mod fixture;
pub mod hex;
pub mod rng;

pub use mrtr_aes_gcm::Aes256Gcm;
pub use mrtr_aes_gcm_siv::Aes256GcmSiv;
pub use mrtr_chacha20poly1305::{ChaCha20Poly1305, XChaCha20Poly1305};

/// Turns generic test functions `fn name<C: Cipher>()` into one `#[test]` per backend:
/// `aes_256_gcm::name`, `chacha20_poly1305::name`, `xchacha20_poly1305::name` and
/// `aes_256_gcm_siv::name`.
///
/// ```text
/// fn round_trip<C: mrtr_core::cipher::Cipher>() { /* ... */ }
/// mrtr_tests::per_backend!(round_trip);
/// ```
#[macro_export]
macro_rules! per_backend {
    ($($test:ident),+ $(,)?) => {
        $crate::per_backend!(@one aes_256_gcm, $crate::Aes256Gcm; $($test),+);
        $crate::per_backend!(@one chacha20_poly1305, $crate::ChaCha20Poly1305; $($test),+);
        $crate::per_backend!(@one xchacha20_poly1305, $crate::XChaCha20Poly1305; $($test),+);
        $crate::per_backend!(@one aes_256_gcm_siv, $crate::Aes256GcmSiv; $($test),+);
    };
    (@one $module:ident, $cipher:ty; $($test:ident),+) => {
        mod $module {
            $(
                #[test]
                fn $test() {
                    super::$test::<$cipher>()
                }
            )+
        }
    };
}
