//! The pins as constants, and the contract the runtime checks at load time: the generated
//! shim itself (included as text), whose `check()` the runtime runs, so the bindings carry no
//! second copy of the manifest's API; and the native store the runtime sets up, as api.toml
//! declares it.

use mooncake_sos_manifest::model::Api;
use proc_macro2::TokenStream;
use quote::quote;

pub(super) fn tokens(api: &Api) -> TokenStream {
    let u = &api.upstream;
    let (module, native, repo, commit, sha256) =
        (&u.module, &u.native_module, &u.repo, &u.commit, &u.sha256);
    let shim = &api.shim.module;
    // From generated/src/bindings.rs to generated/python/<shim>.py (see render::shim::path).
    let shim_file = format!("../python/{shim}.py");
    let fingerprint = api.fingerprint();
    let store = api.surface.store_facts();
    let (store_class, setup, setup_keys, config_class, config_fields, replica_field) = (
        &store.class,
        &store.setup,
        &store.setup_keys,
        &store.config_class,
        &store.config_fields,
        &store.replica_field,
    );
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
        /// The Python shim's module name.
        pub const SHIM: &str = #shim;

        /// What the runtime checks before the first call: the generated shim, whose `check()`
        /// is the one implementation of the contract (the same one `import` runs in Python).
        pub static API: rt::Contract = rt::Contract {
            module: MODULE,
            native_module: NATIVE_MODULE,
            shim: SHIM,
            shim_source: include_str!(#shim_file),
            store: rt::NativeStore {
                class: #store_class,
                setup: #setup,
                setup_keys: &[#(#setup_keys),*],
                config_class: #config_class,
                config_fields: &[#(#config_fields),*],
                replica_field: #replica_field,
            },
        };

        /// Starts the interpreter for `env`, imports the module and checks it against [`API`].
        pub fn load(env: &PythonEnv) -> Result<Module> {
            Module::load(&API, env)
        }
    }
}
