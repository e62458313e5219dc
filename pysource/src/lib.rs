//! Reads Python source in Rust (ruff's parser), never importing it, so no interpreter or
//! native core is needed: the upstream module's symbols against api.toml ([`extract`],
//! [`check`], [`report`]; across releases, [`matrix`]), and one semantic model of a program
//! ([`semantic`]) that one flow ([`surface`]) follows values through, for three analyses: the
//! module's native surface, a consumer tree's uses of the API and of the native modules
//! ([`consumer`]), and the images' other users' records. What each use is checked against is
//! a rule ([`rules`]). [`source`] and [`archive`] read a `.py` file or a wheel, bounded.

pub mod archive;
pub mod bounded_parse;
pub mod check;
pub mod consumer;
pub mod default_expr;
pub mod domain;
pub mod extract;
pub mod facts;
pub mod flow;
pub mod load_error;
pub mod matrix;
pub mod report;
pub mod rules;
pub mod semantic;
pub mod source;
pub mod surface;
pub mod version;

use mooncake_sos_manifest::model::Api;
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
