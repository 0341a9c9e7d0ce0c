//! SMSC LAN9118 Ethernet controller, as QEMU's `mps2-an386` maps it at `0x4020_0000`: polled,
//! programmed I/O, no interrupts, no DMA.
//!
//! The chip is driven through 32-bit registers: the RX and TX data FIFOs (frames go in and out
//! a word at a time, little-endian), the RX and TX status FIFOs (one word per frame), a few
//! control registers, and the MAC's own registers behind the indirect `MAC_CSR_CMD` /
//! `MAC_CSR_DATA` pair; the internal PHY (address 1) sits behind the MAC's MII registers.
//!
//! Only registers QEMU's model implements are touched (it stops the emulator on any other),
//! and every wait on the hardware is bounded: a stuck chip is an error, never a hang.
//!
//! Unsafe code: the volatile reads and writes of the register window, and handing out the
//! driver's frame buffers once (`cortex_m::singleton!`).

#![allow(unsafe_code)]

use core::sync::atomic::{AtomicBool, Ordering};

/// Base address of the controller's registers on the MPS2 FPGA images (AN385/AN386/AN500).
pub const BASE: usize = 0x4020_0000;

/// Largest frame handled, without the CRC: 1,514 bytes (no VLAN tag), rounded up to words.
pub const FRAME: usize = 1516;
/// Room for a received frame with its 4-byte CRC, as the RX data FIFO hands it over.
const RX_ROOM: usize = FRAME + 4;

// Register offsets (LAN9118 datasheet, "System Control and Status Registers").
const RX_DATA: usize = 0x00;
const TX_DATA: usize = 0x20;
const RX_STATUS: usize = 0x40;
const TX_STATUS: usize = 0x48;
const ID_REV: usize = 0x50;
const IRQ_CFG: usize = 0x54;
const INT_EN: usize = 0x5c;
const INT_STS: usize = 0x58;
const BYTE_TEST: usize = 0x64;
const RX_CFG: usize = 0x6c;
const TX_CFG: usize = 0x70;
const HW_CFG: usize = 0x74;
const RX_FIFO_INF: usize = 0x7c;
const TX_FIFO_INF: usize = 0x80;
const PMT_CTRL: usize = 0x84;
const MAC_CSR_CMD: usize = 0xa4;
const MAC_CSR_DATA: usize = 0xa8;

/// What `BYTE_TEST` always reads: proves the bus and the byte order.
const BYTE_TEST_VALUE: u32 = 0x8765_4321;
const HW_CFG_SRST: u32 = 1;
const PMT_CTRL_READY: u32 = 1;
/// `TX_CFG`: transmitter on, and let the TX status FIFO overrun (its words are only drained).
const TX_CFG_ON: u32 = 1 << 1;
const TX_CFG_SAO: u32 = 1 << 2;
const CSR_BUSY: u32 = 1 << 31;
const CSR_READ: u32 = 1 << 30;

// MAC registers (indirect).
const MAC_CR: u32 = 1;
const MAC_ADDRH: u32 = 2;
const MAC_ADDRL: u32 = 3;
const MAC_MII_ACC: u32 = 6;
const MAC_MII_DATA: u32 = 7;
const MAC_CR_RXEN: u32 = 1 << 2;
const MAC_CR_TXEN: u32 = 1 << 3;
const MAC_CR_FDPX: u32 = 1 << 20;
const MII_BUSY: u32 = 1;
const MII_WRITE: u32 = 1 << 1;
/// The internal PHY's MII address.
const PHY: u32 = 1;

// PHY registers (IEEE 802.3 clause 22).
const BMCR: u32 = 0;
const BMSR: u32 = 1;
const BMCR_RESET: u32 = 1 << 15;
const BMCR_AUTONEG: u32 = 1 << 12;
const BMSR_LINK: u32 = 1 << 2;

// RX status word.
const RX_STS_LEN_SHIFT: u32 = 16;
const RX_STS_LEN_MASK: u32 = 0x3fff;
/// Error summary, or the frame failed the address filter (QEMU: bit 30).
const RX_STS_BAD: u32 = (1 << 15) | (1 << 30);

// TX command words.
const TX_CMD_A_FIRST: u32 = 1 << 13;
const TX_CMD_A_LAST: u32 = 1 << 12;

/// Polls of a busy bit before giving up.
const SPINS: u32 = 100_000;

/// Why the controller could not be brought up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, defmt::Format)]
pub enum Error {
    /// `BYTE_TEST` did not read back its constant: no LAN9118 at [`BASE`].
    NotFound,
    /// The chip did not leave reset.
    Reset,
    /// A MAC or MII register access never completed.
    Busy,
    /// The driver was taken already.
    Taken,
}

/// The chip's counters, for the log.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, defmt::Format)]
pub struct Counters {
    /// Frames received and handed on.
    pub received: u32,
    /// Frames dropped on receive: errors, filter misses, too long or too short.
    pub dropped: u32,
    /// Frames sent.
    pub sent: u32,
    /// Frames not sent: no room in the TX FIFO.
    pub tx_full: u32,
}

