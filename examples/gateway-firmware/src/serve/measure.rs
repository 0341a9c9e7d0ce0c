//! Per-request budgets of the serving gateway, for `docs/embedded.md`: with the cargo feature
//! `measure`, every request a transport hands to the MCP server is measured whole (parse,
//! argument digest, seal or open, replay record, PWM change, and writing the response: onto
//! the UART for stdio, into the socket's transmit buffer for HTTP) and logged as one line
//! (wrapped here):
//!
//! ```text
//! measure: op=request seq=4 method=tools/call tool=set_output state=1 request=606
//!   instructions=N stack=B since_boot=B digest_instructions=N digest_stack=B digest=true
//! ```
//!
//! * `instructions`: SysTick ticks under QEMU's `-icount shift=0`, calibrated (Cortex-M), or
//!   `minstret` (RISC-V), through [`Timer::measure`](crate::arch::Timer::measure);
//! * `stack`: the request's peak stack below the serving loop's frame, by painting
//!   ([`crate::stack::peak`]); `since_boot`: the deepest the stack has been since the
//!   serving loop was entered, boot included (the frames above it: `serving sp=`, logged
//!   once by [`arm`]);
//! * `digest_*`: the SHA-256 of the same request's canonical arguments alone
//!   (`mrtr_json::args_digest` on the parsed request), measured again after the request,
//!   to set against the seal;
//! * `state=1`: the request carried a `requestState` (a resume); `seq`: requests since boot.
//!
//! Why a cargo feature and not a config line: off, the hooks are `#[inline(always)]`
//! pass-throughs, so the binaries `serve.sh` runs carry no measuring code, no branch per
//! request and no log strings, and their flash and static RAM are what `docs/embedded.md`
//! reports; a `measure=1` line would ship all of it in every gateway. The report builds the
//! measuring binaries separately and checks that the MCP server, mrtr-core and mrtr-json
//! compile to the same code size in both.
//!
//! Measuring masks interrupts for the whole request
//! ([`Timer::measure`](crate::arch::Timer::measure)): the UART and the LAN9118 are polled,
//! so nothing the request does waits for an interrupt, and the request never sleeps (only
//! reading the next line or polling the network does, outside the measurement). The
//! millisecond clock stands still meanwhile; a request takes well under one.

#[cfg(not(feature = "measure"))]
use crate::arch::Timer;
#[cfg(not(feature = "measure"))]
use crate::uart::Line;

/// Hands the serving loop's [`Timer`](crate::arch::Timer) over (it can be started only
/// once): kept for [`stdio`] and [`http`] with `measure`; without, given straight back.
#[cfg(not(feature = "measure"))]
#[inline(always)]
pub fn arm(timer: Timer) -> Timer {
    timer
}

/// Runs `f`, which answers the stdio request framed as `got` in `line` and writes the
/// response; measured and logged with `measure`.
#[cfg(not(feature = "measure"))]
#[inline(always)]
pub fn stdio<R>(line: &[u8], got: Line, f: impl FnOnce() -> R) -> R {
    let _ = (line, got);
    f()
}

/// Runs `f`, which answers the HTTP request `body` and queues the response; measured and
/// logged with `measure`.
#[cfg(not(feature = "measure"))]
#[inline(always)]
pub fn http<R>(body: &[u8], f: impl FnOnce() -> R) -> R {
    let _ = body;
    f()
}

#[cfg(feature = "measure")]
pub use self::on::{Armed, arm, http, stdio};

#[cfg(feature = "measure")]
mod on {
    use core::cell::RefCell;

    use critical_section::Mutex;
    use mrtr_json::Value;

    use crate::arch::{self, Timer};
    use crate::mcp::request::LIMITS;
    use crate::stack;
    use crate::uart::Line;

    /// The timer, and the requests measured so far.
    struct Meter {
        timer: Timer,
        seq: u32,
    }

    static METER: Mutex<RefCell<Option<Meter>>> = Mutex::new(RefCell::new(None));

    /// What [`arm`] leaves the serving loop: the timer is the meter's now.
    pub struct Armed;

    /// Keeps `timer` for the measurements and logs where the serving loop's stack starts.
    #[inline(always)]
    pub fn arm(timer: Timer) -> Armed {
        defmt::println!(
            "measure: serving sp={=usize:#010x} calibration={=u32}",
            arch::stack_pointer(),
            timer.calibration()
        );
        critical_section::with(|cs| METER.borrow_ref_mut(cs).replace(Meter { timer, seq: 0 }));
        Armed
    }

    /// Measures one stdio request (a line that did not fit too, labelled `-`).
    pub fn stdio<R>(line: &[u8], got: Line, f: impl FnOnce() -> R) -> R {
        let request = match got {
            Line::Complete(n) => line.get(..n).unwrap_or_default(),
            Line::TooLong => &[],
        };
        measured(request, f)
    }

    /// Measures one HTTP request.
    pub fn http<R>(body: &[u8], f: impl FnOnce() -> R) -> R {
        measured(body, f)
    }

    /// Runs `f` measured, then logs the figures with what `request` asked.
    #[inline(never)]
    fn measured<R>(request: &[u8], f: impl FnOnce() -> R) -> R {
        let Some(mut meter) = critical_section::with(|cs| METER.borrow_ref_mut(cs).take()) else {
            return f();
        };
        meter.seq += 1;
        let ((r, cost), depth) = stack::peak(|| meter.timer.measure(f));
        let since_boot = stack::deepest_since_boot();
        let parsed = mrtr_json::parse(request, &LIMITS).ok();
        let (method, tool, state) = labels(parsed);
        let ((digest, digest_cost), digest_depth) = stack::peak(|| {
            meter
                .timer
                .measure(|| digest(parsed.and_then(|p| p.get("params"))))
        });
        match (cost, depth) {
            (Some(c), Some(d)) => defmt::println!(
                "measure: op=request seq={=u32} method={=str} tool={=str} state={=u8} request={=usize} instructions={=u32} stack={=usize} since_boot={=usize} digest_instructions={=u32} digest_stack={=usize} digest={=bool}",
                meter.seq,
                method,
                tool,
                u8::from(state),
                request.len(),
                c.instructions,
                d,
                since_boot,
                digest_cost.map_or(0, |c| c.instructions),
                digest_depth.unwrap_or(0),
                digest
            ),
            _ => defmt::println!(
                "measure: op=request seq={=u32} method={=str} out of range (cost {}, stack {})",
                meter.seq,
                method,
                cost,
                depth
            ),
        }
        critical_section::with(|cs| METER.borrow_ref_mut(cs).replace(meter));
        r
    }

    /// The request's method, tool (or prompt) name and whether it carries a `requestState`.
    fn labels(request: Option<Value<'_>>) -> (&str, &str, bool) {
        let method = request
            .and_then(|r| r.get("method"))
            .and_then(|m| m.as_str());
        let params = request.and_then(|r| r.get("params"));
        let name = params.and_then(|p| p.get("name")).and_then(|n| n.as_str());
        let state = params.is_some_and(|p| p.get("requestState").is_some());
        (method.unwrap_or("-"), name.unwrap_or("-"), state)
    }

    /// The argument digest of `params`, as the server computes it; whether it succeeded.
    #[inline(never)]
    fn digest(params: Option<Value<'_>>) -> bool {
        mrtr_json::args_digest(params.and_then(|p| p.get("arguments"))).is_ok()
    }
}
