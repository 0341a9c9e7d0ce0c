//! Deterministic random number generators for tests. Never use these to seal real tokens.

use core::convert::Infallible;
use core::fmt;

use rand_core::{TryCryptoRng, TryRng};

/// A seeded, reproducible byte stream (SplitMix64). Every draw differs from the last, so
/// consecutive pauses get distinct token ids and nonces.
#[derive(Clone, Debug)]
pub struct SeqRng(u64);

impl SeqRng {
    /// A stream starting from `seed`.
    pub const fn new(seed: u64) -> Self {
        Self(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

impl TryRng for SeqRng {
    type Error = Infallible;

    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        Ok(self.next() as u32)
    }

    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        Ok(self.next())
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        for chunk in dst.chunks_mut(8) {
            let word = self.next().to_le_bytes();
            chunk.copy_from_slice(&word[..chunk.len()]);
        }
        Ok(())
    }
}

impl TryCryptoRng for SeqRng {}

/// The error of a [`ReplayRng`] asked for more bytes than it has left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RngExhausted;

impl fmt::Display for RngExhausted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("replay rng has no bytes left")
    }
}

impl core::error::Error for RngExhausted {}

/// Yields exactly the given bytes, in order, then fails. A request larger than what is left
/// fails without consuming anything. With no bytes at all it is a failing RNG.
#[derive(Clone, Debug)]
pub struct ReplayRng<'a> {
    bytes: &'a [u8],
}

impl<'a> ReplayRng<'a> {
    /// Replays `bytes`.
    pub const fn new(bytes: &'a [u8]) -> Self {
        Self { bytes }
    }

    /// Bytes not yet drawn.
    pub fn remaining(&self) -> usize {
        self.bytes.len()
    }

    fn take<const N: usize>(&mut self) -> Result<[u8; N], RngExhausted> {
        let mut out = [0u8; N];
        self.try_fill_bytes(&mut out)?;
        Ok(out)
    }
}

impl TryRng for ReplayRng<'_> {
    type Error = RngExhausted;

    fn try_next_u32(&mut self) -> Result<u32, RngExhausted> {
        self.take().map(u32::from_le_bytes)
    }

    fn try_next_u64(&mut self) -> Result<u64, RngExhausted> {
        self.take().map(u64::from_le_bytes)
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), RngExhausted> {
        let (head, rest) = self.bytes.split_at_checked(dst.len()).ok_or(RngExhausted)?;
        dst.copy_from_slice(head);
        self.bytes = rest;
        Ok(())
    }
}

impl TryCryptoRng for ReplayRng<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replay_rng_yields_exact_bytes_then_fails() {
        let mut rng = ReplayRng::new(&[1, 2, 3, 4, 5]);
        let mut a = [0u8; 2];
        rng.try_fill_bytes(&mut a).unwrap();
        assert_eq!(a, [1, 2]);
        let mut b = [0u8; 4];
        assert_eq!(rng.try_fill_bytes(&mut b), Err(RngExhausted));
        assert_eq!(rng.remaining(), 3, "a failed draw consumes nothing");
        let mut c = [0u8; 3];
        rng.try_fill_bytes(&mut c).unwrap();
        assert_eq!(c, [3, 4, 5]);
        assert_eq!(rng.try_next_u32(), Err(RngExhausted));
    }

    #[test]
    fn seq_rng_is_reproducible_and_varies() {
        let (mut a, mut b) = (SeqRng::new(7), SeqRng::new(7));
        let (mut x, mut y) = ([0u8; 20], [0u8; 20]);
        a.try_fill_bytes(&mut x).unwrap();
        b.try_fill_bytes(&mut y).unwrap();
        assert_eq!(x, y);
        b.try_fill_bytes(&mut y).unwrap();
        assert_ne!(x, y);
    }
}
