//! What a core's reader may hand back, checked before it is kept: the reader runs beside the
//! wheel's own code, so its result is held to what a real surface can be. Names are Python
//! identifiers (dotted for modules), texts hold no control characters but an error's line
//! breaks and tabs, and each has a length bound. The whole result is already bounded in size
//! (introspect.py's MAX_RESULT, the runner's capture bound).

use crate::model::{Class, Instance, Introspected, Member, Read};
use std::collections::BTreeMap;

/// Longest name (a class, member, function or module).
const MAX_NAME: usize = 256;
/// Longest overload, type name or class alias.
const MAX_TEXT: usize = 4096;
/// Longest error (a constructor's, an extension's import error) kept.
const MAX_ERROR: usize = 16 << 10;

/// `Ok` when `found` has a surface's shape; else what is wrong, quoted escaped.
pub(crate) fn check(found: &Introspected) -> Result<(), String> {
    dotted("the module", &found.module)?;
    if let Some(file) = &found.file {
        text("the module's file", file, MAX_TEXT)?;
    }
    namespace(
        &found.module,
        &found.classes,
        &found.functions,
        &found.values,
    )?;
    for (module, read) in &found.extensions {
        dotted("an extension module", module)?;
        match read {
            Read::Read(ns) => namespace(module, &ns.classes, &ns.functions, &ns.values)?,
            Read::Unread { unread } => error(module, unread)?,
        }
    }
    for (module, read) in &found.python {
        dotted("a Python module", module)?;
        match read {
            Read::Read(names) => {
                for n in names {
                    identifier(&format!("a public name of {module}"), n)?;
                }
            }
            Read::Unread { unread } => error(module, unread)?,
        }
    }
    Ok(())
}

