//! One release, every question watch asks of it: does its module carry the declared API, does
//! its own native core serve that module and the consumer, does its module still work as a
//! one-file overlay over each overlay image's base, and how does it differ from the pinned
//! module.

use super::index::Wheel;
use super::module_diff::{Change, diff};
pub use super::smoke::Smoke;
use mooncake_sos_manifest::core_record::CoreSurface;
use mooncake_sos_manifest::core_record::ModuleKind;
use mooncake_sos_manifest::model::Api;
use mooncake_sos_native::images::{self, ImageSide};
use mooncake_sos_native::needs::{from_manifest, serve};
use mooncake_sos_native::read::Reader;
use mooncake_sos_native::requirements::requirements;
use mooncake_sos_native::users::UserRecord;
use mooncake_sos_native::users_check;
use mooncake_sos_pysource::extract::ModuleFacts;
use mooncake_sos_pysource::source::{LoadError, ModuleSource};
use serde::{Deserialize, Serialize};

/// What watch found in one release.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ReleaseReport {
    pub package: String,
    pub version: String,
    pub wheel: String,
    pub wheel_sha256: String,
    /// `None`: the wheel has no such module.
    pub module_sha256: Option<String>,
    /// The module carries every symbol, parameter and default api.toml declares.
    pub carries_api: bool,
    /// The verify report's lines when it does not.
    pub api_mismatches: Vec<String>,
    /// Uses of the native core or of the package the module makes that api.toml does not
    /// declare (adopting it means declaring them).
    pub undeclared_uses: Vec<String>,
    pub core: CoreVerdict,
    /// Uses a pin image's recorded user (sglang) makes that the image's base core serves and
    /// this release's core does not (`FILE:LINE: member: ...`): such a release is not fit for
    /// that pin.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub user_misses: Vec<String>,
    /// This release's module in each image's layer: alone over an overlay image's base (a
    /// one-file overlay), or as the fill over a fill image's core.
    pub layers: Vec<LayerVerdict>,
    /// Against the baseline module (see [`super::Watch::baseline`]).
    pub changes: Vec<Change>,
    pub smoke: Smoke,
}

/// Whether the release's own native core serves its module and the consumer's declared uses.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum CoreVerdict {
    Serves {
        core: String,
    },
    Fails {
        core: String,
        missing: Vec<String>,
    },
    /// Not asked, or it could not be read here.
    Unknown {
        reason: String,
    },
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LayerVerdict {
    pub image: String,
    /// `one-file overlay` or `fill`.
    pub layer: String,
    /// The base's wheel, `package version`.
    pub base: String,
    pub works: bool,
    pub findings: Vec<String>,
}

impl ReleaseReport {
    /// Fit for an image to pin: the API is there, its core serves it, the smoke did not fail.
    /// Why not is a verb phrase (`lacks the API ...`, `uses what ...`): it follows the release
    /// (`X 0.3.14 uses ...`) and `which` (`ships X, which lacks ...`) alike.
    pub fn fit_for_pin(&self) -> Result<(), String> {
        if !self.carries_api {
            return Err(self.api_reason());
        }
        if let Some(first) = self.undeclared_uses.first() {
            return Err(format!(
                "uses what api.toml does not declare ({}; first: {first})",
                self.undeclared_uses.len()
            ));
        }
        match &self.core {
            CoreVerdict::Serves { .. } => {}
            CoreVerdict::Fails { missing, .. } => {
                return Err(format!(
                    "has a native core that does not serve the module: {}",
                    missing.first().map_or("", String::as_str)
                ));
            }
            CoreVerdict::Unknown { reason } => {
                return Err(format!(
                    "has a native core that could not be checked: {reason}"
                ));
            }
        }
        if let Some(first) = self.user_misses.first() {
            return Err(format!(
                "has a core that breaks a recorded user of the package ({} uses; first: {first})",
                self.user_misses.len()
            ));
        }
        if let Smoke::Failed { output } = &self.smoke {
            return Err(format!("fails the consumer's smoke: {output}"));
        }
        Ok(())
    }

    /// `lacks the API: 8 mismatches (FieldSchema: ... )`.
    pub fn api_reason(&self) -> String {
        match (&self.module_sha256, self.api_mismatches.first()) {
            (None, _) => "has no such module in its wheel".to_owned(),
            (Some(_), Some(first)) => format!(
                "lacks the API ({} mismatches; first: {})",
                self.api_mismatches.len(),
                first
            ),
            (Some(_), None) => "lacks the API".to_owned(),
        }
    }

