//! "Did you mean": the declared name nearest a misspelt one.

/// The candidate nearest `name` when it is within a small edit: at most 2 edits, and fewer
/// than half its length (so `get` does not suggest `put`); ties go to the first in order.
pub fn nearest<'c>(name: &str, candidates: impl IntoIterator<Item = &'c str>) -> Option<String> {
    let bound = 2.min(name.chars().count().saturating_sub(1) / 2);
    candidates
        .into_iter()
        .filter(|c| *c != name)
        .map(|c| (strsim::damerau_levenshtein(name, c), c))
        .filter(|(d, _)| *d <= bound)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c.to_owned())
}

#[cfg(test)]
mod tests {
    use super::nearest;

    #[test]
    fn a_near_name_is_suggested_a_far_one_is_not() {
        let declared = [
            "batch_transfer_sync_write",
            "transfer_sync_write",
            "get",
            "put",
        ];
        let got = |n: &str| nearest(n, declared);
        assert_eq!(
            got("batch_transfer_sync_wrtie").as_deref(),
            Some("batch_transfer_sync_write")
        );
        assert_eq!(
            got("transfer_sync_writ").as_deref(),
            Some("transfer_sync_write")
        );
        assert_eq!(got("pur").as_deref(), Some("put"));
        assert_eq!(got("gt"), None, "2 letters: no edit is small enough");
        assert_eq!(got("remove"), None);
        assert_eq!(got("put"), None, "the name itself is no suggestion");
    }
}