fn namespace(
    module: &str,
    classes: &BTreeMap<String, Class>,
    functions: &BTreeMap<String, crate::model::Function>,
    values: &BTreeMap<String, crate::model::Value>,
) -> Result<(), String> {
    for (name, class) in classes {
        identifier(&format!("a class of {module}"), name)?;
        let owner = format!("{module}.{name}");
        for base in &class.bases {
            identifier(&format!("a base of {owner}"), base)?;
        }
        for (member, kind) in &class.members {
            identifier(&format!("a member of {owner}"), member)?;
            overloads(
                &format!("{owner}.{member}"),
                kind.overloads().unwrap_or_default(),
            )?;
            if let Member::Value { r#type } = kind {
                text(&format!("the type of {owner}.{member}"), r#type, MAX_TEXT)?;
            }
        }
        match &class.instance {
            Instance::Made { members, .. } => {
                for member in members.keys() {
                    identifier(&format!("an instance member of {owner}"), member)?;
                }
            }
            Instance::Failed { error: why } => error(&owner, why)?,
        }
    }
    for (name, function) in functions {
        identifier(&format!("a function of {module}"), name)?;
        overloads(&format!("{module}.{name}"), &function.overloads)?;
    }
    for (name, value) in values {
        identifier(&format!("a value of {module}"), name)?;
        text(
            &format!("the type of {module}.{name}"),
            &value.r#type,
            MAX_TEXT,
        )?;
        if let Some(of) = &value.of {
            text(&format!("the class {module}.{name} names"), of, MAX_TEXT)?;
        }
    }
    Ok(())
}

fn overloads(owner: &str, list: &[String]) -> Result<(), String> {
    list.iter()
        .try_for_each(|o| text(&format!("an overload of {owner}"), o, MAX_TEXT))
}

/// A Python identifier (letters, digits, `_`; not starting with a digit).
fn identifier(what: &str, name: &str) -> Result<(), String> {
    let mut chars = name.chars();
    let starts = chars.next().is_some_and(|c| c == '_' || c.is_alphabetic());
    if starts && chars.all(|c| c == '_' || c.is_alphanumeric()) && name.len() <= MAX_NAME {
        Ok(())
    } else {
        Err(format!(
            "{what} is named {}, not a Python identifier",
            quoted(name)
        ))
    }
}

fn dotted(what: &str, name: &str) -> Result<(), String> {
    name.split('.')
        .try_for_each(|part| identifier(what, part))
        .map_err(|_| format!("{what} is named {}, not a dotted Python name", quoted(name)))
}

/// Printable text of at most `max` bytes.
fn text(what: &str, value: &str, max: usize) -> Result<(), String> {
    if value.len() > max {
        return Err(format!("{what} is over {max} bytes long"));
    }
    match value.chars().find(|c| c.is_control()) {
        Some(_) => Err(format!(
            "{what} holds a control character: {}",
            quoted(value)
        )),
        None => Ok(()),
    }
}

/// An error as Python printed it: line breaks and tabs allowed.
fn error(owner: &str, value: &str) -> Result<(), String> {
    let what = format!("the error of {owner}");
    if value.len() > MAX_ERROR {
        return Err(format!("{what} is over {MAX_ERROR} bytes long"));
    }
    match value
        .chars()
        .find(|c| c.is_control() && !matches!(c, '\n' | '\t'))
    {
        Some(_) => Err(format!(
            "{what} holds a control character: {}",
            quoted(value)
        )),
        None => Ok(()),
    }
}

/// `value` in double quotes with control characters escaped, cut at 80 characters.
fn quoted(value: &str) -> String {
    let cut: String = value.chars().take(80).collect();
    let more = if cut.len() < value.len() { "..." } else { "" };
    format!("{:?}{more}", cut)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn surface(json: serde_json::Value) -> Introspected {
        let mut base = serde_json::json!({
            "module": "mooncake.store", "file": "/v/mooncake/store.so",
            "classes": {}, "functions": {}, "values": {}, "extensions": {}, "python": {}
        });
        for (k, v) in json.as_object().unwrap() {
            base[k] = v.clone();
        }
        serde_json::from_value(base).unwrap()
    }

    #[test]
    fn a_real_shape_passes() {
        let found = surface(serde_json::json!({
            "classes": {"ReplicateConfig": {"bases": [], "members": {
                "replica_num": {"kind": "property", "readonly": false},
                "__init__": {"kind": "method", "overloads": ["()"]}},
                "instance": {"members": {"replica_num": {"read": true, "write": true}},
                             "new_attributes": false}},
                "BufferPool": {"bases": [], "members": {}, "instance": {"error":
                "TypeError: __init__(): incompatible constructor arguments.\n    1. x"}}},
            "functions": {"_serialize": {"overloads": ["(arg0: object) -> bytes"]}},
            "python": {"mooncake.structured_object_store": ["FieldSchema", "export_ref"]},
        }));
        assert_eq!(check(&found), Ok(()));
    }

    #[test]
    fn names_and_texts_a_real_core_cannot_have_are_refused() {
        let cases = [
            (
                serde_json::json!({"functions": {"ok\u{1b}[31m": {"overloads": []}}}),
                "a function of mooncake.store is named \"ok\\u{1b}[31m\", not a Python identifier",
            ),
            (
                serde_json::json!({"python": {"mooncake.x": ["root:x:0:0:/root\n"]}}),
                "a public name of mooncake.x is named \"root:x:0:0:/root\\n\", not a Python identifier",
            ),
            (
                serde_json::json!({"extensions": {"mooncake.e\nx": {"unread": "no"}}}),
                "an extension module is named \"mooncake.e\\nx\", not a dotted Python name",
            ),
            (
                serde_json::json!({"functions": {"f": {"overloads": ["(a)\u{7}"]}}}),
                "an overload of mooncake.store.f holds a control character: \"(a)\\u{7}\"",
            ),
            (
                serde_json::json!({"extensions": {"mooncake.e": {"unread": "x\u{1b}]0;t\u{7}"}}}),
                "the error of mooncake.e holds a control character: \"x\\u{1b}]0;t\\u{7}\"",
            ),
        ];
        for (json, want) in cases {
            assert_eq!(check(&surface(json)), Err(want.to_owned()));
        }
        let long = "a".repeat(MAX_NAME + 1);
        let found = surface(serde_json::json!({"values": {long.clone(): {"type": "int"}}}));
        assert!(
            check(&found)
                .unwrap_err()
                .starts_with("a value of mooncake.store is named")
        );
    }
}
