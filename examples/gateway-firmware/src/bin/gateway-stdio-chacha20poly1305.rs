//! The gateway as an MCP server over the UART (stdio framing), with the chacha20poly1305 backend.

#![no_std]
#![no_main]

gateway_firmware::serve_stdio!(mrtr_chacha20poly1305::ChaCha20Poly1305);
