//! Short copies without a `memcpy` call.

/// `dst.copy_from_slice(src)`, for the short strings of a token and its associated data (key
/// ids, methods, protocol versions, tool names, principals: mostly under 32 bytes).
///
/// Copying ten bytes through a `memcpy` call costs more than the copy itself, and the caller
/// pays as much again in the registers it saves around the call (the associated data alone
/// makes half a dozen such calls per seal and per open). Two overlapping fixed-size moves cover
/// any length from 4 to 32 bytes; longer strings still go to `memcpy`.
///
/// Panics, as `copy_from_slice` does, if the lengths differ.
#[inline(always)]
pub(crate) fn copy(dst: &mut [u8], src: &[u8]) {
    let n = src.len();
    if dst.len() != n {
        dst.copy_from_slice(src);
        return;
    }
    // The most common lengths first (most method names, protocol versions, tool names and key
    // ids are 8 to 16 bytes), each tested with one comparison.
    if n.wrapping_sub(8) <= 16 - 8 {
        ends::<8>(dst, src);
    } else if n.wrapping_sub(17) <= 32 - 17 {
        ends::<16>(dst, src);
    } else if n.wrapping_sub(4) <= 7 - 4 {
        ends::<4>(dst, src);
    } else if n > 32 {
        dst.copy_from_slice(src);
    } else if n > 0 {
        // The first, middle and last bytes cover 1 to 3.
        dst[0] = src[0];
        dst[n / 2] = src[n / 2];
        dst[n - 1] = src[n - 1];
    }
}

/// Copies the first and the last `W` bytes of `src` (as long as `dst`, at least `W` and at
/// most `2 * W` bytes), which together are all of it.
#[inline(always)]
fn ends<const W: usize>(dst: &mut [u8], src: &[u8]) {
    if let (Some(d), Some(s)) = (dst.first_chunk_mut::<W>(), src.first_chunk::<W>()) {
        *d = *s;
    }
    if let (Some(d), Some(s)) = (dst.last_chunk_mut::<W>(), src.last_chunk::<W>()) {
        *d = *s;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_every_length_exactly() {
        let src: [u8; 80] = core::array::from_fn(|i| i as u8 ^ 0xa5);
        for len in 0..=src.len() {
            let mut dst = [0u8; 82];
            copy(&mut dst[1..1 + len], &src[..len]);
            assert_eq!(&dst[1..1 + len], &src[..len], "{len}");
            assert_eq!((dst[0], dst[1 + len]), (0, 0), "{len}: wrote outside");
        }
    }

    #[test]
    #[should_panic]
    fn different_lengths_panic_like_copy_from_slice() {
        copy(&mut [0u8; 4], &[1u8; 5]);
    }
}
