//! `[[native]]`, `[[sibling]]` and parameter domains: the declarations `verify --fix` plans.

use super::Edit;
use toml_edit::{Array, ArrayOfTables, DocumentMut, Item, Table, TableLike, Value, value};

/// Makes one declaration edit in `doc`.
pub(super) fn apply(doc: &mut DocumentMut, edit: &Edit) -> Result<(), String> {
    let doc = &mut *doc;
    {
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
                push(doc, "native", t, *optional, overload.as_deref(), reason)?;
            }
            Edit::AddSibling {
                module,
                optional,
                reason,
            } => {
                let mut t = Table::new();
                t["module"] = value(module.as_str());
                push(doc, "sibling", t, *optional, None, reason)?;
            }
            Edit::SetAccess { path, access } => {
                let t = tables(doc, "native")?
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
            Edit::RemoveNative { path } => remove(doc, "native", |t| native_path(t) == *path)?,
            Edit::RemoveSibling { module } => remove(doc, "sibling", |t| {
                t.get("module").and_then(Item::as_str) == Some(module)
            })?,
            Edit::SetDomain {
                owner,
                param,
                domain,
            } => set_domain(doc, owner, param, domain.as_deref())?,
        }
    }
    Ok(())
}

/// Sets (or removes) `domain` in the table declaring `param` of `owner` (an inline table in
/// the parameter list, or a `[[symbol.method.params]]` table), before its `rust` key if it
/// has one (the order docs/manifest.md gives). A domain already there is changed in place: the
/// comments in it stay with the values that stay.
fn set_domain(
    doc: &mut DocumentMut,
    owner: &str,
    param: &str,
    domain: Option<&[String]>,
) -> Result<(), String> {
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

fn tables<'a>(doc: &'a mut DocumentMut, key: &str) -> Result<&'a mut ArrayOfTables, String> {
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
) -> Result<(), String> {
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
) -> Result<(), String> {
    let list = tables(doc, key)?;
    let found = list.iter().position(matches);
    if let Some(i) = found {
        list.remove(i);
    }
    Ok(())
}
