//! Constant-time equality of byte strings, a machine word at a time.
//!
//! `subtle`'s slice comparison sends every byte through its optimisation barrier (a volatile
//! read in a function that is never inlined): 32 calls for an argument digest. Here the bytes
//! are folded into one 64-bit difference with XOR and OR, with no branch on the data, and only
//! that word goes through `subtle`'s barrier. Lengths are compared in the clear, as `subtle`
//! does: every length compared here is public or fixed.

use subtle::{Choice, ConstantTimeEq};

/// Whether `a` and `b` hold the same bytes, in time independent of where they differ.
#[inline]
pub(crate) fn eq(a: &[u8], b: &[u8]) -> Choice {
    if a.len() != b.len() {
        return Choice::from(0);
    }
    let (a_words, a_tail) = a.as_chunks::<8>();
    let (b_words, b_tail) = b.as_chunks::<8>();
    let mut diff = 0u64;
    for (x, y) in a_words.iter().zip(b_words) {
        diff |= u64::from_ne_bytes(*x) ^ u64::from_ne_bytes(*y);
    }
    for (x, y) in a_tail.iter().zip(b_tail) {
        diff |= u64::from(x ^ y);
    }
    diff.ct_eq(&0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_only_when_every_byte_is_equal() {
        let a: [u8; 41] = core::array::from_fn(|i| (i as u8).wrapping_mul(37) ^ 0x5a);
        for len in 0..=a.len() {
            assert!(bool::from(eq(&a[..len], &a[..len])), "{len}");
            for pos in 0..len {
                for bit in [0x01u8, 0x80] {
                    let mut b = a;
                    b[pos] ^= bit;
                    assert!(!bool::from(eq(&a[..len], &b[..len])), "{len} {pos} {bit}");
                }
            }
        }
    }

    #[test]
    fn different_lengths_are_unequal() {
        assert!(!bool::from(eq(b"tools/call", b"tools/cal")));
        assert!(!bool::from(eq(b"", b"\0")));
        assert!(bool::from(eq(b"", b"")));
    }
}
