//! The configured engine: pause (seal the next state) and resume (the check chain).
//!
//! Resume checks run in this order, and the first failure wins:
//!
//! 1. **length**: longer than the token buffer → rejected before any decoding;
//! 2. **unseal**: base64url, header, exact key-id lookup, AEAD open against the canonical
//!    associated data (binding method, protocol version, target, principal and key id), state
//!    parse, and the sealed method equals the request's;
//! 3. **expiry**: `expires_at <= now` rejects;
//! 4. **round cap**: a token sealed in round `r` resumes invocation `r + 1`, refused when that
//!    exceeds `max_rounds` (default 10: the call plus 9 resumes);
//! 5. **argument digest**: constant-time compare; before the replay check, so a retry with the
//!    wrong arguments does not burn the token;
//! 6. **replay cache** (if configured): atomic check-and-record of the token id until expiry.

use rand_core::TryCryptoRng;

use crate::b64;
use crate::binding::{Aad, Binding};
use crate::cipher::{Cipher, MAX_NONCE_LEN, TAG_LEN};
use crate::clock::Clock;
use crate::ct;
use crate::error::{ConfigError, ErrorDetail, Reason, Rejection, SealError};
use crate::key::KeyRing;
use crate::replay::{NoReplayCache, ReplayCache, ReplayError};
use crate::state::{ArgsDigest, NewState, StateView, TOKEN_ID_LEN, TokenId};
use crate::token::{FORMAT_VERSION, Frame, TokenBuf, field};

/// Default token lifetime: 5 minutes.
pub const DEFAULT_TTL_MS: u64 = 5 * 60 * 1000;
/// Default cap on handler invocations in one resume chain: 1 call plus 9 resumes.
pub const DEFAULT_MAX_ROUNDS: u32 = 10;

/// The round a new token is sealed in. Only obtainable as [`Round::FIRST`] or from a resumed
/// token ([`Resumed::next_round`]), so a chain's count cannot be reset by mistake.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Round(u32);

impl Round {
    /// The first pause of a chain (round 1).
    pub const FIRST: Round = Round(1);

    /// The round number.
    pub const fn get(self) -> u32 {
        self.0
    }
}

/// Builds an [`Mrtr`]; see [`Mrtr::builder`].
#[must_use]
pub struct Builder<C, Clk, R, const K: usize> {
    keys: KeyRing<C, K>,
    clock: Clk,
    replay: R,
    ttl_ms: u64,
    max_rounds: u32,
    detail: ErrorDetail,
}

impl<C: Cipher, Clk: Clock, R: ReplayCache, const K: usize> Builder<C, Clk, R, K> {
    /// Token lifetime in ms; must be > 0. Default [`DEFAULT_TTL_MS`].
    pub fn ttl_ms(mut self, ttl_ms: u64) -> Self {
        self.ttl_ms = ttl_ms;
        self
    }

    /// Cap on handler invocations per chain; must be ≥ 1. Default [`DEFAULT_MAX_ROUNDS`].
    pub fn max_rounds(mut self, max_rounds: u32) -> Self {
        self.max_rounds = max_rounds;
        self
    }

    /// Enforce single use with `replay`. Default: none (tokens are multi-use within the TTL).
    pub fn replay_cache<R2: ReplayCache>(self, replay: R2) -> Builder<C, Clk, R2, K> {
        Builder {
            keys: self.keys,
            clock: self.clock,
            replay,
            ttl_ms: self.ttl_ms,
            max_rounds: self.max_rounds,
            detail: self.detail,
        }
    }

    /// How much of a rejection's cause the client sees. Default [`ErrorDetail::Uniform`].
    pub fn error_detail(mut self, detail: ErrorDetail) -> Self {
        self.detail = detail;
        self
    }

    /// Validates and freezes the configuration.
    pub fn build(self) -> Result<Mrtr<C, Clk, R, K>, ConfigError> {
        if self.ttl_ms == 0 {
            return Err(ConfigError::ZeroTtl);
        }
        if self.max_rounds == 0 {
            return Err(ConfigError::ZeroMaxRounds);
        }
        Ok(Mrtr {
            keys: self.keys,
            clock: self.clock,
            replay: self.replay,
            ttl_ms: self.ttl_ms,
            max_rounds: self.max_rounds,
            detail: self.detail,
        })
    }
}

