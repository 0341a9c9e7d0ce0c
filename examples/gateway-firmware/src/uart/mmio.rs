//! The UART of each QEMU machine, polled, by its registers. The only module of the serving
//! path that touches memory-mapped I/O; every access is a volatile read or write of a
//! register the machine's reference manual (and QEMU's model of it) documents at that
//! address.
//!
//! | machine | UART | base |
//! | --- | --- | --- |
//! | `microbit` | nRF51 UART0 | `0x4000_2000` |
//! | `lm3s6965evb` | Stellaris UART0 (PL011) | `0x4000_C000` |
//! | `mps2-an386` | CMSDK APB UART0 | `0x4000_4000` |
//! | `virt` | NS16550A | `0x1000_0000` |

#![allow(unsafe_code)]

use core::ptr;

use super::Serial;

/// Reads the 32-bit register at `addr`.
///
/// # Safety
/// `addr` must be a readable register of this machine's UART (or its clock control).
#[cfg(not(machine = "virt"))]
unsafe fn read32(addr: usize) -> u32 {
    // SAFETY: the caller names a device register; volatile, as the device changes it.
    unsafe { ptr::read_volatile(addr as *const u32) }
}

/// Writes the 32-bit register at `addr`.
///
/// # Safety
/// `addr` must be a writable register of this machine's UART (or its clock control).
#[cfg(not(machine = "virt"))]
unsafe fn write32(addr: usize, value: u32) {
    // SAFETY: the caller names a device register; volatile, so the write happens.
    unsafe { ptr::write_volatile(addr as *mut u32, value) }
}

/// The machine's first UART, owned by the serving loop.
#[derive(Debug)]
pub struct Uart {
    _private: (),
}

#[cfg(machine = "microbit")]
mod regs {
    //! nRF51 series reference manual, UART chapter.
    pub const BASE: usize = 0x4000_2000;
    pub const STARTRX: usize = BASE;
    pub const STARTTX: usize = BASE + 0x008;
    pub const RXDRDY: usize = BASE + 0x108;
    pub const TXDRDY: usize = BASE + 0x11C;
    pub const ENABLE: usize = BASE + 0x500;
    pub const PSELTXD: usize = BASE + 0x50C;
    pub const PSELRXD: usize = BASE + 0x514;
    pub const RXD: usize = BASE + 0x518;
    pub const TXD: usize = BASE + 0x51C;
    pub const BAUDRATE: usize = BASE + 0x524;
    /// ENABLE value that turns the UART on.
    pub const ENABLED: u32 = 4;
    /// BAUDRATE value for 115,200 baud.
    pub const BAUD115200: u32 = 0x01D7_E000;
    /// The micro:bit's USB-serial pins: TX on P0.24, RX on P0.25.
    pub const PIN_TX: u32 = 24;
    pub const PIN_RX: u32 = 25;
}

#[cfg(machine = "microbit")]
impl Uart {
    /// Takes the UART: 115,200 baud on the micro:bit's USB-serial pins, receiver and
    /// transmitter started.
    pub fn take() -> Self {
        use regs::*;
        // SAFETY: nRF51 UART0 registers (see `regs`).
        unsafe {
            write32(PSELTXD, PIN_TX);
            write32(PSELRXD, PIN_RX);
            write32(BAUDRATE, BAUD115200);
            write32(ENABLE, ENABLED);
            write32(RXDRDY, 0);
            write32(TXDRDY, 0);
            write32(STARTRX, 1);
            write32(STARTTX, 1);
        }
        Self { _private: () }
    }
}

#[cfg(machine = "microbit")]
impl Serial for Uart {
    fn try_read(&mut self) -> Option<u8> {
        use regs::*;
        // SAFETY: nRF51 UART0 registers. The event is cleared before RXD is read, as the
        // manual asks; the UART raises it again while bytes remain.
        unsafe {
            if read32(RXDRDY) == 0 {
                return None;
            }
            write32(RXDRDY, 0);
            Some(read32(RXD) as u8)
        }
    }

    fn write_byte(&mut self, byte: u8) {
        use regs::*;
        // SAFETY: nRF51 UART0 registers: write TXD, wait for the byte to leave.
        unsafe {
            write32(TXD, u32::from(byte));
            while read32(TXDRDY) == 0 {}
            write32(TXDRDY, 0);
        }
    }
}

#[cfg(machine = "lm3s6965evb")]
mod regs {
    //! Stellaris LM3S6965 data sheet, UART chapter (an Arm PL011) and system control.
    pub const BASE: usize = 0x4000_C000;
    pub const DR: usize = BASE;
    pub const FR: usize = BASE + 0x018;
    pub const IBRD: usize = BASE + 0x024;
    pub const FBRD: usize = BASE + 0x028;
    pub const LCRH: usize = BASE + 0x02C;
    pub const CTL: usize = BASE + 0x030;
    /// Run-mode clock gating control 1: bit 0 clocks UART0.
    pub const RCGC1: usize = 0x400F_E104;
    pub const FR_RXFE: u32 = 1 << 4;
    pub const FR_TXFF: u32 = 1 << 5;
    /// 8 data bits, FIFOs off: enabling them flushes what arrived before (QEMU's model
    /// does), and QEMU holds back input while the one-byte holding register is full.
    pub const LCRH_8N1: u32 = 0b11 << 5;
    /// UART, transmitter and receiver enabled.
    pub const CTL_ON: u32 = 1 | (1 << 8) | (1 << 9);
}

