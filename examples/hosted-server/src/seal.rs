//! The server's mrtr engine: the configured cipher (AES-256-GCM or ChaCha20-Poly1305) and
//! replay cache (off, in process, or Redis), behind one type the handlers share.

use mrtr_std::core::replay::{NoReplayCache, ReplayError};
use mrtr_std::core::{ErrorDetail, Mrtr, Reason, Round, SealError, TokenId};
use mrtr_std::engine::{Engine, Step};
use mrtr_std::jsonrpc::{JsonRpcError, ResumeRequest};
use mrtr_std::keys::KeyConfig;
use mrtr_std::replay::AsyncReplayCache;
use mrtr_std::replay_mem::MemoryReplayCache;
use mrtr_std::replay_redis::RedisReplayCache;
use mrtr_std::{Aes256Gcm, ChaCha20Poly1305, SystemClock};

/// Which AEAD seals `requestState`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum CipherChoice {
    /// AES-256-GCM (the default).
    Aes256Gcm,
    /// ChaCha20-Poly1305.
    Chacha20Poly1305,
}

/// Where single use of a token is recorded.
// Built once at startup and never moved per request: variant sizes do not matter.
#[allow(clippy::large_enum_variant)]
pub enum Replay {
    /// Not recorded: a token can be resumed until it expires.
    Off,
    /// In this process only.
    Memory(MemoryReplayCache),
    /// In Redis, shared by every node using the same Redis and key prefix.
    Redis(RedisReplayCache),
}

impl Replay {
    /// A short name for the startup log.
    pub fn describe(&self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::Memory(_) => "in-process",
            Self::Redis(_) => "redis",
        }
    }
}

impl AsyncReplayCache for Replay {
    async fn check_and_record(
        &self,
        id: &TokenId,
        expires_at_ms: u64,
        now_ms: u64,
    ) -> Result<(), ReplayError> {
        match self {
            Self::Off => {
                NoReplayCache
                    .check_and_record(id, expires_at_ms, now_ms)
                    .await
            }
            Self::Memory(c) => {
                AsyncReplayCache::check_and_record(c, id, expires_at_ms, now_ms).await
            }
            Self::Redis(c) => c.check_and_record(id, expires_at_ms, now_ms).await,
        }
    }
}

/// Token lifetime, round cap and error detail.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Token lifetime in ms.
    pub ttl_ms: u64,
    /// Handler invocations per chain (the call plus resumes).
    pub max_rounds: u32,
    /// Whether `data.reason` names the precise cause (development only).
    pub detailed_errors: bool,
}

/// The sealing engine for one cipher choice.
#[allow(clippy::large_enum_variant)] // one per process
pub enum Sealer {
    /// AES-256-GCM.
    Aes(Engine<Aes256Gcm, Replay>),
    /// ChaCha20-Poly1305.
    ChaCha(Engine<ChaCha20Poly1305, Replay>),
}

impl Sealer {
    /// Builds the engine from a key ring configuration.
    pub fn new(
        cipher: CipherChoice,
        keys: KeyConfig,
        limits: Limits,
        replay: Replay,
    ) -> anyhow::Result<Self> {
        let detail = if limits.detailed_errors {
            ErrorDetail::Detailed
        } else {
            ErrorDetail::Uniform
        };
        Ok(match cipher {
            CipherChoice::Aes256Gcm => {
                let mrtr = Mrtr::builder(keys.into_ring::<Aes256Gcm, 4>()?, SystemClock)
                    .ttl_ms(limits.ttl_ms)
                    .max_rounds(limits.max_rounds)
                    .error_detail(detail)
                    .build()
                    .map_err(|e| anyhow::anyhow!("mrtr configuration: {e}"))?;
                Self::Aes(Engine::new(mrtr, replay))
            }
            CipherChoice::Chacha20Poly1305 => {
                let mrtr = Mrtr::builder(keys.into_ring::<ChaCha20Poly1305, 4>()?, SystemClock)
                    .ttl_ms(limits.ttl_ms)
                    .max_rounds(limits.max_rounds)
                    .error_detail(detail)
                    .build()
                    .map_err(|e| anyhow::anyhow!("mrtr configuration: {e}"))?;
                Self::ChaCha(Engine::new(mrtr, replay))
            }
        })
    }

    /// Checks the request's `requestState` (replay cache last).
    pub async fn resume(&self, req: &ResumeRequest<'_>) -> Result<Step, JsonRpcError> {
        match self {
            Self::Aes(e) => e.resume_async(req).await,
            Self::ChaCha(e) => e.resume_async(req).await,
        }
    }

    /// Seals a paused call's continuation; returns the `requestState` text.
    pub fn pause(
        &self,
        req: &ResumeRequest<'_>,
        round: Round,
        continuation: &[u8],
    ) -> Result<String, SealError> {
        match self {
            Self::Aes(e) => e.pause(req, round, continuation),
            Self::ChaCha(e) => e.pause(req, round, continuation),
        }
    }

    /// The rejection for `reason`, in this engine's error-detail mode.
    pub fn reject(&self, reason: Reason) -> JsonRpcError {
        JsonRpcError::from_rejection(match self {
            Self::Aes(e) => e.mrtr().reject(reason),
            Self::ChaCha(e) => e.mrtr().reject(reason),
        })
    }

    /// The replay cache in use.
    pub fn replay(&self) -> &Replay {
        match self {
            Self::Aes(e) => e.replay_cache(),
            Self::ChaCha(e) => e.replay_cache(),
        }
    }
}