/// A frozen MRTR configuration: key ring, clock, TTL, round cap, optional replay cache.
///
/// It has no setters: once built it cannot change, so it can be shared freely (it is `Sync`
/// when its parts are).
///
/// ```
/// use mrtr_core::{Binding, ManualClock, Mrtr, Principal, Round, TokenBuf, token_len_for};
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
/// let mrtr = Mrtr::builder(ring, &clock).build()?;
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
pub struct Mrtr<C, Clk, R = NoReplayCache, const K: usize = 4> {
    keys: KeyRing<C, K>,
    clock: Clk,
    replay: R,
    ttl_ms: u64,
    max_rounds: u32,
    detail: ErrorDetail,
}

impl<C: Cipher, Clk: Clock, const K: usize> Mrtr<C, Clk, NoReplayCache, K> {
    /// Starts a configuration with the defaults: 5-minute TTL, 10 rounds, no replay cache,
    /// uniform errors.
    pub fn builder(keys: KeyRing<C, K>, clock: Clk) -> Builder<C, Clk, NoReplayCache, K> {
        Builder {
            keys,
            clock,
            replay: NoReplayCache,
            ttl_ms: DEFAULT_TTL_MS,
            max_rounds: DEFAULT_MAX_ROUNDS,
            detail: ErrorDetail::Uniform,
        }
    }
}

impl<C: Cipher, Clk: Clock, R: ReplayCache, const K: usize> Mrtr<C, Clk, R, K> {
    /// Token lifetime in ms.
    pub fn ttl_ms(&self) -> u64 {
        self.ttl_ms
    }

    /// Cap on handler invocations per chain.
    pub fn max_rounds(&self) -> u32 {
        self.max_rounds
    }

    /// Wire detail mode.
    pub fn error_detail(&self) -> ErrorDetail {
        self.detail
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
        Rejection::new(reason, self.detail)
    }

