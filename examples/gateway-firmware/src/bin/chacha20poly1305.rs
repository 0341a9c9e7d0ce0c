//! The gateway firmware with the ChaCha20Poly1305 backend: every scenario and measurement.

#![no_std]
#![no_main]

gateway_firmware::firmware!(
    mrtr_chacha20poly1305::ChaCha20Poly1305,
    gateway_firmware::vectors::CHACHA20_POLY1305
);
