//! Streamable HTTP (MCP 2026-07-28, JSON responses) over a real TCP/IP stack on the
//! Cortex-M4F board, QEMU's `mps2-an386`: smoltcp 0.14 (no_std, no alloc) on the board's SMSC
//! LAN9118 Ethernet controller, requests parsed with `httparse`, callers authenticated by
//! bearer credential (compared in constant time with `subtle`).
//!
//! | module | what |
//! | --- | --- |
//! | [`lan9118`] | the controller's driver: reset, MAC and PHY setup, frames in and out of its FIFOs (the only unsafe code: its registers) |
//! | [`device`] | smoltcp's `phy::Device` on it, and the listen backlog (a SYN waits while every socket is busy) |
//! | [`http`] | one request judged: refused by the transport, or handed to the MCP server |
//! | [`auth`] | `Authorization: Bearer` to the caller (issuer, subject) tokens are bound to |
//! | [`server`] | the socket pool and the loop |
//!
//! **Why the LAN9118 on `mps2-an386`.** The M4F is the family whose stack budget
//! `docs/embedded.md` measures, and QEMU's `mps2-an386` gives it a network controller that
//! fits the firmware's rules: the LAN9118 is programmed I/O, a frame is a sequence of 32-bit
//! register writes or reads, so the driver needs no DMA descriptors, no memory shared with the
//! device and no allocation, and polling it needs no interrupt. The alternatives were worse
//! fits: virtio-net (QEMU `virt` machines) needs virtqueues, descriptor rings in memory the
//! device reads and writes by DMA; the Stellaris Ethernet MAC of the `lm3s6965evb` (M3) sits
//! on a board with 64 KiB of RAM, too little for the receive and transmit windows of a few
//! connections next to the gateway itself.
//!
//! Addressing is static, as QEMU's user-mode network expects: the gateway is [`ADDRESS`]/24
//! behind [`GATEWAY`]. It never connects out; it listens on [`PORT`], which QEMU forwards from
//! a loopback port of the host (`-nic user,model=lan9118,restrict=on,hostfwd=...`).
//!
//! Decisions: `MCP-Protocol-Version` is checked here, not by the MCP server: present and not
//! `2026-07-28` is HTTP 400 with JSON-RPC `-32020` (the server refuses every other `_meta`
//! version with `-32022`, so such a header can never match an acceptable request); equal, the
//! server's own `_meta` check decides. A connection request arriving while every socket is
//! busy waits in [`device`]'s backlog instead of being reset (smoltcp's answer), and an idle
//! keep-alive connection is closed to make room for it.
//!
//! Memory is fixed at build time, in statics (`cortex_m::singleton!`): [`server::SOCKETS`] sockets, each with a
//! receive buffer for one whole request ([`http::MAX_REQUEST`]) and a transmit buffer for one
//! whole response ([`server::TX_BUFFER`]), one scratch copy of a request and one response body
//! buffer, the controller's two frame buffers, the SYN backlog and the accepted credentials.

pub mod auth;
pub mod device;
pub mod http;
pub mod lan9118;
pub mod server;

use smoltcp::iface::{Config, Interface, SocketStorage};
use smoltcp::time::Instant;
use smoltcp::wire::{EthernetAddress, IpCidr, Ipv4Address};

use mrtr_core::Principal;
use mrtr_core::cipher::Cipher;

pub use self::auth::Bearers;
use self::auth::DEMO_BEARER;
pub use self::device::Nic;
use self::device::{BACKLOG, Backlog, SYN_FRAME};
use self::http::MAX_REQUEST;
pub use self::server::{Answer, Endpoint};
use self::server::{MAX_RESPONSE_BODY, Memory, SOCKETS, TX_BUFFER};
use crate::mcp::{Scratch, Server, Slot};
use crate::{arch, stack};