#[cfg(machine = "lm3s6965evb")]
impl Uart {
    /// Takes the UART: clocked, 115,200 baud at the 12.5 MHz reset clock, 8N1.
    pub fn take() -> Self {
        use regs::*;
        // SAFETY: system control and UART0 registers (see `regs`).
        unsafe {
            write32(RCGC1, read32(RCGC1) | 1);
            write32(CTL, 0);
            // 12.5 MHz / (16 × 115,200) = 6.78: integer 6, fraction 0.78 × 64 ≈ 50.
            write32(IBRD, 6);
            write32(FBRD, 50);
            write32(LCRH, LCRH_8N1);
            write32(CTL, CTL_ON);
        }
        Self { _private: () }
    }
}

#[cfg(machine = "lm3s6965evb")]
impl Serial for Uart {
    fn try_read(&mut self) -> Option<u8> {
        use regs::*;
        // SAFETY: UART0 flag and data registers.
        unsafe { (read32(FR) & FR_RXFE == 0).then(|| read32(DR) as u8) }
    }

    fn write_byte(&mut self, byte: u8) {
        use regs::*;
        // SAFETY: UART0 flag and data registers: wait until the transmitter has room.
        unsafe {
            while read32(FR) & FR_TXFF != 0 {}
            write32(DR, u32::from(byte));
        }
    }
}

#[cfg(machine = "mps2-an386")]
mod regs {
    //! Arm CMSDK APB UART (Cortex-M System Design Kit technical reference manual).
    pub const BASE: usize = 0x4000_4000;
    pub const DATA: usize = BASE;
    pub const STATE: usize = BASE + 0x004;
    pub const CTRL: usize = BASE + 0x008;
    pub const BAUDDIV: usize = BASE + 0x010;
    pub const STATE_TXFULL: u32 = 1;
    pub const STATE_RXFULL: u32 = 1 << 1;
    /// Transmitter and receiver enabled, no interrupts.
    pub const CTRL_ON: u32 = 0b11;
}

#[cfg(machine = "mps2-an386")]
impl Uart {
    /// Takes the UART: 115,200 baud at 25 MHz, transmitter and receiver enabled.
    pub fn take() -> Self {
        use regs::*;
        // SAFETY: CMSDK UART0 registers (see `regs`).
        unsafe {
            write32(BAUDDIV, crate::board::CORE_CLOCK_HZ / 115_200);
            write32(CTRL, CTRL_ON);
        }
        Self { _private: () }
    }
}

#[cfg(machine = "mps2-an386")]
impl Serial for Uart {
    fn try_read(&mut self) -> Option<u8> {
        use regs::*;
        // SAFETY: CMSDK UART0 state and data registers.
        unsafe { (read32(STATE) & STATE_RXFULL != 0).then(|| read32(DATA) as u8) }
    }

    fn write_byte(&mut self, byte: u8) {
        use regs::*;
        // SAFETY: CMSDK UART0 state and data registers: wait for the buffer, then write.
        unsafe {
            while read32(STATE) & STATE_TXFULL != 0 {}
            write32(DATA, u32::from(byte));
        }
    }
}

#[cfg(machine = "virt")]
mod regs {
    //! NS16550A (QEMU `virt`: byte registers, no shift).
    pub const BASE: usize = 0x1000_0000;
    pub const RBR_THR: usize = BASE;
    pub const IER: usize = BASE + 1;
    pub const LCR: usize = BASE + 3;
    pub const LSR: usize = BASE + 5;
    pub const LSR_DR: u8 = 1;
    pub const LSR_THRE: u8 = 1 << 5;
    /// 8 data bits, no parity, one stop bit.
    pub const LCR_8N1: u8 = 0b11;
}

#[cfg(machine = "virt")]
fn read8(addr: usize) -> u8 {
    // SAFETY: `addr` is one of the NS16550A's byte registers (see `regs`).
    unsafe { ptr::read_volatile(addr as *const u8) }
}

#[cfg(machine = "virt")]
fn write8(addr: usize, value: u8) {
    // SAFETY: `addr` is one of the NS16550A's byte registers (see `regs`).
    unsafe { ptr::write_volatile(addr as *mut u8, value) }
}

#[cfg(machine = "virt")]
impl Uart {
    /// Takes the UART: 8N1, no interrupts (QEMU ignores the divisor). The FIFOs stay off:
    /// enabling them flushes a byte that arrived during boot, and QEMU holds back input
    /// while the receive register is full.
    pub fn take() -> Self {
        use regs::*;
        write8(IER, 0);
        write8(LCR, LCR_8N1);
        Self { _private: () }
    }
}

#[cfg(machine = "virt")]
impl Serial for Uart {
    fn try_read(&mut self) -> Option<u8> {
        use regs::*;
        (read8(LSR) & LSR_DR != 0).then(|| read8(RBR_THR))
    }

    fn write_byte(&mut self, byte: u8) {
        use regs::*;
        while read8(LSR) & LSR_THRE == 0 {}
        write8(RBR_THR, byte);
    }
}
