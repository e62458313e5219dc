//! The overlay region (the CUDA image): download the pinned module, verify its sha256,
//! install it over the base image's package, then run the import check.

use super::docker::{DockerCommon, comment};
use super::{Output, RenderError};
use crate::model::{Api, Image, Layer};
use askama::Template;

#[derive(Template)]
#[template(path = "overlay.dockerfile", escape = "none")]
struct OverlayTemplate {
    c: DockerCommon,
    intro: String,
    repo: String,
    raw_base_url: String,
    commit: String,
    sha256: String,
    upstream_path: String,
    package: String,
    file_name: String,
}

pub const REGION: &str = "overlay";

pub fn render(api: &Api, image: &Image) -> Result<Output, RenderError> {
    let (base_package, base_version) = match &image.layer {
        Layer::Overlay {
            base_package,
            base_version,
        } => (base_package, base_version),
        Layer::Fill { .. } => {
            return Err(RenderError(format!("image {} is not an overlay", image.id)));
        }
    };
    let u = &api.upstream;
    let drop_how = format!("pin the base image's {base_package} to it instead of this overlay.");
    let prs: Vec<String> = u.prs.iter().map(|p| format!("#{p}")).collect();
    let template = OverlayTemplate {
        c: DockerCommon::new(api, image, &drop_how),
        intro: comment(&format!(
            "{}: the base image's {base_package}=={base_version} lacks the API of {}. Overlay that \
             one module, pinned in api.toml to {}@{} (PRs {}), over the installed package; the \
             download must match the pinned sha256.",
            api.name,
            u.module,
            u.repo,
            u.short_commit(),
            prs.join(" ")
        )),
        repo: u.repo.clone(),
        raw_base_url: u.raw_base_url.clone(),
        commit: u.commit.clone(),
        sha256: u.sha256.clone(),
        upstream_path: u.path.clone(),
        package: u.package().to_string(),
        file_name: u.file_name().to_string(),
    };
    Ok(Output::Region {
        path: image.dockerfile.clone(),
        region: REGION,
        body: super::lines(template.render()?),
    })
}
