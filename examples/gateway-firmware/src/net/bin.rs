// The body of the `gateway-http-*` binaries, `include!`d by each of them (not a module of the
// library, which has no `net` on the other machines): `gateway_http!(Cipher)` expands to the
// HTTP gateway on mps2-an386 (the only QEMU machine with the LAN9118), and elsewhere to a
// stub that logs why it cannot serve and exits with a failure, so that every binary still
// builds for every target.

macro_rules! gateway_http {
    ($cipher:ty) => {
        #[cfg(machine = "mps2-an386")]
        #[cortex_m_rt::entry]
        fn main() -> ! {
            gateway_firmware::net::gateway::<$cipher>()
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