/// The gateway's address (QEMU user networking's default guest address).
pub const ADDRESS: Ipv4Address = Ipv4Address::new(10, 0, 2, 15);
/// Prefix length of [`ADDRESS`]'s network.
pub const PREFIX: u8 = 24;
/// The default router (QEMU user networking's host side).
pub const GATEWAY: Ipv4Address = Ipv4Address::new(10, 0, 2, 2);
/// The port the gateway listens on.
pub const PORT: u16 = 80;

/// Why the network could not start.
#[derive(Clone, Copy, Debug, PartialEq, Eq, defmt::Format)]
pub enum Error {
    /// The Ethernet controller.
    Nic(lan9118::Error),
    /// The server's memory was taken already (the server runs once per boot).
    Memory,
}

/// Brings up the controller and the interface and serves `endpoint` on [`PORT`] for ever
/// (returns only if the network cannot start). `seed` varies smoltcp's initial sequence
/// numbers between boots.
pub fn run<E: Endpoint>(endpoint: &mut E, bearers: &Bearers, seed: u64) -> Error {
    let hw = match lan9118::Lan9118::take() {
        Ok(hw) => hw,
        Err(e) => return Error::Nic(e),
    };
    let Some(memory) = memory() else {
        return Error::Memory;
    };
    serve(hw, memory, endpoint, bearers, seed)
}

/// Serves `endpoint` on the controller `hw` with `memory`, for ever.
fn serve<E: Endpoint>(
    hw: lan9118::Lan9118,
    memory: Memory,
    endpoint: &mut E,
    bearers: &Bearers,
    seed: u64,
) -> Error {
    let mac = hw.mac();
    defmt::println!(
        "net: LAN9118 id {=u32:#010x}, MAC {=[u8]:02x}, link {=bool}",
        hw.id(),
        &mac[..],
        hw.link_up()
    );
    let Some(backlog) = cortex_m::singleton!(: Backlog = [[0; SYN_FRAME]; BACKLOG]) else {
        return Error::Memory;
    };
    let mut nic = Nic::new(hw, PORT, backlog);
    let mut config = Config::new(EthernetAddress(mac).into());
    config.random_seed = seed;
    let now = Instant::from_millis(arch::uptime_ms() as i64);
    let mut iface = Interface::new(config, &mut nic, now);
    iface.update_ip_addrs(|addrs| {
        let _ = addrs.push(IpCidr::new(ADDRESS.into(), PREFIX));
    });
    let _ = iface.routes_mut().add_default_ipv4_route(GATEWAY);
    let mut server = server::Server::new(iface, nic, memory, PORT, endpoint, bearers);
    defmt::println!(
        "net: listening on {=[u8]}:{=u16}, {=usize} sockets, request <= {=usize} B, response body <= {=usize} B",
        &ADDRESS.octets()[..],
        PORT,
        SOCKETS,
        MAX_REQUEST,
        MAX_RESPONSE_BODY
    );
    // The serving loop's peak stack, reported after these many calls (measured from here:
    // the stack below was painted just before serving).
    let mut report_at = 1;
    loop {
        if !server.poll() {
            // Nothing to do: sleep until the next tick (the controller is polled).
            arch::wait_ms(0);
        }
        let stats = server.stats();
        if stats.calls >= report_at {
            report_at = report_at.saturating_mul(16);
            defmt::println!(
                "net: {=u32} calls, {=u32} refused, {=u32} connections, {=u32} resets; serving stack peak {=usize} B",
                stats.calls,
                stats.refused,
                stats.connections,
                stats.resets,
                stack::deepest_since_boot()
            );
        }
    }
}

