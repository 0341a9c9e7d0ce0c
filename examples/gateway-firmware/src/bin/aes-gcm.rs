//! The gateway firmware with the Aes256Gcm backend: every scenario and measurement.

#![no_std]
#![no_main]

gateway_firmware::firmware!(
    mrtr_aes_gcm::Aes256Gcm,
    gateway_firmware::vectors::AES_256_GCM
);
