//! I-JSON checks, a zero-copy validated JSON reader and the RFC 8785 argument digest:
//! `no_std`, no `alloc`, no `unsafe`. (Skeleton: being written.)
#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]
