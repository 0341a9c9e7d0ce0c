//! The configured engine: pause (seal the next state) and resume (the check chain).
//!
//! Resume checks run in this order, and the first failure wins:
//!
//! 0. **binding**: the request's associated data must fit the engine's AAD capacity
//!    ([`Builder::aad_capacity`]; always true at the default capacity) → `invalid_binding`;
//! 1. **length**: longer than the token buffer → rejected before any decoding;
//! 2. **unseal**: base64url, header (the version byte picks the format; a v1 token after
//!    the v1 window → `version_retired`, see [`AcceptV1`]), exact key-id lookup, AEAD open against the canonical associated data (key id, audience for v2,
//!    principal, method, protocol version and target), state parse, and the sealed method
//!    equals the request's;
//! 3. **expiry**: `expires_at <= now` rejects;
//! 4. **lifetime**: `expires_at − issued_at` above the maximum lifetime (default: the TTL)
//!    rejects, and so does `issued_at` later than `now` plus the allowed clock skew (default
//!    60 s); together they bound any token's remaining life by the maximum lifetime plus the
//!    skew, whichever node sealed it;
//! 5. **round cap**: a token sealed in round `r` resumes invocation `r + 1`, refused when that
//!    exceeds `max_rounds` (default 10: the call plus 9 resumes);
//! 6. **argument digest**: constant-time compare; before the replay check, so a retry with the
//!    wrong arguments does not burn the token;
//! 7. **replay cache** (if configured): atomic check-and-record of the token id until expiry.

use rand_core::TryCryptoRng;

use crate::b64;
use crate::binding::{Aad, Binding, build_aad};
use crate::cipher::Cipher;
use crate::clock::Clock;
use crate::ct;
use crate::error::BindingError;
use crate::error::{ErrorDetail, Reason, Rejection, SealError};
use crate::key::KeyRing;
use crate::limits::{MAX_AAD_LEN, MAX_NONCE_LEN, TAG_LEN, TOKEN_ID_LEN};
use crate::replay::{NoReplayCache, ReplayCache, ReplayError};
use crate::token::state::{ArgsDigest, NewState, Parsed, StateView};
use crate::token::{Frame, TokenBuf, TokenFormat, header_len, write_header};

mod builder;
mod outcome;
mod rollout;

use builder::{Audience, Config};
pub use builder::{AudienceChoice, AudiencePending, Builder, ChosenAudience};
pub use outcome::{Resumed, Round, Sealed};
pub use rollout::AcceptV1;

/// Default token lifetime: 5 minutes.
pub const DEFAULT_TTL_MS: u64 = 5 * 60 * 1000;
/// Default cap on handler invocations in one resume chain: 1 call plus 9 resumes.
pub const DEFAULT_MAX_ROUNDS: u32 = 10;
/// Default clock skew allowed between the node that sealed a token and the one opening it:
/// a token issued more than 60 s after the opener's now is refused.
pub const DEFAULT_MAX_CLOCK_SKEW_MS: u64 = 60 * 1000;

