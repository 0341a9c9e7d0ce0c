// The body of the `gateway-http-*` binaries, `include!`d by each of them (not a module of the
// library, which has no `net` on the other machines): `gateway_http!(Cipher)` expands to the
// HTTP gateway on mps2-an386 (the only QEMU machine with the LAN9118), and elsewhere to a
// stub that logs why it cannot serve and exits with a failure, so that every binary still
// builds for every target.

macro_rules! gateway_http {
    ($cipher:ty) => {
        /// The server, built at boot into this static (never on a stack frame); `.bss` until
        /// `main` writes `None` into it.
        #[cfg(machine = "mps2-an386")]
        static mut SLOT: core::mem::MaybeUninit<gateway_firmware::mcp::Slot<$cipher>> =
            core::mem::MaybeUninit::uninit();

        #[cfg(machine = "mps2-an386")]
        #[cortex_m_rt::entry]
        fn main() -> ! {
            // SAFETY: `main` runs once and is the only code naming SLOT, so this is the only
            // reference ever made to it (`write` initialises it).
            let slot = unsafe { (*core::ptr::addr_of_mut!(SLOT)).write(None) };
            gateway_firmware::net::gateway::<$cipher>(slot)
        }

        #[cfg(machine = "mps2-an386")]
        #[cortex_m_rt::exception]
        fn SysTick() {
            gateway_firmware::arch::on_tick();
        }

        #[cfg(all(target_arch = "arm", not(machine = "mps2-an386")))]
        #[cortex_m_rt::entry]
        fn main() -> ! {
            unsupported()
        }

        #[cfg(target_arch = "riscv32")]
        #[riscv_rt::entry]
        fn main() -> ! {
            unsupported()
        }

        #[cfg(not(machine = "mps2-an386"))]
        fn unsupported() -> ! {
            defmt::error!(
                "gateway-http serves over the LAN9118 Ethernet controller of QEMU's mps2-an386 (Cortex-M4F, thumbv7em-none-eabihf); this build is for {=str}: use gateway-stdio-* here",
                gateway_firmware::board::MACHINE
            );
            gateway_firmware::arch::exit(false)
        }

        #[panic_handler]
        fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
            gateway_firmware::report::panicked(info)
        }
    };
}
