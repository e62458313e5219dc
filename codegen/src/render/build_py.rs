//! The pins region of docker/build.py: each variant's build args, so api.toml is the only
//! place an image tag or wheel version is written.

use super::docker::BASE_TAG_ARG;
use super::python::{Py, str_literal};
use super::{Output, RenderError};
use askama::Template;
use heck::ToShoutySnakeCase;
use mooncake_sos_manifest::model::{Api, Layer, RelPath};
use std::collections::BTreeMap;

#[derive(Template)]
#[template(path = "build_py.py", escape = "none")]
struct BuildPyTemplate {
    constant: String,
    variants: Vec<(String, String)>,
}

pub const REGION: &str = "pins";

/// One region per build.py named by an image (normally one file for all of them).
pub fn render(api: &Api) -> Result<Vec<Output>, RenderError> {
    let mut files: BTreeMap<&RelPath, Vec<(String, String)>> = BTreeMap::new();
    for image in &api.images {
        let Some(b) = &image.build_py else { continue };
        let mut args = vec![(BASE_TAG_ARG, Py::str(&image.base_tag))];
        if let Layer::Fill { version, .. } = &image.layer {
            args.push(("MOONCAKE_VERSION", Py::str(version)));
        }
        files
            .entry(&b.path)
            .or_default()
            .push((str_literal(&b.variant), Py::Dict(args).to_source(4)));
    }
    files
        .into_iter()
        .map(|(path, variants)| {
            let template = BuildPyTemplate {
                constant: format!("{}_PINS", api.name.to_shouty_snake_case()),
                variants,
            };
            Ok(Output::Region {
                path: path.clone(),
                region: REGION,
                body: super::lines(template.render()?),
            })
        })
        .collect()
}
