//! Golden vectors from `tests/vectors/*.json` (format v1) and `tests/vectors/v2/*.json`
//! (format v2), turned into constants by build.rs: every token must come out byte for byte on
//! the target.
//!
//! Per vector:
//!
//! * the associated data core builds equals the recorded one (v2: with the vector's audience);
//! * the token is sealed again byte for byte (v1 by an engine that seals v1, as the first step
//!   of a rolling upgrade does; v2 bound to the vector's audience);
//! * v1 acceptance: the recorded v1 token opens on an engine configured as the gateway (it
//!   seals v2 bound to [`GATEWAY_ID`], and still opens v1 in its startup window), and is
//!   refused as `version_retired` once v1 is turned off;
//! * v2: the recorded token opens for its audience, and the gateway, whose audience differs,
//!   refuses it.
//!
//! The engines use the default AAD capacity: the vectors' bindings (a 1,024-byte target, a
//! 255-byte audience) are larger than the gateway's own.

use mrtr_core::Aad;
use mrtr_core::TokenFormat;
use mrtr_core::cipher::Cipher;
use mrtr_core::key::{Key, KeyId, KeyRing, MAX_KEY_ID_LEN, SecretKey};
use mrtr_core::limits::MAX_HEADER_LEN;
use mrtr_core::replay::NoReplayCache;
use mrtr_core::{
    AcceptV1, ArgsDigest, Binding, Codec, DEFAULT_MAX_ROUNDS, ManualClock, Principal, Reason,
    Round, TokenBuf, token_len_for,
};

use crate::report::{Outcome, Report};
use crate::rng::{ReplayRng, example_rng};
use crate::{GATEWAY_ID, check, rejected};

/// One recorded seal: its inputs and the exact token it produced.
#[derive(Debug)]
pub struct Vector {
    /// Name, for the log.
    pub name: &'static str,
    /// The sealing engine's audience (format v2), or none (built without one; always none
    /// in format v1).
    pub audience: Option<&'static str>,
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

/// The vector files of one algorithm, one per token format.
#[derive(Debug)]
pub struct Golden {
    /// `tests/vectors/<algorithm>.json`.
    pub v1: VectorSet,
    /// `tests/vectors/v2/<algorithm>.json`.
    pub v2: VectorSet,
}

include!(concat!(env!("OUT_DIR"), "/vectors.rs"));

/// Token buffer large enough for the largest vector's continuation.
type VectorBuf = TokenBuf<{ token_len_for(MAX_VECTOR_CONTINUATION) }>;

/// An engine over one vector's key, at the default AAD capacity.
type Engine<'c, C> = Codec<C, &'c ManualClock, NoReplayCache, 1>;

/// Reproduces every vector of both formats with cipher `C`.
pub fn check<C: Cipher>(report: &mut Report, golden: &Golden) {
    defmt::println!("-- golden vectors, format v1");
    set::<C>(report, &golden.v1, TokenFormat::V1);
    defmt::println!("-- golden vectors, format v2");
    set::<C>(report, &golden.v2, TokenFormat::V2);
}

fn set<C: Cipher>(report: &mut Report, set: &VectorSet, format: TokenFormat) {
    check!(
        report,
        set.algorithm.eq_ignore_ascii_case(C::ALGORITHM.name()),
        "v{=u8} vector file is for {=str} (backend {=str})",
        format.byte(),
        set.algorithm,
        C::ALGORITHM.name()
    );
    for v in set.vectors {
        one::<C>(report, v, format);
    }
}

/// How an engine for a vector is configured.
#[derive(Clone, Copy)]
struct Config {
    audience: Option<&'static str>,
    seal: TokenFormat,
    accept_v1: AcceptV1,
}

impl Config {
    /// The engine that sealed `v` in `format`.
    fn sealer(v: &Vector, format: TokenFormat) -> Self {
        Self {
            audience: v.audience,
            seal: format,
            accept_v1: AcceptV1::ForStartupWindow,
        }
    }

    /// Configured as the gateway: seals v2 bound to its id; v1 as `accept_v1` says.
    fn gateway(accept_v1: AcceptV1) -> Self {
        Self {
            audience: Some(GATEWAY_ID),
            seal: TokenFormat::V2,
            accept_v1,
        }
    }
}

fn engine<'c, C: Cipher>(v: &Vector, clock: &'c ManualClock, cfg: Config) -> Option<Engine<'c, C>> {
    let id = KeyId::new(v.key_id).ok()?;
    let ring: KeyRing<C, 1> = KeyRing::new(Key::new(id, SecretKey::from_bytes(v.key)));
    let rounds = u32::try_from(v.round)
        .unwrap_or(u32::MAX)
        .max(DEFAULT_MAX_ROUNDS);
    let builder = Codec::builder(ring, clock);
    let builder = match cfg.audience {
        Some(a) => builder.audience(a),
        None => builder.without_audience(),
    };
    builder
        .seal_format(cfg.seal)
        .accept_v1(cfg.accept_v1)
        .ttl_ms(v.ttl_ms)
        .max_rounds(rounds.saturating_add(1))
        .build()
        .ok()
}

