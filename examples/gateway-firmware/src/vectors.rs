//! Golden vectors from `tests/vectors/*.json` (turned into constants by build.rs): every
//! token must come out byte for byte on the target. build.rs turns every vector file it
//! lists into a [`VectorSet`]; a later token format adds its files there and here.

use mrtr_core::binding::Aad;
use mrtr_core::cipher::Cipher;
use mrtr_core::key::{Key, KeyId, KeyRing, MAX_KEY_ID_LEN, SecretKey};
use mrtr_core::token::{MAX_HEADER_LEN, TokenFormat};
use mrtr_core::{
    ArgsDigest, Binding, DEFAULT_MAX_ROUNDS, ManualClock, Mrtr, Principal, Round, TokenBuf,
    token_len_for,
};

use crate::check;
use crate::report::Report;
use crate::rng::{ReplayRng, example_rng};

/// One recorded seal: its inputs and the exact token it produced.
#[derive(Debug)]
pub struct Vector {
    /// Name, for the log.
    pub name: &'static str,
    /// Key id of the sealing key.
    pub key_id: &'static str,
    /// Key bytes.
    pub key: [u8; 32],
    /// What the generator yielded: the 16-byte token id, then the nonce.
    pub rng: &'static [u8],
    /// Clock reading at the seal.
    pub now_ms: u64,
    /// Token lifetime.
    pub ttl_ms: u64,
    /// Round the token was sealed in.
    pub round: u64,
    /// Binding: method.
    pub method: &'static str,
    /// Binding: protocol version.
    pub protocol_version: &'static str,
    /// Binding: target.
    pub target: &'static str,
    /// Binding: `(issuer, subject)`, or anonymous.
    pub principal: Option<(&'static str, &'static str)>,
    /// Argument digest.
    pub args_digest: ArgsDigest,
    /// Sealed continuation.
    pub continuation: &'static [u8],
    /// The canonical associated data.
    pub aad: &'static [u8],
    /// The token.
    pub token: &'static str,
}

/// One vector file.
#[derive(Debug)]
pub struct VectorSet {
    /// The file's `algorithm`.
    pub algorithm: &'static str,
    /// Its vectors.
    pub vectors: &'static [Vector],
}

include!(concat!(env!("OUT_DIR"), "/vectors.rs"));

/// Token buffer large enough for the largest vector's continuation.
type VectorBuf = TokenBuf<{ token_len_for(MAX_VECTOR_CONTINUATION) }>;

/// Reproduces every vector of `set` with cipher `C`.
pub fn check<C: Cipher>(report: &mut Report, set: &VectorSet) {
    defmt::println!("-- golden vectors");
    check!(
        report,
        set.algorithm.eq_ignore_ascii_case(C::ALGORITHM.name()),
        "vector file is for {=str} (backend {=str})",
        set.algorithm,
        C::ALGORITHM.name()
    );
    for v in set.vectors {
        one::<C>(report, v);
    }
}

#[inline(never)]
fn one<C: Cipher>(report: &mut Report, v: &Vector) {
    let principal = match v.principal {
        None => Principal::Anonymous,
        Some((issuer, subject)) => Principal::User { issuer, subject },
    };
    let binding = match Binding::new(v.method, v.protocol_version, v.target, principal) {
        Ok(b) => b,
        Err(e) => {
            check!(report, false, "{=str}: binding: {}", v.name, e);
            return;
        }
    };
    let Ok(id) = KeyId::new(v.key_id) else {
        check!(report, false, "{=str}: key id {=str}", v.name, v.key_id);
        return;
    };
    check!(
        report,
        aad_matches::<C>(v, &binding),
        "{=str}: associated data",
        v.name
    );

    let clock = ManualClock::new(v.now_ms);
    let ring: KeyRing<C, 1> = KeyRing::new(Key::new(id, SecretKey::from_bytes(v.key)));
    let rounds = u32::try_from(v.round)
        .unwrap_or(u32::MAX)
        .max(DEFAULT_MAX_ROUNDS);
    let Ok(mrtr) = Mrtr::builder(ring, &clock)
        .without_audience()
        .seal_format(TokenFormat::V1)
        .ttl_ms(v.ttl_ms)
        .max_rounds(rounds.saturating_add(1))
        .build()
    else {
        check!(
            report,
            false,
            "{=str}: configuration (ttl {=u64})",
            v.name,
            v.ttl_ms
        );
        return;
    };
    let (mut a, mut b) = (VectorBuf::new(), VectorBuf::new());

    // A round-r token was sealed by a handler resumed from a round r-1 token: walk there.
    let mut round = Round::FIRST;
    let mut drbg = example_rng();
    while u64::from(round.get()) < v.round {
        let next = mrtr
            .pause(round, &binding, &v.args_digest, b"", &mut drbg, &mut a)
            .ok()
            .and_then(|s| {
                mrtr.resume(s.as_str(), &binding, &v.args_digest, &mut b)
                    .ok()
            })
            .map(|r| r.next_round());
        match next {
            Some(n) => round = n,
            None => {
                check!(report, false, "{=str}: reach round {=u64}", v.name, v.round);
                return;
            }
        }
    }

    let mut rng = ReplayRng::new(v.rng);
    match mrtr.pause(
        round,
        &binding,
        &v.args_digest,
        v.continuation,
        &mut rng,
        &mut a,
    ) {
        Ok(s) => {
            check!(
                report,
                s.as_str() == v.token && rng.remaining() == 0,
                "{=str}: round {=u64} token reproduced ({=usize} chars)",
                v.name,
                v.round,
                v.token.len()
            );
        }
        Err(e) => {
            check!(report, false, "{=str}: pause: {}", v.name, e);
        }
    }
    let opened = mrtr.resume(v.token, &binding, &v.args_digest, &mut b);
    check!(
        report,
        opened.is_ok_and(|r| r.continuation() == v.continuation && u64::from(r.round()) == v.round),
        "{=str}: recorded token opens to its continuation",
        v.name
    );
}

/// The associated data core builds for the vector's header and binding equals the recorded.
#[inline(never)]
fn aad_matches<C: Cipher>(v: &Vector, binding: &Binding<'_>) -> bool {
    let kid = v.key_id.as_bytes();
    if kid.len() > MAX_KEY_ID_LEN {
        return false;
    }
    let mut header = [0u8; MAX_HEADER_LEN];
    header[0] = TokenFormat::V1.byte();
    header[1] = C::ALGORITHM.id();
    header[2] = kid.len() as u8;
    header[3..3 + kid.len()].copy_from_slice(kid);
    Aad::build(&header[..3 + kid.len()], None, binding).is_some_and(|aad| aad.as_bytes() == v.aad)
}
