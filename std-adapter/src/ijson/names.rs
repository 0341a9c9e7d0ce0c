//! Member names and their duplicates: the first eight bytes of a name as a word (its
//! [`head`]), which with the length tells apart almost any two names without reading them,
//! the comparison of an object's names (each new name against every earlier one, through a
//! hash set past [`LINEAR_NAMES`]), and a name's unescaped bytes.

use std::borrow::Cow;
use std::collections::HashSet;

use super::{Name, Scan, Stop};

/// Objects with more members than this find duplicates through a hash set instead of
/// comparing each new name with every earlier one.
pub(super) const LINEAR_NAMES: usize = 16;

/// The first eight bytes of `bytes` as a little-endian word, zero-padded.
pub(super) const fn head(bytes: &[u8]) -> u64 {
    let mut word = 0;
    let mut i = if bytes.len() < 8 { bytes.len() } else { 8 };
    while i > 0 {
        i -= 1;
        word = (word << 8) | bytes[i] as u64;
    }
    word
}

impl<'a, const PATH: bool> Scan<'a, PATH> {
    /// Adds `name` to the names of the object whose names start at `base` in `names` (or
    /// are in `many`, past [`LINEAR_NAMES`]), refusing a duplicate. `mark`: the length of
    /// `unescaped` before the name.
    #[inline(always)]
    pub(super) fn add(
        &mut self,
        base: usize,
        name: Name,
        many: &mut Option<HashSet<Cow<'a, [u8]>>>,
        mark: usize,
    ) -> Result<(), Stop> {
        // Past LINEAR_NAMES, names stay out of `names` (in `many`): the count stops there.
        let seen = self.names.get(base..).unwrap_or_default();
        if seen.len() >= LINEAR_NAMES {
            return self.add_many(base, name, many, mark);
        }
        for n in seen {
            if n.head == name.head && n.len == name.len && (n.len <= 8 || self.same(n, &name)) {
                return Err(Stop::DuplicateName);
            }
        }
        self.names.push(name);
        Ok(())
    }

    /// [`Scan::add`] past [`LINEAR_NAMES`] names: through the hash set.
    #[inline(never)]
    fn add_many(
        &mut self,
        base: usize,
        name: Name,
        many: &mut Option<HashSet<Cow<'a, [u8]>>>,
        mark: usize,
    ) -> Result<(), Stop> {
        let new = self.cow(&name);
        let set = match many {
            Some(set) => set,
            None => {
                let seen = self.names.get(base..).unwrap_or_default();
                many.insert(seen.iter().map(|n| self.cow(n)).collect())
            }
        };
        if !set.insert(new) {
            return Err(Stop::DuplicateName);
        }
        // The set holds its own copy.
        self.unescaped.truncate(mark);
        Ok(())
    }

    /// Whether `name` is `word` (`word_head` its [`head`]).
    pub(super) fn is(&self, name: &Name, word_head: u64, word: &[u8]) -> bool {
        name.head == word_head
            && name.len == word.len()
            && (name.len <= 8 || self.bytes(name) == word)
    }

    /// Whether two names of the same head and length are the same.
    #[inline(never)]
    fn same(&self, a: &Name, b: &Name) -> bool {
        self.bytes(a) == self.bytes(b)
    }

    /// The unescaped bytes of `name`.
    fn bytes(&self, name: &Name) -> &[u8] {
        let store = if name.escaped {
            &self.unescaped[..]
        } else {
            self.text
        };
        store
            .get(name.from..name.from + name.len)
            .unwrap_or_default()
    }

    /// `name`'s bytes, borrowed from the text when it has no escapes.
    pub(super) fn cow(&self, name: &Name) -> Cow<'a, [u8]> {
        if name.escaped {
            Cow::Owned(self.bytes(name).to_vec())
        } else {
            let text: &'a [u8] = self.text;
            Cow::Borrowed(
                text.get(name.from..name.from + name.len)
                    .unwrap_or_default(),
            )
        }
    }
}
