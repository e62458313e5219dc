//! `verify --fix [--prune] [--dry-run]`: writes the declarations the module needs into
//! api.toml (planned by `mooncake_sos_native::fix`; and each parameter's `domain` as the
//! module gives it, from `verify`'s report), keeping its comments and layout
//! (toml_edit), with regen as one change under the manifest's lock, and prints the unified
//! diff of api.toml. Nothing is written when any use needs a person, nor when the edited
//! manifest would not pass `verify` itself.

use crate::exit::{BadInput, Outcome, Result};
use crate::manifest::Manifest;
use mooncake_sos_manifest::load_str;
use mooncake_sos_manifest::parse::unfit_string;
use mooncake_sos_native::fix::{self, Edit};
use mooncake_sos_native::images;
use mooncake_sos_pysource::domain::repr;
use mooncake_sos_pysource::report::DomainFix;
use mooncake_sos_pysource::source::ModuleSource;
use mooncake_sos_pysource::surface;
use mooncake_sos_support::diag::{Diagnostic, Diagnostics, Source};
use mooncake_sos_support::drift::unified_diff;
use mooncake_sos_support::escape::{self, text};
use toml_edit::{Array, ArrayOfTables, DocumentMut, Item, Table, TableLike, Value, value};

pub fn run(manifest: &Manifest, source: &ModuleSource, prune: bool, dry_run: bool) -> Result {
    let api = &manifest.api;
    let sides = images::load_all(manifest.root(), api)?;
    let report = surface::check(api, source)?;
    let findings = images::check(&sides, &report.file, &report.uses);
    let file = source
        .display
        .rsplit(['/', '!'])
        .next()
        .unwrap_or(&source.display);
    let mut plan = fix::plan(&report, &findings, &sides, &source.text, file, prune);
    // The domains the module gives its parameters: facts of its source, written as found.
    let symbols = mooncake_sos_pysource::verify(api, source)?;
    unwritable_domains(source, &symbols.domain_fixes)?;
    plan.edits
        .extend(symbols.domain_fixes.into_iter().map(|f| Edit::SetDomain {
            owner: f.owner,
            param: f.param,
            domain: f.found,
        }));
    if !plan.refusals.is_empty() {
        for line in &plan.refusals {
            println!("{}", text(line));
        }
        println!(
            "verify --fix: nothing written: {} use(s) of {} need a person (above)",
            plan.refusals.len(),
            text(&source.display)
        );
        return Ok(Outcome::Failed);
    }
    if plan.edits.is_empty() {
        let stale = manifest.stale_outputs()?;
        if !stale.is_empty() {
            println!(
                "verify --fix: api.toml declares what {} uses, but {} output(s) are out of date \
                 ({}): run `cargo xtask regen`",
                text(&source.display),
                stale.len(),
                text(&stale.join(", "))
            );
            return Ok(Outcome::Failed);
        }
        println!(
            "verify --fix: nothing to fix: api.toml already declares what {} uses",
            text(&source.display)
        );
        return Ok(Outcome::Ok);
    }
    let text = manifest.editable();
    let edited = apply(&text, &plan.edits)
        .map_err(|e| BadInput(format!("{}: error: {e}", manifest.display)))?;
    // What is written must pass what it was written for.
    let edited_api = load_str(&manifest.display, &edited)?;
    let after = surface::check(&edited_api, source)?;
    let domains = mooncake_sos_pysource::verify(&edited_api, source)?;
    if !after.ok() || !domains.domain_fixes.is_empty() {
        let mut lines = after.failure_lines();
        lines.extend(
            domains
                .lines()
                .into_iter()
                .filter(|l| l.contains(" domain: ")),
        );
        return Err(BadInput(format!(
            "error: internal: the planned declarations do not satisfy verify; nothing written:\n{}",
            lines.join("\n")
        )));
    }
    let name = manifest.path.file_name().map(|f| f.to_string_lossy());
    let name = name.as_deref().unwrap_or("api.toml");
    print!("{}", escape::lines(&unified_diff(name, &text, &edited)));
    let count = plan.edits.len();
    if dry_run {
        println!("verify --fix --dry-run: {count} declaration change(s); nothing written");
        return Ok(Outcome::Ok);
    }
    manifest.edit("verify --fix", |_| Ok(edited))?;
    println!(
        "verify --fix: {count} declaration change(s) written to {name} (review the diff above)"
    );
    Ok(Outcome::Ok)
}

