//! The gateway's request handlers' view of mrtr: pause and resume that first make sure the
//! wall clock is known, and say so clearly when it is not.

use mrtr_core::Binding;
use mrtr_core::cipher::Cipher;
use mrtr_core::replay::ReplayCache;
use mrtr_core::{ArgsDigest, Codec, Reason, Resumed, Round, SealError, Sealed, TokenBuf};
use rand_core::TryCryptoRng;

use crate::clock::{Monotonic, WallClock};

/// Why the gateway could not pause or resume a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, defmt::Format)]
pub enum GatewayError {
    /// The wall-clock time has not been learned yet: nothing is sealed or opened until it is.
    TimeUnknown,
    /// Sealing failed (a TRNG failure is `Seal(SealError::Rng)`).
    Seal(SealError),
    /// The token was rejected (uniform on the wire; the reason is for the log).
    Rejected(Reason),
}

/// The gateway's engine: its clock is a [`WallClock`].
pub type Engine<'c, C, M, R, const A: usize> = Codec<C, &'c WallClock<M>, R, 2, A>;

/// Pauses a call, once the time is known.
pub fn pause<'b, C, M, R, G, const A: usize, const N: usize>(
    engine: &Engine<'_, C, M, R, A>,
    round: Round,
    binding: &Binding<'_>,
    args: &ArgsDigest,
    continuation: &[u8],
    rng: &mut G,
    out: &'b mut TokenBuf<N>,
) -> Result<Sealed<'b>, GatewayError>
where
    C: Cipher,
    M: Monotonic,
    R: ReplayCache,
    G: TryCryptoRng + ?Sized,
{
    engine.clock().now().ok_or(GatewayError::TimeUnknown)?;
    engine
        .pause(round, binding, args, continuation, rng, out)
        .map_err(GatewayError::Seal)
}

/// Resumes a call, once the time is known.
pub fn resume<'b, C, M, R, const A: usize, const N: usize>(
    engine: &Engine<'_, C, M, R, A>,
    token: &str,
    binding: &Binding<'_>,
    args: &ArgsDigest,
    buf: &'b mut TokenBuf<N>,
) -> Result<Resumed<'b>, GatewayError>
where
    C: Cipher,
    M: Monotonic,
    R: ReplayCache,
{
    engine.clock().now().ok_or(GatewayError::TimeUnknown)?;
    engine
        .resume(token, binding, args, buf)
        .map_err(|r| GatewayError::Rejected(r.reason()))
}

/// Runs every resume check but the replay record, once the time is known: the request's
/// own checks (its arguments, the capabilities it declared) run next, and only then is the
/// token spent with [`spend`], so a request refused for its own fault does not burn it.
pub fn verify<'b, C, M, R, const A: usize, const N: usize>(
    engine: &Engine<'_, C, M, R, A>,
    token: &str,
    binding: &Binding<'_>,
    args: &ArgsDigest,
    buf: &'b mut TokenBuf<N>,
) -> Result<Resumed<'b>, GatewayError>
where
    C: Cipher,
    M: Monotonic,
    R: ReplayCache,
{
    engine.clock().now().ok_or(GatewayError::TimeUnknown)?;
    engine
        .verify(token, binding, args, buf)
        .map_err(|r| GatewayError::Rejected(r.reason()))
}

/// Records a verified token in the engine's replay cache: single use. A token already
/// spent, or a full cache, is refused.
pub fn spend<C, M, R, const A: usize>(
    engine: &Engine<'_, C, M, R, A>,
    resumed: &Resumed<'_>,
) -> Result<(), GatewayError>
where
    C: Cipher,
    M: Monotonic,
    R: ReplayCache,
{
    let now = engine.clock().now().ok_or(GatewayError::TimeUnknown)?;
    engine
        .replay_cache()
        .check_and_record(&resumed.token_id(), resumed.expires_at_ms(), now)
        .map_err(|e| GatewayError::Rejected(engine.replay_rejection(e).reason()))
}
