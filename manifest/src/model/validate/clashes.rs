//! Names that collide once converted: the Rust types and functions the bindings make of the
//! symbols (a class `Put` and a method `put` both make `PutOptions`), against each other and
//! against what the generated crate already uses; and the shim's own top-level names.

use super::Validator;
use crate::model::names::{self, RUST_TYPES_IN_USE, RUST_VALUES_IN_USE, SHIM_NAMES};
use crate::parse::{RawSymbol, S};
use std::collections::BTreeMap;

impl Validator<'_> {
    pub(super) fn name_clashes(&mut self, raw: &[S<RawSymbol>]) {
        // Rust name -> what makes it, first come.
        let mut types: BTreeMap<String, String> = BTreeMap::new();
        let mut values: BTreeMap<String, String> = BTreeMap::new();
        let mut symbols = std::collections::BTreeSet::new();
        for s in raw {
            let r = s.get_ref();
            let name = r.name.get_ref();
            if !symbols.insert(name) {
                continue; // a duplicate symbol, reported as such
            }
            if name.starts_with('_') {
                self.error(
                    &r.name,
                    format!("symbol `{name}` is private (starts with `_`); the shim's own private names start so"),
                );
            } else if SHIM_NAMES.contains(&name.as_str()) {
                self.error(
                    &r.name,
                    format!("symbol `{name}` would rebind the shim's own `{name}` at import"),
                );
            }
            let kind = r.kind.get_ref().as_str();
            let made: Vec<(bool, String, String, &S<String>)> = match kind {
                "class" => {
                    let mut m = vec![
                        (true, name.clone(), format!("class `{name}`"), &r.name),
                        (
                            true,
                            names::options_struct(name),
                            format!("the options of class `{name}`"),
                            &r.name,
                        ),
                    ];
                    let mut seen = std::collections::BTreeSet::new();
                    for method in &r.method {
                        let mname = &method.get_ref().name;
                        if !seen.insert(mname.get_ref()) {
                            continue; // a duplicate method, reported as such
                        }
                        m.push((
                            true,
                            names::options_struct(mname.get_ref()),
                            format!("the options of method `{name}.{}`", mname.get_ref()),
                            mname,
                        ));
                    }
                    m
                }
                "dataclass" => vec![(true, name.clone(), format!("dataclass `{name}`"), &r.name)],
                _ => vec![(false, name.clone(), format!("function `{name}`"), &r.name)],
            };
            for (is_type, rust, what, at) in made {
                let (taken, in_use) = if is_type {
                    (&mut types, RUST_TYPES_IN_USE)
                } else {
                    (&mut values, RUST_VALUES_IN_USE)
                };
                if in_use.contains(&rust.as_str()) {
                    let msg = format!(
                        "{what} becomes the Rust name `{rust}`, which the generated crate already uses"
                    );
                    self.error(at, msg);
                } else if let Some(first) = taken.get(&rust) {
                    let msg = format!("{what} and {first} both become the Rust name `{rust}`");
                    self.error(at, msg);
                } else {
                    taken.insert(rust, what);
                }
            }
        }
    }
}
