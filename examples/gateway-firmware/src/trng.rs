//! A hardware TRNG as mrtr wants it: rand_core 0.10's `TryRng + TryCryptoRng`, where a failure
//! is an error ([`mrtr_core::SealError::Rng`]), never a panic.
//!
//! MCU HALs implement older rand_core traits for their TRNG: 0.6's `RngCore + CryptoRng`
//! (esp-hal, several stm32 HALs) or 0.9's `TryCryptoRng` / `CryptoRng` (nrf-hal 0.19,
//! esp-hal). [`HalTrng::rand_core_06`] and [`HalTrng::rand_core_09`] adapt either. The
//! adapter calls only the fallible `try_fill_bytes` (in 0.6, `fill_bytes` and `next_u32` must
//! panic or block on failure). On top it runs a continuous health test: a source that returns
//! the same byte [`REPEAT_CUTOFF`] times in a row is declared failed, and stays failed (NIST
//! SP 800-90B §4.4.1, repetition count test), so a stuck TRNG can never supply a nonce.
//!
//! To seed a software DRBG from it instead, use `SeedableRng::try_from_rng(&mut trng)` (for
//! example `chacha20::ChaCha20Rng`), which fails the same way.

use rand_core::{TryCryptoRng, TryRng};

/// Identical bytes in a row that fail the health test. From a full-entropy byte source a
/// healthy TRNG trips it with probability about 2^-40 per byte.
pub const REPEAT_CUTOFF: u8 = 6;

/// Why random bytes could not be had.
#[derive(Clone, Copy, Debug, PartialEq, Eq, defmt::Format)]
pub enum TrngError {
    /// The HAL reported a failure.
    Source,
    /// The health test found the source stuck; the TRNG stays unusable until reset.
    Stuck,
}

impl core::fmt::Display for TrngError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            Self::Source => "hardware RNG reported a failure",
            Self::Stuck => "hardware RNG failed its health test",
        })
    }
}

impl core::error::Error for TrngError {}

/// A HAL driver's fallible fill, whichever rand_core it implements.
pub trait Source {
    /// Fills `dst`, or reports that the hardware failed.
    fn fill(&mut self, dst: &mut [u8]) -> Result<(), TrngError>;
}

/// A driver implementing rand_core 0.6.
#[derive(Debug)]
pub struct RandCore06<T>(pub T);

impl<T: rand_core_06::RngCore + rand_core_06::CryptoRng> Source for RandCore06<T> {
    fn fill(&mut self, dst: &mut [u8]) -> Result<(), TrngError> {
        self.0.try_fill_bytes(dst).map_err(|_| TrngError::Source)
    }
}

/// A driver implementing rand_core 0.9 (`CryptoRng` drivers get `TryCryptoRng` from it).
#[derive(Debug)]
pub struct RandCore09<T>(pub T);

impl<T: rand_core_09::TryCryptoRng> Source for RandCore09<T> {
    fn fill(&mut self, dst: &mut [u8]) -> Result<(), TrngError> {
        self.0.try_fill_bytes(dst).map_err(|_| TrngError::Source)
    }
}

/// A HAL's TRNG as a rand_core 0.10 `TryCryptoRng`, with a health test.
#[derive(Debug)]
pub struct HalTrng<S> {
    source: S,
    last: u8,
    run: u8,
    failed: bool,
}

impl<T: rand_core_06::RngCore + rand_core_06::CryptoRng> HalTrng<RandCore06<T>> {
    /// Adapts a driver implementing rand_core 0.6.
    pub fn rand_core_06(driver: T) -> Self {
        Self::new(RandCore06(driver))
    }
}

impl<T: rand_core_09::TryCryptoRng> HalTrng<RandCore09<T>> {
    /// Adapts a driver implementing rand_core 0.9.
    pub fn rand_core_09(driver: T) -> Self {
        Self::new(RandCore09(driver))
    }
}

impl<S: Source> HalTrng<S> {
    /// Wraps a source.
    pub fn new(source: S) -> Self {
        Self {
            source,
            last: 0,
            run: 0,
            failed: false,
        }
    }

    /// Whether the health test has failed (then every draw fails).
    pub fn has_failed(&self) -> bool {
        self.failed
    }

    fn health(&mut self, bytes: &[u8]) -> Result<(), TrngError> {
        for &b in bytes {
            if self.run > 0 && b == self.last {
                self.run += 1;
            } else {
                (self.last, self.run) = (b, 1);
            }
            if self.run >= REPEAT_CUTOFF {
                self.failed = true;
            }
        }
        if self.failed {
            Err(TrngError::Stuck)
        } else {
            Ok(())
        }
    }
}

impl<S: Source> TryRng for HalTrng<S> {
    type Error = TrngError;

    fn try_next_u32(&mut self) -> Result<u32, TrngError> {
        let mut b = [0; 4];
        self.try_fill_bytes(&mut b)?;
        Ok(u32::from_le_bytes(b))
    }

    fn try_next_u64(&mut self) -> Result<u64, TrngError> {
        let mut b = [0; 8];
        self.try_fill_bytes(&mut b)?;
        Ok(u64::from_le_bytes(b))
    }

    /// On any failure `dst` is zeroed: nothing half-random is left behind.
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), TrngError> {
        let result = if self.failed {
            Err(TrngError::Stuck)
        } else {
            self.source.fill(dst).and_then(|()| self.health(dst))
        };
        if result.is_err() {
            dst.fill(0);
        }
        result
    }
}

impl<S: Source> TryCryptoRng for HalTrng<S> {}
