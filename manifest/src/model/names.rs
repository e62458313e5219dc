//! Which manifest names the generated code can carry. A name becomes a Python name in the shim
//! and a Rust identifier in the bindings; a name neither language can spell, or one the
//! generated code already uses, is a located error in validation, never a render failure.

/// Rust's keywords, strict and reserved (2024 edition). Most can be written as raw
/// identifiers (`r#type`); [`NOT_RAW`] cannot.
const RUST_KEYWORDS: &[&str] = &[
    "Self", "abstract", "as", "async", "await", "become", "box", "break", "const", "continue",
    "crate", "do", "dyn", "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if",
    "impl", "in", "let", "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub",
    "ref", "return", "self", "static", "struct", "super", "trait", "true", "try", "type", "typeof",
    "union", "unsafe", "unsized", "use", "virtual", "where", "while", "yield",
];

/// Keywords Rust refuses even as raw identifiers.
const NOT_RAW: &[&str] = &["Self", "crate", "self", "super", "_"];

pub fn is_rust_keyword(name: &str) -> bool {
    RUST_KEYWORDS.contains(&name)
}

/// Why `name` cannot be a Rust value name (a field, an argument, a function), if it cannot:
/// keywords become raw identifiers, except the few Rust refuses.
pub fn rust_value_name_problem(name: &str) -> Option<String> {
    NOT_RAW
        .contains(&name)
        .then(|| format!("`{name}` cannot be a Rust identifier, not even a raw one (r#{name})"))
}

/// Why `name` cannot be a Rust type name, if it cannot: the bindings name a struct after
/// every class and dataclass, and a keyword there would need a raw type name.
pub fn rust_type_name_problem(name: &str) -> Option<String> {
    (is_rust_keyword(name) || name == "_")
        .then(|| format!("`{name}` is a Rust keyword: the bindings cannot name a type after it"))
}

/// The option struct the bindings make of `owner`'s keyword parameters: a class's
/// constructor (`MooncakeBundleTransferOptions`) or a method (`put` → `PutOptions`).
pub fn options_struct(owner: &str) -> String {
    use heck::ToUpperCamelCase;
    format!("{}Options", owner.to_upper_camel_case())
}

/// Type names the generated Rust crate uses besides the manifest's: the runtime's prelude it
/// re-exports, what it imports, Rust's prelude. A class or dataclass, or an option struct,
/// with one of these names would shadow it. (Tests check this against the runtime's prelude
/// and the rendered crate.)
pub const RUST_TYPES_IN_USE: &[&str] = &[
    // mooncake_sos_runtime::prelude
    "DataProtoRef",
    "EmbeddedStore",
    "Error",
    "FieldLocation",
    "Module",
    "PythonEnv",
    "Record",
    "RefHandle",
    "ReplicateConfig",
    "Result",
    "Rows",
    "StageRef",
    "Store",
    "StoreConfig",
    // imports and the generated items
    "BTreeMap",
    "ToPy",
    "Bound",
    "Py",
    "PyAny",
    "Python",
    "Contract",
    "NativeStore",
    "Instance",
    "Call",
    "FrozenObjects",
    "Value",
    // Rust's prelude
    "Option",
    "Some",
    "None",
    "Ok",
    "Err",
    "String",
    "Vec",
    "Box",
    "Clone",
    "Copy",
    "Debug",
    "Default",
    "PartialEq",
    "Eq",
    "Into",
    "From",
    "Send",
    "Sync",
    "Sized",
    "Drop",
    "Fn",
    "Iterator",
    "ToString",
    "ToOwned",
    "AsRef",
];

/// Value names (constants, statics, functions) the generated crate defines or imports.
pub const RUST_VALUES_IN_USE: &[&str] = &[
    "MODULE",
    "NATIVE_MODULE",
    "UPSTREAM_REPO",
    "UPSTREAM_COMMIT",
    "UPSTREAM_SHA256",
    "FIRST_RELEASE",
    "API_FINGERPRINT",
    "SHIM",
    "API",
    "SCENARIOS_JSON",
    "load",
    "rt",
    "HANDLE_KIND",
    "HANDLE_SECTIONS",
    "HANDLE_TYPE",
    "HANDLE_VERSION",
];

/// Top-level names of the shim: a symbol of the same name would rebind it at import.
pub const SHIM_NAMES: &[&str] = &[
    "annotations",
    "ast",
    "dataclasses",
    "importlib",
    "inspect",
    "json",
    "re",
    "sys",
    "Any",
    "SHIM",
    "MODULE",
    "NATIVE_MODULE",
    "UPSTREAM_REPO",
    "UPSTREAM_PATH",
    "UPSTREAM_COMMIT",
    "UPSTREAM_SHA256",
    "API_FINGERPRINT",
    "FIX",
    "PINNED",
    "SYMBOLS",
    "NATIVE",
    "check",
    "installed",
    "installed_text",
    "report",
    "describe",
    "main",
    "SCENARIOS",
    "SMOKE_TIMEOUT",
    "smoke",
];

#[cfg(test)]
mod tests {
    use super::*;

    /// The lists agree with the compiler's own idea of an identifier.
    #[test]
    fn keywords_are_what_syn_refuses() {
        for k in RUST_KEYWORDS {
            if [
                "abstract", "become", "box", "do", "final", "gen", "macro", "override",
            ]
            .contains(k)
                || [
                    "priv", "typeof", "unsized", "virtual", "union", "try", "yield",
                ]
                .contains(k)
            {
                continue; // reserved or contextual: syn may accept them as plain identifiers
            }
            assert!(syn::parse_str::<syn::Ident>(k).is_err(), "{k}");
        }
        for k in NOT_RAW {
            let raw = format!("r#{k}");
            assert!(syn::parse_str::<syn::Ident>(&raw).is_err(), "{raw}");
            assert!(rust_value_name_problem(k).is_some());
        }
        assert!(rust_value_name_problem("type").is_none());
        assert!(rust_type_name_problem("type").is_some());
        assert!(rust_type_name_problem("FieldSchema").is_none());
    }
}