/// The controller: its register window and its two frame buffers.
pub struct Lan9118 {
    regs: Regs,
    rx: &'static mut [u8; RX_ROOM],
    tx: &'static mut [u8; FRAME],
    mac: [u8; 6],
    counters: Counters,
}

/// The register window. Exactly one exists (see [`Lan9118::take`]).
struct Regs {
    base: usize,
}

impl Regs {
    fn read(&self, offset: usize) -> u32 {
        // SAFETY: `offset` is one of the register offsets above, all inside the controller's
        // 256-byte window at `base`, 4-aligned; device memory, read with a volatile access.
        unsafe { core::ptr::read_volatile((self.base + offset) as *const u32) }
    }

    fn write(&self, offset: usize, value: u32) {
        // SAFETY: as in `read`; the window belongs to this driver alone (`Lan9118::take`).
        unsafe { core::ptr::write_volatile((self.base + offset) as *mut u32, value) }
    }

    /// Spins until `offset & mask` reads as `want`; false if it never did.
    fn wait(&self, offset: usize, mask: u32, want: u32) -> bool {
        (0..SPINS).any(|_| self.read(offset) & mask == want)
    }

    fn mac_read(&self, reg: u32) -> Result<u32, Error> {
        self.csr_idle()?;
        self.write(MAC_CSR_CMD, CSR_BUSY | CSR_READ | reg);
        self.csr_idle()?;
        Ok(self.read(MAC_CSR_DATA))
    }

    fn mac_write(&self, reg: u32, value: u32) -> Result<(), Error> {
        self.csr_idle()?;
        self.write(MAC_CSR_DATA, value);
        self.write(MAC_CSR_CMD, CSR_BUSY | reg);
        self.csr_idle()
    }

    fn csr_idle(&self) -> Result<(), Error> {
        if self.wait(MAC_CSR_CMD, CSR_BUSY, 0) {
            Ok(())
        } else {
            Err(Error::Busy)
        }
    }

    fn mii_idle(&self) -> Result<(), Error> {
        for _ in 0..SPINS {
            if self.mac_read(MAC_MII_ACC)? & MII_BUSY == 0 {
                return Ok(());
            }
        }
        Err(Error::Busy)
    }

    fn phy_read(&self, reg: u32) -> Result<u32, Error> {
        self.mii_idle()?;
        self.mac_write(MAC_MII_ACC, (PHY << 11) | (reg << 6) | MII_BUSY)?;
        self.mii_idle()?;
        Ok(self.mac_read(MAC_MII_DATA)? & 0xffff)
    }

    fn phy_write(&self, reg: u32, value: u32) -> Result<(), Error> {
        self.mii_idle()?;
        self.mac_write(MAC_MII_DATA, value)?;
        self.mac_write(MAC_MII_ACC, (PHY << 11) | (reg << 6) | MII_WRITE | MII_BUSY)?;
        self.mii_idle()
    }
}

/// Set once the register window has an owner.
static TAKEN: AtomicBool = AtomicBool::new(false);

/// A locally administered address, used if the chip has no valid one (no EEPROM).
const FALLBACK_MAC: [u8; 6] = [0x02, 0x00, 0x00, 0x00, 0x01, 0x18];

impl Lan9118 {
    /// Takes the controller (once), resets it, brings up its PHY, and enables the MAC: it
    /// then receives frames for its own address and broadcast.
    pub fn take() -> Result<Self, Error> {
        if critical_section::with(|_| TAKEN.swap(true, Ordering::Relaxed)) {
            return Err(Error::Taken);
        }
        let (Some(rx), Some(tx)) = (
            cortex_m::singleton!(: [u8; RX_ROOM] = [0; RX_ROOM]),
            cortex_m::singleton!(: [u8; FRAME] = [0; FRAME]),
        ) else {
            return Err(Error::Taken);
        };
        let regs = Regs { base: BASE };
        if regs.read(BYTE_TEST) != BYTE_TEST_VALUE {
            return Err(Error::NotFound);
        }
        regs.write(HW_CFG, HW_CFG_SRST);
        if !regs.wait(HW_CFG, HW_CFG_SRST, 0) || !regs.wait(PMT_CTRL, PMT_CTRL_READY, 1) {
            return Err(Error::Reset);
        }
        // Polled: no interrupt line, nothing pending.
        regs.write(IRQ_CFG, 0);
        regs.write(INT_EN, 0);
        regs.write(INT_STS, u32::MAX);
        // The address the chip loaded from its EEPROM (QEMU: the -nic's macaddr).
        let low = regs.mac_read(MAC_ADDRL)?.to_le_bytes();
        let high = regs.mac_read(MAC_ADDRH)?.to_le_bytes();
        let mut mac = [low[0], low[1], low[2], low[3], high[0], high[1]];
        if mac == [0; 6] || mac[0] & 1 != 0 {
            mac = FALLBACK_MAC;
            regs.mac_write(
                MAC_ADDRL,
                u32::from_le_bytes([mac[0], mac[1], mac[2], mac[3]]),
            )?;
            regs.mac_write(MAC_ADDRH, u32::from(mac[4]) | (u32::from(mac[5]) << 8))?;
        }
        // PHY: reset, then autonegotiate (the model completes it at once).
        regs.phy_write(BMCR, BMCR_RESET)?;
        regs.phy_write(BMCR, BMCR_AUTONEG)?;
        // FIFOs: frames start at word 0 of the RX FIFO, no end padding; transmitter on.
        regs.write(RX_CFG, 0);
        regs.write(TX_CFG, TX_CFG_ON | TX_CFG_SAO);
        regs.mac_write(MAC_CR, MAC_CR_TXEN | MAC_CR_RXEN | MAC_CR_FDPX)?;
        Ok(Self {
            regs,
            rx,
            tx,
            mac,
            counters: Counters::default(),
        })
    }

