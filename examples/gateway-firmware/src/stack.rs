//! Peak stack of a call, by stack painting: fill the free stack below the current frame with
//! a pattern, run the call, and find the deepest word that no longer holds the pattern.
//!
//! The only unsafe code of the firmware: it writes and reads stack memory below the stack
//! pointer, between the linker's `_stack_end` (top of .bss) and the current frame.

#![allow(unsafe_code)]

use core::ptr;

unsafe extern "C" {
    /// Lowest address the stack may grow to (cortex-m-rt's linker script).
    static _stack_end: u32;
}

const PAINT: u32 = 0xC0FF_EE5A;
/// How far below the caller the paint reaches: more than any measured call uses.
const WINDOW: usize = 24 * 1024;
/// Left unpainted just below the painter's own frame.
const MARGIN: usize = 64;

/// Paints the window below the caller's frame; returns its `(bottom, top)` addresses.
#[inline(never)]
fn paint() -> (usize, usize) {
    let sp = cortex_m::register::msp::read() as usize;
    let floor = (&raw const _stack_end) as usize;
    let top = (sp - MARGIN) & !3;
    let bottom = top.saturating_sub(WINDOW).max((floor + 3) & !3);
    let mut at = bottom;
    while at < top {
        // SAFETY: `bottom..top` is word aligned and lies between the end of .bss and the
        // live stack pointer: free stack that no live object occupies (an exception taken
        // meanwhile pushes its frame into this free memory too, which only costs paint).
        unsafe { ptr::write_volatile(at as *mut u32, PAINT) };
        at += 4;
    }
    (bottom, top)
}

/// The lowest word in `bottom..top` that no longer holds the paint.
fn deepest_write(bottom: usize, top: usize) -> usize {
    let mut at = bottom;
    // SAFETY: the same range `paint` wrote; reading it back races nothing.
    while at < top && unsafe { ptr::read_volatile(at as *const u32) } == PAINT {
        at += 4;
    }
    at
}

#[inline(never)]
fn call<R>(f: impl FnOnce() -> R) -> R {
    f()
}

/// Runs `f` and returns its result with the most stack it used, in bytes, measured from the
/// caller's stack pointer (so it includes `f`'s own frame and locals). `None` if `f` reached
/// the bottom of the painted window, so the figure would be a lower bound.
pub fn peak<R>(f: impl FnOnce() -> R) -> (R, Option<usize>) {
    let (bottom, top) = paint();
    let sp = cortex_m::register::msp::read() as usize;
    let r = call(f);
    let deepest = deepest_write(bottom, top);
    (r, (deepest > bottom).then(|| sp - deepest))
}
