//! The gateway as an MCP server over Streamable HTTP (smoltcp on the LAN9118 of QEMU's
//! mps2-an386), sealing with AES-256-GCM. On other machines: a stub that says so and fails.

#![no_std]
#![no_main]

include!("../net/bin.rs");

gateway_http!(mrtr_aes_gcm::Aes256Gcm);
