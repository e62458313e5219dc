//! Per image: its strategy now, the transition the releases now allow (overlay -> pin at a
//! release, pin -> check once the base image ships one that carries the API), what blocks the
//! others and why, and newer releases that would break what the image relies on.

use super::release::ReleaseReport;
use mooncake_sos_manifest::model::{CoreSource, Image, Layer, Strategy};
use mooncake_sos_pysource::version::{Release, compare};
use serde::Serialize;
use std::cmp::Ordering;

#[derive(Clone, Debug, Serialize)]
pub struct ImagePlan {
    pub image: String,
    pub strategy: Strategy,
    /// The package whose releases decide.
    pub package: String,
    /// The release the image stands on now.
    pub version: String,
    /// The line of `[image.<id>]`'s `strategy` in api.toml (for annotations).
    pub line: usize,
    pub transition: Option<Step>,
    pub blocked: Vec<Step>,
    /// Newer releases that would break what the image relies on, each with why.
    pub breaking: Vec<Step>,
}

/// A strategy (and release) the image could move to, and why it can or cannot.
#[derive(Clone, Debug, Serialize)]
pub struct Step {
    pub to: Strategy,
    pub version: Option<String>,
    pub reason: String,
}

impl Step {
    /// `pin at 0.3.12`, or the strategy alone.
    pub fn target(&self) -> String {
        match &self.version {
            Some(v) => format!("{} at {v}", self.to),
            None => self.to.to_string(),
        }
    }
}

impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.target(), self.reason)
    }
}

impl ImagePlan {
    /// Whether watch asks for something: a transition, or a newer release breaking the image.
    pub fn actionable(&self) -> bool {
        self.transition.is_some() || !self.breaking.is_empty()
    }

    /// One sentence: what comes next for the image, and when.
    pub fn next(&self) -> String {
        match &self.transition {
            Some(s) => format!(
                "{} -> {}{}: possible now ({})",
                self.strategy,
                s.to,
                s.version
                    .as_ref()
                    .map_or(String::new(), |v| format!(" at {v}")),
                s.reason
            ),
            None => match self.blocked.first() {
                Some(b) => format!("{} -> {}: blocked: {}", self.strategy, b.to, b.reason),
                None => format!("{}: nothing further", self.strategy),
            },
        }
    }
}

fn newer(r: &ReleaseReport, than: &str) -> bool {
    let a = Release {
        package: String::new(),
        version: r.version.clone(),
    };
    let b = Release {
        package: String::new(),
        version: than.to_owned(),
    };
    compare(&a, &b) == Ordering::Greater
}

/// The plan of `image` from the releases of its packages (`releases`, version order).
pub fn plan(image: &Image, line: usize, releases: &[ReleaseReport]) -> ImagePlan {
    let of = |package: &str| -> Vec<&ReleaseReport> {
        releases.iter().filter(|r| r.package == package).collect()
    };
    let at = |package: &str, version: &str| {
        releases
            .iter()
            .find(|r| r.package == package && r.version == version)
    };
    let mut p = ImagePlan {
        image: image.id.clone(),
        strategy: image.layer.strategy(),
        package: image.layer.package().to_owned(),
        version: String::new(),
        line,
        transition: None,
        blocked: Vec::new(),
        breaking: Vec::new(),
    };
    match &image.layer {
        Layer::Overlay {
            base_package,
            base_version,
        } => {
            p.version = base_version.clone();
            let check = shipped_check(
                &image.base_tag,
                base_package,
                base_version,
                at(base_package, base_version),
            );
            let candidates = of(base_package);
            let pin = choose_pin(&candidates);
            match check {
                Ok(step) => p.transition = Some(step),
                Err(step) => p.blocked.push(step),
            }
            match pin {
                Ok(step) if p.transition.is_none() => p.transition = Some(step),
                Ok(_) => {}
                Err(step) if candidates.is_empty() => p.blocked.push(step),
                // Each release says why below.
                Err(_) => {}
            }
            // Why each other release is not the one.
            let chosen = p.transition.as_ref().and_then(|s| s.version.clone());
            for r in candidates {
                if Some(&r.version) == chosen.as_ref() {
                    continue;
                }
                let reason = match r.fit_for_pin() {
                    Err(why) => why,
                    Ok(()) => changes_reason(r)
                        .unwrap_or_else(|| "fit, but an older release is chosen".into()),
                };
                p.blocked.push(Step {
                    to: Strategy::Pin,
                    version: Some(r.version.clone()),
                    reason,
                });
            }
        }
        Layer::Pin {
            base_package,
            base_version,
            release,
        } => {
            p.version = release.version.clone();
            match shipped_check(
                &image.base_tag,
                base_package,
                base_version,
                at(base_package, base_version),
            ) {
                Ok(step) => p.transition = Some(step),
                Err(step) => p.blocked.push(step),
            }
            p.breaking = breaking(&of(base_package), &release.version, Strategy::Pin);
        }
        Layer::Check {
            base_package,
            base_version,
        } => {
            p.version = base_version.clone();
            p.breaking = breaking(&of(base_package), base_version, Strategy::Check);
        }
        Layer::Fill { package, version } => {
            p.version = version.clone();
            let core = match &image.core.source {
                CoreSource::Declared(source) => source.clone(),
                CoreSource::BaseWheel | CoreSource::PinnedRelease => image.core.label(),
            };
            p.blocked.push(Step {
                to: Strategy::Pin,
                version: None,
                reason: format!(
                    "the image's native core is {} ({core}); pinning a wheel would replace it with the wheel's",
                    image.core.label()
                ),
            });
            p.blocked.push(Step {
                to: Strategy::Check,
                version: None,
                reason: "api.toml declares that the base image lacks the pure-Python files; the index cannot show a base image's files: adopt check once its base ships them".into(),
            });
            for r in of(package).into_iter().filter(|r| newer(r, version)) {
                let fill = r.layers.iter().find(|l| l.image == image.id);
                let why = if !r.carries_api {
                    Some(r.api_reason())
                } else {
                    fill.filter(|l| !l.works)
                        .map(|l| format!("its files over the image's core: {}", l.findings[0]))
                };
                if let Some(reason) = why {
                    p.breaking.push(Step {
                        to: Strategy::Fill,
                        version: Some(r.version.clone()),
                        reason,
                    });
                }
            }
        }
    }
    p
}

