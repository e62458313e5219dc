//! What a container literal holds, key by key ([`super::containers`] follows values through
//! them).

use super::deps::Slot;
use std::collections::BTreeMap;

/// A key of a container: a string key of a dict, or an index of a list or tuple.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) enum Key<'a> {
    Str(&'a str),
    Index(usize),
}

#[derive(Default)]
pub(super) struct Container<'a> {
    pub dict: bool,
    pub items: BTreeMap<Key<'a>, Slot<'a>>,
    /// What is held under keys not known statically (appended, or at a computed key).
    pub any: Slot<'a>,
    /// It may hold keys not known statically: as `**name`, its keywords are not all known.
    pub open: bool,
    /// It holds, itself or through a container it holds, a value the analysis follows (not
    /// only strings and literals): only such a container crosses a call into a parameter.
    pub live: bool,
}
