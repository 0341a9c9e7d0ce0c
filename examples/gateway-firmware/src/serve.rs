//! Booting the gateway as an MCP server, and serving MCP stdio over the board's UART.
//!
//! At boot the gateway reads its configuration file ([`crate::config`]), whose path QEMU
//! passes as the second word of the semihosting command line
//! (`-semihosting-config enable=on,target=native,arg=gateway,arg=PATH`), learns the time of
//! day from the host (semihosting `SYS_TIME`; a real board takes it from SNTP or its
//! upstream's `Date` header, see [`crate::clock`]), seeds its ChaCha20 DRBG from the file's
//! `seed` (on the micro:bit mixed with 32 bytes of the nRF51's hardware RNG), builds its key
//! ring and engine, wipes the file's text, and serves. Any problem is logged and ends the
//! run with a failure exit status: the gateway never serves half-configured.
//!
//! The buffers (request line, response, token buffers) are one [`Buffers`] in a `static`,
//! and the server (its engine, key ring and DRBG) is built into a [`Slot`] in another, both
//! handed over once by the binary's entry point ([`serve_stdio!`](crate::serve_stdio)): none
//! of them lives on a stack frame (on the micro:bit, 16 KiB of RAM in all, the stack has
//! room for one request's work and the boot's, not for the server besides).

mod host;
pub mod measure;

use mrtr_core::Principal;
use mrtr_core::cipher::Cipher;

use crate::clock::CLOCK;
use crate::config::{Config, KeyEntry};
use crate::mcp::{self, KeySpec, Scratch, Server, Settings, Slot};
use crate::uart::{Line, LineReader, Serial, Uart};
use crate::{arch, board};

/// Longest request line (and config file), bytes.
#[cfg(machine = "microbit")]
pub const LINE: usize = 2 * 1024;
/// Longest response line, bytes.
#[cfg(machine = "microbit")]
pub const RESPONSE: usize = 2 * 1024 + 512;
/// Longest request line (and config file), bytes.
#[cfg(not(machine = "microbit"))]
pub const LINE: usize = 8 * 1024;
/// Longest response line, bytes.
#[cfg(not(machine = "microbit"))]
pub const RESPONSE: usize = 8 * 1024;

/// Everything the serving loop writes into, kept in one `static` (`.bss`).
pub struct Buffers {
    /// The request line being read (first the config file's text).
    pub line: [u8; LINE],
    /// The response being written.
    pub response: [u8; RESPONSE],
    /// The server's token buffers.
    pub scratch: Scratch,
}

impl Buffers {
    /// Zeroed buffers, for a `static`.
    pub const fn new() -> Self {
        Self {
            line: [0; LINE],
            response: [0; RESPONSE],
            scratch: Scratch::new(),
        }
    }
}

impl Default for Buffers {
    fn default() -> Self {
        Self::new()
    }
}

/// Boots and serves MCP stdio over the UART, forever: the server is built into `slot`.
pub fn stdio<C: Cipher>(buffers: &'static mut Buffers, slot: &'static mut Slot<C>) -> ! {
    crate::stack::paint_all();
    let _timer = measure::arm(arch::Timer::start());
    let Buffers {
        line,
        response,
        scratch,
    } = buffers;
    // Built into the static slot by `boot`: the engine is never moved.
    let ok = boot::<C>(line, scratch, slot);
    let Some(server) = slot.as_mut().filter(|_| ok) else {
        defmt::error!("the gateway does not start: fix the configuration above");
        arch::exit(false)
    };
    defmt::println!(
        "serving MCP 2026-07-28 over the UART (stdio framing): line buffer {=usize} B, response buffer {=usize} B",
        LINE,
        RESPONSE
    );
    let mut uart = Uart::take();
    let mut lines = LineReader;
    let mut peak = 0;
    loop {
        // The deepest the stack has been, logged whenever it grows (painted at boot).
        let deepest = crate::stack::deepest_since_boot();
        if deepest > peak {
            peak = deepest;
            defmt::println!("stack peak so far: {=usize} B", peak);
        }
        let got = lines.next(&mut uart, line);
        // One request answered and written (measured whole with the `measure` feature).
        measure::stdio(line, got, || {
            let reply = match got {
                Line::Complete(n) => {
                    let request = line.get(..n).unwrap_or_default();
                    server.handle(request, Principal::Anonymous, response)
                }
                Line::TooLong => {
                    defmt::warn!("a request line longer than {=usize} B was discarded", LINE);
                    mcp::too_long(line, response)
                }
            };
            if let Some(bytes) = response.get(..reply.len).filter(|b| !b.is_empty()) {
                uart.write_all(bytes);
                uart.write_byte(b'\n');
            }
        });
    }
}