/// A frozen MRTR configuration: key ring, clock, audience, TTL, round cap, optional replay
/// cache.
///
/// It has no setters: once built it cannot change, so it can be shared freely (it is `Sync`
/// when its parts are).
///
/// ```
/// use mrtr_core::{Binding, ManualClock, Codec, Principal, Round, TokenBuf, token_len_for};
/// use mrtr_core::key::{Key, KeyId, KeyRing, SecretKey};
/// use mrtr_aes_gcm::Aes256Gcm;
/// # struct DemoRng(u8); // real code: an OS or hardware CSPRNG
/// # impl rand_core::TryRng for DemoRng {
/// #     type Error = core::convert::Infallible;
/// #     fn try_next_u32(&mut self) -> Result<u32, Self::Error> { Ok(0) }
/// #     fn try_next_u64(&mut self) -> Result<u64, Self::Error> { Ok(0) }
/// #     fn try_fill_bytes(&mut self, d: &mut [u8]) -> Result<(), Self::Error> {
/// #         for b in d { self.0 = self.0.wrapping_add(1); *b = self.0; } Ok(())
/// #     }
/// # }
/// # impl rand_core::TryCryptoRng for DemoRng {}
/// # let mut rng = DemoRng(0);
/// let clock = ManualClock::new(1_000_000);
/// let ring: KeyRing<Aes256Gcm, 2> =
///     KeyRing::new(Key::new(KeyId::new("k1")?, SecretKey::from_bytes([7; 32])));
/// let mrtr = Codec::builder(ring, &clock).audience("booking.example").build()?;
///
/// let who = Principal::User { issuer: "https://idp", subject: "alice" };
/// let call = Binding::new("tools/call", "2026-07-28", "book_table", who)?;
/// let args = [0u8; 32]; // SHA-256 of the canonical arguments, in a real server
///
/// let mut out: TokenBuf<{ token_len_for(64) }> = TokenBuf::new();
/// let sealed = mrtr.pause(Round::FIRST, &call, &args, b"step=date", &mut rng, &mut out)?;
/// let token = sealed.as_str().to_owned(); // goes into the input_required result
///
/// let mut buf: TokenBuf<{ token_len_for(64) }> = TokenBuf::new();
/// let resumed = mrtr.resume(&token, &call, &args, &mut buf).expect("valid token");
/// assert_eq!(resumed.continuation(), b"step=date");
/// assert_eq!(resumed.round(), 1);
///
/// // Another caller cannot use it.
/// let mallory = Principal::User { issuer: "https://idp", subject: "mallory" };
/// let theirs = Binding::new("tools/call", "2026-07-28", "book_table", mallory)?;
/// assert!(mrtr.resume(&token, &theirs, &args, &mut buf).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Codec<C, Clk, R = NoReplayCache, const K: usize = 4, const A: usize = MAX_AAD_LEN> {
    keys: KeyRing<C, K>,
    clock: Clk,
    replay: R,
    config: Config,
    audience: Option<Audience>,
}

impl<C: Cipher, Clk: Clock, R: ReplayCache, const K: usize, const A: usize> Codec<C, Clk, R, K, A> {
    /// Capacity of the associated-data buffer, in bytes (see [`Builder::aad_capacity`]).
    pub const fn aad_capacity(&self) -> usize {
        A
    }

    /// Token lifetime in ms.
    pub fn ttl_ms(&self) -> u64 {
        self.config.ttl_ms
    }

    /// The longest lifetime (`expires − issued`) a token may claim (see
    /// [`Builder::max_lifetime_ms`]).
    pub fn max_lifetime_ms(&self) -> u64 {
        self.config.max_lifetime_ms
    }

    /// How far a token's issue time may lie after this engine's clock (see
    /// [`Builder::max_clock_skew_ms`]).
    pub fn max_clock_skew_ms(&self) -> u64 {
        self.config.max_clock_skew_ms
    }

    /// Cap on handler invocations per chain.
    pub fn max_rounds(&self) -> u32 {
        self.config.max_rounds
    }

    /// Wire detail mode.
    pub fn error_detail(&self) -> ErrorDetail {
        self.config.detail
    }

    /// The audience v2 tokens are bound to, or `None` for an engine built
    /// [`without_audience`](Builder::without_audience).
    pub fn audience(&self) -> Option<&str> {
        self.audience.as_ref().map(Audience::as_str)
    }

    /// The format [`Codec::pause`] seals (see [`Builder::seal_format`]).
    pub fn seal_format(&self) -> TokenFormat {
        self.config.seal_format
    }

    /// Which v1 tokens this engine opens (see [`Builder::accept_v1`]), resolved: the default
    /// window reads as [`AcceptV1::Until`] its end.
    pub fn accept_v1(&self) -> AcceptV1 {
        self.config.v1.accept()
    }

    /// The key ring.
    pub fn keys(&self) -> &KeyRing<C, K> {
        &self.keys
    }

