use std::time::Duration;

use rmcp::model::{RequestStateCodec, SealOptions};

use super::Peer;
use crate::{KEY, TTL_SECS, binding_bytes};

/// rmcp 3.x's `RequestStateCodec` (feature `request-state`): HMAC-SHA256, `rs1` format, the
/// binding as associated data, a TTL. Integrity only: the payload travels in clear.
pub struct RmcpCodec {
    codec: RequestStateCodec,
    aad: Vec<u8>,
}

impl RmcpCodec {
    /// A codec keyed with [`KEY`].
    pub fn new() -> Self {
        Self {
            codec: RequestStateCodec::try_new(KEY.to_vec()).expect("32-byte key"),
            aad: binding_bytes(),
        }
    }
}

impl Peer for RmcpCodec {
    fn id(&self) -> &'static str {
        "rmcp-hmac"
    }

    fn describe(&self) -> &'static str {
        "rmcp 3.11 RequestStateCodec (rs1, HMAC-SHA256, binding as associated data, TTL; not encrypted)"
    }

    fn seal(&mut self, payload: &[u8]) -> String {
        let opts = SealOptions::new()
            .associated_data(&self.aad)
            .ttl(Duration::from_secs(TTL_SECS));
        self.codec.seal_with(payload, &opts)
    }

    fn open(&mut self, token: &str) -> Vec<u8> {
        self.codec.open_with(token, &self.aad).expect("rmcp open")
    }
}
