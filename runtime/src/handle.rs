//! Refs: the Python ref object `put` returns ([`DataProtoRef`]) and its JSON-safe handle
//! ([`RefHandle`]), validated in Rust with the rules upstream's `import_dataproto_ref` applies at
//! the pinned commit, so a Rust service can pass and check handles without Python. These are
//! upstream facts, not manifest choices, so they live here rather than in generated code.

use std::collections::BTreeMap;

use pyo3::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::{Error, PyContext, Result};
use crate::value::{ToPy, json_to_py};

/// `handle["type"]` of every ref handle.
pub const HANDLE_TYPE: &str = "mooncake_dataproto_ref";
/// The handle version `import_ref` accepts.
pub const HANDLE_VERSION: i64 = 1;
/// The handle kind `import_ref` accepts.
pub const HANDLE_KIND: &str = "bundle_stages";
/// The sections a field of a handle may live in.
pub const HANDLE_SECTIONS: &[&str] = &["batch", "non_tensor_batch"];

/// A Python `MooncakeDataProtoRef` (returned by `put` and `import_ref`); pass it back to `get`,
/// `export_ref` and cleanup.
pub struct DataProtoRef(pub Py<PyAny>);

impl DataProtoRef {
    pub fn object<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        self.0.bind(py).clone()
    }
}

impl From<Bound<'_, PyAny>> for DataProtoRef {
    fn from(obj: Bound<'_, PyAny>) -> Self {
        DataProtoRef(obj.unbind())
    }
}

impl ToPy for DataProtoRef {
    fn to_py<'py>(&self, py: Python<'py>, _m: &Bound<'py, PyAny>) -> Result<Bound<'py, PyAny>> {
        Ok(self.object(py))
    }
}

/// Where one stage of a ref lives.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StageRef {
    pub manifest_key: String,
}

/// Where one field of a ref lives.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldLocation {
    pub stage: String,
    pub member: String,
    pub section: String,
}

fn default_scope() -> String {
    "default".to_owned()
}

/// The JSON-safe ref handle of `export_ref` / `import_ref`, checked with the rules of
/// upstream's `import_dataproto_ref`. One difference, on the strict side: `version` and
/// `batch_size` must be JSON integers (upstream's `int()` would also take `"1"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RefHandle {
    #[serde(rename = "type")]
    pub handle_type: String,
    pub version: i64,
    pub kind: String,
    pub batch_size: u64,
    #[serde(default = "default_scope")]
    pub namespace: String,
    #[serde(default = "default_scope")]
    pub partition: String,
    pub global_indexes: Option<Vec<i64>>,
    pub stage_refs: BTreeMap<String, StageRef>,
    pub field_index: BTreeMap<String, FieldLocation>,
    #[serde(default)]
    pub meta_info: serde_json::Map<String, serde_json::Value>,
    #[serde(default)]
    pub encoded_non_tensor: serde_json::Map<String, serde_json::Value>,
}

/// `value` as JSON text, or `missing`.
fn shown(value: Option<&serde_json::Value>) -> String {
    value.map_or("missing".to_owned(), |v| v.to_string())
}

impl RefHandle {
    /// Parses and validates handle JSON text.
    pub fn from_json(text: &str) -> Result<RefHandle> {
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| Error::Handle(format!("not JSON: {e}")))?;
        RefHandle::from_value(value)
    }

    /// Validates a handle value; type, version and kind first, with upstream's messages.
    pub fn from_value(value: serde_json::Value) -> Result<RefHandle> {
        let obj = value.as_object().ok_or_else(|| {
            Error::Handle("not a Mooncake DataProto ref handle (not an object)".into())
        })?;
        if obj.get("type").and_then(|t| t.as_str()) != Some(HANDLE_TYPE) {
            return Err(Error::Handle(format!(
                "not a Mooncake DataProto ref handle: type is {}, expected {HANDLE_TYPE:?}",
                shown(obj.get("type"))
            )));
        }
        if obj.get("version").and_then(|v| v.as_i64()) != Some(HANDLE_VERSION) {
            return Err(Error::Handle(format!(
                "unsupported DataProto ref handle version: {}, expected {HANDLE_VERSION}",
                shown(obj.get("version"))
            )));
        }
        if obj.get("kind").and_then(|k| k.as_str()) != Some(HANDLE_KIND) {
            return Err(Error::Handle(format!(
                "unsupported DataProto ref handle kind: {}, expected {HANDLE_KIND:?}",
                shown(obj.get("kind"))
            )));
        }
        let handle: RefHandle =
            serde_json::from_value(value).map_err(|e| Error::Handle(e.to_string()))?;
        handle.validate()?;
        Ok(handle)
    }

    /// The checks of `import_dataproto_ref` on a typed handle.
    pub fn validate(&self) -> Result<()> {
        if self.handle_type != HANDLE_TYPE {
            return Err(Error::Handle(format!(
                "not a Mooncake DataProto ref handle: type {:?}",
                self.handle_type
            )));
        }
        if self.version != HANDLE_VERSION {
            return Err(Error::Handle(format!(
                "unsupported DataProto ref handle version: {}",
                self.version
            )));
        }
        if self.kind != HANDLE_KIND {
            return Err(Error::Handle(format!(
                "unsupported DataProto ref handle kind: {:?}",
                self.kind
            )));
        }
        for (name, location) in &self.field_index {
            if !HANDLE_SECTIONS.contains(&location.section.as_str()) {
                return Err(Error::Handle(format!(
                    "invalid DataProto field section: {:?} (field {name:?}; expected one of {HANDLE_SECTIONS:?})",
                    location.section
                )));
            }
            if !self.stage_refs.contains_key(&location.stage) {
                return Err(Error::Handle(format!(
                    "DataProto ref handle field {name:?} references unknown stage {:?}",
                    location.stage
                )));
            }
        }
        Ok(())
    }

    /// Compact JSON text.
    pub fn to_json(&self) -> Result<String> {
        serde_json::to_string(self).map_err(|e| Error::Handle(e.to_string()))
    }

    /// Every manifest key the handle names.
    pub fn manifest_keys(&self) -> Vec<&str> {
        self.stage_refs
            .values()
            .map(|s| s.manifest_key.as_str())
            .collect()
    }
}

