//! generated/src/lib.rs + bindings.rs (and generated/Cargo.toml): Rust bindings over the PyO3 runtime
//! (`mooncake-sos-runtime`), built with quote! and printed by prettyplease. Only what depends
//! on the manifest is generated; the fixed parts (refs and their handle, the call helper, the
//! load-time check) are hand-written in the runtime and re-exported.
//!
//! - [`load_check`]: the pins as constants and the `API` contract (the shim, included as text),
//! - [`wrapper`]: one struct per dataclass, one wrapper per class (option structs from the
//!   parameters that carry `rust = ...`), one function per module-level function or alias.

mod load_check;
mod scenarios;
mod wrapper;

use super::{HEADER, Output, RenderError};
use mooncake_sos_manifest::model::{Api, RelPath};
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};

/// generated/Cargo.toml, a fixed text: the bindings' dependencies do not depend on the manifest.
const CARGO_TOML: &str = include_str!("../../templates/generated.Cargo.toml");

pub fn render(api: &Api) -> Result<Vec<Output>, RenderError> {
    let contract = load_check::tokens(api);
    let scenarios = scenarios::tokens(api);
    let types = wrapper::tokens(api)?;
    let tokens = quote! {
        use std::collections::BTreeMap;

        use mooncake_sos_runtime as rt;
        use rt::ToPy;
        use rt::pyo3::prelude::*;

        pub use rt::prelude::*;

        #contract
        #scenarios
        #types
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

    /// A dict value keeps the order api.toml writes it in, as the shim's SCENARIOS does (one
    /// order: the consumer's); before, SCENARIOS_JSON sorted its keys.
    #[test]
    fn scenario_dicts_keep_the_manifests_key_order() {
        let api =
            mooncake_sos_manifest::load_str("api.toml", MANIFEST).unwrap_or_else(|d| panic!("{d}"));
        let text = bindings(MANIFEST);
        let shim = crate::render::render_all(&api, &crate::render::Cores::default())
            .expect("render")
            .into_iter()
            .find_map(|o| match o {
                crate::render::Output::File { path, contents }
                    if path.as_str().ends_with(".py") =>
                {
                    Some(contents)
                }
                _ => None,
            })
            .expect("the shim");
        assert!(
            text.contains(r#"{\"temperature\":0.7,\"top_p\":1.0,\"stop\":[\"</s>\"]}"#),
            "{text}"
        );
        assert!(
            shim.contains(r#"{"temperature": 0.7, "top_p": 1.0, "stop": ["</s>"]}"#),
            "{shim}"
        );
    }

    fn bindings(manifest: &str) -> String {
        let api =
            mooncake_sos_manifest::load_str("api.toml", manifest).unwrap_or_else(|d| panic!("{d}"));
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
        for item in [
            "pub struct FieldSchema",
            "pub struct MooncakeBundleTransfer",
            "pub fn export_ref",
            "pub fn import_ref",
        ] {
            assert!(text.contains(item), "{item}");
        }
        // The contract is the shim itself: no second copy of the API in Rust.
        assert!(text.contains("shim_source: include_str!(\"../python/mooncake_sos.py\")"));
        assert!(!text.contains("config: dict"));
        // Fixed types come from the runtime, not from the generator.
        assert!(!text.contains("struct RefHandle") && !text.contains("struct DataProtoRef"));
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