    /// Changes a caller written against the baseline can break on.
    pub fn breaking_changes(&self) -> Vec<&Change> {
        self.changes.iter().filter(|c| c.breaks_calls()).collect()
    }
}

/// Everything [`check`] needs besides the release.
pub struct Context<'a> {
    pub api: &'a Api,
    pub reader: &'a Reader,
    /// Each image's side (its core's record and modules), the layer a release's module is
    /// checked in (`one-file overlay`, `fill`; none for pin and check), and the package whose
    /// releases its layer takes.
    pub sides: &'a [(ImageSide, Option<&'static str>, String)],
    /// The baseline module's facts (the pinned module).
    pub baseline: Option<&'a ModuleFacts>,
    /// Runs the consumer's scenarios; `None`: not asked for (`--smoke`).
    pub smoker: Option<&'a super::smoke::Smoker>,
    /// Each pin image's recorded users (`consumers/`), by image id.
    pub users: &'a [(String, UserRecord)],
}

/// Checks one release's wheel.
pub fn check(cx: &Context, wheel: &Wheel) -> Result<ReleaseReport, LoadError> {
    let api = cx.api;
    let module = mooncake_sos_pysource::source::module_member(&api.upstream.module);
    let mut report = ReleaseReport {
        package: wheel.package.clone(),
        version: wheel.version.clone(),
        wheel: wheel.file.clone(),
        wheel_sha256: wheel.sha256.clone(),
        module_sha256: None,
        carries_api: false,
        api_mismatches: Vec::new(),
        undeclared_uses: Vec::new(),
        core: CoreVerdict::Unknown {
            reason: "the wheel has no such module".into(),
        },
        user_misses: Vec::new(),
        layers: Vec::new(),
        changes: Vec::new(),
        smoke: Smoke::NotRun {
            reason: if api.scenarios.is_empty() {
                "api.toml declares no [[scenario]]".into()
            } else {
                "not asked for (--smoke)".into()
            },
        },
    };
    let Some(mut source) = ModuleSource::read_wheel_if_present(&wheel.path, &api.upstream.module)?
    else {
        return Ok(report);
    };
    // Messages name the module's file (the release is named beside them), never the
    // cache's path on this machine.
    source.display = module;
    report.module_sha256 = Some(source.sha256.clone());
    let (symbols, surface) = mooncake_sos_pysource::verify_with_surface(api, &source)?;
    report.carries_api = symbols.ok();
    report.api_mismatches = symbols.lines();
    report.undeclared_uses = surface.failure_lines();
    if let Some(base) = cx.baseline {
        let facts = mooncake_sos_pysource::extract::extract(&source)?;
        report.changes = diff(api, base, &facts);
    }
    for (side, layer, package) in cx.sides {
        let Some(layer) = layer.filter(|_| *package == wheel.package) else {
            continue;
        };
        let mut one = side.clone();
        if layer == "one-file overlay" {
            // The module alone: the base's modules and this file, nothing else.
            one.modules = side
                .core
                .modules
                .keys()
                .map(|m| (m.clone(), "the base".to_owned()))
                .collect();
            one.modules
                .insert(api.upstream.module.clone(), "the overlay".into());
            one.shadowing.clear();
        }
        let mut found = images::check(&[one], &surface.file, &surface.uses);
        // A missing module fails at import, before any native use: it goes first.
        found.sort_by_key(|f| !f.subject.starts_with("sibling"));
        let findings: Vec<String> = found
            .iter()
            .map(|f| {
                format!(
                    "{}: {}: expected {}, found {}",
                    f.origin, f.subject, f.expected, f.found
                )
            })
            .collect();
        report.layers.push(LayerVerdict {
            image: side.image.clone(),
            layer: layer.to_owned(),
            base: side.core.label(),
            works: findings.is_empty(),
            findings,
        });
    }
    report.core = if !report.carries_api {
        CoreVerdict::Unknown {
            reason: "not checked: the module lacks the API".into(),
        }
    } else {
        match cx.reader.read(&wheel.path, &api.upstream.native_module) {
            Ok(core) => {
                report.user_misses = user_misses(cx, &wheel.package, &core);
                core_verdict(api, &core, &surface.file, &surface.uses)
            }
            Err(e) => CoreVerdict::Unknown {
                reason: without_temp_paths(
                    &e.message
                        .replace(&wheel.path.display().to_string(), &wheel.file),
                ),
            },
        }
    };
    // Only where the wheel runs here: its module carries the API and its core loads.
    if let Some(smoker) = cx.smoker.filter(|_| !api.scenarios.is_empty()) {
        report.smoke = match &report.core {
            CoreVerdict::Serves { .. } | CoreVerdict::Fails { .. } => smoker.run(wheel),
            CoreVerdict::Unknown { .. } => Smoke::NotRun {
                reason: "its core does not load here (see core)".into(),
            },
        };
    }
    Ok(report)
}

