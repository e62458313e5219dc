//! What the two Dockerfile renderers share: ARG names, the drop comment and the import check.

use heck::ToShoutySnakeCase;
use mooncake_sos_manifest::model::{Api, Image, SymbolKind};

/// The build arg both image recipes and docker/build.py use for the base image tag.
pub const BASE_TAG_ARG: &str = "SGLANG_IMAGE_TAG";

/// Fields every Dockerfile region template reads.
pub struct DockerCommon {
    pub base_image: String,
    pub base_tag: String,
    pub base_tag_arg: &'static str,
    /// ARG prefix from the manifest name, e.g. `MOONCAKE_SOS`.
    pub arg_prefix: String,
    pub shim_file: String,
    pub shim_copy_from: String,
    /// `# `-prefixed lines saying when the region is to be dropped.
    pub drop_comment: String,
    /// The manifest's name: the prefix of the check's log lines.
    pub name: String,
    /// The python3 -c program of the import check: every symbol and class method.
    pub import_check: String,
    pub shim_module: String,
    /// The dotted name of the native core, e.g. `mooncake.store`.
    pub native_module: String,
    /// The extension modules the check loads: the native core first, then every other one
    /// api.toml's `[[native]]` entries or the image's users need (`mooncake.engine`).
    pub native_modules: Vec<String>,
    pub native_count: usize,
    /// A python3 -c program printing each of its arguments' shared object, one per line
    /// (without importing their package, whose `__init__` may load the core); it exits 1 naming
    /// one that is not installed.
    pub locate_core: String,
    /// A python3 -c program reading the shim's `--json` report (argv[1]) that fails on every
    /// miss but those a builder without the GPU driver must have: the native modules' imports.
    pub shim_without_core: String,
}

impl DockerCommon {
    /// `${PREFIX_SUFFIX}`: a reference to one of the region's own ARGs.
    pub fn var(&self, suffix: &str) -> String {
        format!("${{{}_{suffix}}}", self.arg_prefix)
    }

    pub fn base_tag_var(&self) -> String {
        format!("${{{}}}", self.base_tag_arg)
    }

    pub fn new(api: &Api, image: &Image, drop_how: &str) -> Self {
        let mut drop = format!("Drop this region when {}.", api.drop.condition);
        if let Some((package, version)) = &api.drop.first_release {
            drop.push_str(&format!(
                " First such release (cargo xtask matrix): {package}=={version}; {drop_how}"
            ));
        }
        let mut native_modules = vec![api.upstream.native_module.clone()];
        let mut others: Vec<&String> = api
            .surface
            .members
            .iter()
            .filter_map(|m| m.module.as_ref())
            .chain(&image.user_modules)
            .collect();
        others.sort();
        others.dedup();
        native_modules.extend(others.into_iter().cloned());
        Self {
            base_image: image.base_image.clone(),
            base_tag: image.base_tag.clone(),
            base_tag_arg: BASE_TAG_ARG,
            arg_prefix: api.name.to_shouty_snake_case(),
            shim_file: format!("{}.py", api.shim.module),
            // Where regen writes the shim, relative to the build context (the repo root).
            shim_copy_from: super::shim::path(api).to_string(),
            drop_comment: comment(&drop),
            name: api.name.clone(),
            import_check: import_check(api),
            shim_module: api.shim.module.clone(),
            native_module: api.upstream.native_module.clone(),
            native_count: api.native.len(),
            locate_core: LOCATE_CORES.to_owned(),
            shim_without_core: shim_without_core(&native_modules),
            native_modules,
        }
    }
}

/// Wraps text into `# ` comment lines of at most 100 columns.
pub fn comment(text: &str) -> String {
    let mut lines = vec![String::from("#")];
    for word in text.split_whitespace() {
        let last = lines.last_mut().expect("starts with one line");
        if last.len() + 1 + word.len() > 100 && last.len() > 1 {
            lines.push(format!("# {word}"));
        } else {
            last.push(' ');
            last.push_str(word);
        }
    }
    lines.join("\n")
}

/// `from M import A, B, ...; <each class has its methods>`: the import check a reviewer
/// reads in the Dockerfile (the native core is imported on its own line before it, where it
/// can be loaded). The shim run after it checks everything else.
fn import_check(api: &Api) -> String {
    let u = &api.upstream;
    let mut program = format!("from {} import {}", u.module, api.symbol_names().join(", "));
    let classes: Vec<String> = api
        .symbols
        .iter()
        .filter_map(|s| match &s.kind {
            SymbolKind::Class { methods, .. } if !methods.is_empty() => {
                let names: Vec<String> = methods.iter().map(|m| format!("'{}'", m.name)).collect();
                Some(format!("({}, ({},))", s.name, names.join(", ")))
            }
            _ => None,
        })
        .collect();
    if !classes.is_empty() {
        program.push_str(&format!(
            "; missing = [f'{{c.__name__}}.{{m}}' for c, ms in ({},) for m in ms if not hasattr(c, m)]; \
             assert not missing, f'missing: {{missing}}'",
            classes.join(", ")
        ));
    }
    program
}

/// Where the check finds each native module's shared object: `<leaf><extension suffix>` in
/// the parent package's directories (found without running the parent's `__init__`, which may
/// import the core) or, for a top-level module, on sys.path. Its arguments are the modules
/// (validated dotted names). Goes in single quotes.
const LOCATE_CORES: &str = "import importlib.machinery, importlib.util, os, sys; \
    dirs = lambda m: (lambda s: s.submodule_search_locations if s else [])(importlib.util.find_spec(m.rpartition(\".\")[0])) if \".\" in m else sys.path; \
    found = lambda m: next((p for d in dirs(m) for x in importlib.machinery.EXTENSION_SUFFIXES for p in [os.path.join(d, m.rpartition(\".\")[2] + x)] if os.path.isfile(p)), \"\"); \
    [print(found(m) or sys.exit(f\"no native library {m} is installed\")) for m in sys.argv[1:]]";

/// Fails on every miss of the shim's report except a native module's import failing for want
/// of libcuda.so.1 (the shim's wording: `<module>: cannot import <what> (<error>)`).
/// Goes in double quotes.
fn shim_without_core(modules: &[String]) -> String {
    let prefixes: Vec<String> = modules
        .iter()
        .map(|m| format!("'{m}: cannot import '"))
        .collect();
    format!(
        "import json, sys; \
         rest = [m for m in json.load(open(sys.argv[1]))['misses'] \
         if not (m.startswith(({},)) and ' (libcuda.so.1:' in m)]; \
         print('every check of the shim that needs no native core passed') if not rest else None; \
         sys.exit('\\n'.join(rest) or None)",
        prefixes.join(", ")
    )
}
