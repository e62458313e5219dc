//! How a drift is shown: the generator's `--check`, the core records' check and
//! `verify --fix --check` print the same unified diff.

/// A unified diff of `path` from `old` to `new`, as drift reports show it.
pub fn unified_diff(path: &str, old: &str, new: &str) -> String {
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .to_string()
}
