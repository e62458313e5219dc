//! `SCENARIOS_JSON`: the manifest's `[[scenario]]` tables as plain JSON data in the bindings,
//! the same facts the shim's `SCENARIOS` carries, for Rust callers (the scenario tests) that
//! run the consumer's calls through the bindings.

use mooncake_sos_manifest::model::{Api, Scenario};
use proc_macro2::TokenStream;
use quote::quote;
use serde_json::{Value, json};

pub(super) fn tokens(api: &Api) -> TokenStream {
    let text = Value::Array(api.scenarios.iter().map(scenario).collect()).to_string();
    quote! {
        /// The consumer's calls with its values (api.toml `[[scenario]]`), as a JSON array:
        /// per scenario `name`, `needs_torch`, `key_prefix`, `clients` (`name`,
        /// `global_segment_size`, `local_buffer_size`, `protocol`), `put` (`by`, `type`,
        /// `namespace`, `chunk_bytes`, `replica_num`), `get` (`by`, `type`) and `fields`
        /// (`name`, `codec`, `section`, `dtype`, `nullable`, `value`). What the shim's
        /// `--smoke` runs.
        pub const SCENARIOS_JSON: &str = #text;
    }
}

fn scenario(s: &Scenario) -> Value {
    let clients: Vec<Value> = s
        .clients
        .iter()
        .map(|c| {
            json!({"name": c.name, "global_segment_size": c.global_segment_size,
                   "local_buffer_size": c.local_buffer_size, "protocol": c.protocol})
        })
        .collect();
    let fields: Vec<Value> = s
        .fields
        .iter()
        .map(|f| {
            json!({"name": f.name, "codec": f.codec, "section": f.section, "dtype": f.dtype,
                   "nullable": f.nullable, "value": f.value})
        })
        .collect();
    json!({
        "name": s.name,
        "needs_torch": s.needs_torch,
        "key_prefix": s.key_prefix,
        "clients": clients,
        "put": {"by": s.clients[s.put.by].name, "type": s.put.kind, "namespace": s.put.namespace,
                "chunk_bytes": s.put.chunk_bytes, "replica_num": s.put.replica_num},
        "get": {"by": s.clients[s.get.by].name, "type": s.get.kind},
        "fields": fields,
    })
}
