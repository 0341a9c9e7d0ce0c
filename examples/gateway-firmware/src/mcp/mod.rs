//! The gateway's MCP server (2026-07-28): requests in, responses out, on fixed buffers.
//! (Being written.)
