//! Structure-aware unseal: the input is a decoded token; it is re-encoded as base64url, so
//! every mutation lands past the text layer, on the header, framing, key id, AEAD and state.
//! The outcome is compared with the documented check order and with the backend seam.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mrtr_core::Reason;
use mrtr_fuzz::{check, expect, format};

fuzz_target!(|data: &[u8]| {
    let text = format::b64(data);
    let outcome = check::resume_text(&text);
    if let Some(reason) = expect::before_aead(data, text.len()) {
        assert_eq!(outcome.map(|_| ()), Err(reason));
        return;
    }
    match format::open_token(data) {
        // Not authentic for the fixture's keys and binding: nothing past the tag may run.
        None => assert_eq!(outcome.map(|_| ()), Err(Reason::Tampered)),
        Some(plain) => assert_eq!(outcome, expect::after_aead(&plain)),
    }
});
