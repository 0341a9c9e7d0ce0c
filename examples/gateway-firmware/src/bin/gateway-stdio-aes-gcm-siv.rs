//! The gateway as an MCP server over the UART (stdio framing), with the aes-gcm-siv backend.

#![no_std]
#![no_main]

gateway_firmware::serve_stdio!(mrtr_aes_gcm_siv::Aes256GcmSiv);
