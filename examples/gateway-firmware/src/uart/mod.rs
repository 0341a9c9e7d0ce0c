//! The board's UART and MCP stdio framing over it (newline-delimited JSON-RPC).
//!
//! QEMU maps the machine's first UART to the subprocess's stdin and stdout (`-serial stdio`),
//! so a line on the UART is a line of the MCP stdio transport. [`Uart`] is the polled driver
//! of the machine this build runs on ([`mmio`]: nRF51 UART on the micro:bit, Stellaris UART0
//! on the lm3s6965evb, CMSDK APB UART0 on the mps2-an386, NS16550A on `virt`); [`LineReader`]
//! frames lines into a fixed buffer, however the bytes arrive (one at a time included), and
//! discards the rest of a line that does not fit.

pub mod mmio;

pub use mmio::Uart;

/// Polls between two sleeps while waiting for a byte: a line arriving in a burst is read
/// without sleeping, an idle link sleeps until the next tick (at most 1 ms).
const SPIN: u32 = 2_000;

/// A byte-oriented serial port.
pub trait Serial {
    /// The next received byte, if one is waiting.
    fn try_read(&mut self) -> Option<u8>;
    /// Sends one byte, waiting while the transmitter is full.
    fn write_byte(&mut self, byte: u8);

    /// Waits for the next byte: polls, then sleeps a tick at a time while the link is idle.
    fn read_byte(&mut self) -> u8 {
        loop {
            for _ in 0..SPIN {
                if let Some(b) = self.try_read() {
                    return b;
                }
            }
            crate::arch::wait_ms(0);
        }
    }

    /// Sends `bytes`.
    fn write_all(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_byte(b);
        }
    }
}

/// One framed line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Line {
    /// A whole line of this many bytes (without its newline, nor a `\r` before it).
    Complete(usize),
    /// A line longer than the buffer: its first bytes (the buffer's length) were kept, the
    /// rest was read and discarded up to and including its newline.
    TooLong,
}

/// Reads newline-delimited lines into a fixed buffer.
#[derive(Debug, Default)]
pub struct LineReader;

impl LineReader {
    /// Reads the next non-empty line from `port` into `buf`.
    pub fn next<S: Serial + ?Sized>(&mut self, port: &mut S, buf: &mut [u8]) -> Line {
        loop {
            let mut len = 0;
            let mut overflow = false;
            loop {
                let b = port.read_byte();
                if b == b'\n' {
                    break;
                }
                match buf.get_mut(len) {
                    Some(slot) if !overflow => {
                        *slot = b;
                        len += 1;
                    }
                    _ => overflow = true,
                }
            }
            if overflow {
                return Line::TooLong;
            }
            if len > 0 && buf.get(len - 1) == Some(&b'\r') {
                len -= 1;
            }
            // Blank lines (keep-alives, a stray CRLF) are not messages.
            if buf
                .get(..len)
                .is_some_and(|l| l.iter().any(|b| !b.is_ascii_whitespace()))
            {
                return Line::Complete(len);
            }
        }
    }
}
