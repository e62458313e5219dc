//! `adopt`: moves an image to another strategy, but only where watch's verdict allows it,
//! and rewrites api.toml with toml_edit (comments and layout kept): the image's `strategy`,
//! its `pin_version`, and for a pin the release's `[[release]]` with every wheel's sha256.

use super::Report;
use super::release::ReleaseReport;
use mooncake_sos_manifest::model::{Api, Layer, Strategy};
use toml_edit::{ArrayOfTables, DocumentMut, InlineTable, Item, Table, Value};

/// Where an image is to go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    Pin { version: String },
    Check,
    Overlay,
}

impl Target {
    pub fn strategy(&self) -> Strategy {
        match self {
            Target::Pin { .. } => Strategy::Pin,
            Target::Check => Strategy::Check,
            Target::Overlay => Strategy::Overlay,
        }
    }
}

/// Why watch's verdict allows the move; `Err`: why it does not.
pub fn decide(api: &Api, report: &Report, image: &str, target: &Target) -> Result<String, String> {
    let img = api
        .images
        .iter()
        .find(|i| i.id == image)
        .ok_or_else(|| format!("api.toml has no [image.{image}]"))?;
    let (package, base_version) = match &img.layer {
        Layer::Overlay {
            base_package,
            base_version,
        }
        | Layer::Pin {
            base_package,
            base_version,
            ..
        }
        | Layer::Check {
            base_package,
            base_version,
        } => (base_package, base_version),
        Layer::Fill { .. } => {
            return Err(format!(
                "image `{image}` is a fill image: its native core is built in its base, so no wheel's release can stand for it"
            ));
        }
    };
    if img.layer.strategy() == target.strategy() && !matches!(target, Target::Pin { .. }) {
        return Err(format!(
            "image `{image}` already has strategy {}",
            target.strategy()
        ));
    }
    let release = |version: &str| -> Result<&ReleaseReport, String> {
        report
            .packages
            .iter()
            .flat_map(|p| &p.releases)
            .find(|r| &r.package == package && r.version == version)
            .ok_or_else(|| format!("watch found no release {package} {version} on the index"))
    };
    match target {
        Target::Pin { version } => {
            if let Layer::Pin { release: r, .. } = &img.layer
                && &r.version == version
            {
                return Err(format!("image `{image}` already pins {package} {version}"));
            }
            let r = release(version)?;
            r.fit_for_pin()
                .map(|()| format!("{package} {version} carries the API and its core serves it"))
                .map_err(|why| format!("{package} {version} {why}"))
        }
        Target::Check => {
            let r = release(base_version)?;
            r.fit_for_pin()
                .map(|()| {
                    format!(
                        "the base image ({}) ships {package} {base_version}, which carries the API and whose core serves it",
                        img.base_tag
                    )
                })
                .map_err(|why| {
                    format!(
                        "the base image ({}) ships {package} {base_version}, which {why}",
                        img.base_tag
                    )
                })
        }
        Target::Overlay => Ok(format!(
            "the overlay puts the pinned module ({}) over the base's {package} {base_version}; `verify` and `bump` check it against that core's record",
            api.upstream.short_commit()
        )),
    }
}

/// api.toml's text with image `image` moved to `target`; `wheels` (file, sha256) are the
/// release's wheel files for a pin.
pub fn edit(
    manifest: &str,
    image: &str,
    target: &Target,
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
    set(table, "strategy", target.strategy().name());
    match target {
        Target::Pin { version } => {
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
                table.insert("pin_version", Item::Value(Value::from(version.as_str())));
                for (key, item) in moved {
                    table.insert_formatted(&key, item);
                }
            }
            set_release(&mut doc, package, version, wheels)?;
        }
        Target::Check | Target::Overlay => {
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
