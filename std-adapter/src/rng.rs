//! The operating system's CSPRNG, as a `rand_core` 0.10 generator for [`mrtr_core::Codec::pause`].

use rand_core::{TryCryptoRng, TryRng};

/// The operating system's cryptographically secure random number generator (`getrandom`:
/// `getrandom(2)` on Linux, `getentropy` or `SecRandomCopyFrom` elsewhere).
///
/// Stateless and zero-sized: create one wherever it is needed, in any thread.
///
/// ```
/// use mrtr_std::rng::OsRng;
/// use rand_core::TryRng;
///
/// let mut a = [0u8; 16];
/// let mut b = [0u8; 16];
/// OsRng.try_fill_bytes(&mut a).expect("the OS has randomness");
/// OsRng.try_fill_bytes(&mut b).expect("the OS has randomness");
/// assert_ne!(a, b);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct OsRng;

impl TryRng for OsRng {
    type Error = getrandom::Error;

    fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
        getrandom::u32()
    }

    fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
        getrandom::u64()
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
        getrandom::fill(dst)
    }
}

impl TryCryptoRng for OsRng {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_every_length_with_varying_bytes() {
        // A constant or short-circuiting generator would leave zeros or repeat itself.
        for len in [1usize, 12, 16, 24, 32, 1000] {
            let mut a = vec![0u8; len];
            let mut b = vec![0u8; len];
            OsRng.try_fill_bytes(&mut a).unwrap();
            OsRng.try_fill_bytes(&mut b).unwrap();
            if len >= 12 {
                assert_ne!(a, b, "two {len}-byte draws were equal");
                assert!(a.iter().any(|&x| x != 0));
            }
        }
    }

    #[test]
    fn words_vary() {
        let xs: Vec<u64> = (0..8).map(|_| OsRng.try_next_u64().unwrap()).collect();
        let mut dedup = xs.clone();
        dedup.sort_unstable();
        dedup.dedup();
        assert_eq!(dedup.len(), xs.len());
        let ys: Vec<u32> = (0..8).map(|_| OsRng.try_next_u32().unwrap()).collect();
        assert!(ys.iter().any(|&y| y != ys[0]));
    }
}
