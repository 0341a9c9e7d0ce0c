//! The gateway firmware with the Aes256GcmSiv backend: every scenario and measurement.

#![no_std]
#![no_main]

gateway_firmware::firmware!(
    mrtr_aes_gcm_siv::Aes256GcmSiv,
    gateway_firmware::vectors::AES_256_GCM_SIV
);
