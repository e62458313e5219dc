//! An image moved to another strategy (`adopt`): its `strategy`, its `pin_version` beside
//! `base_version`, and for a pin the `[[release]]` with its wheels' hashes.

use crate::model::Strategy;
use toml_edit::{ArrayOfTables, DocumentMut, InlineTable, Item, Table, Value};

/// api.toml's text with image `image` moved to `strategy`; for a pin, `pin` is the version and
/// `wheels` (file, sha256) are its release's wheel files.
pub fn move_image(
    manifest: &str,
    image: &str,
    strategy: Strategy,
    pin: Option<&str>,
    package: &str,
    wheels: &[(String, String)],
) -> Result<String, String> {
    let mut doc: DocumentMut = manifest
        .parse()
        .map_err(|e| format!("error: not valid TOML: {e}"))?;
    let table = doc
        .get_mut("image")
        .and_then(|i| i.get_mut(image))
        .and_then(Item::as_table_mut)
        .ok_or_else(|| format!("error: no [image.{image}] table"))?;
    set(table, "strategy", strategy.name());
    match pin {
        Some(version) => {
            if table.contains_key("pin_version") {
                set(table, "pin_version", version);
            } else {
                // Beside base_version, where a reader looks for it: the keys after it are
                // taken out (with their comments) and put back after the new one.
                let keys: Vec<String> = table.iter().map(|(k, _)| k.to_owned()).collect();
                let after = keys
                    .iter()
                    .position(|k| k == "base_version")
                    .map_or(keys.len(), |i| i + 1);
                let moved: Vec<_> = keys[after..]
                    .iter()
                    .filter_map(|k| table.remove_entry(k))
                    .collect();
                table.insert("pin_version", Item::Value(Value::from(version)));
                for (key, item) in moved {
                    table.insert_formatted(&key, item);
                }
            }
            set_release(&mut doc, package, version, wheels)?;
        }
        None => {
            table.remove("pin_version");
        }
    }
    Ok(doc.to_string())
}

fn set(table: &mut Table, key: &str, value: &str) {
    let mut v = Value::from(value);
    if let Some(old) = table.get(key).and_then(Item::as_value) {
        *v.decor_mut() = old.decor().clone();
    }
    table.insert(key, Item::Value(v));
}

/// The `[[release]]` of `package` `version`, replaced or appended, one wheel a line.
fn set_release(
    doc: &mut DocumentMut,
    package: &str,
    version: &str,
    wheels: &[(String, String)],
) -> Result<(), String> {
    if wheels.is_empty() {
        return Err(format!(
            "error: the index lists no wheel of {package} {version} with its sha256"
        ));
    }
    let mut list = toml_edit::Array::new();
    for (file, sha256) in wheels {
        let mut t = InlineTable::new();
        t.insert("file", Value::from(file.as_str()));
        t.insert("sha256", Value::from(sha256.as_str()));
        let mut v = Value::InlineTable(t);
        v.decor_mut().set_prefix("\n    ");
        list.push_formatted(v);
    }
    list.set_trailing("\n");
    list.set_trailing_comma(true);
    let mut release = Table::new();
    release.insert("package", Item::Value(Value::from(package)));
    release.insert("version", Item::Value(Value::from(version)));
    release.insert("wheels", Item::Value(Value::Array(list)));
    let releases = doc
        .entry("release")
        .or_insert_with(|| Item::ArrayOfTables(ArrayOfTables::new()))
        .as_array_of_tables_mut()
        .ok_or("error: `release` is not an array of tables ([[release]])")?;
    let same = |t: &Table| {
        t.get("package").and_then(Item::as_str) == Some(package)
            && t.get("version").and_then(Item::as_str) == Some(version)
    };
    if let Some(t) = releases.iter_mut().find(|t| same(t)) {
        t.insert("wheels", release["wheels"].clone());
        return Ok(());
    }
    releases.push(release);
    Ok(())
}