/// Reads the configuration into `text`, learns the time, and builds the server into
/// `slot`; `false` (everything logged) on any problem. The file's text is wiped before
/// returning.
#[inline(never)]
pub fn boot<'s, C: Cipher>(
    text: &mut [u8],
    scratch: &'s mut Scratch,
    slot: &mut Option<Server<'s, C>>,
) -> bool {
    boot_with::<C>(text, scratch, slot, |_| {})
}

/// Like [`boot`], and shows the parsed configuration to `inspect` once the server has
/// started, before the file's text is wiped: a transport copies what it needs out of it
/// (the HTTP one, the `token=` lines and a seed for its TCP/IP stack). `inspect` is not
/// called when the configuration is refused.
#[inline(never)]
pub fn boot_with<'s, C: Cipher>(
    text: &mut [u8],
    scratch: &'s mut Scratch,
    slot: &mut Option<Server<'s, C>>,
    inspect: impl FnOnce(&Config<'_>),
) -> bool {
    defmt::println!("mrtr gateway on {=str}", board::FAMILY);
    let ok = read_config(text)
        .and_then(|len| text.get(..len))
        .is_some_and(|text| configure::<C>(text, scratch, slot, inspect));
    text.fill(0);
    ok
}

/// Reads the file the semihosting command line names into `text`: its length (`None`,
/// logged, when there is no such file or it does not fit).
#[inline(never)]
pub fn read_config(text: &mut [u8]) -> Option<usize> {
    let mut cmdline = [0u8; 300];
    let Some(cmd) = host::command_line(&mut cmdline) else {
        defmt::error!(
            "no semihosting command line: run QEMU with -semihosting-config enable=on,target=native,arg=gateway,arg=CONFIG_PATH"
        );
        return None;
    };
    let Some(path) = cmd.split(|b| *b == b' ').filter(|w| !w.is_empty()).nth(1) else {
        defmt::error!("no config file path on the command line (the second semihosting arg)");
        return None;
    };
    match host::read_file(path, text) {
        Ok(len) => Some(len),
        Err(e) => {
            defmt::error!("cannot read the config file: {}", e);
            None
        }
    }
}

/// Parses the configuration, starts the server into `slot`, and shows the configuration
/// to `inspect` if it started.
#[inline(never)]
fn configure<'s, C: Cipher>(
    text: &[u8],
    scratch: &'s mut Scratch,
    slot: &mut Option<Server<'s, C>>,
    inspect: impl FnOnce(&Config<'_>),
) -> bool {
    let Some(config) = parse(text) else {
        return false;
    };
    if !start::<C>(&config, scratch, slot) {
        return false;
    }
    show(inspect, &config);
    true
}

/// Runs `inspect` on `config` in a frame of its own: inlined into [`configure`], its
/// working memory would sit under the server's construction, which runs before it.
#[inline(never)]
fn show(inspect: impl FnOnce(&Config<'_>), config: &Config<'_>) {
    inspect(config);
}

/// Parses the configuration (problems logged), in a frame of its own: the parser's working
/// memory is gone before the server is built.
#[inline(never)]
fn parse(text: &[u8]) -> Option<Config<'_>> {
    Config::parse(text, |p| {
        if p.line == 0 {
            defmt::error!("config: {=str}", p.what);
        } else {
            defmt::error!("config line {=usize}: {=str}", p.line, p.what);
        }
    })
}

