//! The gateway firmware with the XChaCha20Poly1305 backend: every scenario and measurement.

#![no_std]
#![no_main]

use cortex_m_rt::{entry, exception};
use gateway_firmware::{clock, replay, report, vectors};
use mrtr_chacha20poly1305::XChaCha20Poly1305;

#[entry]
fn main() -> ! {
    let Some(p) = cortex_m::Peripherals::take() else {
        panic!("core peripherals taken twice");
    };
    gateway_firmware::run::<XChaCha20Poly1305>(
        clock::Timer::start(p.SYST),
        &vectors::XCHACHA20_POLY1305,
    )
}

#[exception]
fn SysTick() {
    clock::on_tick();
}

#[exception]
fn PendSV() {
    replay::on_pendsv();
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
    report::panicked(info)
}
