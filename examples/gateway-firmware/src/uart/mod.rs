//! The board's UART and MCP stdio framing over it (newline-delimited JSON-RPC).
//! (Being written.)