/// Learns the time from the host, seeds the DRBG and builds the server for `config` into
/// `slot`; `false` (logged) on any problem. For a transport that keeps the parsed
/// [`Config`] (the HTTP one needs its `token=` lines).
#[inline(never)]
pub fn start<'s, C: Cipher>(
    config: &Config<'_>,
    scratch: &'s mut Scratch,
    slot: &mut Option<Server<'s, C>>,
) -> bool {
    let Some(now) = host::unix_seconds().and_then(|s| s.checked_mul(1000)) else {
        defmt::error!("the host did not tell the time (semihosting SYS_TIME)");
        return false;
    };
    if let Err(e) = CLOCK.learn(now) {
        defmt::error!("the host's time is implausible: {}", e);
        return false;
    }
    let Some(seed) = seed(config) else {
        return false;
    };
    let Some(current) = config.current_key().map(spec) else {
        return false;
    };
    let settings = Settings {
        audience: config.audience,
        ttl_ms: config.ttl_ms,
        max_rounds: config.max_rounds,
    };
    let previous = config.previous_key().map(spec);
    if let Err(e) = Server::init(slot, &settings, current, previous, seed, scratch) {
        defmt::error!("config: the engine refuses these settings: {}", e);
        return false;
    }
    defmt::println!(
        "audience {=str}, sealing key {=str} ({=usize} key(s)), ttl {=u64} ms, max rounds {=u32}, {=usize} bearer token(s)",
        config.audience,
        current.id,
        config.keys.iter().flatten().count(),
        config.ttl_ms,
        config.max_rounds,
        config.tokens().count()
    );
    true
}

fn spec<'a>(k: &'a KeyEntry<'_>) -> KeySpec<'a> {
    KeySpec {
        id: k.id,
        secret: &k.secret,
    }
}

/// The DRBG seed: the file's, mixed on the micro:bit with its hardware RNG.
#[inline(never)]
fn seed(config: &Config<'_>) -> Option<[u8; 32]> {
    #[allow(unused_mut)]
    let mut seed = config.seed;
    #[cfg(machine = "microbit")]
    {
        use rand_core::TryRng;
        let mut trng = nrf51_hal::pac::Peripherals::take()
            .map(|p| crate::trng::HalTrng::rand_core_09(nrf51_hal::rng::Rng::new(p.RNG)));
        let mut extra = [0u8; 32];
        if trng
            .as_mut()
            .is_none_or(|t| t.try_fill_bytes(&mut extra).is_err())
        {
            defmt::error!("the nRF51 hardware RNG failed: no seed");
            return None;
        }
        for (s, e) in seed.iter_mut().zip(extra) {
            *s ^= e;
        }
        defmt::println!("seed: config seed mixed with the nRF51 hardware RNG");
    }
    Some(seed)
}

/// The body of a stdio gateway binary for cipher `$cipher`: the entry point handing the
/// static [`Buffers`] and server [`Slot`] to [`stdio`], the tick handler, and a panic
/// handler that logs and exits.
#[macro_export]
macro_rules! serve_stdio {
    ($cipher:ty) => {
        static mut BUFFERS: $crate::serve::Buffers = $crate::serve::Buffers::new();
        // Uninitialised until `slot()` writes `None`: `.bss`, not `.data` (`None` is not
        // all zero bits), so no flash image of it and no copy at reset.
        static mut SLOT: core::mem::MaybeUninit<$crate::mcp::Slot<$cipher>> =
            core::mem::MaybeUninit::uninit();

        /// The buffers, taken once.
        fn buffers() -> &'static mut $crate::serve::Buffers {
            // SAFETY: called once, by `main` before anything else runs; no other code names
            // BUFFERS, so this is the only reference ever made to it.
            unsafe { &mut *core::ptr::addr_of_mut!(BUFFERS) }
        }

        /// The server's slot, taken once.
        fn slot() -> &'static mut $crate::mcp::Slot<$cipher> {
            // SAFETY: called once, by `main` before anything else runs; no other code names
            // SLOT, so this is the only reference ever made to it (`write` initialises it).
            unsafe { (*core::ptr::addr_of_mut!(SLOT)).write(None) }
        }

        #[cfg(target_arch = "arm")]
        #[cortex_m_rt::entry]
        fn main() -> ! {
            $crate::serve::stdio::<$cipher>(buffers(), slot())
        }

        #[cfg(target_arch = "arm")]
        #[cortex_m_rt::exception]
        fn SysTick() {
            $crate::arch::on_tick();
        }

        #[cfg(target_arch = "riscv32")]
        #[riscv_rt::entry]
        fn main() -> ! {
            $crate::serve::stdio::<$cipher>(buffers(), slot())
        }

        #[cfg(target_arch = "riscv32")]
        #[riscv_rt::core_interrupt(riscv::interrupt::Interrupt::MachineSoft)]
        fn machine_soft() {
            $crate::arch::ack_second_link();
        }

        #[panic_handler]
        fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
            $crate::report::panicked(info)
        }
    };
}
