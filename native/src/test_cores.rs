//! Core surfaces written out by hand for the unit tests: the record's JSON around the
//! classes, functions, values and modules a test gives.

use serde_json::{Value, json};

/// A surface record (format 3) of the wheel `package version` whose core is `core_module`
/// (`a.b` in `a/b.so`; hashes made up), with `parts` ("classes", "functions", "values",
/// "modules") in place of empty ones.
pub(crate) fn surface_json(package: &str, version: &str, core_module: &str, parts: Value) -> Value {
    let mut surface = json!({
        "format": 3,
        "wheel": {"package": package, "version": version, "sha256": "00"},
        "core": {
            "module": core_module,
            "file": format!("{}.so", core_module.replace('.', "/")),
            "sha256": "11"
        },
        "classes": {},
        "functions": {},
        "values": {},
        "modules": {},
    });
    for (part, value) in parts.as_object().expect("parts: a JSON object") {
        assert!(surface.get(part).is_some(), "no part {part:?} in a surface");
        surface[part] = value.clone();
    }
    surface
}

/// A class with no bases: its `members` (name -> member) and what an instance of it has.
pub(crate) fn class(members: Value, instance: Value) -> Value {
    json!({"bases": [], "members": members, "instance": instance})
}

/// A method member with the one overload given.
pub(crate) fn method(overload: &str) -> Value {
    json!({"kind": "method", "overloads": [overload]})
}
