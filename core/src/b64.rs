//! Unpadded base64url (RFC 4648 §5) on caller buffers, by the `base64` crate.
//!
//! Decoding is strict: only the 64 URL-safe characters, no padding, no whitespace, and the
//! unused low bits of a final partial group must be zero, so every byte string has exactly one
//! text form. Every length is checked before a byte is decoded. Nothing here allocates or
//! panics.
//!
//! The codec is `base64`'s URL-safe, unpadded engine. By default that is its portable scalar
//! engine (no `unsafe` anywhere in the codec). With core's `simd` feature (std hosts only) it is
//! `base64`'s runtime-detected SIMD engine (AVX2 on x86-64, NEON on AArch64, the scalar engine
//! elsewhere), which gives the same answers several times faster on tokens of a few hundred
//! bytes.
//!
//! `base64` reads and writes separate slices, so the in-place functions move the text through a
//! small stack buffer, one chunk at a time. [`decode_into`] needs no such copy.

use base64::Engine as _;

/// Length of the unpadded base64url text for `n` bytes (`usize::MAX` if that overflows, which
/// no buffer can hold).
#[inline]
pub const fn encoded_len(n: usize) -> usize {
    // Four characters per whole group of three bytes, and two or three for the one or two
    // bytes left over (as `base64::encoded_len`, which is not inlined across crates).
    let tail = match n % 3 {
        0 => 0,
        rest => rest + 1,
    };
    match (n / 3).checked_mul(4) {
        Some(groups) => match groups.checked_add(tail) {
            Some(len) => len,
            None => usize::MAX,
        },
        None => usize::MAX,
    }
}

/// Number of bytes that `n` characters decode to, or `None` if no byte string has that length.
#[inline]
pub const fn decoded_len(n: usize) -> Option<usize> {
    match n % 4 {
        0 => Some(n / 4 * 3),
        2 => Some(n / 4 * 3 + 1),
        3 => Some(n / 4 * 3 + 2),
        _ => None,
    }
}

/// Bytes encoded per step of [`encode_in_place`] (a multiple of 3). Larger steps let the SIMD
/// engine run longer stretches; the portable build keeps the stack buffer small for firmware.
#[cfg(feature = "simd")]
const ENCODE_STEP: usize = 384;
#[cfg(not(feature = "simd"))]
const ENCODE_STEP: usize = 96;

/// Characters decoded per step of [`decode_in_place`] (a multiple of 4).
const DECODE_STEP: usize = ENCODE_STEP / 3 * 4;

#[cfg(all(feature = "simd", any(target_arch = "x86_64", target_arch = "aarch64")))]
#[inline]
fn engine() -> &'static base64::engine::Simd {
    extern crate std;
    static ENGINE: std::sync::OnceLock<base64::engine::Simd> = std::sync::OnceLock::new();
    ENGINE.get_or_init(|| base64::engine::Simd::url_safe(base64::engine::general_purpose::NO_PAD))
}

#[cfg(not(all(feature = "simd", any(target_arch = "x86_64", target_arch = "aarch64"))))]
#[inline]
fn engine() -> &'static base64::engine::GeneralPurpose {
    static ENGINE: base64::engine::GeneralPurpose =
        base64::engine::general_purpose::URL_SAFE_NO_PAD;
    &ENGINE
}

/// `text` as a `str`, or `None` if it is not UTF-8 (encoded text is ASCII).
#[inline]
pub fn as_str(text: &[u8]) -> Option<&str> {
    #[cfg(feature = "simd")]
    return simdutf8::basic::from_utf8(text).ok();
    #[cfg(not(feature = "simd"))]
    return core::str::from_utf8(text).ok();
}

/// Encodes the first `len` bytes of `buf` in place, growing into the rest of `buf`.
///
/// Returns the text length, or `None` if `buf` is too small (then `buf` is unchanged).
/// Works back to front, so every byte is read before its slot is overwritten: the text of the
/// bytes from `start` on begins at `start / 3 * 4`, never before `start`.
#[inline]
pub fn encode_in_place(buf: &mut [u8], len: usize) -> Option<usize> {
    let out_len = encoded_len(len);
    if len > buf.len() || out_len > buf.len() {
        return None;
    }
    // Not zeroed first: every byte encoded is copied in.
    let mut step = heapless::Vec::<u8, ENCODE_STEP>::new();
    let mut end = len;
    // The last step takes the partial tail (or a whole step when the length divides evenly).
    let mut start = match len % ENCODE_STEP {
        0 => len.saturating_sub(ENCODE_STEP),
        tail => len - tail,
    };
    loop {
        step.clear();
        step.extend_from_slice(&buf[start..end]).ok()?;
        let at = start / 3 * 4;
        // Cannot fail: `out_len` fits, and every step's text ends within it.
        engine().encode_slice(&step, &mut buf[at..out_len]).ok()?;
        if start == 0 {
            break;
        }
        end = start;
        start -= ENCODE_STEP;
    }
    Some(out_len)
}

/// Decodes `text` into the front of `out` and returns the byte length.
///
/// `None` for any character outside the alphabet, padding, an impossible length, non-zero
/// trailing bits, or an `out` too small for the result (checked before decoding). On `None`
/// the contents of `out` are unspecified.
#[inline]
pub fn decode_into(text: &[u8], out: &mut [u8]) -> Option<usize> {
    let out_len = decoded_len(text.len())?;
    if out_len > out.len() {
        return None;
    }
    let n = engine().decode_slice(text, &mut out[..out_len]).ok()?;
    // The engine and `decoded_len` agree on every accepted text; refuse rather than trust it.
    (n == out_len).then_some(n)
}

