//! The overlay region (the CUDA image): download the pinned module and the file set
//! (`[[upstream.file]]`), verify every sha256, install them over the base image's package,
//! then run the import check.

use super::docker::{DockerCommon, comment};
use super::{Output, RenderError};
use askama::Template;
use mooncake_sos_manifest::model::{Api, Image, Layer};

#[derive(Template)]
#[template(path = "overlay.dockerfile", escape = "none")]
struct OverlayTemplate {
    c: DockerCommon,
    intro: String,
    repo: String,
    raw_base_url: String,
    commit: String,
    sha256: String,
    package: String,
    /// The module first, then the file set.
    files: Vec<OverlayFile>,
}

/// One downloaded file: its path in the repository, where it goes below site-packages and
/// below the package's directory, and the sha256 it must have (the module's: the ARG).
struct OverlayFile {
    path: String,
    install: String,
    in_package: String,
    sha256: String,
}

pub const REGION: &str = "overlay";

pub fn render(api: &Api, image: &Image) -> Result<Output, RenderError> {
    let (base_package, base_version) = match &image.layer {
        Layer::Overlay {
            base_package,
            base_version,
        } => (base_package, base_version),
        _ => {
            return Err(RenderError(format!("image {} is not an overlay", image.id)));
        }
    };
    let u = &api.upstream;
    let package = u.package();
    let drop_how = format!(
        "next: strategy pin (api.toml [image.{}] pin_version, with a [[release]] of its wheels' \
         sha256), which installs {base_package} at that release, hash-checked, instead of this \
         overlay.",
        image.id
    );
    let c = DockerCommon::new(api, image, &drop_how);
    let install = format!("{}.py", u.module.replace('.', "/"));
    let module = OverlayFile {
        path: u.path.clone(),
        in_package: install[package.len() + 1..].to_owned(),
        install,
        sha256: c.var("SHA256"),
    };
    let mut files = vec![module];
    files.extend(u.files.iter().map(|f| OverlayFile {
        path: f.path.clone(),
        in_package: f.install[package.len() + 1..].to_owned(),
        install: f.install.clone(),
        sha256: f.sha256.clone(),
    }));
    let prs: Vec<String> = u.prs.iter().map(|p| format!("#{p}")).collect();
    let template = OverlayTemplate {
        c,
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
        package: package.to_owned(),
        files,
    };
    Ok(Output::Region {
        path: image.dockerfile.clone(),
        region: REGION,
        body: super::lines(template.render()?),
    })
}
