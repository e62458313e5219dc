//! What a core's reader may hand back, bounded before it is kept: the reader runs beside the
//! wheel's own code, so its result is held to the sizes a real surface has. Each name is at
//! most [`MAX_NAME`] bytes, each overload, type or class alias [`MAX_TEXT`], each error
//! [`MAX_ERROR`]; the whole result is bounded too (introspect.py's MAX_RESULT, the runner's
//! capture bound). Whether a name is one Python could hold is the record's rule
//! ([`crate::record::misnamed`]); every name is printed escaped.

use mooncake_sos_manifest::core_record::{
    Class, Function, Instance, Member, Namespace, Read, Value,
};
use serde::Deserialize;
use std::collections::BTreeMap;

/// Longest name (a class, member, function or module).
const MAX_NAME: usize = 256;
/// Longest overload, type name or class alias.
const MAX_TEXT: usize = 4096;
/// Longest error (a constructor's, an extension's import error) kept.
const MAX_ERROR: usize = 16 << 10;

/// `Ok` when `found` has a surface's shape; else what is wrong, quoted escaped.
pub(crate) fn check(found: &Introspected) -> Result<(), String> {
    short("the module", &found.module)?;
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
        short("an extension module", module)?;
        match read {
            Read::Read(ns) => namespace(module, &ns.classes, &ns.functions, &ns.values)?,
            Read::Unread { unread } => error(module, unread)?,
        }
    }
    for (module, read) in &found.python {
        short("a Python module", module)?;
        match read {
            Read::Read(names) => {
                for n in names {
                    short(&format!("a public name of {module}"), n)?;
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
    functions: &BTreeMap<String, mooncake_sos_manifest::core_record::Function>,
    values: &BTreeMap<String, mooncake_sos_manifest::core_record::Value>,
) -> Result<(), String> {
    for (name, class) in classes {
        short(&format!("a class of {module}"), name)?;
        let owner = format!("{module}.{name}");
        for base in &class.bases {
            short(&format!("a base of {owner}"), base)?;
        }
        for (member, kind) in &class.members {
            short(&format!("a member of {owner}"), member)?;
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
                    short(&format!("an instance member of {owner}"), member)?;
                }
            }
            Instance::Failed { error: why } => error(&owner, why)?,
        }
    }
    for (name, function) in functions {
        short(&format!("a function of {module}"), name)?;
        overloads(&format!("{module}.{name}"), &function.overloads)?;
    }
    for (name, value) in values {
        short(&format!("a value of {module}"), name)?;
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

fn short(what: &str, value: &str) -> Result<(), String> {
    text(what, value, MAX_NAME)
}

fn text(what: &str, value: &str, max: usize) -> Result<(), String> {
    match value.len() > max {
        true => Err(format!(
            "{what} is over {max} bytes long: {}",
            quoted(value)
        )),
        false => Ok(()),
    }
}

fn error(owner: &str, value: &str) -> Result<(), String> {
    text(&format!("the error of {owner}"), value, MAX_ERROR)
}

/// The start of `value`, escaped.
fn quoted(value: &str) -> String {
    let cut: String = value.chars().take(40).collect();
    format!("'{}...'", mooncake_sos_support::escape::text(&cut))
}

/// What `introspect.py` prints: the surface without the wheel's facts, which Rust knows.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Introspected {
    pub module: String,
    /// Where the module was imported from (checked to be the venv's copy, then dropped).
    pub file: Option<String>,
    pub classes: BTreeMap<String, Class>,
    pub functions: BTreeMap<String, Function>,
    pub values: BTreeMap<String, Value>,
    pub extensions: BTreeMap<String, Read<Namespace>>,
    pub python: BTreeMap<String, Read<Vec<String>>>,
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
    fn names_and_texts_longer_than_a_real_core_has_are_refused() {
        let long = "a".repeat(MAX_NAME + 1);
        let found = surface(serde_json::json!({"values": {long.clone(): {"type": "int"}}}));
        assert_eq!(
            check(&found),
            Err(format!(
                "a value of mooncake.store is over 256 bytes long: '{}...'",
                "a".repeat(40)
            ))
        );
        let overload = format!("({})", "x".repeat(MAX_TEXT));
        let found = surface(serde_json::json!({"functions": {"f": {"overloads": [overload]}}}));
        assert!(
            check(&found)
                .unwrap_err()
                .starts_with("an overload of mooncake.store.f is over 4096 bytes long")
        );
        // Control characters are the printers' to escape, not refused here.
        let found =
            surface(serde_json::json!({"functions": {"f\u{1b}": {"overloads": ["(a)\u{7}"]}}}));
        assert_eq!(check(&found), Ok(()));
    }
}
