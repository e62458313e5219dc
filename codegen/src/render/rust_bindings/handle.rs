//! `RefHandle`: the JSON-safe handle `export_ref` returns, as a serde type validated with the
//! rules upstream's `import_dataproto_ref` applies at the pinned commit, so a Rust service can
//! pass and check handles without Python.

use proc_macro2::TokenStream;
use quote::quote;

/// The handle facts of `import_dataproto_ref` (upstream constants, not manifest choices).
const HANDLE_TYPE: &str = "mooncake_dataproto_ref";
const HANDLE_VERSION: i64 = 1;
const HANDLE_KIND: &str = "bundle_stages";
const SECTIONS: [&str; 2] = ["batch", "non_tensor_batch"];

pub(super) fn tokens() -> TokenStream {
    let sections = SECTIONS;
    let version = proc_macro2::Literal::i64_unsuffixed(HANDLE_VERSION);
    quote! {
        /// `handle["type"]` of every ref handle.
        pub const HANDLE_TYPE: &str = #HANDLE_TYPE;
        /// The handle version `import_ref` accepts.
        pub const HANDLE_VERSION: i64 = #version;
        /// The handle kind `import_ref` accepts.
        pub const HANDLE_KIND: &str = #HANDLE_KIND;
        /// The sections a field of a handle may live in.
        pub const HANDLE_SECTIONS: &[&str] = &[#(#sections),*];

        /// Where one stage of a ref lives.
        #[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
        pub struct StageRef {
            pub manifest_key: String,
        }

        /// Where one field of a ref lives.
        #[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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
        #[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
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
            #[serde(default)]
            pub global_indexes: Option<Vec<i64>>,
            pub stage_refs: BTreeMap<String, StageRef>,
            pub field_index: BTreeMap<String, FieldLocation>,
            #[serde(default)]
            pub meta_info: rt::serde_json::Map<String, rt::serde_json::Value>,
            #[serde(default)]
            pub encoded_non_tensor: rt::serde_json::Map<String, rt::serde_json::Value>,
        }

        impl RefHandle {
            /// Parses and validates handle JSON text.
            pub fn from_json(text: &str) -> Result<RefHandle> {
                let value: rt::serde_json::Value = rt::serde_json::from_str(text)
                    .map_err(|e| Error::Handle(format!("not JSON: {e}")))?;
                RefHandle::from_value(value)
            }

            /// Validates a handle value; type, version and kind first, with upstream's messages.
            pub fn from_value(value: rt::serde_json::Value) -> Result<RefHandle> {
                let obj = value
                    .as_object()
                    .ok_or_else(|| Error::Handle("not a Mooncake DataProto ref handle (not an object)".into()))?;
                if obj.get("type").and_then(|t| t.as_str()) != Some(HANDLE_TYPE) {
                    return Err(Error::Handle(format!(
                        "not a Mooncake DataProto ref handle: type is {}, expected {HANDLE_TYPE:?}",
                        obj.get("type").map_or("missing".to_owned(), |t| t.to_string())
                    )));
                }
                let version = obj.get("version");
                if version.and_then(|v| v.as_i64()) != Some(HANDLE_VERSION) {
                    return Err(Error::Handle(format!(
                        "unsupported DataProto ref handle version: {}, expected {HANDLE_VERSION}",
                        version.map_or("missing".to_owned(), |v| v.to_string())
                    )));
                }
                if obj.get("kind").and_then(|k| k.as_str()) != Some(HANDLE_KIND) {
                    return Err(Error::Handle(format!(
                        "unsupported DataProto ref handle kind: {}, expected {HANDLE_KIND:?}",
                        obj.get("kind").map_or("missing".to_owned(), |k| k.to_string())
                    )));
                }
                let handle: RefHandle = rt::serde_json::from_value(value)
                    .map_err(|e| Error::Handle(e.to_string()))?;
                handle.validate()?;
                Ok(handle)
            }

            /// The checks of `import_dataproto_ref` on a typed handle.
            pub fn validate(&self) -> Result<()> {
                if self.handle_type != HANDLE_TYPE {
                    return Err(Error::Handle(format!("not a Mooncake DataProto ref handle: type {:?}", self.handle_type)));
                }
                if self.version != HANDLE_VERSION {
                    return Err(Error::Handle(format!("unsupported DataProto ref handle version: {}", self.version)));
                }
                if self.kind != HANDLE_KIND {
                    return Err(Error::Handle(format!("unsupported DataProto ref handle kind: {:?}", self.kind)));
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
                rt::serde_json::to_string(self).map_err(|e| Error::Handle(e.to_string()))
            }

            /// Every manifest key the handle names.
            pub fn manifest_keys(&self) -> Vec<&str> {
                self.stage_refs.values().map(|s| s.manifest_key.as_str()).collect()
            }
        }

        impl ToPy for RefHandle {
            fn to_py<'py>(&self, py: Python<'py>, _m: &Bound<'py, PyAny>) -> Result<Bound<'py, PyAny>> {
                let value = rt::serde_json::to_value(self).map_err(|e| Error::Handle(e.to_string()))?;
                rt::json_to_py(py, &value).context(|| "RefHandle to Python".into())
            }
        }
    }
}
