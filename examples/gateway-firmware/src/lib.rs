//! An MCP gateway on a microcontroller that pauses and resumes `tools/call` requests with
//! mrtr-core (SEP-2322 `requestState`), checked on the target under QEMU on four families:
//! Cortex-M0 (micro:bit), Cortex-M3 (lm3s6965evb), Cortex-M4F (mps2-an386) and RISC-V
//! rv32imc (virt).
//!
//! Each binary (`aes-gcm`, `chacha20poly1305`, `xchacha20poly1305`, `aes-gcm-siv`) runs
//! [`run`] with one backend: the platform a real firmware provides (TRNG adapter, wall clock),
//! golden vectors of both token formats (v2 bound to their audience, v1 still opening during
//! the rollout window), a full resume chain up to the round cap, rejected tokens, the replay set shared with an
//! interrupt handler, expiry on the wall clock, and the measurements of `docs/embedded.md`.
//! It logs through `defmt`; the host decodes the frames. The `footprint-*` binaries exist
//! only to be measured.

#![no_std]
#![deny(unsafe_code)]

pub mod arch;
pub mod board;
pub mod chain;
pub mod clock;
pub mod config;
pub mod digest;
pub mod expiry;
pub mod footprint;
pub mod gateway;
pub mod keys;
pub mod log;
pub mod mcp;
pub mod measure;
#[cfg(machine = "mps2-an386")]
pub mod net;
pub mod platform;
pub mod rejects;
pub mod replay;
pub mod report;
pub mod rng;
pub mod serve;
pub mod stack;
pub mod text;
pub mod trng;
pub mod uart;
pub mod vectors;

use embedded_hal::delay::DelayNs;
use mrtr_core::cipher::Cipher;
use mrtr_core::limits::{AadLimits, MAX_AAD_LEN};
use mrtr_core::replay::ReplayCache;
use mrtr_core::{
    ArgsDigest, Binding, Clock, Codec, Principal, Round, SealError, TokenBuf, TokenId,
    token_len_for,
};
use rand_core::TryCryptoRng;

use crate::report::{Outcome, Report, outcome};
use crate::text::TokenText;

/// The protocol revision the gateway speaks.
pub const PROTOCOL_VERSION: &str = "2026-07-28";
/// The only method the scenarios pause.
pub const METHOD: &str = "tools/call";
/// The tool being called.
pub const TOOL: &str = "thermostat.schedule";
/// The authenticated caller.
pub const OWNER: Principal<'static> = Principal::User {
    issuer: "https://idp.example",
    subject: "owner-42",
};
/// Stands for the SHA-256 of the call's canonical arguments (computed by the transport).
pub const ARGS: ArgsDigest = [0x5a; 32];

/// The gateway's identity: the audience every token it seals is bound to (token format v2).
pub const GATEWAY_ID: &str = "gateway-0042";

/// The bindings the gateway serves: tool names and principal fields up to 64 bytes, its own
/// audience (method and protocol version at mrtr's limits).
pub const AAD_LIMITS: AadLimits = AadLimits {
    target: 64,
    principal_field: 64,
    audience: GATEWAY_ID.len(),
    ..AadLimits::DEFAULT
};
/// The gateway's AAD capacity (a few hundred bytes instead of the default 1,882).
pub const AAD: usize = AAD_LIMITS.capacity();

/// Largest continuation the gateway seals, in bytes.
pub const MAX_CONTINUATION: usize = 256;
/// Size of a token buffer for [`MAX_CONTINUATION`]: also the longest token text accepted.
pub const TOKEN_CAP: usize = token_len_for(MAX_CONTINUATION);
/// The gateway's token buffer.
pub type Token = TokenBuf<TOKEN_CAP>;

/// The binding of a `tools/call` to `tool` by `who`.
pub fn call<'a>(tool: &'a str, who: Principal<'a>) -> Binding<'a> {
    Binding::new(METHOD, PROTOCOL_VERSION, tool, who)
        .unwrap_or_else(|_| panic!("the scenarios' bindings are valid"))
}

/// A token just sealed, copied out of its buffer, with its id and expiry.
pub struct Issued {
    /// The token's text.
    pub text: TokenText,
    /// Its random id.
    pub id: TokenId,
    /// Its expiry, ms since the Unix epoch.
    pub expires_at_ms: u64,
}

// The helpers below keep their token buffers (559 B each) in frames of their own
// (`#[inline(never)]`), so that a scenario's frame does not grow a buffer per call site: on
// the micro:bit's 16 KiB of RAM, that is what lets every scenario run.

/// Seals a first-round token for `binding` and [`ARGS`].
#[inline(never)]
pub fn issue<C: Cipher, Clk: Clock, R: ReplayCache, const K: usize, const A: usize>(
    mrtr: &Codec<C, Clk, R, K, A>,
    binding: &Binding<'_>,
    continuation: &[u8],
    rng: &mut impl TryCryptoRng,
) -> Result<Issued, SealError> {
    let mut out = Token::new();
    mrtr.pause(Round::FIRST, binding, &ARGS, continuation, rng, &mut out)
        .map(|s| Issued {
            text: TokenText::of(s.as_str()),
            id: s.token_id(),
            expires_at_ms: s.expires_at_ms(),
        })
}

