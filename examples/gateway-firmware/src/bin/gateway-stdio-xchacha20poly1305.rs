//! The gateway as an MCP server over the UART (stdio framing), with the xchacha20poly1305 backend.

#![no_std]
#![no_main]

gateway_firmware::serve_stdio!(mrtr_chacha20poly1305::XChaCha20Poly1305);
