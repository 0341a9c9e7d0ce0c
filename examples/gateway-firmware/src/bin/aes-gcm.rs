//! The gateway firmware with the Aes256Gcm backend: every scenario and measurement.

#![no_std]
#![no_main]

use cortex_m_rt::{entry, exception};
use gateway_firmware::{clock, replay, report, vectors};
use mrtr_aes_gcm::Aes256Gcm;

#[entry]
fn main() -> ! {
    let Some(p) = cortex_m::Peripherals::take() else {
        panic!("core peripherals taken twice");
    };
    gateway_firmware::run::<Aes256Gcm>(clock::Timer::start(p.SYST), &vectors::AES_256_GCM)
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