/// Boots the gateway (configuration, clock, keys: [`crate::serve::boot`]) and serves MCP
/// over Streamable HTTP for ever; logs why and ends the run with a failure if it cannot.
/// The server is built into `slot`, the binary's `static` (see [`Slot`]).
pub fn gateway<C: Cipher>(slot: &'static mut Slot<C>) -> ! {
    stack::paint_all();
    let _timer = crate::serve::measure::arm(arch::Timer::start());
    let (Some(memory), Some(scratch), Some(bearers)) = (
        memory(),
        cortex_m::singleton!(: Scratch = Scratch::new()),
        cortex_m::singleton!(: Bearers = Bearers::new()),
    ) else {
        defmt::error!("the gateway's memory was taken twice");
        arch::exit(false)
    };
    // The request scratch buffer holds the configuration file's text during boot (which
    // wipes it): the credentials and the stack's seed are copied out of it first.
    // Built into the static slot by `boot_with` (the engine is never moved).
    let mut seed = 0;
    let ok = crate::serve::boot_with::<C>(&mut memory.request[..], scratch, slot, |c| {
        let taken = bearers.load(c.tokens());
        if taken < c.tokens().count() {
            defmt::warn!(
                "HTTP: {=usize} of {=usize} token= line(s) unusable (a field empty or too long): left out",
                c.tokens().count() - taken,
                c.tokens().count()
            );
        }
        seed = stack_seed(&c.seed);
    });
    let Some(server) = slot.as_mut().filter(|_| ok) else {
        defmt::error!("the gateway does not start: fix the configuration above");
        arch::exit(false)
    };
    defmt::println!("boot stack peak {=usize} B", stack::deepest_since_boot());
    // From here on, the peak of serving (reported by `serve`).
    stack::paint_all();
    if bearers.is_demo() {
        defmt::warn!(
            "HTTP: no token= line in the configuration: the demo bearer credential {=str} is accepted (never in production)",
            DEMO_BEARER
        );
    }
    let hw = match lan9118::Lan9118::take() {
        Ok(hw) => hw,
        Err(e) => {
            defmt::error!("net: {}", Error::Nic(e));
            arch::exit(false)
        }
    };
    let e = serve(hw, memory, server, bearers, seed);
    defmt::error!("net: {}", e);
    arch::exit(false)
}

impl<C: Cipher> Endpoint for Server<'_, C> {
    fn handle(&mut self, request: &[u8], caller: Principal<'_>, out: &mut [u8]) -> Answer {
        let reply = Server::handle(self, request, caller, out);
        Answer {
            status: reply.status,
            len: reply.len,
        }
    }
}

/// The ChaCha20 stream of the configuration's seed that seeds smoltcp (its initial sequence
/// numbers and ephemeral ports): the MCP server's DRBG draws stream 0 of the same seed, so
/// what smoltcp shows on the wire tells nothing about the bytes nonces and token ids come from.
const STACK_STREAM: u64 = u64::from_be_bytes(*b"smoltcp!");

/// smoltcp's random seed for this boot, from the configuration's (fresh per boot) DRBG seed.
fn stack_seed(seed: &[u8; 32]) -> u64 {
    use rand_core::{Rng, SeedableRng};
    let mut rng = chacha20::ChaCha20Rng::from_seed(*seed);
    rng.set_stream(STACK_STREAM);
    rng.next_u64()
}

/// The server's buffers, handed out once (`cortex_m::singleton!`: statics, not stack).
fn memory() -> Option<Memory> {
    Some(Memory {
        storage: cortex_m::singleton!(: [SocketStorage<'static>; SOCKETS] =
            [SocketStorage::EMPTY; SOCKETS])?,
        rx: cortex_m::singleton!(: [[u8; MAX_REQUEST]; SOCKETS] = [[0; MAX_REQUEST]; SOCKETS])?,
        tx: cortex_m::singleton!(: [[u8; TX_BUFFER]; SOCKETS] = [[0; TX_BUFFER]; SOCKETS])?,
        request: cortex_m::singleton!(: [u8; MAX_REQUEST] = [0; MAX_REQUEST])?,
        response: cortex_m::singleton!(: [u8; MAX_RESPONSE_BODY] = [0; MAX_RESPONSE_BODY])?,
    })
}