    /// The controller's Ethernet address.
    pub fn mac(&self) -> [u8; 6] {
        self.mac
    }

    /// `ID_REV`: chip id (upper half, `0x0118`) and revision.
    pub fn id(&self) -> u32 {
        self.regs.read(ID_REV)
    }

    /// Whether the PHY reports a link.
    pub fn link_up(&self) -> bool {
        self.regs
            .phy_read(BMSR)
            .is_ok_and(|status| status & BMSR_LINK != 0)
    }

    /// The counters so far.
    pub fn counters(&self) -> Counters {
        self.counters
    }

    /// Takes the next good frame out of the RX FIFO into the receive buffer and returns its
    /// length (without the CRC); frames in error, too long or too short are read out and
    /// dropped. `None` if no frame is waiting.
    pub fn receive(&mut self) -> Option<usize> {
        loop {
            let waiting = (self.regs.read(RX_FIFO_INF) >> 16) & 0xff;
            if waiting == 0 {
                return None;
            }
            let status = self.regs.read(RX_STATUS);
            // The length counts the CRC; the FIFO holds exactly that many bytes, in words.
            let len = ((status >> RX_STS_LEN_SHIFT) & RX_STS_LEN_MASK) as usize;
            let words = len.div_ceil(4);
            let keep = status & RX_STS_BAD == 0 && (14 + 4..=RX_ROOM).contains(&len);
            for i in 0..words {
                let word = self.regs.read(RX_DATA).to_le_bytes();
                if keep && let Some(slot) = self.rx.get_mut(4 * i..4 * i + 4) {
                    slot.copy_from_slice(&word);
                }
            }
            if keep {
                self.counters.received += 1;
                return Some(len - 4);
            }
            self.counters.dropped += 1;
        }
    }

    /// The receive buffer (holding the frame [`receive`](Self::receive) returned) and the
    /// transmitter, borrowed together: smoltcp answers a frame while reading it.
    pub fn split(&mut self) -> (&[u8], Transmitter<'_>) {
        let tx = Transmitter {
            regs: &self.regs,
            frame: self.tx,
            counters: &mut self.counters,
        };
        (&self.rx[..], tx)
    }

    /// The transmitter alone.
    pub fn transmitter(&mut self) -> Transmitter<'_> {
        self.split().1
    }
}

/// Sends one frame: build it in [`buffer`](Self::buffer), then [`send`](Self::send).
pub struct Transmitter<'a> {
    regs: &'a Regs,
    frame: &'a mut [u8; FRAME],
    counters: &'a mut Counters,
}

impl Transmitter<'_> {
    /// The transmit buffer.
    pub fn buffer(&mut self) -> &mut [u8; FRAME] {
        self.frame
    }

    /// Hands the first `len` bytes of the transmit buffer to the TX FIFO as one frame; false
    /// (frame dropped) if the FIFO has no room for it.
    pub fn send(self, len: usize) -> bool {
        let len = len.min(FRAME);
        // Drain the status words of frames already sent (their content is not used).
        for _ in 0..512 {
            if (self.regs.read(TX_FIFO_INF) >> 16) & 0xff == 0 {
                break;
            }
            let _ = self.regs.read(TX_STATUS);
        }
        let free = (self.regs.read(TX_FIFO_INF) & 0xffff) as usize;
        if free < len + 8 {
            self.counters.tx_full += 1;
            return false;
        }
        let len32 = len as u32;
        // Command A: one segment (first and last), `len` bytes from offset 0; command B: the
        // frame's length, tagged with its length.
        self.regs
            .write(TX_DATA, TX_CMD_A_FIRST | TX_CMD_A_LAST | len32);
        self.regs.write(TX_DATA, (len32 << 16) | len32);
        for chunk in self.frame[..len].chunks(4) {
            let mut word = [0u8; 4];
            word[..chunk.len()].copy_from_slice(chunk);
            self.regs.write(TX_DATA, u32::from_le_bytes(word));
        }
        self.counters.sent += 1;
        true
    }
}