/// Refuses, located at each in the module, the domain values api.toml cannot carry (a line
/// break, a control character): written, they would make the manifest fail its own check.
fn unwritable_domains(source: &ModuleSource, fixes: &[DomainFix]) -> Result<()> {
    let module = Source::new(source.display.as_str(), source.text.as_str());
    let mut diags = Diagnostics::default();
    for fix in fixes {
        let values = fix.found.iter().flatten().zip(&fix.spans);
        for (value, span) in values {
            if let Some(why) = unfit_string("domain", value) {
                diags.push(Diagnostic::new(
                    &module,
                    span.clone(),
                    format!(
                        "{}({}) takes {}, which api.toml cannot declare: {why}; nothing written",
                        fix.owner,
                        fix.param,
                        repr(value)
                    ),
                ));
            }
        }
    }
    Ok(diags.finish(())?)
}

/// api.toml's text with `edits` made, everything else kept as written.
fn apply(text: &str, edits: &[Edit]) -> std::result::Result<String, String> {
    let mut doc: DocumentMut = text.parse().map_err(|e| format!("{e}"))?;
    for edit in edits {
        match edit {
            Edit::AddNative {
                object,
                attribute,
                overload,
                optional,
                reason,
            } => {
                let mut t = Table::new();
                t["object"] = value(object.as_str());
                if let Some(a) = attribute {
                    t["attribute"] = value(a.name.as_str());
                    if a.instance {
                        t["instance"] = value(true);
                    }
                    t["access"] = value(a.access);
                }
                push(
                    &mut doc,
                    "native",
                    t,
                    *optional,
                    overload.as_deref(),
                    reason,
                )?;
            }
            Edit::AddSibling {
                module,
                optional,
                reason,
            } => {
                let mut t = Table::new();
                t["module"] = value(module.as_str());
                push(&mut doc, "sibling", t, *optional, None, reason)?;
            }
            Edit::SetAccess { path, access } => {
                let t = tables(&mut doc, "native")?
                    .iter_mut()
                    .find(|t| native_path(t) == *path)
                    .ok_or_else(|| format!("no [[native]] declares {path}"))?;
                let decor = t
                    .get("access")
                    .and_then(Item::as_value)
                    .map(|v| v.decor().clone());
                t["access"] = value(*access);
                if let (Some(decor), Some(v)) = (decor, t["access"].as_value_mut()) {
                    *v.decor_mut() = decor;
                }
            }
            Edit::RemoveNative { path } => remove(&mut doc, "native", |t| native_path(t) == *path)?,
            Edit::RemoveSibling { module } => remove(&mut doc, "sibling", |t| {
                t.get("module").and_then(Item::as_str) == Some(module)
            })?,
            Edit::SetDomain {
                owner,
                param,
                domain,
            } => set_domain(&mut doc, owner, param, domain.as_deref())?,
        }
    }
    Ok(doc.to_string())
}

/// Sets (or removes) `domain` in the table declaring `param` of `owner` (an inline table in
/// the parameter list, or a `[[symbol.method.params]]` table), before its `rust` key if it
/// has one (the order the README gives). A domain already there is changed in place: the
/// comments in it stay with the values that stay.
fn set_domain(
    doc: &mut DocumentMut,
    owner: &str,
    param: &str,
    domain: Option<&[String]>,
) -> std::result::Result<(), String> {
    let missing = || format!("api.toml declares no parameter {param} of {owner}");
    let (symbol, member) = match owner.split_once('.') {
        Some((s, m)) => (s, Some(m)),
        None => (owner, None),
    };
    let named = |t: &Table, name: &str| t.get("name").and_then(Item::as_str) == Some(name);
    let table = tables(doc, "symbol")?
        .iter_mut()
        .find(|t| named(t, symbol))
        .ok_or_else(missing)?;
    let list = match member {
        Some("__init__") => table.get_mut("init"),
        Some(m) => table
            .get_mut("method")
            .and_then(Item::as_array_of_tables_mut)
            .and_then(|methods| methods.iter_mut().find(|t| named(t, m)))
            .and_then(|t| t.get_mut("params")),
        None if table.contains_key("fields") => table.get_mut("fields"),
        None => table.get_mut("params"),
    };
    let is_param = |t: &dyn TableLike| t.get("name").and_then(Item::as_str) == Some(param);
    match list.ok_or_else(missing)? {
        Item::Value(Value::Array(list)) => {
            let entry = list
                .iter_mut()
                .filter_map(Value::as_inline_table_mut)
                .find(|t| is_param(*t))
                .ok_or_else(missing)?;
            if let Some(array) = new_domain(entry, domain) {
                let rust = entry.remove_entry("rust");
                entry.insert("domain", Value::Array(array));
                if let Some((key, value)) = rust {
                    entry.insert_formatted(&key, value);
                }
            }
        }
        Item::ArrayOfTables(list) => {
            let entry = list.iter_mut().find(|t| is_param(*t)).ok_or_else(missing)?;
            if let Some(array) = new_domain(entry, domain) {
                let rust = entry.remove_entry("rust");
                entry.insert("domain", value(array));
                if let Some((key, item)) = rust {
                    entry.insert_formatted(&key, item);
                }
            }
        }
        _ => return Err(missing()),
    }
    Ok(())
}

