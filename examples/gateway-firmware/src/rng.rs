//! Random bytes for token ids and nonces.
//!
//! **The example's generator is NOT a source of secrets.** It is a ChaCha20 DRBG started from a
//! fixed seed, so every run produces the same tokens. Real firmware must seed from its true
//! random number generator (the MCU's TRNG peripheral, or a secure element) at every boot, or
//! use the TRNG directly: [`crate::trng::HalTrng`] adapts a HAL's driver, and
//! [`crate::platform`] shows both on the target. With a fixed seed, two boots
//! repeat nonces under the same key, which breaks AES-GCM and ChaCha20-Poly1305 outright
//! (AES-256-GCM-SIV then reveals which sealed states were identical, and no more).

use chacha20::ChaCha20Rng;
use rand_core::{SeedableRng, TryCryptoRng, TryRng};

/// Fixed seed for the example only. See the module docs.
const EXAMPLE_SEED: [u8; 32] = *b"gateway-firmware example seed!!!";

/// The example's CSPRNG, from a fixed seed (see the module docs: plug the TRNG in real firmware).
pub fn example_rng() -> ChaCha20Rng {
    ChaCha20Rng::from_seed(EXAMPLE_SEED)
}

/// Replays recorded bytes in order (a golden vector's `rng_hex`: token id, then nonce) and
/// fails once they run out. Not random at all: only for reproducing recorded tokens.
#[derive(Debug)]
pub struct ReplayRng<'a> {
    bytes: &'a [u8],
}

impl<'a> ReplayRng<'a> {
    /// A generator that yields `bytes`, then fails.
    pub fn new(bytes: &'a [u8]) -> Self {
        Self { bytes }
    }

    /// Bytes not yet handed out.
    pub fn remaining(&self) -> usize {
        self.bytes.len()
    }
}

/// The recorded bytes ran out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Exhausted;

impl core::fmt::Display for Exhausted {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("recorded random bytes exhausted")
    }
}

impl core::error::Error for Exhausted {}

impl TryRng for ReplayRng<'_> {
    type Error = Exhausted;

    fn try_next_u32(&mut self) -> Result<u32, Exhausted> {
        let mut b = [0; 4];
        self.try_fill_bytes(&mut b)?;
        Ok(u32::from_le_bytes(b))
    }

    fn try_next_u64(&mut self) -> Result<u64, Exhausted> {
        let mut b = [0; 8];
        self.try_fill_bytes(&mut b)?;
        Ok(u64::from_le_bytes(b))
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Exhausted> {
        if dst.len() > self.bytes.len() {
            return Err(Exhausted);
        }
        let (head, rest) = self.bytes.split_at(dst.len());
        dst.copy_from_slice(head);
        self.bytes = rest;
        Ok(())
    }
}

// Only so `Codec::pause` accepts it for recorded vectors: the bytes are whatever was recorded.
impl TryCryptoRng for ReplayRng<'_> {}
