//! The fair floor: the least work any text token carrying mrtr's sealed state could do.
//!
//! Per round trip, for a continuation of `n` bytes:
//!
//! * one draw of the token id and nonce (16 + nonce bytes) from a plain userspace CSPRNG
//!   (`chacha20`'s `ChaCha20Rng`, seeded once, no reseeding or fork check);
//! * the same AEAD as the backend (through the same [`Cipher`] seam, a thin call into the
//!   AEAD crate) sealing the same sealed-state bytes (`72 + method + n`) under the same
//!   associated data, prebuilt once;
//! * the fastest base64url encode and decode available here (`base64`'s AVX2/NEON engine,
//!   into separate buffers) of the same token bytes (header, nonce, ciphertext, tag);
//! * the AEAD opening it again.
//!
//! What it leaves out is what mrtr adds on top: reading the clock, writing the state and the
//! header, building and checking the associated data from the binding, constant-time field
//! checks, buffer handling, and the OS (or fork-checked) randomness. mrtr's distance to this
//! floor is its own overhead.

use base64::Engine as _;
use base64::engine::Simd;
use chacha20::ChaCha20Rng;
use mrtr_core::Aad;
use mrtr_core::TokenFormat;
use mrtr_core::cipher::{Cipher, MAX_NONCE_LEN, TAG_LEN};
use mrtr_core::key::SecretKey;
use mrtr_core::limits::STATE_FIXED_LEN;
use rand_core::{SeedableRng, TryRng};

use crate::{KEY, KEY_ID, binding, continuation};

/// Bytes of the token id drawn with each nonce.
const TOKEN_ID: usize = 16;

/// The fastest base64url engine available on this machine (runtime-detected SIMD).
pub fn fastest_b64() -> Simd {
    Simd::url_safe(base64::engine::general_purpose::NO_PAD)
}

/// One backend's fair floor at one continuation size, with its buffers.
pub struct FairFloor<C: Cipher> {
    cipher: C,
    rng: ChaCha20Rng,
    b64: Simd,
    aad: Vec<u8>,
    state: Vec<u8>,
    header_len: usize,
    bytes: Vec<u8>,
    text: Vec<u8>,
    opened: Vec<u8>,
}

impl<C: Cipher> FairFloor<C> {
    /// The floor for a continuation of `n` bytes, under the benchmarks' key and binding.
    pub fn new(n: usize) -> Self {
        let mut header = vec![
            TokenFormat::V2.byte(),
            C::ALGORITHM.id(),
            KEY_ID.len() as u8,
        ];
        header.extend_from_slice(KEY_ID.as_bytes());
        // No audience, as the benchmarked engines (`Builder::without_audience`).
        let aad = Aad::build(&header, None, &binding())
            .expect("binding fits")
            .as_bytes()
            .to_vec();
        // The sealed state's length for this binding: 72 fixed bytes, the method, then the
        // continuation. Its content does not change the AEAD's cost.
        let mut state = vec![0u8; STATE_FIXED_LEN + binding().method().len()];
        state.extend_from_slice(&continuation(n));
        let nonce_len = C::ALGORITHM.nonce_len();
        let total = header.len() + nonce_len + state.len() + TAG_LEN;
        let mut bytes = vec![0u8; total];
        bytes[..header.len()].copy_from_slice(&header);
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed).expect("OS randomness");
        Self {
            cipher: C::new(&SecretKey::from_bytes(KEY)),
            rng: ChaCha20Rng::from_seed(seed),
            b64: fastest_b64(),
            aad,
            header_len: header.len(),
            opened: vec![0u8; total],
            text: vec![0u8; base64::encoded_len(total, false).expect("small")],
            state,
            bytes,
        }
    }

    /// Draws, seals and encodes one token; returns its text.
    pub fn seal(&mut self) -> &[u8] {
        let nonce_len = C::ALGORITHM.nonce_len();
        let mut random = [0u8; TOKEN_ID + MAX_NONCE_LEN];
        let random = &mut random[..TOKEN_ID + nonce_len];
        let Ok(()) = self.rng.try_fill_bytes(random);
        let (_, rest) = self.bytes.split_at_mut(self.header_len);
        let (nonce, rest) = rest.split_at_mut(nonce_len);
        let (body, tag) = rest.split_at_mut(self.state.len());
        nonce.copy_from_slice(&random[TOKEN_ID..]);
        body.copy_from_slice(&self.state);
        let t = self
            .cipher
            .seal_in_place(nonce, &self.aad, body)
            .expect("seal");
        tag.copy_from_slice(&t);
        let n = self
            .b64
            .encode_slice(&self.bytes, &mut self.text)
            .expect("text buffer fits");
        &self.text[..n]
    }

    /// Decodes and opens `text` (a token from [`FairFloor::seal`] of the same floor); returns
    /// the state's length.
    pub fn open(&mut self, text: &[u8]) -> usize {
        let n = self
            .b64
            .decode_slice(text, &mut self.opened)
            .expect("valid text");
        let nonce_len = C::ALGORITHM.nonce_len();
        let (_, rest) = self.opened[..n].split_at_mut(self.header_len);
        let (nonce, rest) = rest.split_at_mut(nonce_len);
        let (body, tag) = rest.split_at_mut(rest.len() - TAG_LEN);
        let tag: &[u8; TAG_LEN] = (&*tag).try_into().expect("16-byte tag");
        self.cipher
            .open_in_place(nonce, &self.aad, body, tag)
            .expect("open");
        body.len()
    }

    /// One round trip: seal, then open what was sealed. Returns the state's length.
    pub fn roundtrip(&mut self) -> usize {
        let len = self.seal().len();
        let text = std::mem::take(&mut self.text);
        let n = self.open(&text[..len]);
        self.text = text;
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mrtr_core::{Codec, Round, TokenBuf, token_len_for};

    /// The floor seals exactly as many bytes as mrtr does, under the same associated data:
    /// its token text has the length of mrtr's token for the same continuation.
    #[test]
    fn the_floor_token_has_mrtr_s_length_and_opens() {
        fn check<C: Cipher>() {
            let mrtr = Codec::builder(crate::key_ring::<C>(), mrtr_std::clock::SystemClock)
                .without_audience()
                .build()
                .unwrap();
            let mut out = TokenBuf::<{ token_len_for(256) }>::new();
            let token = mrtr
                .pause(
                    Round::FIRST,
                    &binding(),
                    &crate::ARGS,
                    &continuation(256),
                    &mut mrtr_std::rng::OsRng,
                    &mut out,
                )
                .unwrap();
            let mut floor = FairFloor::<C>::new(256);
            assert_eq!(floor.seal().len(), token.as_str().len());
            assert_eq!(floor.roundtrip(), 72 + 10 + 256);
        }
        check::<mrtr_aes_gcm::Aes256Gcm>();
        check::<mrtr_chacha20poly1305::XChaCha20Poly1305>();
        check::<mrtr_aes_gcm_siv::Aes256GcmSiv>();
        #[cfg(feature = "comparisons")]
        check::<mrtr_aws_lc::ChaCha20Poly1305>();
    }
}