/// Decodes the first `len` characters of `buf` in place, front to back.
///
/// Returns the byte length, or `None` for any character outside the alphabet, an impossible
/// length, non-zero trailing bits, or `len > buf.len()` (on `None` the contents of `buf` are
/// unspecified). Prefer [`decode_into`] when the text is in another buffer: it skips the copy.
pub fn decode_in_place(buf: &mut [u8], len: usize) -> Option<usize> {
    if len > buf.len() {
        return None;
    }
    let out_len = decoded_len(len)?;
    let mut step = [0u8; DECODE_STEP];
    let mut at = 0;
    let mut written = 0;
    while at < len {
        let chunk = &mut step[..(len - at).min(DECODE_STEP)];
        chunk.copy_from_slice(&buf[at..at + chunk.len()]);
        // Bytes land before `at`: a step's output never reaches text not yet read.
        written += decode_into(chunk, &mut buf[written..at + chunk.len()])?;
        at += chunk.len();
    }
    (written == out_len).then_some(out_len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoded_len_is_base64_s() {
        let edges = [
            usize::MAX,
            usize::MAX - 1,
            usize::MAX - 2,
            usize::MAX / 4 * 3 + 2,
        ];
        for n in (0..5000).chain(edges.iter().flat_map(|&e| e.saturating_sub(8)..=e)) {
            let want = base64::encoded_len(n, false).unwrap_or(usize::MAX);
            assert_eq!(encoded_len(n), want, "{n}");
        }
    }

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
            assert_eq!(decode_into(bad.as_bytes(), &mut [0u8; 16]), None, "{bad}");
        }
    }

    #[test]
    fn encode_refuses_small_buffer() {
        let mut buf = [1u8, 2, 3];
        assert_eq!(encode_in_place(&mut buf, 3), None);
        assert_eq!(buf, [1, 2, 3]);
    }

    #[test]
    fn decode_into_refuses_small_output_before_decoding() {
        // 8 characters are 6 bytes: 5 bytes of room is refused, 6 is enough.
        assert_eq!(decode_into(b"Zm9vYmFy", &mut [0u8; 5]), None);
        let mut out = [0u8; 6];
        assert_eq!(decode_into(b"Zm9vYmFy", &mut out), Some(6));
        assert_eq!(&out, b"foobar");
        assert_eq!(
            decode_in_place(&mut [b'A'; 4], 5),
            None,
            "len beyond the buffer"
        );
    }

    /// A reference written from RFC 4648 alone, bit by bit, to check the multi-step paths.
    fn reference(bytes: &[u8]) -> [u8; 1400] {
        const ALPHABET: &[u8; 64] =
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        let mut out = [0u8; 1400];
        let mut bit = 0;
        let mut i = 0;
        while bit < bytes.len() * 8 {
            let mut v = 0;
            for k in 0..6 {
                let b = bit + k;
                let set = b < bytes.len() * 8 && bytes[b / 8] & (0x80 >> (b % 8)) != 0;
                v = (v << 1) | u8::from(set);
            }
            out[i] = ALPHABET[v as usize];
            i += 1;
            bit += 6;
        }
        out
    }

    #[test]
    fn every_length_across_several_steps_round_trips() {
        // Lengths around each step boundary and well past it, in both directions.
        let mut data = [0u8; 1024];
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for b in data.iter_mut() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *b = x as u8;
        }
        let mut buf = [0u8; 1400];
        for len in (0..=1024).filter(|n| n % 7 == 0 || n % ENCODE_STEP < 4 || n % 96 > 92) {
            let want = reference(&data[..len]);
            buf[..len].copy_from_slice(&data[..len]);
            let n = encode_in_place(&mut buf, len).unwrap();
            assert_eq!(n, encoded_len(len));
            assert_eq!(&buf[..n], &want[..n], "encode {len}");
            let mut direct = [0u8; 1024];
            assert_eq!(decode_into(&buf[..n], &mut direct), Some(len));
            assert_eq!(&direct[..len], &data[..len], "decode_into {len}");
            assert_eq!(decode_in_place(&mut buf, n), Some(len));
            assert_eq!(&buf[..len], &data[..len], "decode_in_place {len}");
        }
    }

    #[test]
    fn as_str_is_exactly_utf8_validation() {
        let mut buf = [0u8; 600];
        let data: [u8; 400] = core::array::from_fn(|i| (i * 7) as u8);
        buf[..400].copy_from_slice(&data);
        let n = encode_in_place(&mut buf, 400).unwrap();
        let text = as_str(&buf[..n]).unwrap();
        assert_eq!(text.as_bytes(), &buf[..n]);
        // Every length and position of a bad byte, across the SIMD engine's 64-byte blocks.
        for len in 0..200 {
            let mut t = [b'A'; 200];
            assert_eq!(as_str(&t[..len]).map(str::len), Some(len));
            for at in 0..len {
                t[at] = 0xff;
                assert_eq!(as_str(&t[..len]), None, "{len} {at}");
                t[at] = b'A';
            }
        }
        assert_eq!(as_str("é€🦀".as_bytes()), Some("é€🦀"));
        assert_eq!(as_str(&[0xe2, 0x82]), None);
    }

    #[test]
    fn a_bad_character_in_any_step_is_refused() {
        let mut text = [b'A'; 1200];
        for pos in [0, 3, 511, 512, 513, 1199] {
            for bad in [b'=', b'+', b'/', b' ', 0, 0xff] {
                let mut t = text;
                t[pos] = bad;
                assert_eq!(decode_into(&t, &mut [0u8; 900]), None, "{pos} {bad}");
                assert_eq!(decode_in_place(&mut t, 1200), None, "{pos} {bad}");
            }
        }
        assert_eq!(decode_in_place(&mut text, 1200), Some(900));
    }
}
