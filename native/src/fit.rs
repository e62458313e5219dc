//! Whether a call binds one of a core's overloads (the parameter lists of its pybind11
//! docstrings): an overload declared in api.toml must be there as written (whitespace aside);
//! a call as the module makes it (its shape: positional count, keyword names) must fit one.

use mooncake_sos_manifest::signature::overload_params;
use mooncake_sos_manifest::signature::{CallShape, fits};
use serde::Serialize;

/// Why a core does not serve a use.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "why")]
pub enum Why {
    /// Nothing of that name (`missing` is the first part of the path that is absent).
    Absent { missing: String },
    /// Callable, but no overload has those parameters.
    OverloadDiffers { found: Vec<String> },
    /// Callable, but no overload takes the call as the module makes it.
    CallDiffers { reason: String, found: Vec<String> },
    /// There, but not something that can be called.
    NotCallable,
    /// There, but assigning it fails.
    ReadOnly,
    /// There, but reading it on an instance fails.
    Unreadable,
    /// No instance can be made with no arguments.
    NotConstructible { error: String },
    /// The surface cannot tell (a write to a non-property of a class with no instance).
    Unverified { reason: String },
}

impl Why {
    /// A few words for tables and messages.
    pub fn short(&self) -> String {
        match self {
            Why::Absent { missing } => format!("`{missing}` absent"),
            Why::OverloadDiffers { found } => {
                format!("overload differs; found ({})", found.join(") | ("))
            }
            Why::CallDiffers { reason, found } => {
                format!(
                    "no overload takes the call ({reason}); found ({})",
                    found.join(") | (")
                )
            }
            Why::NotCallable => "not callable".into(),
            Why::ReadOnly => "read-only".into(),
            Why::Unreadable => "unreadable on an instance".into(),
            Why::NotConstructible { error } => format!("cannot be made: {error}"),
            Why::Unverified { reason } => format!("unverified: {reason}"),
        }
    }
}

/// `Ok` when some overload takes a call of `shape`; else why the first one does not. An
/// overload text that does not parse, or a callable without any (no docstring signature),
/// cannot rule the call out: the surface cannot tell, so the call is taken to fit.
pub fn fits_any(overloads: &[String], shape: &CallShape) -> Result<(), String> {
    let mut first_reason = None;
    for text in overloads {
        let Ok(params) = overload_params(text) else {
            return Ok(());
        };
        match fits(&params, shape) {
            Ok(()) => return Ok(()),
            Err(why) => {
                first_reason.get_or_insert(why.to_string());
            }
        }
    }
    first_reason.map_or(Ok(()), Err)
}

fn same(a: &str, b: &str) -> bool {
    a.split_whitespace().eq(b.split_whitespace())
}

pub(super) fn has_overload(found: &[String], wanted: &Option<String>) -> Result<(), Why> {
    match wanted {
        Some(w) if !found.iter().any(|f| same(f, w)) => Err(Why::OverloadDiffers {
            found: found.to_vec(),
        }),
        _ => Ok(()),
    }
}

/// Some overload takes one of `shapes` (none given: any call does).
fn takes_call(found: &[String], shapes: &[CallShape]) -> Result<(), Why> {
    let mut reason = None;
    for shape in shapes {
        match fits_any(found, shape) {
            Ok(()) => return Ok(()),
            Err(why) => {
                reason.get_or_insert(why);
            }
        }
    }
    match reason {
        None => Ok(()),
        Some(reason) => Err(Why::CallDiffers {
            reason,
            found: found.to_vec(),
        }),
    }
}

/// A call of a method or function: the declared overload, and the shapes made.
pub(super) fn callable(
    found: &[String],
    overload: &Option<String>,
    shapes: &[CallShape],
) -> Result<(), Why> {
    has_overload(found, overload)?;
    takes_call(found, shapes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(positional: usize, keywords: &[&str]) -> CallShape {
        CallShape {
            positional,
            keywords: keywords.iter().map(|k| (*k).to_owned()).collect(),
            ..CallShape::default()
        }
    }

    #[test]
    fn a_call_fits_when_one_overload_takes_it() {
        let put_tensor = ["key: str, tensor: object".to_owned()];
        assert_eq!(fits_any(&put_tensor, &shape(2, &[])), Ok(()));
        assert_eq!(
            fits_any(&put_tensor, &shape(2, &["config"])),
            Err("no parameter `config`".to_owned())
        );
        let setup = [
            "local_hostname: str, metadata_server: str".to_owned(),
            "config: dict".to_owned(),
        ];
        assert_eq!(fits_any(&setup, &shape(1, &[])), Ok(()));
        assert!(fits_any(&setup, &shape(3, &[])).is_err());
        // Nothing to judge by: no docstring signature, or one that does not parse.
        assert_eq!(fits_any(&[], &shape(9, &["x"])), Ok(()));
        assert_eq!(
            fits_any(&["a: list[int".to_owned()], &shape(9, &[])),
            Ok(())
        );
    }
}
