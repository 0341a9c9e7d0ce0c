//! A global allocator that counts heap allocations, for the allocation table. Install it in a
//! measurement binary with `#[global_allocator]`; the criterion benches do not use it.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

/// Counts allocations (including reallocations) and bytes requested, then defers to
/// [`System`].
pub struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);

// SAFETY: every method forwards to `System` with the caller's arguments unchanged; the
// counters are plain atomics.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(layout.size() as u64, Ordering::Relaxed);
        // SAFETY: forwarded unchanged.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(layout.size() as u64, Ordering::Relaxed);
        // SAFETY: forwarded unchanged.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(new_size as u64, Ordering::Relaxed);
        // SAFETY: forwarded unchanged.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// Allocations and bytes so far.
pub fn snapshot() -> (u64, u64) {
    (
        ALLOCS.load(Ordering::Relaxed),
        BYTES.load(Ordering::Relaxed),
    )
}

/// Average allocations and bytes per call of `f` over `iters` calls, after one warm-up call
/// (which may fill lazily initialised state such as a thread-local RNG).
pub fn per_op(iters: u64, f: impl FnMut()) -> (f64, f64) {
    per_op_after(1, iters, f)
}

/// Like [`per_op`], after `warm_up` uncounted calls (to reach a steady state).
pub fn per_op_after(warm_up: u64, iters: u64, mut f: impl FnMut()) -> (f64, f64) {
    for _ in 0..warm_up {
        f();
    }
    let (a0, b0) = snapshot();
    for _ in 0..iters {
        f();
    }
    let (a1, b1) = snapshot();
    (
        (a1 - a0) as f64 / iters as f64,
        (b1 - b0) as f64 / iters as f64,
    )
}
