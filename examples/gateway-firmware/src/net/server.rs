//! The HTTP server loop: a fixed pool of TCP sockets on port 80, each serving requests one
//! after another (keep-alive), polled with the interface from one loop.
//!
//! A connection's request stays in its socket's receive buffer (sized for the largest
//! request) until it is complete; it is copied into one shared scratch buffer to be judged,
//! so a byte-at-a-time client costs nothing but time. The response is written into the
//! socket's transmit buffer (sized for the largest response), and the next request of that
//! connection is read only once that buffer has room for another whole response.
//!
//! No connection holds a socket for ever: an idle keep-alive connection is closed after
//! [`IDLE_MS`] (at once when a new client is waiting), a request must arrive whole within
//! [`REQUEST_MS`], a peer that stops reading is dropped after [`STALL_MS`], and a closed
//! socket listens again as soon as it reaches TIME-WAIT.

use mrtr_core::Principal;
use smoltcp::iface::{Interface, SocketHandle, SocketSet, SocketStorage};
use smoltcp::socket::tcp;
use smoltcp::time::{Duration, Instant};
use smoltcp::wire::{IpAddress, IpEndpoint};

use super::Nic;
use super::auth::Bearers;
use super::http::{self, MAX_REQUEST, Refusal, Verdict};
use crate::arch;

/// TCP sockets in the pool: connections served at once.
pub const SOCKETS: usize = 4;
/// Longest response body.
pub const MAX_RESPONSE_BODY: usize = 4096;
/// Room for a response head.
const MAX_RESPONSE_HEAD: usize = 256;
/// Each socket's transmit buffer: one whole response.
pub const TX_BUFFER: usize = MAX_RESPONSE_HEAD + MAX_RESPONSE_BODY;
/// A keep-alive connection with no request for this long is closed.
pub const IDLE_MS: u64 = 15_000;
/// A request must be complete this long after its first byte (else 408).
pub const REQUEST_MS: u64 = 10_000;
/// A peer that has not made room for the next response in this long is dropped.
pub const STALL_MS: u64 = 10_000;
/// After the gateway closes, a peer still not done this long is reset.
const LINGER_MS: u64 = 5_000;
/// TCP gives up on an unresponsive peer (no ACK of data sent) after this long.
const TCP_TIMEOUT: Duration = Duration::from_secs(20);

/// The MCP server as the transport calls it.
pub trait Endpoint {
    /// Answers the JSON-RPC message `request` from `caller`, writing the response body into
    /// `out`.
    fn handle(&mut self, request: &[u8], caller: Principal<'_>, out: &mut [u8]) -> Answer;
}

/// What [`Endpoint::handle`] wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq, defmt::Format)]
pub struct Answer {
    /// HTTP status (200, or 400 for some JSON-RPC errors).
    pub status: u16,
    /// Bytes of `out` written; 0: a notification or response, answered `202 Accepted`.
    pub len: usize,
}

/// Where a connection is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// The socket listens, or its connection is not established yet.
    Listening,
    /// Serving requests.
    Open,
    /// The gateway closed its side; the rest of what the peer sends is discarded.
    Closing,
}

/// A socket of the pool and its connection's state.
#[derive(Clone, Copy, Debug)]
struct Slot {
    handle: SocketHandle,
    phase: Phase,
    /// When the connection opened, its last request was answered, or it began closing.
    since_ms: u64,
    /// When the first byte of the pending request arrived.
    request_ms: Option<u64>,
    /// `100 Continue` sent for the pending request.
    continued: bool,
}

/// The server's memory, all in statics: the sockets' buffers and two scratch buffers.
pub struct Memory {
    /// smoltcp's socket slots.
    pub storage: &'static mut [SocketStorage<'static>; SOCKETS],
    /// Receive buffers (one whole request each).
    pub rx: &'static mut [[u8; MAX_REQUEST]; SOCKETS],
    /// Transmit buffers (one whole response each).
    pub tx: &'static mut [[u8; TX_BUFFER]; SOCKETS],
    /// The request being judged.
    pub request: &'static mut [u8; MAX_REQUEST],
    /// The response body being written.
    pub response: &'static mut [u8; MAX_RESPONSE_BODY],
}

/// Counters for the log.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, defmt::Format)]
pub struct Stats {
    /// Connections established.
    pub connections: u32,
    /// Requests answered by the server.
    pub calls: u32,
    /// Requests refused by the transport.
    pub refused: u32,
    /// Connections reset (stalled peers, lingering closes).
    pub resets: u32,
}

/// The HTTP server: interface, sockets, connection slots.
pub struct Server<'e, E: Endpoint> {
    iface: Interface,
    nic: Nic,
    sockets: SocketSet<'static>,
    slots: [Slot; SOCKETS],
    request: &'static mut [u8; MAX_REQUEST],
    response: &'static mut [u8; MAX_RESPONSE_BODY],
    endpoint: &'e mut E,
    bearers: &'e Bearers,
    port: u16,
    stats: Stats,
}