    /// The clock.
    pub fn clock(&self) -> &Clk {
        &self.clock
    }

    /// The replay cache.
    pub fn replay_cache(&self) -> &R {
        &self.replay
    }

    /// A rejection for `reason` in this configuration's detail mode.
    pub fn reject(&self, reason: Reason) -> Rejection {
        Rejection::new(reason, self.config.detail)
    }

    /// The rejection for a replay-cache refusal (for callers running their own, e.g. async,
    /// replay check after [`Codec::verify`]).
    pub fn replay_rejection(&self, err: ReplayError) -> Rejection {
        self.reject(match err {
            ReplayError::Replayed => Reason::Replayed,
            ReplayError::Full => Reason::ReplayStoreFull,
            ReplayError::Unavailable => Reason::ReplayStoreUnavailable,
        })
    }

    /// Seals the state of a paused call into `out` and returns the token text.
    ///
    /// `round` is [`Round::FIRST`] for a fresh call, or [`Resumed::next_round`] when a resumed
    /// call pauses again. Each token gets a fresh random nonce and token id from `rng` and
    /// expires `ttl` after now.
    ///
    /// A call at the round cap cannot pause: a token sealed in round `max_rounds` could never
    /// resume, so [`SealError::RoundsExhausted`] is returned instead of a dead token.
    pub fn pause<'b, G: TryCryptoRng + ?Sized, const N: usize>(
        &self,
        round: Round,
        binding: &Binding<'_>,
        args: &ArgsDigest,
        continuation: &[u8],
        rng: &mut G,
        out: &'b mut TokenBuf<N>,
    ) -> Result<Sealed<'b>, SealError> {
        if round.0 >= self.config.max_rounds {
            return Err(SealError::RoundsExhausted);
        }
        let format = self.config.seal_format;
        let audience = self.bound_audience(format);
        // The one capacity check of a seal: before any key budget or randomness is spent.
        if Self::exceeds_capacity(binding, audience) {
            return Err(SealError::Binding(BindingError::ExceedsAadCapacity));
        }
        let key_id = self.keys.current().id();
        let header_len = header_len(key_id.as_bytes().len());
        let now = self.clock.now_ms();
        let expires_at = now
            .checked_add(self.config.ttl_ms)
            .ok_or(SealError::ClockOverflow)?;
        let mut state = NewState {
            round: round.0,
            issued_at: now,
            expires_at,
            token_id: [0u8; TOKEN_ID_LEN],
            args,
            method: binding.method(),
            continuation,
        };
        let state_len = state.len().ok_or(SealError::TooLarge)?;
        let nonce_len = C::ALGORITHM.nonce_len();
        let total = header_len + nonce_len + state_len + TAG_LEN;
        if b64::encoded_len(total) > N {
            return Err(SealError::TooLarge);
        }
        let key = self.keys.take_seal().ok_or(SealError::KeyExhausted)?;
        // One draw for the token id and the nonce, in that order (one system call with an OS
        // generator instead of two).
        let mut random = [0u8; TOKEN_ID_LEN + MAX_NONCE_LEN];
        let random = &mut random[..TOKEN_ID_LEN + nonce_len];
        rng.try_fill_bytes(random).map_err(|_| SealError::Rng)?;
        let (token_id, nonce_bytes) = random.split_at(TOKEN_ID_LEN);
        state.token_id.copy_from_slice(token_id);

        // The token bytes, and after them the room its text will take: the associated data
        // goes there while the seal needs it (see `build_aad`).
        let (bytes, spare) = out
            .bytes
            .split_at_mut_checked(total)
            .ok_or(SealError::TooLarge)?;
        let (header, rest) = bytes.split_at_mut(header_len);
        write_header(header, format, C::ALGORITHM, key_id);
        let mut fallback = Aad::<A>::empty();
        let aad = build_aad(spare, &mut fallback, header, format, audience, binding)
            .ok_or(SealError::Binding(BindingError::ExceedsAadCapacity))?;
        let aad_end = total + aad.len();
        let (nonce, rest) = rest.split_at_mut(nonce_len);
        let (body, tag_out) = rest.split_at_mut(state_len);
        nonce.copy_from_slice(nonce_bytes);
        state.write(body);
        match key.cipher().seal_in_place(nonce, aad, body) {
            Ok(tag) => tag_out.copy_from_slice(&tag),
            Err(_) => {
                // Never leave plaintext behind.
                out.wipe();
                return Err(SealError::Crypto);
            }
        }
        let text_len = b64::encode_in_place(&mut out.bytes, total).ok_or(SealError::TooLarge)?;
        // The buffer holds the token text only: clear what the text did not cover of the
        // associated data.
        if let Some(rest) = out.bytes.get_mut(text_len..aad_end) {
            rest.fill(0);
        }
        let text = b64::as_str(&out.bytes[..text_len]).ok_or(SealError::Crypto)?;
        Ok(Sealed {
            text,
            token_id: state.token_id,
            expires_at_ms: expires_at,
            round,
            format,
        })
    }

    /// Runs every resume check, including the replay cache, and returns the opened state.
    ///
    /// On any rejection the buffer is wiped before returning.
    pub fn resume<'b, const N: usize>(
        &self,
        token: &str,
        binding: &Binding<'_>,
        args: &ArgsDigest,
        buf: &'b mut TokenBuf<N>,
    ) -> Result<Resumed<'b>, Rejection> {
        let now = self.clock.now_ms();
        let (parsed, format) = self.checked(token, binding, args, buf, now)?;
        let state = parsed.view(&buf.bytes);
        let replay = self
            .replay
            .check_and_record(&state.token_id(), state.expires_at_ms(), now);
        if let Err(e) = replay {
            buf.wipe();
            return Err(self.replay_rejection(e));
        }
        Ok(Resumed {
            state: parsed.view(&buf.bytes),
            format,
        })
    }

    /// Runs every resume check except the replay cache.
    ///
    /// For callers whose replay store is asynchronous: verify, then check-and-record
    /// [`Resumed::token_id`] until [`Resumed::expires_at_ms`] themselves, mapping a refusal
    /// with [`Codec::replay_rejection`] (and wiping the buffer). On any rejection here the
    /// buffer is wiped before returning.
    pub fn verify<'b, const N: usize>(
        &self,
        token: &str,
        binding: &Binding<'_>,
        args: &ArgsDigest,
        buf: &'b mut TokenBuf<N>,
    ) -> Result<Resumed<'b>, Rejection> {
        let (parsed, format) = self.checked(token, binding, args, buf, self.clock.now_ms())?;
        Ok(Resumed {
            state: parsed.view(&buf.bytes),
            format,
        })
    }

    /// Every check before the replay cache; wipes the buffer on failure. Returns what the one
    /// parse of the sealed state learned, to view it without parsing again.
    fn checked<const N: usize>(
        &self,
        token: &str,
        binding: &Binding<'_>,
        args: &ArgsDigest,
        buf: &mut TokenBuf<N>,
        now: u64,
    ) -> Result<(Parsed, TokenFormat), Rejection> {
        let result = self
            .open(token, binding, buf, now)
            .and_then(|(range, format)| {
                let state =
                    StateView::new_checked(&buf.bytes[range.clone()]).ok_or(Reason::BadState)?;
                self.check_state(&state, binding, args, now)?;
                Ok((state.parsed(range), format))
            });
        result.map_err(|reason| {
            buf.wipe();
            self.reject(reason)
        })
    }

    /// The binding, length, decode, header, the v1 policy, key lookup and AEAD open. Returns
    /// where the authentic state lies in `buf`, and the token's format.
    fn open<const N: usize>(
        &self,
        token: &str,
        binding: &Binding<'_>,
        buf: &mut TokenBuf<N>,
        now: u64,
    ) -> Result<(core::ops::Range<usize>, TokenFormat), Reason> {
        // Whatever the token, a binding this engine cannot hold is refused first.
        if Self::exceeds_capacity(binding, self.audience()) {
            return Err(Reason::InvalidBinding);
        }
        if token.len() > N {
            return Err(Reason::TooLong);
        }
        let total = b64::decode_into(token.as_bytes(), &mut buf.bytes).ok_or(Reason::Malformed)?;
        // The decoded token, and the room after it, where the associated data goes.
        let (bytes, spare) = buf
            .bytes
            .split_at_mut_checked(total)
            .ok_or(Reason::Malformed)?;
        let frame = Frame::read(bytes, C::ALGORITHM)?;
        if frame.format == TokenFormat::V1 && !self.config.v1.opens(now) {
            return Err(Reason::VersionRetired);
        }
        let key = self.keys.find(frame.key_id).ok_or(Reason::UnknownKey)?;
        let mut fallback = Aad::<A>::empty();
        // Fits whenever the binding passed the capacity check above, which assumed the
        // longest header and the v2 layout.
        let audience = self.bound_audience(frame.format);
        let aad = build_aad(
            spare,
            &mut fallback,
            frame.header,
            frame.format,
            audience,
            binding,
        )
        .ok_or(Reason::InvalidBinding)?;
        let (range, format) = (frame.state_range(), frame.format);
        key.cipher()
            .open_in_place(frame.nonce, aad, frame.body, frame.tag)
            .map_err(|_| Reason::Tampered)?;
        Ok((range, format))
    }

    /// Whether the associated data of `binding` and `audience` may not fit this engine's
    /// capacity `A` (judged with the longest header and the v2 layout, see
    /// [`Binding::aad_len`]).
    ///
    /// Never at the default capacity: `Binding::new` bounds each field of a binding and the
    /// builder the audience, and `MAX_AAD_LEN` is the sum of those bounds. So the sum is only
    /// computed for an engine built with a smaller capacity.
    #[inline(always)]
    fn exceeds_capacity(binding: &Binding<'_>, audience: Option<&str>) -> bool {
        debug_assert!(binding.aad_len(audience) <= MAX_AAD_LEN);
        A < MAX_AAD_LEN && binding.aad_len(audience) > A
    }

    /// The audience a token of `format` is bound to on this engine: v1 tokens carry none.
    fn bound_audience(&self, format: TokenFormat) -> Option<&str> {
        match format {
            TokenFormat::V1 => None,
            TokenFormat::V2 => self.audience(),
        }
    }

    /// The checks on an authentic state: method, expiry, lifetime, round cap, argument digest.
    #[inline(always)]
    fn check_state(
        &self,
        state: &StateView<'_>,
        binding: &Binding<'_>,
        args: &ArgsDigest,
        now: u64,
    ) -> Result<(), Reason> {
        let method = binding.method().as_bytes();
        if !bool::from(ct::eq(state.method_bytes(), method)) {
            return Err(Reason::MethodMismatch);
        }
        let (issued, expires) = (state.issued_at_ms(), state.expires_at_ms());
        if expires <= now {
            return Err(Reason::Expired);
        }
        // A parsed state has `issued <= expires`.
        if expires - issued > self.max_lifetime_ms() {
            return Err(Reason::LifetimeExceeded);
        }
        if issued > now.saturating_add(self.config.max_clock_skew_ms) {
            return Err(Reason::IssuedInFuture);
        }
        if state.round() >= self.config.max_rounds {
            return Err(Reason::RoundsExceeded);
        }
        if !bool::from(ct::eq(state.args_digest(), args)) {
            return Err(Reason::ArgumentsMismatch);
        }
        Ok(())
    }
}

impl<C, Clk, R: core::fmt::Debug, const K: usize, const A: usize> core::fmt::Debug
    for Codec<C, Clk, R, K, A>
{
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Codec")
            .field("keys", &self.keys)
            .field("audience", &self.audience)
            .field("config", &self.config)
            .field("replay", &self.replay)
            .field("aad_capacity", &A)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests;
