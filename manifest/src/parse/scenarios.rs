//! `[[scenario]]` as written: the consumer's calls with its values (see model::scenarios).

use super::S;
use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawScenario {
    pub name: S<String>,
    /// What the run needs beyond the module and its core (`["torch"]`).
    #[serde(default)]
    pub needs: Vec<S<String>>,
    /// `MooncakeBundleTransfer(store, key_prefix=...)`, made on every client.
    pub key_prefix: S<String>,
    #[serde(default)]
    pub client: Vec<S<RawClient>>,
    pub put: S<RawPut>,
    pub get: S<RawGet>,
    #[serde(default)]
    pub field: Vec<S<RawField>>,
}

/// One client: the `setup({...})` keys whose values the consumer chooses.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawClient {
    pub name: S<String>,
    pub global_segment_size: S<i64>,
    pub local_buffer_size: S<i64>,
    pub protocol: S<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPut {
    pub by: S<String>,
    #[serde(rename = "type")]
    pub kind: S<String>,
    pub namespace: S<String>,
    pub chunk_bytes: Option<S<i64>>,
    pub replica_num: Option<S<i64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawGet {
    pub by: S<String>,
    #[serde(rename = "type")]
    pub kind: S<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawField {
    pub name: S<String>,
    pub codec: S<String>,
    pub section: S<String>,
    pub dtype: Option<S<String>>,
    pub nullable: Option<S<bool>>,
    /// A Python literal: the field's rows (or, in meta_info, its value).
    pub value: S<String>,
}
