//! Unpadded base64url (RFC 4648 §5) on caller buffers, in place.
//!
//! Decoding is strict: only the 64 URL-safe characters, no padding, no whitespace, and the
//! unused low bits of a final partial group must be zero, so every byte string has exactly one
//! text form. Nothing here allocates or panics.

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Length of the unpadded base64url text for `n` bytes.
pub const fn encoded_len(n: usize) -> usize {
    (n / 3) * 4
        + match n % 3 {
            0 => 0,
            1 => 2,
            _ => 3,
        }
}

/// Number of bytes that `n` characters decode to, or `None` if no byte string has that length.
pub const fn decoded_len(n: usize) -> Option<usize> {
    match n % 4 {
        0 => Some(n / 4 * 3),
        2 => Some(n / 4 * 3 + 1),
        3 => Some(n / 4 * 3 + 2),
        _ => None,
    }
}

/// Marks a byte outside the alphabet in [`DECODE`].
const INVALID: u8 = 0xff;

/// Character → 6-bit value, [`INVALID`] for anything outside the alphabet. A table instead of
/// range comparisons: no data-dependent branch per character, so decoding is fast on any
/// input and does not depend on which characters a token holds.
const DECODE: [u8; 256] = {
    let mut t = [INVALID; 256];
    let mut i = 0;
    while i < 64 {
        t[ALPHABET[i] as usize] = i as u8;
        i += 1;
    }
    t
};

/// Encodes the first `len` bytes of `buf` in place, growing into the rest of `buf`.
///
/// Returns the text length, or `None` if `buf` is too small (then `buf` is unchanged).
/// Works back to front, so every byte group is read before its slot is overwritten.
pub fn encode_in_place(buf: &mut [u8], len: usize) -> Option<usize> {
    let out_len = encoded_len(len);
    if len > buf.len() || out_len > buf.len() {
        return None;
    }
    let full = len / 3;
    let rem = len % 3;
    if rem != 0 {
        let b0 = buf[full * 3];
        let b1 = if rem == 2 { buf[full * 3 + 1] } else { 0 };
        let o = full * 4;
        buf[o] = ALPHABET[(b0 >> 2) as usize];
        buf[o + 1] = ALPHABET[(((b0 & 0x03) << 4) | (b1 >> 4)) as usize];
        if rem == 2 {
            buf[o + 2] = ALPHABET[((b1 & 0x0f) << 2) as usize];
        }
    }
    for g in (0..full).rev() {
        let (b0, b1, b2) = (buf[g * 3], buf[g * 3 + 1], buf[g * 3 + 2]);
        let o = g * 4;
        buf[o] = ALPHABET[(b0 >> 2) as usize];
        buf[o + 1] = ALPHABET[(((b0 & 0x03) << 4) | (b1 >> 4)) as usize];
        buf[o + 2] = ALPHABET[(((b1 & 0x0f) << 2) | (b2 >> 6)) as usize];
        buf[o + 3] = ALPHABET[(b2 & 0x3f) as usize];
    }
    Some(out_len)
}

/// Decodes the first `len` characters of `buf` in place, front to back.
///
/// Returns the byte length, or `None` for any character outside the alphabet, an impossible
/// length, non-zero trailing bits, or `len > buf.len()`.
pub fn decode_in_place(buf: &mut [u8], len: usize) -> Option<usize> {
    if len > buf.len() {
        return None;
    }
    let out_len = decoded_len(len)?;
    let full = len / 4;
    // Every looked-up value is ORed into `bad`; INVALID has the top bits set, valid values
    // never do, so one check after the loop catches any foreign character.
    let mut bad = 0u8;
    for g in 0..full {
        let i = g * 4;
        let a = DECODE[buf[i] as usize];
        let b = DECODE[buf[i + 1] as usize];
        let c = DECODE[buf[i + 2] as usize];
        let d = DECODE[buf[i + 3] as usize];
        bad |= a | b | c | d;
        let o = g * 3;
        buf[o] = (a << 2) | (b >> 4);
        buf[o + 1] = (b << 4) | (c >> 2);
        buf[o + 2] = (c << 6) | d;
    }
    let rem = len % 4;
    if rem != 0 {
        let i = full * 4;
        let o = full * 3;
        let a = DECODE[buf[i] as usize];
        let b = DECODE[buf[i + 1] as usize];
        bad |= a | b;
        if rem == 2 {
            // The unused low 4 bits of the last character must be zero (canonical form).
            bad |= u8::from(b & 0x0f != 0) << 7;
            buf[o] = (a << 2) | (b >> 4);
        } else {
            let c = DECODE[buf[i + 2] as usize];
            bad |= c;
            // The unused low 2 bits of the last character must be zero (canonical form).
            bad |= u8::from(c & 0x03 != 0) << 7;
            buf[o] = (a << 2) | (b >> 4);
            buf[o + 1] = (b << 4) | (c >> 2);
        }
    }
    if bad & 0xc0 != 0 {
        return None;
    }
    Some(out_len)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(data: &[u8], expect: &str) {
        let mut buf = [0u8; 64];
        buf[..data.len()].copy_from_slice(data);
        let n = encode_in_place(&mut buf, data.len()).unwrap();
        assert_eq!(&buf[..n], expect.as_bytes());
        let m = decode_in_place(&mut buf, n).unwrap();
        assert_eq!(&buf[..m], data);
    }

    #[test]
    fn rfc4648_vectors_without_padding() {
        roundtrip(b"", "");
        roundtrip(b"f", "Zg");
        roundtrip(b"fo", "Zm8");
        roundtrip(b"foo", "Zm9v");
        roundtrip(b"foob", "Zm9vYg");
        roundtrip(b"fooba", "Zm9vYmE");
        roundtrip(b"foobar", "Zm9vYmFy");
        roundtrip(&[0xfb, 0xff, 0xbf], "-_-_");
    }

    #[test]
    fn rejects_non_canonical_and_foreign_text() {
        for bad in ["Zh", "Zm9", "Zm9=", "Z", "Zm9v+", "Zm9v/", "Zm 9", "Zm9vY"] {
            let mut buf = [0u8; 16];
            buf[..bad.len()].copy_from_slice(bad.as_bytes());
            // "Zh" and "Zm9" have non-zero unused bits: "Zg" and "Zm8" are the canonical forms.
            assert_eq!(decode_in_place(&mut buf, bad.len()), None, "{bad}");
        }
    }

    #[test]
    fn encode_refuses_small_buffer() {
        let mut buf = [1u8, 2, 3];
        assert_eq!(encode_in_place(&mut buf, 3), None);
        assert_eq!(buf, [1, 2, 3]);
    }
}
