//! Flash footprint of mrtr-core with the ChaCha20Poly1305 backend: one seal, one resume, exit.

#![no_std]
#![no_main]

gateway_firmware::footprint!(mrtr_chacha20poly1305::ChaCha20Poly1305);