/// Changes or removes the `domain` already in `entry`; else the array to add (`None`: none
/// to add).
fn new_domain(entry: &mut dyn TableLike, domain: Option<&[String]>) -> Option<Array> {
    let Some(values) = domain else {
        entry.remove("domain");
        return None;
    };
    match entry.get_mut("domain").and_then(Item::as_value_mut) {
        Some(Value::Array(old)) => {
            *old = domain_array(Some(old), values);
            None
        }
        Some(other) => {
            let decor = other.decor().clone();
            *other = Value::Array(domain_array(None, values));
            *other.decor_mut() = decor;
            None
        }
        None => Some(domain_array(None, values)),
    }
}

/// `values` as a domain array. Each value that `old` holds too keeps its place's comments and
/// spacing (toml_edit's decor), and the array its own closing; a new one goes one a line when
/// the old array is laid out so, or when the values are long (the codecs), inside the
/// parameter list's indent.
fn domain_array(old: Option<&Array>, values: &[String]) -> Array {
    let decor_of = |v: &str| {
        old.and_then(|a| a.iter().find(|o| o.as_str() == Some(v)))
            .map(|o| o.decor().clone())
    };
    let indent = old.and_then(|a| {
        a.iter()
            .filter_map(|v| v.decor().prefix()?.as_str()?.rsplit_once('\n'))
            .map(|(_, indent)| indent.to_owned())
            .next()
    });
    let long = values.iter().map(|v| v.len() + 4).sum::<usize>() > 60;
    let one_a_line = match (old, &indent) {
        (Some(_), Some(indent)) => Some(indent.clone()),
        (Some(_), None) => None,
        (None, _) => long.then(|| "        ".to_owned()),
    };
    let mut array = Array::new();
    for (i, v) in values.iter().enumerate() {
        let mut value = Value::from(v.as_str());
        match (decor_of(v), &one_a_line) {
            (Some(decor), _) => *value.decor_mut() = decor,
            (None, Some(indent)) => value.decor_mut().set_prefix(format!("\n{indent}")),
            (None, None) => value.decor_mut().set_prefix(if i == 0 { "" } else { " " }),
        }
        array.push_formatted(value);
    }
    match old {
        Some(old) => {
            array.set_trailing(old.trailing().clone());
            array.set_trailing_comma(old.trailing_comma());
        }
        None if one_a_line.is_some() => {
            array.set_trailing_comma(true);
            array.set_trailing("\n    ");
        }
        None => {}
    }
    array
}

/// What a `[[native]]` table declares: `object`, or `object.attribute`.
fn native_path(t: &Table) -> String {
    let object = t.get("object").and_then(Item::as_str).unwrap_or_default();
    match t.get("attribute").and_then(Item::as_str) {
        Some(a) => format!("{object}.{a}"),
        None => object.to_owned(),
    }
}

fn tables<'a>(
    doc: &'a mut DocumentMut,
    key: &str,
) -> std::result::Result<&'a mut ArrayOfTables, String> {
    if !doc.contains_key(key) {
        doc[key] = Item::ArrayOfTables(ArrayOfTables::new());
    }
    doc[key]
        .as_array_of_tables_mut()
        .ok_or_else(|| format!("`{key}` is not an array of tables ([[{key}]])"))
}

/// Appends `t` after the last `[[key]]` table (a table without a position is written after
/// the one before it), separated by a blank line.
/// A new `[[key]]` entry: `t`'s keys, then `use` when optional, its overload, its reason.
fn push(
    doc: &mut DocumentMut,
    key: &str,
    mut t: Table,
    optional: bool,
    overload: Option<&str>,
    reason: &str,
) -> std::result::Result<(), String> {
    if optional {
        t["use"] = value("optional");
    }
    if let Some(o) = overload {
        t["overload"] = value(o);
    }
    t["reason"] = value(reason);
    t.decor_mut().set_prefix("\n");
    tables(doc, key)?.push(t);
    Ok(())
}

fn remove(
    doc: &mut DocumentMut,
    key: &str,
    matches: impl Fn(&Table) -> bool,
) -> std::result::Result<(), String> {
    let list = tables(doc, key)?;
    let found = list.iter().position(matches);
    if let Some(i) = found {
        list.remove(i);
    }
    Ok(())
}
