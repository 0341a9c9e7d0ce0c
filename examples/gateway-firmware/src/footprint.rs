//! The smallest use of mrtr-core, for measuring what core and one backend add to flash: one
//! seal and one resume at a 256-byte continuation, at the gateway's AAD capacity, no logging. Compared against
//! `footprint-baseline`, which links the same runtime and does nothing.

use core::hint::black_box;

use mrtr_core::cipher::Cipher;
use mrtr_core::key::{Key, KeyId, KeyRing, SecretKey};
use mrtr_core::{Codec, ManualClock, Round};
use rand_core::{Infallible, TryCryptoRng, TryRng};

use crate::{AAD, MAX_CONTINUATION, Token, call};

/// Stands in for the board's TRNG peripheral (whose driver is a handful of register reads):
/// NOT random. Only so the footprint excludes a software DRBG.
struct TrngStandIn(u32);

impl TryRng for TrngStandIn {
    type Error = Infallible;

    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        self.0 = self.0.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        Ok(self.0)
    }

    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        Ok(u64::from(self.try_next_u32()?) << 32 | u64::from(self.try_next_u32()?))
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        for chunk in dst.chunks_mut(4) {
            let w = self.try_next_u32()?.to_le_bytes();
            chunk.copy_from_slice(&w[..chunk.len()]);
        }
        Ok(())
    }
}

impl TryCryptoRng for TrngStandIn {}

/// Seals and resumes once with cipher `C`; true if the continuation came back.
pub fn seal_and_open<C: Cipher>() -> bool {
    let Ok(id) = KeyId::new(black_box("k1")) else {
        return false;
    };
    let ring: KeyRing<C, 1> = KeyRing::new(Key::new(id, SecretKey::from_bytes(black_box([7; 32]))));
    let clock = ManualClock::new(black_box(1_795_996_800_000));
    let Ok(mrtr) = Codec::builder(ring, &clock)
        .aad_capacity::<AAD>()
        .audience(crate::GATEWAY_ID)
        .build()
    else {
        return false;
    };
    let binding = call(black_box(crate::TOOL), black_box(crate::OWNER));
    let continuation = black_box([0x42u8; MAX_CONTINUATION]);
    let args = black_box(crate::ARGS);
    let mut rng = TrngStandIn(black_box(1));
    let (mut sealed, mut buf) = (Token::new(), Token::new());
    let Ok(token) = mrtr.pause(
        Round::FIRST,
        &binding,
        &args,
        &continuation,
        &mut rng,
        &mut sealed,
    ) else {
        return false;
    };
    mrtr.resume(token.as_str(), &binding, &args, &mut buf)
        .is_ok_and(|r| r.continuation() == continuation)
}
