//! The defmt global logger: frames go to the host over semihosting (`SYS_WRITE` to the
//! console, which QEMU writes to a file or its stdout), and the host decodes them with
//! `defmt-print` against this ELF. One implementation for every family: only
//! [`crate::arch::host_open`] and [`crate::arch::host_write`] differ.
//!
//! A frame is encoded into a small buffer and handed over in as few semihosting calls as
//! possible. Logging runs inside a critical section, so the PendSV / machine-software handler
//! may log too, between two frames of the main loop.

#![allow(unsafe_code)]

use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicBool, Ordering};

use critical_section::RestoreState;

use crate::arch;

/// Bytes gathered before one semihosting write.
const CHUNK: usize = 64;

/// The bytes of the frame being written, and the host file they go to.
struct Sink {
    fd: Option<usize>,
    buf: [u8; CHUNK],
    len: usize,
    /// A write the host refused: every later frame is dropped (the run then fails, as the
    /// decoded log lacks its verdict).
    broken: bool,
}

impl Sink {
    fn push(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if self.len == CHUNK {
                self.flush();
            }
            self.buf[self.len] = b;
            self.len += 1;
        }
    }

    fn flush(&mut self) {
        if self.len > 0 && !self.broken {
            if self.fd.is_none() {
                self.fd = arch::host_open();
            }
            self.broken = !self
                .fd
                .is_some_and(|fd| arch::host_write(fd, &self.buf[..self.len]));
        }
        self.len = 0;
    }
}

/// A value touched only between `acquire` and `release`, inside one critical section.
struct Shared<T>(UnsafeCell<T>);

// SAFETY: every access happens inside the critical section held from `acquire` to `release`
// (single core, interrupts masked), and `TAKEN` refuses re-entry.
unsafe impl<T> Sync for Shared<T> {}

impl<T> Shared<T> {
    /// # Safety
    /// Only between `acquire` and `release`, and never twice for the same value at once.
    #[allow(clippy::mut_from_ref)]
    unsafe fn get(&self) -> &mut T {
        // SAFETY: the caller holds the logger (see above).
        unsafe { &mut *self.0.get() }
    }
}

static RESTORE: Shared<RestoreState> = Shared(UnsafeCell::new(RestoreState::invalid()));
static ENCODER: Shared<defmt::Encoder> = Shared(UnsafeCell::new(defmt::Encoder::new()));
static SINK: Shared<Sink> = Shared(UnsafeCell::new(Sink {
    fd: None,
    buf: [0; CHUNK],
    len: 0,
    broken: false,
}));

/// Re-entry guard (a frame started inside another one). Load/store only: no CAS needed.
static TAKEN: AtomicBool = AtomicBool::new(false);

/// The encoder's output. The encoder and the sink are distinct values, so the encoder's
/// `&mut` and this one never alias.
fn put(bytes: &[u8]) {
    // SAFETY: called by the encoder, inside acquire/release.
    unsafe { SINK.get() }.push(bytes);
}

#[defmt::global_logger]
struct Logger;

// SAFETY: `acquire` enters a critical section and refuses re-entry; `write`, `flush` and
// `release` run only after `acquire` (defmt's contract), inside that section.
unsafe impl defmt::Logger for Logger {
    fn acquire() {
        // SAFETY: released in `release`, which defmt always calls after `acquire`.
        let restore = unsafe { critical_section::acquire() };
        if TAKEN.load(Ordering::Relaxed) {
            // A frame inside a frame cannot be encoded: end the run rather than corrupt it.
            arch::exit(false);
        }
        TAKEN.store(true, Ordering::Relaxed);
        // SAFETY: inside the section just entered, logger taken.
        unsafe {
            *RESTORE.get() = restore;
            ENCODER.get().start_frame(put);
        }
    }

    unsafe fn flush() {
        // SAFETY: inside acquire/release.
        unsafe { SINK.get() }.flush();
    }

    unsafe fn release() {
        // SAFETY: inside acquire/release; the section is left last.
        unsafe {
            ENCODER.get().end_frame(put);
            SINK.get().flush();
            let restore = *RESTORE.get();
            TAKEN.store(false, Ordering::Relaxed);
            critical_section::release(restore);
        }
    }

    unsafe fn write(bytes: &[u8]) {
        // SAFETY: inside acquire/release.
        unsafe { ENCODER.get() }.write(bytes, put);
    }
}
