//! A table-driven base64url decoder with the same contract as `mrtr_core::b64::decode_in_place`
//! (strict alphabet, no padding, canonical trailing bits, in place), to measure what the
//! proposed change to core would buy. Core's decoder classifies each character with a chain of
//! range comparisons, whose branches mispredict on random text; this one looks each character
//! up in a 256-entry table and folds the validity check into one OR per group.

const INVALID: u8 = 0xff;

const fn table() -> [u8; 256] {
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut t = [INVALID; 256];
    let mut i = 0;
    while i < 64 {
        t[alphabet[i] as usize] = i as u8;
        i += 1;
    }
    t
}

static DECODE: [u8; 256] = table();

/// Decodes the first `len` characters of `buf` in place; `None` on any invalid input.
pub fn decode_in_place(buf: &mut [u8], len: usize) -> Option<usize> {
    if len > buf.len() {
        return None;
    }
    let out_len = match len % 4 {
        0 => len / 4 * 3,
        2 => len / 4 * 3 + 1,
        3 => len / 4 * 3 + 2,
        _ => return None,
    };
    let full = len / 4;
    let mut bad = 0u8;
    for g in 0..full {
        let i = g * 4;
        let [a, b, c, d] = [
            DECODE[buf[i] as usize],
            DECODE[buf[i + 1] as usize],
            DECODE[buf[i + 2] as usize],
            DECODE[buf[i + 3] as usize],
        ];
        bad |= a | b | c | d;
        let o = g * 3;
        buf[o] = (a << 2) | (b >> 4);
        buf[o + 1] = (b << 4) | (c >> 2);
        buf[o + 2] = (c << 6) | d;
    }
    // Every valid value is below 64, so the high bit is set only by an INVALID entry.
    if bad & 0x80 != 0 {
        return None;
    }
    let rem = len % 4;
    if rem != 0 {
        let (i, o) = (full * 4, full * 3);
        let a = DECODE[buf[i] as usize];
        let b = DECODE[buf[i + 1] as usize];
        let c = if rem == 3 {
            DECODE[buf[i + 2] as usize]
        } else {
            0
        };
        if (a | b | c) & 0x80 != 0 {
            return None;
        }
        if rem == 2 {
            if b & 0x0f != 0 {
                return None;
            }
            buf[o] = (a << 2) | (b >> 4);
        } else {
            if c & 0x03 != 0 {
                return None;
            }
            buf[o] = (a << 2) | (b >> 4);
            buf[o + 1] = (b << 4) | (c >> 2);
        }
    }
    Some(out_len)
}

#[cfg(test)]
mod tests {
    use super::decode_in_place;

    /// Same answer as core's decoder on every short input over a small alphabet that mixes
    /// valid and invalid characters, and on long random text.
    #[test]
    fn agrees_with_core() {
        let chars = b"AZaz09-_g=+/ \xff";
        let mut inputs: Vec<Vec<u8>> = vec![vec![]];
        for _ in 0..4 {
            let next: Vec<Vec<u8>> = inputs
                .iter()
                .flat_map(|p| {
                    chars.iter().map(move |&c| {
                        let mut v = p.clone();
                        v.push(c);
                        v
                    })
                })
                .collect();
            inputs.extend(next.into_iter().filter(|v| v.len() <= 5));
        }
        let mut x = 1u64;
        for len in [100usize, 341, 342, 343, 600] {
            let text: Vec<u8> = (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
                        [(x % 64) as usize]
                })
                .collect();
            inputs.push(text);
        }
        for input in inputs {
            let mut a = input.clone();
            let mut b = input.clone();
            let ra = mrtr_core::b64::decode_in_place(&mut a, input.len());
            let rb = decode_in_place(&mut b, input.len());
            assert_eq!(ra, rb, "{input:?}");
            if let Some(n) = ra {
                assert_eq!(a[..n], b[..n], "{input:?}");
            }
        }
    }
}
