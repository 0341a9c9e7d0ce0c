//! Peak stack of a call, by stack painting: fill the free stack below the current frame with
//! a pattern, run the call, and find the deepest word that no longer holds the pattern.
//! [`paint_all`] at boot and [`deepest_since_boot`] at the end give the whole run's peak.
//!
//! Unsafe code: it writes and reads stack memory below the stack pointer, between the
//! runtime's stack floor (the end of .bss) and the current frame.

#![allow(unsafe_code)]

use core::ptr;
use core::sync::atomic::{AtomicUsize, Ordering};

use crate::arch;

const PAINT: u32 = 0xC0FF_EE5A;
/// How far below the caller the paint reaches: more than any measured call uses.
const WINDOW: usize = 12 * 1024;
/// Left unpainted just below the painter's own frame.
const MARGIN: usize = 64;

/// The stack pointer at [`paint_all`] (the top of the whole run's usage).
static BOOT_SP: AtomicUsize = AtomicUsize::new(0);
/// The deepest address found written so far by any measurement (usize::MAX: none yet).
static DEEPEST: AtomicUsize = AtomicUsize::new(usize::MAX);

fn floor() -> usize {
    (arch::stack_floor() + 3) & !3
}

fn fill(bottom: usize, top: usize) {
    let mut at = bottom;
    while at < top {
        // SAFETY: `bottom..top` is word aligned and lies between the stack floor and the live
        // stack pointer: free stack that no live object occupies (an exception taken
        // meanwhile pushes its frame into this free memory too, which only costs paint).
        unsafe { ptr::write_volatile(at as *mut u32, PAINT) };
        at += 4;
    }
}

/// The lowest word in `bottom..top` that no longer holds the paint.
fn deepest_write(bottom: usize, top: usize) -> usize {
    let mut at = bottom;
    // SAFETY: free stack below the caller (see `fill`); reading it back races nothing.
    while at < top && unsafe { ptr::read_volatile(at as *const u32) } == PAINT {
        at += 4;
    }
    at
}

/// Paints every free stack word below the caller: call first thing at boot.
#[inline(never)]
pub fn paint_all() {
    let sp = arch::stack_pointer();
    BOOT_SP.store(sp, Ordering::Relaxed);
    fill(floor(), (sp - MARGIN) & !3);
}

/// The whole run's peak stack in bytes, measured from the stack pointer at [`paint_all`].
pub fn deepest_since_boot() -> usize {
    let boot = BOOT_SP.load(Ordering::Relaxed);
    let now = deepest_write(floor(), (boot - MARGIN) & !3);
    let deepest = now.min(DEEPEST.load(Ordering::Relaxed));
    boot.saturating_sub(deepest)
}

/// Paints the window below the caller's frame; returns its `(bottom, top)` addresses.
#[inline(never)]
fn paint() -> (usize, usize) {
    // Repainting erases what earlier code wrote: remember how deep it went first.
    let boot = BOOT_SP.load(Ordering::Relaxed);
    if boot != 0 {
        let before = deepest_write(floor(), (boot - MARGIN) & !3);
        DEEPEST.store(
            before.min(DEEPEST.load(Ordering::Relaxed)),
            Ordering::Relaxed,
        );
    }
    let sp = arch::stack_pointer();
    let top = (sp - MARGIN) & !3;
    let bottom = top.saturating_sub(WINDOW).max(floor());
    fill(bottom, top);
    (bottom, top)
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
    let sp = arch::stack_pointer();
    let r = call(f);
    let deepest = deepest_write(bottom, top);
    DEEPEST.store(
        deepest.min(DEEPEST.load(Ordering::Relaxed)),
        Ordering::Relaxed,
    );
    (r, (deepest > bottom).then(|| sp - deepest))
}