fn binding(v: &Vector) -> Option<Binding<'static>> {
    let principal = match v.principal {
        None => Principal::Anonymous,
        Some((issuer, subject)) => Principal::User { issuer, subject },
    };
    Binding::new(v.method, v.protocol_version, v.target, principal).ok()
}

#[inline(never)]
fn one<C: Cipher>(report: &mut Report, v: &Vector, format: TokenFormat) {
    let Some(binding) = binding(v) else {
        check!(report, false, "{=str}: binding", v.name);
        return;
    };
    check!(
        report,
        aad_matches::<C>(v, format, &binding),
        "{=str}: associated data",
        v.name
    );
    reproduce::<C>(report, v, format, &binding);
    match format {
        TokenFormat::V1 => {
            let opened = resume::<C>(v, &binding, Config::gateway(AcceptV1::ForStartupWindow));
            check!(
                report,
                opened == Some(Ok(true)),
                "{=str}: recorded v1 token opens on the gateway (seals v2, v1 window open)",
                v.name
            );
            let off = resume::<C>(v, &binding, Config::gateway(AcceptV1::Never));
            rejected!(
                report,
                as_outcome(off),
                Reason::VersionRetired,
                "{=str}: recorded v1 token refused once v1 is off",
                v.name
            );
        }
        _ => {
            let opened = resume::<C>(v, &binding, Config::sealer(v, format));
            check!(
                report,
                opened == Some(Ok(true)),
                "{=str}: recorded token opens for its audience",
                v.name
            );
            let elsewhere = resume::<C>(v, &binding, Config::gateway(AcceptV1::ForStartupWindow));
            rejected!(
                report,
                as_outcome(elsewhere),
                Reason::Tampered,
                "{=str}: recorded token refused by the gateway (audience {=str})",
                v.name,
                GATEWAY_ID
            );
        }
    }
}

/// Seals `v` again in `format` with its recorded random bytes; checks the token.
#[inline(never)]
fn reproduce<C: Cipher>(
    report: &mut Report,
    v: &Vector,
    format: TokenFormat,
    binding: &Binding<'_>,
) {
    let clock = ManualClock::new(v.now_ms);
    let Some(mrtr) = engine::<C>(v, &clock, Config::sealer(v, format)) else {
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
            .pause(round, binding, &v.args_digest, b"", &mut drbg, &mut a)
            .ok()
            .and_then(|s| {
                mrtr.resume(s.as_str(), binding, &v.args_digest, &mut b)
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
        binding,
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
}

/// Resumes the recorded token on an engine configured as `cfg`, at the vector's clock:
/// `None` if that engine does not build, `Ok(true)` if it opened to the recorded round and
/// continuation, the reason if it was refused.
#[inline(never)]
fn resume<C: Cipher>(
    v: &Vector,
    binding: &Binding<'_>,
    cfg: Config,
) -> Option<Result<bool, Reason>> {
    let clock = ManualClock::new(v.now_ms);
    let mrtr = engine::<C>(v, &clock, cfg)?;
    let mut buf = VectorBuf::new();
    Some(
        mrtr.resume(v.token, binding, &v.args_digest, &mut buf)
            .map(|r| r.continuation() == v.continuation && u64::from(r.round()) == v.round)
            .map_err(|r| r.reason()),
    )
}

/// A resume's result as the log shows it (an engine that does not build counts as
/// accepted: it refused nothing).
fn as_outcome(got: Option<Result<bool, Reason>>) -> Outcome {
    match got {
        Some(Err(reason)) => Outcome::Rejected(reason),
        _ => Outcome::Accepted,
    }
}

/// The associated data core builds for the vector's header, audience and binding equals the
/// recorded; a v1 vector carries no audience.
#[inline(never)]
fn aad_matches<C: Cipher>(v: &Vector, format: TokenFormat, binding: &Binding<'_>) -> bool {
    let kid = v.key_id.as_bytes();
    if kid.len() > MAX_KEY_ID_LEN || (format == TokenFormat::V1 && v.audience.is_some()) {
        return false;
    }
    let mut header = [0u8; MAX_HEADER_LEN];
    header[0] = format.byte();
    header[1] = C::ALGORITHM.id();
    header[2] = kid.len() as u8;
    header[3..3 + kid.len()].copy_from_slice(kid);
    let audience = match format {
        TokenFormat::V1 => None,
        _ => v.audience,
    };
    Aad::build(&header[..3 + kid.len()], audience, binding)
        .is_some_and(|aad| aad.as_bytes() == v.aad)
}
