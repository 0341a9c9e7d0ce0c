//! Keys, bindings and one-line seal/resume helpers shared by the suites.

use mrtr_core::AudienceChoice;
use mrtr_core::Clock;
use mrtr_core::cipher::Cipher;
use mrtr_core::key::{Key, KeyId, KeyRing, SecretKey};
use mrtr_core::limits::MAX_AAD_LEN;
use mrtr_core::replay::{NoReplayCache, ReplayCache};
use mrtr_core::{
    ArgsDigest, Binding, Builder, Codec, Principal, Reason, Rejection, Round, TokenBuf, TokenId,
    token_len_for,
};

use crate::rng::SeqRng;

/// The fixed "now" of most tests: 2026-11-30T00:00:00Z in ms.
pub const NOW: u64 = 1_795_996_800_000;
/// The protocol revision tokens are bound to.
pub const VERSION: &str = "2026-07-28";
/// The digest of the arguments a token is sealed with.
pub const ARGS: ArgsDigest = [0xa5; 32];
/// A digest of other arguments.
pub const OTHER_ARGS: ArgsDigest = {
    let mut d = ARGS;
    d[31] ^= 1;
    d
};
/// The token buffer size used by most tests: room for a 256-byte continuation.
pub const CAP: usize = token_len_for(256);
/// The token buffer used by most tests.
pub type Buf = TokenBuf<CAP>;

/// The audience (service identity) of the tests' engines.
pub const AUDIENCE: &str = "booking.example";

/// A builder over [`ring`] with the tests' [`AUDIENCE`] chosen.
pub fn builder<C: Cipher, Clk: Clock>(
    clock: Clk,
) -> Builder<C, Clk, NoReplayCache, 4, MAX_AAD_LEN, AudienceChoice> {
    Codec::builder(ring(), clock).audience(AUDIENCE)
}

/// Chooses `audience` on `builder`, or, for `None`, builds without one: for tests that take the
/// audience as data (vectors, properties). Real configurations name their choice.
pub fn choose_audience<C: Cipher, Clk: Clock, R: ReplayCache, const K: usize, const A: usize>(
    builder: Builder<C, Clk, R, K, A>,
    audience: Option<&str>,
) -> Builder<C, Clk, R, K, A, AudienceChoice> {
    match audience {
        Some(a) => builder.audience(a),
        None => builder.without_audience(),
    }
}

/// A key with id `id` whose 32 secret bytes are all `secret`.
pub fn key<C: Cipher>(id: &str, secret: u8) -> Key<C> {
    Key::new(
        KeyId::new(id).expect("valid key id"),
        SecretKey::from_bytes([secret; 32]),
    )
}

/// A ring whose only (current) key is `k1`.
pub fn ring<C: Cipher>() -> KeyRing<C, 4> {
    KeyRing::new(key("k1", 1))
}

/// An engine with the default configuration, [`ring`] and [`AUDIENCE`].
///
/// A built configuration cannot change: `Codec` has getters only. This compiles:
///
/// ```
/// use mrtr_core::ManualClock;
/// let clock = ManualClock::new(0);
/// let mrtr = mrtr_tests::fixture::engine::<mrtr_tests::Aes256Gcm, _>(&clock);
/// assert_eq!((mrtr.ttl_ms(), mrtr.max_rounds()), (300_000, 10));
/// ```
///
/// and none of these does (no setter, private fields, no audience choice):
///
/// ```compile_fail,E0061
/// # use mrtr_core::ManualClock;
/// # let clock = ManualClock::new(0);
/// let mrtr = mrtr_tests::fixture::engine::<mrtr_tests::Aes256Gcm, _>(&clock);
/// let _ = mrtr.max_rounds(100);
/// ```
///
/// ```compile_fail,E0616
/// # use mrtr_core::ManualClock;
/// # let clock = ManualClock::new(0);
/// let mut mrtr = mrtr_tests::fixture::engine::<mrtr_tests::Aes256Gcm, _>(&clock);
/// mrtr.ttl_ms = 1;
/// ```
///
/// ```compile_fail,E0277
/// # use mrtr_core::{ManualClock, Codec};
/// # let clock = ManualClock::new(0);
/// let ring = mrtr_tests::fixture::ring::<mrtr_tests::Aes256Gcm>();
/// let mrtr = Codec::builder(ring, &clock).ttl_ms(1_000).build();
/// ```
pub fn engine<C: Cipher, Clk: Clock>(clock: Clk) -> Codec<C, Clk> {
    builder(clock).build().expect("default config")
}

