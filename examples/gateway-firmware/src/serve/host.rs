//! What the gateway asks its QEMU host at boot, over semihosting: the command line (which
//! names the config file), the file itself, and the time of day. A real board reads its
//! configuration from protected storage and its time from SNTP or its upstream's `Date`.

#![allow(unsafe_code)]

#[cfg(target_arch = "arm")]
use cortex_m_semihosting::{nr, syscall1};
#[cfg(target_arch = "riscv32")]
use riscv_semihosting::{nr, syscall1};

/// A semihosting call's error result.
const FAILED: usize = usize::MAX;

/// The command line QEMU was given (`-semihosting-config ...,arg=gateway,arg=PATH`), copied
/// into `buf`; `None` if the host has none or it does not fit.
pub fn command_line(buf: &mut [u8]) -> Option<&[u8]> {
    // The parameter block: buffer address and length in, length written out by the host.
    let mut block = [buf.as_mut_ptr() as usize, buf.len()];
    // SAFETY: SYS_GET_CMDLINE writes at most `block[1]` bytes at `block[0]` (which `buf`
    // owns for the call) and the string's length into `block[1]`.
    let status = unsafe { syscall1(nr::GET_CMDLINE, block.as_mut_ptr() as usize) };
    let len = block[1];
    (status == 0).then(|| buf.get(..len)).flatten()
}

/// Reads the host file at `path` into `buf`; `None` if it cannot be opened or read, or does
/// not fit (its length is returned as `Err` then).
pub fn read_file(path: &[u8], buf: &mut [u8]) -> Result<usize, ReadError> {
    let mut name = [0u8; 256];
    let Some(slot) = name.get_mut(..path.len()) else {
        return Err(ReadError::PathTooLong);
    };
    if path.len() >= 256 || path.contains(&0) {
        return Err(ReadError::PathTooLong);
    }
    slot.copy_from_slice(path);
    let open = [name.as_ptr() as usize, nr::open::R, path.len()];
    // SAFETY: SYS_OPEN reads the NUL-terminated name (length without the NUL) of `name`,
    // which outlives the call; the block is only read.
    let fd = unsafe { syscall1(nr::OPEN, open.as_ptr() as usize) };
    if fd == FAILED {
        return Err(ReadError::Open);
    }
    let flen = [fd];
    // SAFETY: SYS_FLEN reads the handle from the block.
    let len = unsafe { syscall1(nr::FLEN, flen.as_ptr() as usize) };
    let result = if len == FAILED {
        Err(ReadError::Read)
    } else if len > buf.len() {
        Err(ReadError::TooLarge(len))
    } else {
        let read = [fd, buf.as_mut_ptr() as usize, len];
        // SAFETY: SYS_READ writes at most `len` bytes at the address of `buf`, which holds
        // at least `len` bytes and is borrowed mutably for the call. It returns the number
        // of bytes NOT read.
        let left = unsafe { syscall1(nr::READ, read.as_ptr() as usize) };
        if left == 0 {
            Ok(len)
        } else {
            Err(ReadError::Read)
        }
    };
    let close = [fd];
    // SAFETY: SYS_CLOSE reads the handle from the block.
    unsafe { syscall1(nr::CLOSE, close.as_ptr() as usize) };
    result
}

/// Why the config file could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, defmt::Format)]
pub enum ReadError {
    /// The path is 256 bytes or longer, or holds a NUL.
    PathTooLong,
    /// The host could not open it.
    Open,
    /// The host could not read it whole.
    Read,
    /// Larger than the buffer: this many bytes.
    TooLarge(usize),
}

/// Seconds since the Unix epoch from the host's clock (SYS_TIME), `None` if it failed.
pub fn unix_seconds() -> Option<u64> {
    // SAFETY: SYS_TIME takes no parameter block (the argument must be 0).
    let t = unsafe { syscall1(nr::TIME, 0) };
    (t != FAILED).then_some(t as u64)
}
