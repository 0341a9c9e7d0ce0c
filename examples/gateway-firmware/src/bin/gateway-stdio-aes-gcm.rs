//! The gateway as an MCP server over the UART (stdio framing), with the aes-gcm backend.

#![no_std]
#![no_main]

gateway_firmware::serve_stdio!(mrtr_aes_gcm::Aes256Gcm);
