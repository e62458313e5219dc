//! The pins as constants and the manifest's API as the runtime's static `ApiSpec`.

use crate::model::{Api, DefaultValue, NativeCheck, Param, ParamKind, SymbolKind};
use proc_macro2::TokenStream;
use quote::quote;

pub(super) fn constants(api: &Api) -> TokenStream {
    let u = &api.upstream;
    let (module, native, repo, commit, sha256) =
        (&u.module, &u.native_module, &u.repo, &u.commit, &u.sha256);
    let fingerprint = api.fingerprint();
    let first_release = api
        .drop
        .first_release
        .as_ref()
        .map(|(package, version)| format!("{package}=={version}"))
        .unwrap_or_default();
    quote! {
        /// The Python module these bindings call.
        pub const MODULE: &str = #module;
        /// The native core the module stands on.
        pub const NATIVE_MODULE: &str = #native;
        /// The upstream repository the module is pinned in.
        pub const UPSTREAM_REPO: &str = #repo;
        /// The pinned upstream commit.
        pub const UPSTREAM_COMMIT: &str = #commit;
        /// sha256 of the module file at the pinned commit.
        pub const UPSTREAM_SHA256: &str = #sha256;
        /// The first release whose wheel carries the whole API (`package==version`), if known.
        pub const FIRST_RELEASE: &str = #first_release;
        /// sha256 of the canonical contract in api.toml.
        pub const API_FINGERPRINT: &str = #fingerprint;
    }
}

pub(super) fn api_spec(api: &Api) -> TokenStream {
    let symbols = api.symbols.iter().map(|symbol| {
        let name = &symbol.name;
        let kind = match &symbol.kind {
            SymbolKind::Dataclass { frozen, fields } => {
                let fields = params(fields);
                quote! { rt::SymbolKind::Dataclass { frozen: #frozen, fields: &[#(#fields),*] } }
            }
            SymbolKind::Class { init, methods } => {
                let init = params(init);
                let methods = methods.iter().map(|m| {
                    let (name, is_static, ps) = (&m.name, m.staticmethod, params(&m.params));
                    quote! { rt::MethodSpec { name: #name, staticmethod: #is_static, params: &[#(#ps),*] } }
                });
                quote! { rt::SymbolKind::Class { init: &[#(#init),*], methods: &[#(#methods),*] } }
            }
            SymbolKind::Function { params: ps, .. } => {
                let ps = params(ps);
                quote! { rt::SymbolKind::Function { params: &[#(#ps),*] } }
            }
            SymbolKind::Alias { target, params: ps, .. } => {
                let ps = params(ps);
                quote! { rt::SymbolKind::Alias { target: #target, params: &[#(#ps),*] } }
            }
        };
        quote! { rt::SymbolSpec { name: #name, kind: #kind } }
    });
    let native = api.native.iter().map(|n| {
        let object = &n.object;
        let check = match &n.check {
            NativeCheck::Overload(text) => quote! { rt::NativeCheck::Overload(#text) },
            NativeCheck::Attribute { name, instance } => {
                quote! { rt::NativeCheck::Attribute { name: #name, instance: #instance } }
            }
        };
        quote! { rt::NativeSpec { module: NATIVE_MODULE, object: #object, check: #check } }
    });
    quote! {
        /// Everything the runtime checks in the installed module before the first call.
        pub static API: rt::ApiSpec = rt::ApiSpec {
            module: MODULE,
            repo: UPSTREAM_REPO,
            commit: UPSTREAM_COMMIT,
            sha256: UPSTREAM_SHA256,
            wheel: FIRST_RELEASE,
            fingerprint: API_FINGERPRINT,
            symbols: &[#(#symbols),*],
            native: &[#(#native),*],
        };

        /// Starts the interpreter for `env`, imports the module and checks it against [`API`].
        pub fn load(env: &PythonEnv) -> Result<Module> {
            Module::load(&API, env)
        }
    }
}

fn params(ps: &[Param]) -> Vec<TokenStream> {
    ps.iter()
        .map(|p| {
            let name = &p.name;
            let kind = match p.kind {
                ParamKind::Positional => quote! { rt::ParamKind::Positional },
                ParamKind::KeywordOnly => quote! { rt::ParamKind::KeywordOnly },
            };
            let has_default = matches!(
                p.default,
                Some(DefaultValue::Expr(_)) | Some(DefaultValue::Factory(_))
            );
            quote! { rt::ParamSpec { name: #name, kind: #kind, has_default: #has_default } }
        })
        .collect()
}
