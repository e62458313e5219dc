//! Checks an upstream module's source against the api.toml model, statically: the module is
//! parsed in Rust (ruff's parser), never imported, so no Python or native core is needed.
//!
//! [`source`] reads a `.py` or the module out of a wheel ([`archive`] reads wheels, bounded), [`extract`] keeps the module-level
//! facts, [`check`] compares them with the model into a [`report::Report`]; [`matrix`] does
//! that across releases, [`pin`] edits api.toml's pin, [`fetch`] downloads the pinned file;
//! [`surface`] derives what the module uses of the native core and of its package and checks it
//! against the manifest's `[[native]]` and `[[sibling]]` declarations.

pub mod archive;
pub mod check;
pub mod consumer;
pub mod default_expr;
pub mod domain;
pub mod extract;
pub mod facts;
pub mod flow;
pub mod matrix;
pub mod nesting;
pub mod report;
pub mod rules;
pub mod semantic;
pub mod source;
pub mod surface;
pub mod version;

use mooncake_sos_contract::model::Api;
use report::Report;
use source::{LoadError, ModuleSource};

/// Parses `source` and checks it against every symbol `api` declares.
pub fn verify(api: &Api, source: &ModuleSource) -> Result<Report, LoadError> {
    let facts = extract::extract(source)?;
    Ok(check::check(api, &facts, &source.display, &source.sha256))
}

/// [`verify`] and [`surface::check`] over one parse of `source`.
pub fn verify_with_surface(
    api: &Api,
    source: &ModuleSource,
) -> Result<(Report, surface::SurfaceReport), LoadError> {
    let config = surface::SurfaceConfig::from_api(api);
    let files = [semantic::SourceFile {
        source,
        module: &config.module,
        seed: true,
    }];
    let (facts, derived) = semantic::with_model(&files, |model| {
        let file = model.file(0)?;
        let facts = extract::facts(file.tree.body(), source);
        Ok::<_, LoadError>((facts, surface::derive_file(model, 0, &config)?))
    })??;
    let report = check::check(api, &facts, &source.display, &source.sha256);
    Ok((report, surface::compare(&api.surface, derived)))
}

/// The report line when `source` is not the file api.toml pins, else `None`.
pub fn sha256_mismatch(api: &Api, source: &ModuleSource) -> Option<String> {
    (source.sha256 != api.upstream.sha256).then(|| {
        format!(
            "{}:1: upstream.sha256: file hash: expected {} (the pinned {} at {}), found {}",
            source.display,
            api.upstream.sha256,
            api.upstream.path,
            api.upstream.short_commit(),
            source.sha256
        )
    })
}
