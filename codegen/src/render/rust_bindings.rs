//! generated/src/lib.rs + bindings.rs (and generated/Cargo.toml): Rust bindings over the PyO3 runtime
//! (`mooncake-sos-runtime`), built with quote! and printed by prettyplease.
//!
//! - [`spec`]: the constants and the static `API` spec the runtime checks at load time,
//! - [`wrapper`]: one struct per dataclass, one wrapper per class (option structs from the
//!   parameters that carry `rust = ...`), one function per module-level function or alias,
//! - [`handle`]: `RefHandle`, the JSON-safe ref handle, validated like upstream's import.

mod handle;
mod spec;
mod wrapper;

use super::{HEADER, Output, RenderError};
use crate::model::{Api, RelPath};
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};

/// generated/Cargo.toml, a fixed text: the bindings' dependencies do not depend on the manifest.
const CARGO_TOML: &str = include_str!("../../templates/generated.Cargo.toml");

pub fn render(api: &Api) -> Result<Vec<Output>, RenderError> {
    let consts = spec::constants(api);
    let api_spec = spec::api_spec(api);
    let types = wrapper::tokens(api)?;
    let handle = handle::tokens();
    let tokens = quote! {
        use std::collections::BTreeMap;

        use mooncake_sos_runtime as rt;
        use rt::pyo3::prelude::*;
        use rt::{Kwargs, PyContext, ToPy};

        pub use rt::{
            EmbeddedStore, Error, Module, PythonEnv, Record, ReplicateConfig, Result, Rows, Store,
            StoreConfig,
        };

        #consts
        #api_spec
        #types
        #handle
    };
    let file = syn::parse2::<syn::File>(tokens).map_err(|e| RenderError(e.to_string()))?;
    let module = &api.upstream.module;
    // prettyplease's layout is not rustfmt's: lib.rs declares the body with rustfmt::skip
    // so `cargo fmt --check` over the workspace leaves generated code alone.
    let lib = format!(
        "// {HEADER}\n//! Bindings for `{module}`, generated from api.toml.\n\n#[rustfmt::skip]\nmod bindings;\n\npub use bindings::*;\n"
    );
    let bindings = format!(
        "// {HEADER}\n//! The body of the bindings for `{module}` (printed by prettyplease).\n\n{}",
        prettyplease::unparse(&file)
    );
    Ok(vec![
        Output::File {
            path: rel("generated/src/lib.rs")?,
            contents: lib,
        },
        Output::File {
            path: rel("generated/src/bindings.rs")?,
            contents: bindings,
        },
        Output::File {
            path: rel("generated/Cargo.toml")?,
            contents: format!("# {HEADER}\n{CARGO_TOML}"),
        },
    ])
}

fn rel(path: &str) -> Result<RelPath, RenderError> {
    RelPath::new(path).ok_or_else(|| RenderError(format!("{path} is not a repository path")))
}

/// A Rust identifier for a Python name; keywords (`type`, `ref`) become raw identifiers.
fn ident(name: &str) -> syn::Ident {
    if syn::parse_str::<syn::Ident>(name).is_ok() {
        format_ident!("{}", name)
    } else {
        syn::Ident::new_raw(name, Span::call_site())
    }
}

/// `/// text` as an attribute, for doc comments built at render time.
fn doc(text: &str) -> TokenStream {
    quote! { #[doc = #text] }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MANIFEST: &str = include_str!("../../../api.toml");

    fn bindings(manifest: &str) -> String {
        let api = crate::load_str("api.toml", manifest).unwrap_or_else(|d| panic!("{d}"));
        let outputs = render(&api).expect("render");
        let paths: Vec<&str> = outputs.iter().map(|o| o.path().as_str()).collect();
        assert_eq!(
            paths,
            [
                "generated/src/lib.rs",
                "generated/src/bindings.rs",
                "generated/Cargo.toml"
            ]
        );
        for o in &outputs {
            let Output::File { contents, .. } = o else {
                panic!("whole files only")
            };
            assert!(
                contents.lines().next().is_some_and(|l| l.contains(HEADER)),
                "{}",
                o.path().as_str()
            );
        }
        match &outputs[1] {
            Output::File { contents, .. } => contents.clone(),
            Output::Region { .. } => unreachable!(),
        }
    }

    #[test]
    fn bindings_follow_the_manifest() {
        let text = bindings(MANIFEST);
        syn::parse_file(&text).expect("the bindings parse as Rust");
        // Keyword parameters with a Rust type become option fields; `policy` has none.
        assert!(text.contains("pub struct PutOptions"));
        assert!(text.contains("pub r#type: Option<String>"));
        assert!(text.contains("pub field_schemas: Option<BTreeMap<String, FieldSchema>>"));
        assert!(text.contains("pub rows: Option<Rows>"));
        assert!(!text.contains("pub policy:"));
        for name in [
            "FieldSchema",
            "MooncakeBundleTransfer",
            "export_ref",
            "import_ref",
        ] {
            assert!(
                text.contains(&format!("name: \"{name}\"")),
                "{name} in the API spec"
            );
        }
        assert!(text.contains("rt::NativeCheck::Overload(\"config: dict\")"));
        assert!(text.contains("target: \"export_dataproto_ref\""));
    }

    #[test]
    fn a_method_without_arguments_binds_nothing_it_does_not_use() {
        let manifest = MANIFEST.replacen(
            "params = [{ name = \"result\", type = \"Any\" }]",
            "params = []",
            1,
        );
        assert_ne!(
            manifest, MANIFEST,
            "the manifest still declares release_result(result)"
        );
        let text = bindings(&manifest);
        let file = syn::parse_file(&text).expect("parses");
        let release = text
            .split("pub fn release_result")
            .nth(1)
            .expect("release_result");
        let body = &release[..release.find("pub fn").unwrap_or(release.len())];
        assert!(!body.contains("let m ="), "{body}");
        assert!(!file.items.is_empty());
    }
}