    /// The rejection for a replay-cache refusal (for callers running their own, e.g. async,
    /// replay check after [`Mrtr::verify`]).
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
    pub fn pause<'b, G: TryCryptoRng + ?Sized, const N: usize>(
        &self,
        round: Round,
        binding: &Binding<'_>,
        args: &ArgsDigest,
        continuation: &[u8],
        rng: &mut G,
        out: &'b mut TokenBuf<N>,
    ) -> Result<Sealed<'b>, SealError> {
        let now = self.clock.now_ms();
        let expires_at = now
            .checked_add(self.ttl_ms)
            .ok_or(SealError::ClockOverflow)?;
        let mut token_id = [0u8; TOKEN_ID_LEN];
        let state = NewState {
            round: round.0,
            issued_at: now,
            expires_at,
            token_id,
            args,
            method: binding.method(),
            continuation,
        };
        let state_len = state.len().ok_or(SealError::TooLarge)?;
        let key = self.keys.current();
        let kid = key.id().as_bytes();
        let header_len = field::KEY_ID + kid.len();
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
        token_id.copy_from_slice(&random[..TOKEN_ID_LEN]);
        let state = NewState { token_id, ..state };

        let bytes = &mut out.bytes[..total];
        let (header, rest) = bytes.split_at_mut(header_len);
        let (nonce, rest) = rest.split_at_mut(nonce_len);
        let (body, tag_out) = rest.split_at_mut(state_len);
        header[field::VERSION] = FORMAT_VERSION;
        header[field::ALGORITHM] = C::ALGORITHM.id();
        header[field::KEY_ID_LEN] = kid.len() as u8;
        header[field::KEY_ID..].copy_from_slice(kid);
        nonce.copy_from_slice(&random[TOKEN_ID_LEN..]);
        let mut aad = Aad::new();
        let sealed = match (state.write(body), aad.fill(header, binding)) {
            (Some(()), Some(aad)) => key
                .cipher()
                .seal_in_place(nonce, aad, body)
                .map_err(|_| SealError::Crypto),
            // Unreachable: lengths were checked above. Still never leave plaintext behind.
            _ => Err(SealError::TooLarge),
        };
        match sealed {
            Ok(tag) => tag_out.copy_from_slice(&tag),
            Err(e) => {
                out.wipe();
                return Err(e);
            }
        }
        let text_len = b64::encode_in_place(&mut out.bytes, total).ok_or(SealError::TooLarge)?;
        let text = core::str::from_utf8(&out.bytes[..text_len]).map_err(|_| SealError::Crypto)?;
        Ok(Sealed {
            text,
            token_id,
            expires_at_ms: expires_at,
            round,
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
        let range = self.checked(token, binding, args, buf, now)?;
        let replay = match StateView::new_checked(&buf.bytes[range.clone()]) {
            Some(v) => self
                .replay
                .check_and_record(&v.token_id(), v.expires_at_ms(), now),
            None => Err(ReplayError::Unavailable), // unreachable: checked just above
        };
        if let Err(e) = replay {
            buf.wipe();
            return Err(self.replay_rejection(e));
        }
        self.opened(buf, range)
    }

    /// Runs every resume check except the replay cache.
    ///
    /// For callers whose replay store is asynchronous: verify, then check-and-record
    /// [`Resumed::token_id`] until [`Resumed::expires_at_ms`] themselves, mapping a refusal
    /// with [`Mrtr::replay_rejection`] (and wiping the buffer). On any rejection here the
    /// buffer is wiped before returning.
    pub fn verify<'b, const N: usize>(
        &self,
        token: &str,
        binding: &Binding<'_>,
        args: &ArgsDigest,
        buf: &'b mut TokenBuf<N>,
    ) -> Result<Resumed<'b>, Rejection> {
        let range = self.checked(token, binding, args, buf, self.clock.now_ms())?;
        self.opened(buf, range)
    }

    /// Steps 1–5; wipes the buffer on failure. Returns the state's range in `buf`.
    fn checked<const N: usize>(
        &self,
        token: &str,
        binding: &Binding<'_>,
        args: &ArgsDigest,
        buf: &mut TokenBuf<N>,
        now: u64,
    ) -> Result<core::ops::Range<usize>, Rejection> {
        let result = self.open(token, binding, buf).and_then(|range| {
            let view = StateView::new_checked(&buf.bytes[range.clone()]).ok_or(Reason::BadState)?;
            self.check_state(&view, binding, args, now).map(|()| range)
        });
        result.map_err(|reason| {
            buf.wipe();
            self.reject(reason)
        })
    }

    fn opened<'b, const N: usize>(
        &self,
        buf: &'b TokenBuf<N>,
        range: core::ops::Range<usize>,
    ) -> Result<Resumed<'b>, Rejection> {
        match StateView::new_checked(&buf.bytes[range]) {
            Some(state) => Ok(Resumed { state }),
            // Unreachable: the same bytes passed the same check in `checked`.
            None => Err(self.reject(Reason::BadState)),
        }
    }

    /// Steps 1–2: length, decode, header, key lookup, AEAD open. Returns the state's range.
    fn open<const N: usize>(
        &self,
        token: &str,
        binding: &Binding<'_>,
        buf: &mut TokenBuf<N>,
    ) -> Result<core::ops::Range<usize>, Reason> {
        if token.len() > N {
            return Err(Reason::TooLong);
        }
        let total = b64::decode_into(token.as_bytes(), &mut buf.bytes).ok_or(Reason::Malformed)?;
        let bytes = &mut buf.bytes[..total];
        if bytes.len() <= field::KEY_ID_LEN {
            return Err(Reason::Malformed);
        }
        if bytes[field::VERSION] != FORMAT_VERSION {
            return Err(Reason::UnsupportedVersion);
        }
        if bytes[field::ALGORITHM] != C::ALGORITHM.id() {
            return Err(Reason::WrongAlgorithm);
        }
        let nonce_len = C::ALGORITHM.nonce_len();
        let frame = Frame::new_checked(bytes, nonce_len).ok_or(Reason::Malformed)?;
        let (header, rest) = bytes.split_at_mut(frame.header_len);
        let key = self
            .keys
            .find(&header[field::KEY_ID..])
            .ok_or(Reason::UnknownKey)?;
        let mut aad = Aad::new();
        let aad = aad.fill(header, binding).ok_or(Reason::Malformed)?;
        let (nonce, rest) = rest.split_at_mut(nonce_len);
        let (body, tag) = rest.split_at_mut(rest.len() - TAG_LEN);
        let tag: &[u8; TAG_LEN] = (&*tag).try_into().map_err(|_| Reason::Malformed)?;
        key.cipher()
            .open_in_place(nonce, aad, body, tag)
            .map_err(|_| Reason::Tampered)?;
        Ok(frame.state_range())
    }

    /// Steps 2 (method) to 5 on an authentic state.
    fn check_state(
        &self,
        state: &StateView<'_>,
        binding: &Binding<'_>,
        args: &ArgsDigest,
        now: u64,
    ) -> Result<(), Reason> {
        let method = binding.method().as_bytes();
        if !bool::from(ct::eq(state.method().as_bytes(), method)) {
            return Err(Reason::MethodMismatch);
        }
        if state.expires_at_ms() <= now {
            return Err(Reason::Expired);
        }
        if state.round() >= self.max_rounds {
            return Err(Reason::RoundsExceeded);
        }
        if !bool::from(ct::eq(state.args_digest(), args)) {
            return Err(Reason::ArgumentsMismatch);
        }
        Ok(())
    }
}