/// Resumes `token` and says what happened.
#[inline(never)]
pub fn open<C: Cipher, Clk: Clock, R: ReplayCache, const K: usize, const A: usize>(
    mrtr: &Codec<C, Clk, R, K, A>,
    token: &str,
    binding: &Binding<'_>,
    args: &ArgsDigest,
) -> Outcome {
    let mut buf = Token::new();
    outcome(&mrtr.resume(token, binding, args, &mut buf))
}

/// Whether `token` resumes to exactly `continuation`.
#[inline(never)]
pub fn opens_to<C: Cipher, Clk: Clock, R: ReplayCache, const K: usize, const A: usize>(
    mrtr: &Codec<C, Clk, R, K, A>,
    token: &str,
    binding: &Binding<'_>,
    continuation: &[u8],
) -> bool {
    let mut buf = Token::new();
    mrtr.resume(token, binding, &ARGS, &mut buf)
        .is_ok_and(|r| r.continuation() == continuation)
}

/// `embedded-hal`'s delay on the board's tick ([`arch::wait_ms`]). Resolution is one tick: a
/// delay waits up to one millisecond more than asked, never less.
#[derive(Clone, Copy, Debug, Default)]
pub struct TickDelay;

impl DelayNs for TickDelay {
    fn delay_ns(&mut self, ns: u32) {
        arch::wait_ms(u64::from(ns.div_ceil(1_000_000)));
    }

    fn delay_us(&mut self, us: u32) {
        arch::wait_ms(u64::from(us.div_ceil(1_000)));
    }

    fn delay_ms(&mut self, ms: u32) {
        arch::wait_ms(u64::from(ms));
    }
}

/// Runs every scenario for cipher `C`, then the measurements, and ends the QEMU run with the
/// verdict.
pub fn run<C: Cipher>(golden: &vectors::Golden) -> ! {
    stack::paint_all();
    let mut timer = arch::Timer::start();
    let mut report = Report::new();
    defmt::println!("-- {=str}: {=str}", board::MACHINE, board::FAMILY);
    defmt::println!(
        "   backend {=str}, token buffer {=usize} B, AAD capacity {=usize} B (default {=usize} B)",
        C::ALGORITHM.name(),
        TOKEN_CAP,
        AAD,
        MAX_AAD_LEN
    );
    // The gateway's boot: learn the time from the upstream before serving anything.
    let learned = clock::parse_http_date(platform::UPSTREAM_DATE).map(|ms| clock::CLOCK.learn(ms));
    check!(
        report,
        learned == Some(Ok(())),
        "gateway clock learned from the upstream Date header"
    );
    platform::run::<C>(&mut report);
    let mut rng = rng::example_rng();
    vectors::check::<C>(&mut report, golden);
    chain::run::<C>(&mut report, &mut rng);
    rejects::run::<C>(&mut report, &mut rng);
    replay::run::<C>(&mut report, &mut rng);
    expiry::run::<C>(&mut report, &mut rng, &mut TickDelay);
    digest::check(&mut report, &mut timer);
    measure::run::<C>(&mut report, &mut rng, &mut timer);
    defmt::println!(
        "   measure: whole_run_stack={=usize}",
        stack::deepest_since_boot()
    );
    report.finish()
}

/// The body of a full firmware binary: entry point, the tick and second-link handlers, and
/// the panic handler, for cipher `$cipher` and golden vectors `$vectors`.
#[macro_export]
macro_rules! firmware {
    ($cipher:ty, $vectors:expr) => {
        #[cfg(target_arch = "arm")]
        #[cortex_m_rt::entry]
        fn main() -> ! {
            $crate::run::<$cipher>(&$vectors)
        }

        #[cfg(target_arch = "arm")]
        #[cortex_m_rt::exception]
        fn SysTick() {
            $crate::arch::on_tick();
        }

        #[cfg(target_arch = "arm")]
        #[cortex_m_rt::exception]
        fn PendSV() {
            $crate::replay::on_second_link();
        }

        #[cfg(target_arch = "riscv32")]
        #[riscv_rt::entry]
        fn main() -> ! {
            $crate::run::<$cipher>(&$vectors)
        }

        #[cfg(target_arch = "riscv32")]
        #[riscv_rt::core_interrupt(riscv::interrupt::Interrupt::MachineSoft)]
        fn machine_soft() {
            $crate::arch::ack_second_link();
            $crate::replay::on_second_link();
        }

        #[panic_handler]
        fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
            $crate::report::panicked(info)
        }
    };
}

/// The body of a footprint binary: seal and resume once with `$cipher` (or nothing, for the
/// baseline), exit, and a panic handler that only exits.
#[macro_export]
macro_rules! footprint {
    ($($cipher:ty)?) => {
        #[cfg(target_arch = "arm")]
        #[cortex_m_rt::entry]
        fn main() -> ! {
            $crate::arch::exit(run())
        }

        #[cfg(target_arch = "riscv32")]
        #[riscv_rt::entry]
        fn main() -> ! {
            $crate::arch::exit(run())
        }

        fn run() -> bool {
            $(return $crate::footprint::seal_and_open::<$cipher>();)?
            #[allow(unreachable_code)]
            core::hint::black_box(true)
        }

        #[panic_handler]
        fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
            $crate::arch::exit(false)
        }
    };
}
