//! What the two Dockerfile renderers share: ARG names, the drop comment and the import check.

use crate::model::{Api, Image, SymbolKind};
use heck::ToShoutySnakeCase;

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
    /// The python3 -c program of the import-check RUN line.
    pub import_check: String,
    pub shim_module: String,
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
        Self {
            base_image: image.base_image.clone(),
            base_tag: image.base_tag.clone(),
            base_tag_arg: BASE_TAG_ARG,
            arg_prefix: api.name.to_shouty_snake_case(),
            shim_file: format!("{}.py", api.shim.module),
            // Where regen writes the shim, relative to the build context (the repo root).
            shim_copy_from: super::shim::path(api).to_string(),
            drop_comment: comment(&drop),
            import_check: import_check(api),
            shim_module: api.shim.module.clone(),
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

/// `from M import A, B, ...; import NATIVE; <each class has its methods>`: the import check
/// a reviewer reads in the Dockerfile. The shim run after it checks everything else.
fn import_check(api: &Api) -> String {
    let u = &api.upstream;
    let mut program = format!(
        "from {} import {}; import {}",
        u.module,
        api.symbol_names().join(", "),
        u.native_module
    );
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
