//! The gateway firmware with the XChaCha20Poly1305 backend: every scenario and measurement.

#![no_std]
#![no_main]

gateway_firmware::firmware!(
    mrtr_chacha20poly1305::XChaCha20Poly1305,
    gateway_firmware::vectors::XCHACHA20_POLY1305
);
