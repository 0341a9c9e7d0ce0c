//! A bounded JSON writer over a caller's buffer.

use crate::{Error, Sink, write_string};

/// Writes JSON text into a fixed buffer. Nothing is ever written past its end: a write that
/// does not fit is dropped whole and sets the overflow flag, which stays set
/// ([`Writer::finish`] then fails with [`Error::BufferTooSmall`]). It is also a [`Sink`], so
/// [`canonicalize`](crate::canonicalize) can write into it.
///
/// ```
/// use mrtr_json::Writer;
///
/// let mut buf = [0u8; 64];
/// let mut w = Writer::new(&mut buf);
/// w.raw(b"{\"id\":").u64(7).raw(b",\"error\":").string("bad \"input\"").raw(b"}");
/// assert_eq!(w.finish()?, br#"{"id":7,"error":"bad \"input\""}"#);
///
/// let mut small = [0u8; 4];
/// let mut w = Writer::new(&mut small);
/// w.string("too long");
/// assert!(w.overflowed());
/// assert!(w.finish().is_err());
/// # Ok::<(), mrtr_json::Error>(())
/// ```
#[derive(Debug)]
pub struct Writer<'b> {
    buf: &'b mut [u8],
    len: usize,
    overflow: bool,
}

impl<'b> Writer<'b> {
    /// A writer at the start of `buf`.
    pub fn new(buf: &'b mut [u8]) -> Self {
        Self {
            buf,
            len: 0,
            overflow: false,
        }
    }

    /// Appends `bytes` as they are (JSON punctuation, or text already encoded).
    pub fn raw(&mut self, bytes: &[u8]) -> &mut Self {
        let end = self.len.saturating_add(bytes.len());
        match self.buf.get_mut(self.len..end) {
            Some(dst) if !self.overflow => {
                dst.copy_from_slice(bytes);
                self.len = end;
            }
            _ => self.overflow = true,
        }
        self
    }

    /// Appends `s` as a JSON string, quoted and escaped as RFC 8785 prints strings.
    pub fn string(&mut self, s: &str) -> &mut Self {
        write_string(s, self);
        self
    }

    /// Appends `n` in decimal.
    pub fn u64(&mut self, mut n: u64) -> &mut Self {
        let mut digits = [0u8; 20];
        let mut at = digits.len();
        loop {
            at -= 1;
            if let Some(d) = digits.get_mut(at) {
                // A digit: the remainder is below 10.
                *d = b'0' + (n % 10) as u8;
            }
            n /= 10;
            if n == 0 || at == 0 {
                break;
            }
        }
        self.raw(digits.get(at..).unwrap_or_default())
    }

    /// Whether a write did not fit (and was dropped).
    pub fn overflowed(&self) -> bool {
        self.overflow
    }

    /// What was written so far.
    pub fn as_bytes(&self) -> &[u8] {
        self.buf.get(..self.len).unwrap_or_default()
    }

    /// How many bytes were written.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing was written.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The text written, or [`Error::BufferTooSmall`] if any write did not fit.
    pub fn finish(self) -> Result<&'b [u8], Error> {
        if self.overflow {
            return Err(Error::BufferTooSmall);
        }
        let buf: &'b [u8] = self.buf;
        Ok(buf.get(..self.len).unwrap_or_default())
    }
}

impl Sink for Writer<'_> {
    fn write(&mut self, bytes: &[u8]) {
        self.raw(bytes);
    }
}
