//! Flash footprint of mrtr-core with the Aes256Gcm backend: one seal, one resume, exit.

#![no_std]
#![no_main]

use cortex_m_rt::entry;
use cortex_m_semihosting::debug;
use mrtr_aes_gcm::Aes256Gcm;

#[entry]
fn main() -> ! {
    let ok = gateway_firmware::footprint::seal_and_open::<Aes256Gcm>();
    debug::exit(if ok {
        debug::EXIT_SUCCESS
    } else {
        debug::EXIT_FAILURE
    });
    #[allow(clippy::empty_loop)]
    loop {}
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    debug::exit(debug::EXIT_FAILURE);
    #[allow(clippy::empty_loop)]
    loop {}
}