impl ToPy for RefHandle {
    fn to_py<'py>(&self, py: Python<'py>, _m: &Bound<'py, PyAny>) -> Result<Bound<'py, PyAny>> {
        let value = serde_json::to_value(self).map_err(|e| Error::Handle(e.to_string()))?;
        json_to_py(py, &value).context(|| "RefHandle to Python".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    /// A handle as upstream's `export_dataproto_ref` writes it.
    fn good() -> Value {
        json!({
            "type": "mooncake_dataproto_ref", "version": 1, "kind": "bundle_stages",
            "batch_size": 2, "namespace": "miles", "partition": "default",
            "global_indexes": [0, 1],
            "stage_refs": {"default": {"manifest_key": "bundle/miles/abc/manifest"}},
            "field_index": {"x": {"stage": "default", "member": "x", "section": "batch"}},
            "meta_info": {"step": 3}, "encoded_non_tensor": {}
        })
    }

    fn refused(edit: impl Fn(&mut Value)) -> String {
        let mut v = good();
        edit(&mut v);
        match RefHandle::from_value(v) {
            Err(Error::Handle(m)) => m,
            other => panic!("a bad handle was not refused: {other:?}"),
        }
    }

    #[test]
    fn a_good_handle_round_trips_through_json_text() {
        let handle = RefHandle::from_value(good()).expect("valid");
        assert_eq!(handle.manifest_keys(), ["bundle/miles/abc/manifest"]);
        let again = RefHandle::from_json(&handle.to_json().expect("json")).expect("valid");
        assert_eq!(again, handle);
        let mut minimal = good();
        for key in ["namespace", "partition", "global_indexes", "meta_info"] {
            minimal.as_object_mut().expect("object").remove(key);
        }
        let h = RefHandle::from_value(minimal).expect("upstream's defaults apply");
        assert_eq!(
            (h.namespace.as_str(), h.partition.as_str()),
            ("default", "default")
        );
        assert_eq!(h.global_indexes, None);
    }

    #[test]
    fn each_rule_of_upstreams_import_refuses_with_its_message() {
        type Edit<'a> = &'a dyn Fn(&mut Value);
        let cases: [(&str, Edit); 7] = [
            (
                "not a Mooncake DataProto ref handle: type is \"other\"",
                &|v| v["type"] = json!("other"),
            ),
            (
                "unsupported DataProto ref handle version: 2, expected 1",
                &|v| v["version"] = json!(2),
            ),
            ("unsupported DataProto ref handle version: \"1\"", &|v| {
                v["version"] = json!("1")
            }),
            ("unsupported DataProto ref handle kind: missing", &|v| {
                v.as_object_mut().expect("object").remove("kind");
            }),
            ("invalid DataProto field section: \"meta_info\"", &|v| {
                v["field_index"]["x"]["section"] = json!("meta_info")
            }),
            ("field \"x\" references unknown stage \"nope\"", &|v| {
                v["field_index"]["x"]["stage"] = json!("nope")
            }),
            ("invalid type", &|v| v["batch_size"] = json!("2")),
        ];
        for (message, edit) in cases {
            let got = refused(edit);
            assert!(got.contains(message), "want {message:?}, got {got:?}");
        }
        assert!(
            matches!(RefHandle::from_json("{not json"), Err(Error::Handle(m)) if m.starts_with("not JSON"))
        );
        assert!(
            matches!(RefHandle::from_json("[1]"), Err(Error::Handle(m)) if m.contains("not an object"))
        );
    }

    #[test]
    fn validate_checks_a_handle_built_in_rust() {
        let mut h = RefHandle::from_value(good()).expect("valid");
        h.field_index.insert(
            "y".into(),
            FieldLocation {
                stage: "later".into(),
                member: "y".into(),
                section: "batch".into(),
            },
        );
        let err = h.validate().expect_err("unknown stage");
        assert!(
            err.to_string()
                .contains("references unknown stage \"later\""),
            "{err}"
        );
    }
}