impl<'e, E: Endpoint> Server<'e, E> {
    /// A server on `iface`/`nic` listening on `port` with the sockets of `memory`.
    pub fn new(
        iface: Interface,
        nic: Nic,
        memory: Memory,
        port: u16,
        endpoint: &'e mut E,
        bearers: &'e Bearers,
    ) -> Self {
        let Memory {
            storage,
            rx,
            tx,
            request,
            response,
        } = memory;
        let storage: &'static mut [SocketStorage<'static>] = storage;
        let mut sockets = SocketSet::new(storage);
        let now = arch::uptime_ms();
        let slots = core::array::from_fn(|_| Slot {
            handle: SocketHandle::default(),
            phase: Phase::Listening,
            since_ms: now,
            request_ms: None,
            continued: false,
        });
        let mut slots: [Slot; SOCKETS] = slots;
        for ((slot, rx), tx) in slots.iter_mut().zip(rx).zip(tx) {
            let (rx, tx): (&'static mut [u8], &'static mut [u8]) = (rx, tx);
            let mut socket =
                tcp::Socket::new(tcp::SocketBuffer::new(rx), tcp::SocketBuffer::new(tx));
            socket.set_timeout(Some(TCP_TIMEOUT));
            socket.set_nagle_enabled(false);
            let _ = socket.listen(port);
            slot.handle = sockets.add(socket);
        }
        Self {
            iface,
            nic,
            sockets,
            slots,
            request,
            response,
            endpoint,
            bearers,
            port,
            stats: Stats::default(),
        }
    }

    /// The counters so far.
    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// The network device.
    pub fn nic(&self) -> &Nic {
        &self.nic
    }

    /// One round: poll the interface, then serve every connection. Returns whether anything
    /// happened (if not, the caller may sleep until the next tick).
    pub fn poll(&mut self) -> bool {
        let now_ms = arch::uptime_ms();
        let now = Instant::from_millis(now_ms as i64);
        let listening = self
            .slots
            .iter()
            .filter(|s| self.sockets.get::<tcp::Socket>(s.handle).is_listening())
            .count();
        let connected = self.slots.map(|s| {
            let socket = self.sockets.get::<tcp::Socket>(s.handle);
            match socket.remote_endpoint() {
                Some(IpEndpoint {
                    addr: IpAddress::Ipv4(addr),
                    port,
                }) if !socket.is_listening() => Some((addr.octets(), port)),
                _ => None,
            }
        });
        self.nic.admit(listening, connected);
        let polled = self.iface.poll(now, &mut self.nic, &mut self.sockets);
        let mut busy = polled != smoltcp::iface::PollResult::None;
        for i in 0..SOCKETS {
            busy |= self.serve(i, now_ms);
        }
        if self.nic.take_refused() {
            self.reclaim(now_ms);
        }
        busy
    }

    /// Closes the longest-idle keep-alive connection, for a client waiting for a socket.
    fn reclaim(&mut self, now_ms: u64) {
        let idle = self
            .slots
            .iter_mut()
            .filter(|s| s.phase == Phase::Open && s.request_ms.is_none())
            .filter(|s| {
                let socket = self.sockets.get::<tcp::Socket>(s.handle);
                socket.recv_queue() == 0 && socket.send_queue() == 0
            })
            .min_by_key(|s| s.since_ms);
        if let Some(slot) = idle {
            self.sockets.get_mut::<tcp::Socket>(slot.handle).close();
            slot.phase = Phase::Closing;
            slot.since_ms = now_ms;
        }
    }

    /// Serves the connection of slot `i`; whether it made progress.
    fn serve(&mut self, i: usize, now_ms: u64) -> bool {
        let slot = &mut self.slots[i];
        let socket = self.sockets.get_mut::<tcp::Socket>(slot.handle);
        match socket.state() {
            // Closed (reset, timed out, or aborted and its RST sent) or TIME-WAIT: reuse.
            tcp::State::Closed | tcp::State::TimeWait => {
                let _ = socket.listen(self.port);
                slot.phase = Phase::Listening;
                return true;
            }
            tcp::State::Listen | tcp::State::SynReceived => {
                slot.phase = Phase::Listening;
                return false;
            }
            _ => {}
        }
        if slot.phase == Phase::Listening {
            *slot = Slot {
                phase: Phase::Open,
                since_ms: now_ms,
                request_ms: None,
                continued: false,
                ..*slot
            };
            self.stats.connections += 1;
        }
        let elapsed = now_ms.saturating_sub(slot.since_ms);
        if slot.phase == Phase::Closing {
            // Discard what the peer still sends; reset a peer that never finishes.
            let _ = socket.recv(|b| (b.len(), ()));
            if elapsed > LINGER_MS {
                socket.abort();
                self.stats.resets += 1;
            }
            return false;
        }
        let queued = socket.recv_queue();
        if queued == 0 && !socket.may_recv() {
            // The peer closed between requests.
            socket.close();
            slot.phase = Phase::Closing;
            slot.since_ms = now_ms;
            return true;
        }
        if socket.send_capacity().saturating_sub(socket.send_queue()) < TX_BUFFER {
            // The previous response is still leaving.
            if elapsed > STALL_MS {
                socket.abort();
                self.stats.resets += 1;
            }
            return false;
        }
        if queued == 0 {
            if elapsed > IDLE_MS {
                socket.close();
                slot.phase = Phase::Closing;
                slot.since_ms = now_ms;
            }
            return false;
        }
        let started = *slot.request_ms.get_or_insert(now_ms);
        let n = socket.peek_slice(&mut self.request[..]).unwrap_or(0);
        let buf = self.request.get(..n).unwrap_or_default();
        match http::judge(buf, self.bearers) {
            Verdict::More { send_continue } => {
                if send_continue && !slot.continued {
                    slot.continued = true;
                    let _ = socket.send_slice(b"HTTP/1.1 100 Continue\r\n\r\n");
                    return true;
                }
                let timed_out = now_ms.saturating_sub(started) > REQUEST_MS;
                if timed_out || !socket.may_recv() {
                    // Too slow, or the peer closed mid-request.
                    let refusal = Refusal {
                        status: if timed_out { 408 } else { 400 },
                        error: Some((
                            http::INVALID_REQUEST,
                            if timed_out {
                                "Request Timeout"
                            } else {
                                "Bad Request: the request ended early"
                            },
                        )),
                        consumed: None,
                    };
                    self.stats.refused += 1;
                    finish(
                        socket,
                        slot,
                        now_ms,
                        &refusal_response(refusal, self.response),
                    );
                    return true;
                }
                false
            }
            Verdict::Refuse(refusal) => {
                self.stats.refused += 1;
                finish(
                    socket,
                    slot,
                    now_ms,
                    &refusal_response(refusal, self.response),
                );
                true
            }
            Verdict::Call {
                body,
                caller,
                consumed,
                keep_alive,
            } => {
                self.stats.calls += 1;
                // Answered and queued (measured whole with the `measure` feature).
                crate::serve::measure::http(body, || {
                    let answer = self.endpoint.handle(body, caller, &mut self.response[..]);
                    let (status, len) = match answer {
                        Answer { len: 0, .. } => (202, 0),
                        Answer { status, len } if len <= MAX_RESPONSE_BODY => (status, len),
                        _ => (500, 0),
                    };
                    let response = Response {
                        status,
                        body: self.response.get(..len).unwrap_or_default(),
                        consumed: keep_alive.then_some(consumed),
                    };
                    finish(socket, slot, now_ms, &response);
                });
                true
            }
        }
    }
}

