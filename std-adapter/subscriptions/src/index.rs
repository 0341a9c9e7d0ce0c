//! Which subscriptions a targeted reconciliation selects, and the indexes that find them
//! without scanning every subscription.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use mrtr_std::caller::Caller;

use super::key::SubscriptionKey;
use super::target::NotificationFilter;

/// Which subscriptions [`Registry::reconcile_matching`](super::Registry::reconcile_matching)
/// re-checks. Each is found through an index: the cost is proportional to the number of
/// subscriptions selected, not to the number held.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Selector {
    /// Every subscription admitted for this subject, whoever the issuer.
    Subject(String),
    /// Every subscription admitted for exactly this caller (issuer and subject);
    /// [`Caller::Anonymous`] selects none (anonymous subscriptions share no identity to
    /// revoke: use [`Registry::reconcile_all`](super::Registry::reconcile_all)).
    Caller(Caller),
    /// Every subscription covering this resource URI: listens naming it in
    /// `resourceSubscriptions`, and 2025-era grants for it.
    Resource(String),
    /// Every listen asking for this notification family.
    Family(Family),
    /// Every grant of one 2025-era session (`Mcp-Session-Id`).
    Session(String),
}

/// A list-changed notification family a listen can ask for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Family {
    /// `toolsListChanged`.
    ToolsListChanged,
    /// `promptsListChanged`.
    PromptsListChanged,
    /// `resourcesListChanged`.
    ResourcesListChanged,
}

impl Family {
    const ALL: [Self; 3] = [
        Self::ToolsListChanged,
        Self::PromptsListChanged,
        Self::ResourcesListChanged,
    ];

    fn slot(self) -> usize {
        match self {
            Self::ToolsListChanged => 0,
            Self::PromptsListChanged => 1,
            Self::ResourcesListChanged => 2,
        }
    }

    fn wanted(self, filter: &NotificationFilter) -> bool {
        match self {
            Self::ToolsListChanged => filter.tools_list_changed,
            Self::PromptsListChanged => filter.prompts_list_changed,
            Self::ResourcesListChanged => filter.resources_list_changed,
        }
    }
}

/// Subscriptions by subject, by resource URI and by notification family. Every set holds
/// live subscriptions only: the registry removes a subscription from the index when it
/// forgets it, and empty buckets are dropped.
#[derive(Default)]
pub(super) struct Index {
    subjects: HashMap<Arc<str>, HashSet<SubscriptionKey>>,
    uris: HashMap<Arc<str>, HashSet<SubscriptionKey>>,
    families: [HashSet<SubscriptionKey>; 3],
}

impl Index {
    pub(super) fn insert(
        &mut self,
        key: SubscriptionKey,
        caller: &Caller,
        filter: &NotificationFilter,
        uris: &[String],
    ) {
        if let Caller::User { subject, .. } = caller {
            self.subjects
                .entry(subject.clone())
                .or_default()
                .insert(key);
        }
        for uri in uris {
            self.uris
                .entry(uri.as_str().into())
                .or_default()
                .insert(key);
        }
        for family in Family::ALL {
            if family.wanted(filter) {
                self.families[family.slot()].insert(key);
            }
        }
    }

    pub(super) fn remove(
        &mut self,
        key: SubscriptionKey,
        caller: &Caller,
        filter: &NotificationFilter,
        uris: &[String],
    ) {
        if let Some(subject) = caller.subject() {
            remove_from(&mut self.subjects, subject, key);
        }
        for uri in uris {
            remove_from(&mut self.uris, uri, key);
        }
        for family in Family::ALL {
            if family.wanted(filter) {
                self.families[family.slot()].remove(&key);
            }
        }
    }

    /// Subscriptions admitted for `subject`.
    pub(super) fn subject(&self, subject: &str) -> impl Iterator<Item = SubscriptionKey> + '_ {
        self.subjects.get(subject).into_iter().flatten().copied()
    }

    /// Subscriptions covering `uri`.
    pub(super) fn uri(&self, uri: &str) -> impl Iterator<Item = SubscriptionKey> + '_ {
        self.uris.get(uri).into_iter().flatten().copied()
    }

    /// Listens asking for `family`.
    pub(super) fn family(&self, family: Family) -> impl Iterator<Item = SubscriptionKey> + '_ {
        self.families[family.slot()].iter().copied()
    }

    /// Buckets and entries held (for tests: nothing stays behind a removed subscription).
    #[cfg(test)]
    fn size(&self) -> (usize, usize) {
        let buckets = self.subjects.len() + self.uris.len();
        let sets = self.subjects.values().chain(self.uris.values());
        let entries = sets.map(HashSet::len).sum::<usize>()
            + self.families.iter().map(HashSet::len).sum::<usize>();
        (buckets, entries)
    }
}

fn remove_from(
    map: &mut HashMap<Arc<str>, HashSet<SubscriptionKey>>,
    name: &str,
    key: SubscriptionKey,
) {
    if let Some(set) = map.get_mut(name) {
        set.remove(&key);
        if set.is_empty() {
            map.remove(name);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(n: u64) -> SubscriptionKey {
        SubscriptionKey::new(n)
    }

    #[test]
    fn selects_by_subject_uri_and_family_and_forgets_removed_keys() {
        let mut index = Index::default();
        let alice = Caller::user("i", "alice");
        let tools = NotificationFilter {
            tools_list_changed: true,
            ..Default::default()
        };
        let uris = ["file:///a".to_owned(), "file:///b".to_owned()];
        index.insert(key(1), &alice, &tools, &uris);
        index.insert(
            key(2),
            &Caller::Anonymous,
            &NotificationFilter::default(),
            &uris[..1],
        );
        let sorted = |it: &mut dyn Iterator<Item = SubscriptionKey>| {
            let mut v: Vec<_> = it.collect();
            v.sort();
            v
        };
        assert_eq!(sorted(&mut index.subject("alice")), [key(1)]);
        assert_eq!(sorted(&mut index.subject("bob")), []);
        assert_eq!(sorted(&mut index.uri("file:///a")), [key(1), key(2)]);
        assert_eq!(sorted(&mut index.uri("file:///b")), [key(1)]);
        assert_eq!(
            sorted(&mut index.family(Family::ToolsListChanged)),
            [key(1)]
        );
        assert_eq!(sorted(&mut index.family(Family::PromptsListChanged)), []);

        index.remove(key(1), &alice, &tools, &uris);
        assert_eq!(sorted(&mut index.uri("file:///a")), [key(2)]);
        index.remove(
            key(2),
            &Caller::Anonymous,
            &NotificationFilter::default(),
            &uris[..1],
        );
        assert_eq!(index.size(), (0, 0));
    }
}
