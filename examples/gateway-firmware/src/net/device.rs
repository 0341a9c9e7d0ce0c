//! smoltcp's `phy::Device` on the LAN9118, with a listen backlog: a connection request (TCP
//! SYN) to the gateway's port is passed to smoltcp only while a socket listens.
//!
//! smoltcp answers a SYN that no socket accepts with a reset, so a client arriving while
//! every socket of the fixed pool is busy would be refused outright. Instead, such a SYN is
//! parked in a small backlog ([`BACKLOG`] frames) and handed to smoltcp as soon as a socket
//! listens again, as a host's accept queue would hold it; when the backlog is full it is
//! dropped and the client's TCP retransmits it. The server is told, so it can reclaim an idle
//! keep-alive connection for the newcomer.

use smoltcp::phy::{self, DeviceCapabilities, Medium};
use smoltcp::time::Instant;

use super::lan9118::{FRAME, Lan9118, Transmitter};
use super::server::SOCKETS;

/// A TCP peer: IPv4 address and port.
pub type Peer = ([u8; 4], u16);

/// Connection requests held while every socket is busy.
pub const BACKLOG: usize = 16;
/// Longest SYN frame parked: Ethernet, IPv4 and TCP headers with options.
pub const SYN_FRAME: usize = 14 + 60 + 60;

/// Room for the parked SYN frames (keep it in a static).
pub type Backlog = [[u8; SYN_FRAME]; BACKLOG];

/// The LAN9118 as smoltcp sees it.
pub struct Nic {
    hw: Lan9118,
    port: u16,
    /// Parked SYN frames, a ring: `parked` of them from `head`.
    backlog: &'static mut Backlog,
    backlog_len: [usize; BACKLOG],
    head: usize,
    parked: usize,
    /// SYNs still admitted in this poll (the sockets listening when it began).
    admit: usize,
    /// The peers of the sockets' connections: their SYNs (retransmitted) go to smoltcp.
    connected: [Option<Peer>; SOCKETS],
    /// A SYN was dropped since the last [`take_refused`](Self::take_refused).
    refused: bool,
}

impl Nic {
    /// The device for `hw`, admitting connection requests to `port`.
    pub fn new(hw: Lan9118, port: u16, backlog: &'static mut Backlog) -> Self {
        Self {
            hw,
            port,
            backlog,
            backlog_len: [0; BACKLOG],
            head: 0,
            parked: 0,
            admit: 0,
            connected: [None; SOCKETS],
            refused: false,
        }
    }

    /// The controller.
    pub fn hw(&self) -> &Lan9118 {
        &self.hw
    }

    /// Before a poll: how many new connection requests may reach smoltcp (the listening
    /// sockets), and the peers connected already.
    pub fn admit(&mut self, listening: usize, connected: [Option<Peer>; SOCKETS]) {
        self.admit = listening;
        self.connected = connected;
    }

    /// Whether a connection request was held back since the last call.
    pub fn take_refused(&mut self) -> bool {
        core::mem::take(&mut self.refused)
    }

    /// Connection requests waiting for a socket.
    pub fn parked(&self) -> usize {
        self.parked
    }

    /// Whether a SYN from `from` is parked.
    fn is_parked(&self, from: Option<Peer>) -> bool {
        (0..self.parked)
            .map(|k| (self.head + k) % BACKLOG)
            .any(|i| {
                source(
                    self.backlog[i]
                        .get(..self.backlog_len[i])
                        .unwrap_or_default(),
                ) == from
            })
    }

    /// Parks the SYN `frame` (its length `len`), unless it is a retransmission of one
    /// already parked, or it does not fit.
    fn park(&mut self, len: usize) {
        let (rx, _) = self.hw.split();
        let Some(frame) = rx.get(..len).filter(|f| f.len() <= SYN_FRAME) else {
            return;
        };
        if self.parked == BACKLOG {
            return;
        }
        let i = (self.head + self.parked) % BACKLOG;
        self.backlog[i][..frame.len()].copy_from_slice(frame);
        self.backlog_len[i] = frame.len();
        self.parked += 1;
    }
}

