//! `[upstream]`'s pin and `[drop]`'s first release: only the values change, byte for byte
//! when they are already there.

use toml_edit::{DocumentMut, Item, Value};

/// Sets `[upstream] commit` and `sha256`.
pub fn set_pin(manifest: &str, commit: &str, sha256: &str) -> Result<String, String> {
    edit(
        manifest,
        "upstream",
        &[("commit", commit), ("sha256", sha256)],
    )
}

/// Sets `[drop] first_release` and `first_release_package`.
pub fn set_first_release(manifest: &str, package: &str, version: &str) -> Result<String, String> {
    edit(
        manifest,
        "drop",
        &[
            ("first_release", version),
            ("first_release_package", package),
        ],
    )
}

fn edit(manifest: &str, table: &str, values: &[(&str, &str)]) -> Result<String, String> {
    if let Some(edited) = replace_in_place(manifest, table, values)? {
        return Ok(edited);
    }
    let mut doc: DocumentMut = manifest
        .parse()
        .map_err(|e| format!("error: not valid TOML: {e}"))?;
    let table = doc
        .get_mut(table)
        .and_then(Item::as_table_mut)
        .ok_or_else(|| format!("error: no [{table}] table"))?;
    for (key, text) in values {
        let mut value = Value::from(*text);
        match table.get_mut(key) {
            Some(item) => {
                // The old value's surrounding whitespace and trailing comment stay.
                if let Some(old) = item.as_value() {
                    *value.decor_mut() = old.decor().clone();
                }
                *item = Item::Value(value);
            }
            None => {
                table.insert(key, Item::Value(value));
            }
        }
    }
    Ok(doc.to_string())
}

/// When every key already has a string value: the manifest with only those values' bytes
/// replaced, so that nothing else changes (spacing, comments). `None` when a key is missing
/// (then it has to be inserted).
fn replace_in_place(
    manifest: &str,
    table: &str,
    values: &[(&str, &str)],
) -> Result<Option<String>, String> {
    let doc = toml_edit::Document::parse(manifest)
        .map_err(|e| format!("api.toml is not valid TOML: {e}"))?;
    let Some(table) = doc.get(table).and_then(Item::as_table) else {
        return Err(format!("api.toml has no [{table}] table"));
    };
    let mut spans = Vec::new();
    for (key, text) in values {
        let old = table.get(key).and_then(Item::as_value);
        match old.filter(|v| v.is_str()).and_then(Value::span) {
            Some(span) => spans.push((span, Value::from(*text).to_string())),
            None => return Ok(None),
        }
    }
    spans.sort_by_key(|(span, _)| std::cmp::Reverse(span.start));
    let mut out = manifest.to_owned();
    for (span, repr) in spans {
        out.replace_range(span, repr.trim());
    }
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_comments_and_layout() {
        let text = "# top\n[upstream]\n# the pin\ncommit = \"aaa\"  # trailing\nsha256 = \"bbb\"\nrepo = \"x\"\n";
        let out = set_pin(text, "ccc", "ddd").unwrap();
        assert_eq!(
            out,
            "# top\n[upstream]\n# the pin\ncommit = \"ccc\"  # trailing\nsha256 = \"ddd\"\nrepo = \"x\"\n"
        );
        assert!(
            set_pin("[other]\n", "c", "d")
                .unwrap_err()
                .contains("[upstream]")
        );
    }
}
