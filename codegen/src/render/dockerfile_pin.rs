//! The pin region (an image whose base ships a release lacking the API, or a core that cannot
//! serve the consumer): install the base package at a release that carries it, hash-checked
//! (pip --require-hashes against every wheel's sha256 of its `[[release]]`), so module and
//! native core come from one wheel; then the check step.

use super::docker::{DockerCommon, comment};
use super::{Output, RenderError};
use askama::Template;
use mooncake_sos_manifest::model::{Api, Image, Wheel};

#[derive(Template)]
#[template(path = "pin.dockerfile", escape = "none")]
struct PinTemplate<'a> {
    c: DockerCommon,
    intro: String,
    next: String,
    /// `package==version`.
    requirement: String,
    package: &'a str,
    version: &'a str,
    base_version: &'a str,
    wheels: &'a [Wheel],
}

pub const REGION: &str = "pin";

pub fn render(api: &Api, image: &Image) -> Result<Output, RenderError> {
    let Some((base_package, base_version, release)) = image.layer.pin() else {
        return Err(RenderError(format!("image {} is not a pin", image.id)));
    };
    let version = &release.version;
    let template = PinTemplate {
        c: DockerCommon::new(api, image, ""),
        intro: comment(&format!(
            "{}: the base image ships {base_package}=={base_version}, which cannot serve {} \
             (api.toml [image.{}]). Install the whole {base_package}=={version} wheel over it, \
             hash-checked against the {} wheel sha256 of api.toml's [[release]], so the module \
             and the native core come from one release. The whole package moves, not only the \
             module: everything else in the image that imports {} (its transfer engine, \
             {}.engine, above all) and the wheel's mooncake_master get {version} too.",
            api.name,
            api.upstream.module,
            image.id,
            release.wheels.len(),
            api.upstream.package(),
            api.upstream.package(),
        )),
        next: next_comment(api, base_package, version),
        requirement: release.requirement(),
        package: base_package,
        version,
        base_version,
        wheels: &release.wheels,
    };
    Ok(Output::Region {
        path: image.dockerfile.clone(),
        region: REGION,
        body: super::lines(template.render()?),
    })
}

/// Which transition comes next for a pin image, and when.
fn next_comment(api: &Api, package: &str, version: &str) -> String {
    comment(&format!(
        "Next: strategy check, once {}: for this image, once the base image ships {package} >= \
         {version}. Then nothing is installed and only the checks run (api.toml: strategy = \
         \"check\", base_version = the release it ships; then cargo xtask regen).",
        api.drop.condition.trim_end_matches('.')
    ))
}
