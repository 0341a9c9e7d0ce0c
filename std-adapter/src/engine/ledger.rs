//! What a [`Engine`](super::Engine) engine remembers across key reloads: every key the
//! process has configured (id, material fingerprint, seals counted), and when each key
//! stopped sealing.
//!
//! The ledger is what keeps a reload from resetting a seal budget. It never forgets a key,
//! so each of these is refused rather than given a fresh count of 0:
//!
//! * a known key id with other material ([`EngineConfigError::KeyIdReused`]);
//! * known material under another id ([`EngineConfigError::KeyMaterialReused`]), whether the
//!   old id is still configured or was removed;
//!
//! and a key removed and later re-added under its own id starts from the count it had.
//! It grows by one entry (about 100 bytes) per distinct key a process ever configures.

use mrtr_core::key::KeyId;

use super::config::EngineConfigError;

/// One key the process has configured at some point.
struct Seen {
    id: KeyId,
    fingerprint: [u8; 32],
    /// Seals counted for it when a generation holding it was last replaced.
    seals: u32,
}

/// Every key seen, and when keys stopped sealing.
pub(super) struct Ledger {
    seen: Vec<Seen>,
    /// When each key that sealed in this process stopped sealing (ms).
    pub(super) demoted_at_ms: Vec<(KeyId, u64)>,
}

impl Ledger {
    /// A ledger that knows the startup keys.
    pub(super) fn new(fingerprints: Vec<(KeyId, [u8; 32])>) -> Self {
        let mut ledger = Self {
            seen: Vec::with_capacity(fingerprints.len()),
            demoted_at_ms: Vec::new(),
        };
        ledger.admit(fingerprints);
        ledger
    }

    /// Refuses a configuration that reuses a key id for other material, or known material
    /// under another id. Changes nothing.
    pub(super) fn check(
        &self,
        fingerprints: &[(KeyId, [u8; 32])],
    ) -> Result<(), EngineConfigError> {
        for (id, fp) in fingerprints {
            for seen in &self.seen {
                if seen.id == *id && seen.fingerprint != *fp {
                    return Err(EngineConfigError::KeyIdReused(id.clone()));
                }
                if seen.fingerprint == *fp && seen.id != *id {
                    return Err(EngineConfigError::KeyMaterialReused {
                        id: id.clone(),
                        known_as: seen.id.clone(),
                    });
                }
            }
        }
        Ok(())
    }

    /// Records the seal counts of the generation being replaced (counts only grow).
    pub(super) fn record_seals(&mut self, counts: &[(KeyId, u32)]) {
        for (id, n) in counts {
            if let Some(seen) = self.seen.iter_mut().find(|s| s.id == *id) {
                seen.seals = seen.seals.max(*n);
            }
        }
    }

    /// The seals counted for `id` so far (0 for a key never seen).
    pub(super) fn seals(&self, id: &KeyId) -> u32 {
        self.seen
            .iter()
            .find(|s| s.id == *id)
            .map_or(0, |s| s.seals)
    }

    /// Remembers the keys of a configuration that passed [`Ledger::check`].
    pub(super) fn admit(&mut self, fingerprints: Vec<(KeyId, [u8; 32])>) {
        for (id, fingerprint) in fingerprints {
            if !self.seen.iter().any(|s| s.id == id) {
                self.seen.push(Seen {
                    id,
                    fingerprint,
                    seals: 0,
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(s: &str) -> KeyId {
        KeyId::new(s).unwrap()
    }

    #[test]
    fn a_removed_key_keeps_its_id_its_material_and_its_count() {
        let mut ledger = Ledger::new(vec![(id("k1"), [1; 32]), (id("k2"), [2; 32])]);
        ledger.record_seals(&[(id("k1"), 7), (id("k2"), 3)]);
        // k1 removed: the next configuration holds k2 only, and the ledger still knows k1.
        assert!(ledger.check(&[(id("k2"), [2; 32])]).is_ok());
        ledger.admit(vec![(id("k2"), [2; 32])]);
        ledger.record_seals(&[(id("k2"), 5)]);
        assert_eq!(ledger.seals(&id("k1")), 7);
        assert_eq!(ledger.seals(&id("k2")), 5);
        // Re-adding k1 with its own material is fine; with other material it is refused.
        assert!(ledger.check(&[(id("k1"), [1; 32])]).is_ok());
        assert!(matches!(
            ledger.check(&[(id("k1"), [9; 32])]),
            Err(EngineConfigError::KeyIdReused(k)) if k == id("k1")
        ));
        // k1's material under a new id is refused, naming the id it is known as.
        assert!(matches!(
            ledger.check(&[(id("k3"), [1; 32])]),
            Err(EngineConfigError::KeyMaterialReused { id: new, known_as })
                if new == id("k3") && known_as == id("k1")
        ));
    }

    #[test]
    fn counts_only_grow() {
        let mut ledger = Ledger::new(vec![(id("k1"), [1; 32])]);
        ledger.record_seals(&[(id("k1"), 10)]);
        ledger.record_seals(&[(id("k1"), 4)]);
        assert_eq!(ledger.seals(&id("k1")), 10);
        assert_eq!(ledger.seals(&id("never")), 0);
    }
}