impl<C, Clk, R: core::fmt::Debug, const K: usize> core::fmt::Debug for Mrtr<C, Clk, R, K> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Mrtr")
            .field("keys", &self.keys)
            .field("ttl_ms", &self.ttl_ms)
            .field("max_rounds", &self.max_rounds)
            .field("replay", &self.replay)
            .field("detail", &self.detail)
            .finish_non_exhaustive()
    }
}

/// A freshly sealed token, borrowed from its [`TokenBuf`]. `Debug` never shows the token.
pub struct Sealed<'b> {
    text: &'b str,
    token_id: TokenId,
    expires_at_ms: u64,
    round: Round,
}

impl<'b> Sealed<'b> {
    /// The token text for `requestState`. A bearer credential: never log it.
    pub fn as_str(&self) -> &'b str {
        self.text
    }

    /// The token's random id.
    pub fn token_id(&self) -> TokenId {
        self.token_id
    }

    /// When the token expires, ms since the Unix epoch.
    pub fn expires_at_ms(&self) -> u64 {
        self.expires_at_ms
    }

    /// The round the token was sealed in.
    pub fn round(&self) -> Round {
        self.round
    }
}

impl core::fmt::Debug for Sealed<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Sealed")
            .field("token", &"<redacted>")
            .field("len", &self.text.len())
            .field("round", &self.round.0)
            .field("expires_at_ms", &self.expires_at_ms)
            .finish()
    }
}

/// A token that passed the resume checks, borrowed from its [`TokenBuf`] (wiped on drop).
/// `Debug` never shows the continuation.
pub struct Resumed<'b> {
    state: StateView<'b>,
}

impl<'b> Resumed<'b> {
    /// The round the token was sealed in; this resume is handler invocation `round + 1`.
    pub fn round(&self) -> u32 {
        self.state.round()
    }

    /// The round to seal in if this resumed call pauses again.
    pub fn next_round(&self) -> Round {
        Round(self.state.round().saturating_add(1))
    }

    /// When the token was sealed, ms since the Unix epoch.
    pub fn issued_at_ms(&self) -> u64 {
        self.state.issued_at_ms()
    }

    /// When the token expires, ms since the Unix epoch.
    pub fn expires_at_ms(&self) -> u64 {
        self.state.expires_at_ms()
    }

    /// The token's random id (the replay-cache key).
    pub fn token_id(&self) -> TokenId {
        self.state.token_id()
    }

    /// The method the token was sealed for.
    pub fn method(&self) -> &'b str {
        self.state.method()
    }

    /// The handler's continuation bytes, as given to [`Mrtr::pause`].
    pub fn continuation(&self) -> &'b [u8] {
        self.state.continuation()
    }
}

impl core::fmt::Debug for Resumed<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Resumed")
            .field("round", &self.round())
            .field("method", &self.method())
            .field("expires_at_ms", &self.expires_at_ms())
            .field("continuation", &"<redacted>")
            .finish()
    }
}