/// An authenticated caller.
pub const ALICE: Principal<'static> = Principal::User {
    issuer: "https://idp.example",
    subject: "alice",
};

/// A validated binding; panics (fails the test) on invalid fields.
pub fn bind<'a>(
    method: &'a str,
    version: &'a str,
    target: &'a str,
    who: Principal<'a>,
) -> Binding<'a> {
    Binding::new(method, version, target, who).expect("valid binding")
}

/// Alice calling the `book_table` tool.
pub fn call() -> Binding<'static> {
    bind("tools/call", VERSION, "book_table", ALICE)
}

/// Seals into a fresh buffer and returns the token text; panics if the pause fails.
pub fn seal<C: Cipher, Clk: Clock, R: ReplayCache, const K: usize, const A: usize>(
    mrtr: &Codec<C, Clk, R, K, A>,
    round: Round,
    binding: &Binding<'_>,
    args: &ArgsDigest,
    continuation: &[u8],
    rng: &mut SeqRng,
) -> String {
    let mut out = Buf::new();
    mrtr.pause(round, binding, args, continuation, rng, &mut out)
        .expect("pause")
        .as_str()
        .to_owned()
}

/// Seals a first-round token for [`call`] with [`ARGS`].
pub fn first<C: Cipher, Clk: Clock, R: ReplayCache, const K: usize, const A: usize>(
    mrtr: &Codec<C, Clk, R, K, A>,
    rng: &mut SeqRng,
) -> String {
    seal(mrtr, Round::FIRST, &call(), &ARGS, b"step=date", rng)
}

/// What a successful resume opened, copied out of the token buffer.
#[derive(Debug)]
pub struct Opened {
    /// The round the token was sealed in.
    pub round: u32,
    /// The round to pause in next.
    pub next_round: Round,
    /// Sealing time.
    pub issued_at_ms: u64,
    /// Expiry.
    pub expires_at_ms: u64,
    /// Random token id.
    pub token_id: TokenId,
    /// Sealed method.
    pub method: String,
    /// The handler's continuation.
    pub continuation: Vec<u8>,
}

/// Runs [`Codec::resume`] with a fresh [`Buf`].
pub fn resume<C: Cipher, Clk: Clock, R: ReplayCache, const K: usize, const A: usize>(
    mrtr: &Codec<C, Clk, R, K, A>,
    token: &str,
    binding: &Binding<'_>,
    args: &ArgsDigest,
) -> Result<Opened, Rejection> {
    let mut buf = Buf::new();
    mrtr.resume(token, binding, args, &mut buf).map(|r| Opened {
        round: r.round(),
        next_round: r.next_round(),
        issued_at_ms: r.issued_at_ms(),
        expires_at_ms: r.expires_at_ms(),
        token_id: r.token_id(),
        method: r.method().to_owned(),
        continuation: r.continuation().to_vec(),
    })
}

/// The reason a resume is rejected; fails the test if it is accepted.
pub fn rejected<C: Cipher, Clk: Clock, R: ReplayCache, const K: usize, const A: usize>(
    mrtr: &Codec<C, Clk, R, K, A>,
    token: &str,
    binding: &Binding<'_>,
    args: &ArgsDigest,
) -> Reason {
    match resume(mrtr, token, binding, args) {
        Ok(opened) => panic!("token accepted: {opened:?}"),
        Err(rejection) => rejection.reason(),
    }
}

/// The header fields of a token, decoded with the test-side codec:
/// (format version, algorithm id, key id).
pub fn header(token: &str) -> (u8, u8, Vec<u8>) {
    let bytes = crate::b64::decode(token).expect("token is canonical base64url");
    let k = usize::from(bytes[2]);
    (bytes[0], bytes[1], bytes[3..3 + k].to_vec())
}

/// Token bytes (before base64url) for a given key id length, nonce length, method length and
/// continuation length: header, nonce, state, tag.
pub const fn token_bytes(key_id: usize, nonce: usize, method: usize, continuation: usize) -> usize {
    3 + key_id + nonce + 72 + method + continuation + 16
}

/// A clock fixed at one instant that, unlike [`mrtr_core::ManualClock`], can be shared
/// between threads.
#[derive(Clone, Copy, Debug)]
pub struct FixedClock(pub u64);

impl Clock for FixedClock {
    fn now_ms(&self) -> u64 {
        self.0
    }
}
