//! The names the generator must keep clear of are the names the rendered artifacts use:
//! the lists in `model::names` cannot fall behind the templates or the runtime.

use mooncake_sos_manifest::model::names::{
    RUST_TYPES_IN_USE, RUST_VALUES_IN_USE, SHIM_NAMES, options_struct,
};

fn rendered(path_end: &str) -> String {
    let api = mooncake_sos_manifest::load_str("api.toml", include_str!("../../api.toml")).unwrap();
    // The shim and the bindings depend on the manifest alone.
    let cores = mooncake_sos_codegen::render::Cores::default();
    let outputs = mooncake_sos_codegen::render::render_all(&api, &cores).unwrap();
    outputs
        .into_iter()
        .find_map(|o| match o {
            mooncake_sos_codegen::render::Output::File { path, contents }
                if path.as_str().ends_with(path_end) =>
            {
                Some(contents)
            }
            _ => None,
        })
        .unwrap()
}

/// Every public top-level name the rendered shim binds, but the symbols, is in
/// SHIM_NAMES: the list cannot fall behind the template.
#[test]
fn shim_names_are_what_the_shim_defines() {
    use ruff_python_ast::Stmt;
    let api = mooncake_sos_manifest::load_str("api.toml", include_str!("../../api.toml")).unwrap();
    let symbols = api.symbol_names();
    let text = rendered("generated/python/mooncake_sos.py");
    let parsed = ruff_python_parser::parse_module(&text).unwrap();
    let mut names = Vec::new();
    for stmt in parsed.suite() {
        match stmt {
            Stmt::FunctionDef(f) => names.push(f.name.to_string()),
            Stmt::ClassDef(c) => names.push(c.name.to_string()),
            Stmt::Assign(a) => names.extend(
                a.targets
                    .iter()
                    .filter_map(|t| t.as_name_expr().map(|n| n.id.to_string())),
            ),
            Stmt::AnnAssign(a) => names.extend(a.target.as_name_expr().map(|n| n.id.to_string())),
            Stmt::Import(i) => names.extend(i.names.iter().map(|a| {
                a.asname
                    .as_ref()
                    .unwrap_or(&a.name)
                    .split('.')
                    .next()
                    .unwrap()
                    .to_owned()
            })),
            Stmt::ImportFrom(i) => names.extend(
                i.names
                    .iter()
                    .map(|a| a.asname.as_ref().unwrap_or(&a.name).to_string()),
            ),
            _ => {}
        }
    }
    for name in names {
        if !name.starts_with('_') && name != "__all__" && !symbols.contains(&name.as_str()) {
            assert!(
                SHIM_NAMES.contains(&name.as_str()),
                "the shim defines {name}"
            );
        }
    }
}

/// Every type name the rendered bindings use that the manifest does not make, and every
/// name of the runtime's prelude, is in RUST_TYPES_IN_USE / RUST_VALUES_IN_USE.
#[test]
fn rust_names_are_what_the_crate_uses() {
    use proc_macro2::{TokenStream, TokenTree};
    let api = mooncake_sos_manifest::load_str("api.toml", include_str!("../../api.toml")).unwrap();
    let mut made: Vec<String> = Vec::new();
    for s in &api.symbols {
        made.push(s.name.clone());
        if let mooncake_sos_manifest::model::SymbolKind::Class { methods, .. } = &s.kind {
            made.push(options_struct(&s.name));
            made.extend(methods.iter().map(|m| options_struct(&m.name)));
        }
    }
    fn idents(tokens: TokenStream, out: &mut Vec<String>) {
        for t in tokens {
            match t {
                TokenTree::Group(g) => idents(g.stream(), out),
                TokenTree::Ident(i) => out.push(i.to_string()),
                _ => {}
            }
        }
    }
    let text = rendered("generated/src/bindings.rs");
    let mut used = Vec::new();
    idents(text.parse().unwrap(), &mut used);
    for name in used {
        let is_type = name.starts_with(|c: char| c.is_ascii_uppercase())
            && name.chars().any(|c| c.is_ascii_lowercase());
        if is_type && name != "Self" && !made.contains(&name) {
            assert!(
                RUST_TYPES_IN_USE.contains(&name.as_str()),
                "the bindings use {name}"
            );
        }
    }
    let runtime: syn::File = syn::parse_str(include_str!("../../runtime/src/lib.rs")).unwrap();
    let prelude = runtime
        .items
        .iter()
        .find_map(|i| match i {
            syn::Item::Mod(m) if m.ident == "prelude" => m.content.as_ref(),
            _ => None,
        })
        .expect("runtime::prelude");
    let mut exported = Vec::new();
    let items = &prelude.1;
    idents(quote::quote! { #(#items)* }, &mut exported);
    for name in exported
        .iter()
        .filter(|n| !["pub", "use", "crate"].contains(&n.as_str()))
    {
        assert!(
            RUST_TYPES_IN_USE.contains(&name.as_str())
                || RUST_VALUES_IN_USE.contains(&name.as_str()),
            "the runtime's prelude exports {name}"
        );
    }
}
