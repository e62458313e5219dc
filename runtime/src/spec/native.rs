//! The native-core requirements: pybind11 overloads read from `__doc__`, and attributes.

use pyo3::prelude::*;
use pyo3::types::PyModule;

use super::{NativeCheck, NativeSpec, resolve};
use crate::error::{PyContext, Result};

pub(super) fn check_native(
    helper: &Bound<'_, PyModule>,
    native: &NativeSpec,
    misses: &mut Vec<String>,
) -> Result<()> {
    let item = format!("{}.{}", native.module, native.object);
    let obj = match resolve(helper, native.module, native.object) {
        Ok(obj) => obj,
        Err(why) => {
            misses.push(format!("native {item}: {why}"));
            return Ok(());
        }
    };
    match native.check {
        NativeCheck::Overload(expected) => {
            let found: Vec<String> = helper
                .call_method1("overloads", (&obj,))
                .and_then(|r| r.extract())
                .context(|| format!("read {item}.__doc__"))?;
            if !found.iter().any(|f| f == expected) {
                let found = if found.is_empty() {
                    "no signature in __doc__".to_owned()
                } else {
                    found
                        .iter()
                        .map(|f| format!("({f})"))
                        .collect::<Vec<_>>()
                        .join(" | ")
                };
                misses.push(format!(
                    "native {item}: expected overload (self, {expected}), found {found}"
                ));
            }
        }
        NativeCheck::Attribute { name, instance } => {
            let (ok, why): (bool, Option<String>) = helper
                .call_method1("has_attribute", (&obj, name, instance))
                .and_then(|r| r.extract())
                .context(|| format!("inspect {item}"))?;
            if !ok {
                let on = if instance {
                    format!("{item}()")
                } else {
                    item.clone()
                };
                misses.push(format!("native {on}.{name}: {}", why.unwrap_or_default()));
            }
        }
    }
    Ok(())
}
