//! The fill region (the ROCm image): copy the pure-Python files the base image lacks from a
//! release wheel, its subpackages' too, leaving every file already installed (the HIP-linked
//! native modules) alone and never shadowing a native module with a package.

use super::docker::{DockerCommon, comment};
use super::{Output, RenderError};
use askama::Template;
use mooncake_sos_manifest::model::{Api, Image, Layer};

#[derive(Template)]
#[template(path = "fill.dockerfile", escape = "none")]
struct FillTemplate {
    c: DockerCommon,
    intro: String,
    fill_package: String,
    fill_version: String,
    package: String,
}

pub const REGION: &str = "fill";

pub fn render(api: &Api, image: &Image) -> Result<Output, RenderError> {
    let (fill_package, fill_version) = match &image.layer {
        Layer::Fill { package, version } => (package, version),
        _ => {
            return Err(RenderError(format!("image {} is not a fill", image.id)));
        }
    };
    let template = FillTemplate {
        c: DockerCommon::new(
            api,
            image,
            "build mooncake at that release or later and remove this region.",
        ),
        intro: comment(&format!(
            "{}: mooncake is built from source in this base image and CMake's install rules list \
             Python files by name, so {} and other pure-Python files are missing. Fill every \
             missing *.py of the {} package and its subpackages from the {fill_package} wheel; \
             files already installed, above all the HIP-linked native modules, are never touched.",
            api.name,
            api.upstream.module,
            api.upstream.package()
        )),
        fill_package: fill_package.clone(),
        fill_version: fill_version.clone(),
        package: api.upstream.package().to_string(),
    };
    Ok(Output::Region {
        path: image.dockerfile.clone(),
        region: REGION,
        body: super::lines(template.render()?),
    })
}