/// Whether `frame` is a TCP SYN (without ACK) to `port`, in an IPv4 packet that is not a
/// later fragment: the only frames the backlog rule looks at.
fn is_syn(port: u16, frame: &[u8]) -> bool {
    let ip = match frame.get(12..14) {
        Some([0x08, 0x00]) => &frame[14..],
        _ => return false,
    };
    let (Some(&vihl), Some(&proto), Some(frag)) = (ip.first(), ip.get(9), ip.get(6..8)) else {
        return false;
    };
    let fragment_offset = u16::from_be_bytes([frag[0], frag[1]]) & 0x1fff;
    if vihl >> 4 != 4 || proto != 6 || fragment_offset != 0 {
        return false;
    }
    let tcp = usize::from(vihl & 0x0f) * 4;
    let (Some(to), Some(&flags)) = (ip.get(tcp + 2..tcp + 4), ip.get(tcp + 13)) else {
        return false;
    };
    u16::from_be_bytes([to[0], to[1]]) == port && flags & 0x12 == 0x02
}

/// The source address and port of an IPv4 TCP frame (meaningless for anything else: only
/// used on frames [`is_syn`] accepted).
fn source(frame: &[u8]) -> Option<Peer> {
    let ip = frame.get(14..)?;
    let tcp = usize::from(ip.first()? & 0x0f) * 4;
    let (addr, port) = (ip.get(12..16)?, ip.get(tcp..tcp + 2)?);
    Some((
        [addr[0], addr[1], addr[2], addr[3]],
        u16::from_be_bytes([port[0], port[1]]),
    ))
}

/// A received frame, read out of the receive buffer.
pub struct Rx<'a> {
    frame: &'a [u8],
}

/// A frame to send.
pub struct Tx<'a> {
    tx: Transmitter<'a>,
}

impl phy::RxToken for Rx<'_> {
    fn consume<R, F: FnOnce(&[u8]) -> R>(self, f: F) -> R {
        f(self.frame)
    }
}

impl phy::TxToken for Tx<'_> {
    fn consume<R, F: FnOnce(&mut [u8]) -> R>(mut self, len: usize, f: F) -> R {
        // smoltcp never asks for more than the MTU (`FRAME`): a longer request is built in
        // the whole buffer and not sent.
        let fits = len <= FRAME;
        let r = f(&mut self.tx.buffer()[..len.min(FRAME)]);
        if fits {
            self.tx.send(len);
        }
        r
    }
}

impl phy::Device for Nic {
    type RxToken<'a> = Rx<'a>;
    type TxToken<'a> = Tx<'a>;

    fn receive(&mut self, _: Instant) -> Option<(Rx<'_>, Tx<'_>)> {
        // A parked request first, in arrival order.
        if self.admit > 0 && self.parked > 0 {
            self.admit -= 1;
            let i = self.head;
            self.head = (self.head + 1) % BACKLOG;
            self.parked -= 1;
            let frame = self.backlog[i]
                .get(..self.backlog_len[i])
                .unwrap_or_default();
            let tx = self.hw.transmitter();
            return Some((Rx { frame }, Tx { tx }));
        }
        let len = loop {
            let len = self.hw.receive()?;
            let (rx, _) = self.hw.split();
            let frame = rx.get(..len).unwrap_or_default();
            if !is_syn(self.port, frame) {
                break len;
            }
            let from = source(frame);
            if from.is_some() && self.connected.contains(&from) {
                // A retransmission for a connection a socket holds: smoltcp's business.
                break len;
            }
            if self.is_parked(from) {
                // A retransmission of a parked request: the parked copy will be served.
                continue;
            }
            if self.admit > 0 {
                self.admit -= 1;
                break len;
            }
            self.park(len);
            self.refused = true;
        };
        let (rx, tx) = self.hw.split();
        let frame = rx.get(..len).unwrap_or_default();
        Some((Rx { frame }, Tx { tx }))
    }

    fn transmit(&mut self, _: Instant) -> Option<Tx<'_>> {
        Some(Tx {
            tx: self.hw.transmitter(),
        })
    }

    fn capabilities(&self) -> DeviceCapabilities {
        let mut caps = DeviceCapabilities::default();
        caps.medium = Medium::Ethernet;
        caps.max_transmission_unit = 1514;
        caps.max_burst_size = Some(1);
        caps
    }
}
