//! Arbitrary `requestState` text against the fixture's valid keys and binding.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mrtr_fuzz::check;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = check::resume_text(&text);
});