/// Each pin image's recorded users across a pin from the image's base core (its side's core,
/// see [`super::run`]) to this release's core, when the image pins this release's package.
fn user_misses(cx: &Context, package: &str, core: &CoreSurface) -> Vec<String> {
    let mut misses = Vec::new();
    for (image, user) in cx.users {
        let base = cx
            .sides
            .iter()
            .find(|(side, _, p)| side.image == *image && p == package);
        if let Some((side, _, _)) = base {
            misses.extend(users_check::check(image, user, &side.core, core).failures);
        }
    }
    misses
}

/// The release's module and the consumer's declared uses over the release's own core.
fn core_verdict(
    api: &Api,
    core: &CoreSurface,
    file: &str,
    uses: &[mooncake_sos_pysource::surface::Use],
) -> CoreVerdict {
    let mut needs = requirements(file, uses);
    needs.extend(from_manifest(&api.native));
    let verdict = serve(core, &needs);
    let mut missing: Vec<String> = verdict.missing.iter().map(|m| m.line()).collect();
    // Siblings the module imports at module level must be in the wheel too.
    for u in uses.iter().filter(|u| u.required()) {
        if let mooncake_sos_pysource::surface::Target::Sibling { module } = &u.target
            && !core.modules.contains_key(module)
            && core.modules.get(module) != Some(&ModuleKind::Extension)
        {
            missing.push(format!(
                "sibling {module}: not in the wheel [{file}:{}]",
                u.line
            ));
        }
    }
    missing.dedup();
    if missing.is_empty() {
        CoreVerdict::Serves { core: core.label() }
    } else {
        CoreVerdict::Fails {
            core: core.label(),
            missing,
        }
    }
}

/// A message with the throwaway venv's paths (`/tmp/mooncake-sos-core-XXXX/venv/.../
/// site-packages/`) cut to `<venv>/`, so that the report is the same on every run.
fn without_temp_paths(message: &str) -> String {
    let mut out = String::new();
    let mut rest = message;
    while let Some(at) = rest.find("/mooncake-sos-core-") {
        let start = rest[..at]
            .rfind(|c: char| c.is_whitespace() || c == '\'' || c == '"')
            .map_or(0, |i| i + 1);
        out.push_str(&rest[..start]);
        let tail = &rest[at..];
        match tail.find("site-packages/") {
            Some(end) if !tail[..end].contains(char::is_whitespace) => {
                out.push_str("<venv>/");
                rest = &tail[end + "site-packages/".len()..];
            }
            _ => {
                out.push_str("<venv>");
                let end = tail.find(char::is_whitespace).unwrap_or(tail.len());
                rest = &tail[end..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A release whose module carries the API and whose core serves it, but whose core breaks
    /// sglang's recorded use, is not fit for the pin, and the reason names the use.
    #[test]
    fn a_core_breaking_a_recorded_user_is_not_fit_for_a_pin() {
        let mut report = ReleaseReport {
            package: "mooncake-transfer-engine-cuda13".into(),
            version: "9.9.9".into(),
            wheel: "w.whl".into(),
            wheel_sha256: String::new(),
            module_sha256: Some(String::new()),
            carries_api: true,
            api_mismatches: Vec::new(),
            undeclared_uses: Vec::new(),
            core: CoreVerdict::Serves { core: "c".into() },
            user_misses: Vec::new(),
            layers: Vec::new(),
            changes: Vec::new(),
            smoke: Smoke::NotRun { reason: "-".into() },
        };
        assert_eq!(report.fit_for_pin(), Ok(()));
        let miss = "sglang/x.py:7: mooncake.engine.TransferEngine.initialize: image cuda: served \
                    by the base core 0.3.11.post1, absent from the pinned 9.9.9";
        report.user_misses.push(miss.into());
        assert_eq!(
            report.fit_for_pin(),
            Err(format!(
                "has a core that breaks a recorded user of the package (1 uses; first: {miss})"
            ))
        );
    }
}
