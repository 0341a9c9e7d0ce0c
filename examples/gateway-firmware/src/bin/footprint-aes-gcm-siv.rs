//! Flash footprint of mrtr-core with the Aes256GcmSiv backend: one seal, one resume, exit.

#![no_std]
#![no_main]

gateway_firmware::footprint!(mrtr_aes_gcm_siv::Aes256GcmSiv);