/// Releases newer than `version` that an image standing on `version` could not move to:
/// not fit for a pin, or changing what callers of the pinned module rely on.
fn breaking(releases: &[&ReleaseReport], version: &str, to: Strategy) -> Vec<Step> {
    releases
        .iter()
        .filter(|r| newer(r, version))
        .filter_map(|r| {
            let reason = match r.fit_for_pin() {
                Err(why) => why,
                Ok(()) => {
                    let broken: Vec<String> =
                        r.breaking_changes().iter().map(|c| c.line()).collect();
                    if broken.is_empty() {
                        return None;
                    }
                    format!("it breaks callers: {}", broken.join("; "))
                }
            };
            Some(Step {
                to,
                version: Some(r.version.clone()),
                reason,
            })
        })
        .collect()
}

/// overlay -> check: the base image's own wheel must carry the API and serve it.
fn shipped_check(
    tag: &str,
    package: &str,
    version: &str,
    shipped: Option<&ReleaseReport>,
) -> Result<Step, Step> {
    let step = |reason: String| Step {
        to: Strategy::Check,
        version: Some(version.to_owned()),
        reason,
    };
    match shipped {
        None => Err(step(format!(
            "the base image ({tag}) ships {package} {version}, which the index does not list"
        ))),
        Some(r) => match r.fit_for_pin() {
            Ok(()) => Ok(step(format!(
                "the base image ({tag}) ships {package} {version}, which carries the API and whose core serves it"
            ))),
            Err(why) => Err(step(format!(
                "the base image ({tag}) ships {package} {version}, which {why}"
            ))),
        },
    }
}

/// overlay -> pin: the newest release fit for a pin whose module changes nothing the consumer
/// can feel (only additions); else the newest fit one, its changes named.
fn choose_pin(releases: &[&ReleaseReport]) -> Result<Step, Step> {
    let fit: Vec<&&ReleaseReport> = releases
        .iter()
        .filter(|r| r.fit_for_pin().is_ok())
        .collect();
    let quiet = fit.iter().rev().find(|r| changes_reason(r).is_none());
    match quiet.or(fit.last()) {
        Some(r) => Ok(Step {
            to: Strategy::Pin,
            version: Some(r.version.clone()),
            reason: match changes_reason(r) {
                None => format!(
                    "{} {} carries the API, its core serves it, and its module changes nothing the pinned one declares",
                    r.package, r.version
                ),
                Some(changes) => format!(
                    "{} {} carries the API and its core serves it; but {changes}",
                    r.package, r.version
                ),
            },
        }),
        None => Err(Step {
            to: Strategy::Pin,
            version: None,
            reason: "no release carries the API with a core that serves it".into(),
        }),
    }
}

/// The changes from the pinned module that are not plain additions, in a few words.
fn changes_reason(r: &ReleaseReport) -> Option<String> {
    let felt: Vec<String> = r
        .changes
        .iter()
        // An added constant changes nothing a caller sees; everything else may.
        .filter(|c| !(c.what == "constant" && c.change == "added"))
        .map(|c| c.line())
        .collect();
    (!felt.is_empty()).then(|| format!("it changes {}", felt.join("; ")))
}