/// A response to write, and what to do with the connection afterwards.
struct Response<'a> {
    status: u16,
    body: &'a [u8],
    /// Bytes of the request to remove, keeping the connection; `None`: close it.
    consumed: Option<usize>,
}

/// The response to a refusal, its JSON-RPC error body written into `buf`.
fn refusal_response(refusal: Refusal, buf: &mut [u8]) -> Response<'_> {
    let len = refusal
        .error
        .and_then(|(code, message)| http::error_body(buf, code, message))
        .unwrap_or(0);
    Response {
        status: refusal.status,
        body: buf.get(..len).unwrap_or_default(),
        consumed: refusal.consumed,
    }
}

/// Queues `response` on the socket (its buffer has room: checked before judging), then
/// removes the request and keeps the connection, or closes it.
fn finish(socket: &mut tcp::Socket<'_>, slot: &mut Slot, now_ms: u64, response: &Response<'_>) {
    let mut head = [0u8; MAX_RESPONSE_HEAD];
    let keep = response.consumed.is_some();
    let head_len = http::head(&mut head, response.status, response.body.len(), keep).unwrap_or(0);
    let _ = socket.send_slice(head.get(..head_len).unwrap_or_default());
    let _ = socket.send_slice(response.body);
    slot.request_ms = None;
    slot.continued = false;
    slot.since_ms = now_ms;
    match response.consumed {
        Some(mut left) => {
            while left > 0 {
                match socket.recv(|b| {
                    let n = b.len().min(left);
                    (n, n)
                }) {
                    Ok(n) if n > 0 => left -= n,
                    _ => break,
                }
            }
        }
        None => {
            socket.close();
            slot.phase = Phase::Closing;
        }
    }
}
