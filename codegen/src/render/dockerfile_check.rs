//! The check region (an image whose base already ships a release that carries the API):
//! no layer, only the check step.

use super::docker::{DockerCommon, comment};
use super::{Output, RenderError};
use askama::Template;
use mooncake_sos_manifest::model::{Api, Image, Layer};

#[derive(Template)]
#[template(path = "check.dockerfile", escape = "none")]
struct CheckTemplate {
    c: DockerCommon,
    intro: String,
    next: String,
}

pub const REGION: &str = "check";

pub fn render(api: &Api, image: &Image) -> Result<Output, RenderError> {
    let Layer::Check {
        base_package,
        base_version,
    } = &image.layer
    else {
        return Err(RenderError(format!("image {} is not a check", image.id)));
    };
    let template = CheckTemplate {
        c: DockerCommon::new(api, image, ""),
        intro: comment(&format!(
            "{}: the base image ships {base_package}=={base_version}, whose {} and native core \
             carry what the consumer needs: nothing is installed; the checks below prove it on \
             every build.",
            api.name, api.upstream.module,
        )),
        next: comment(&format!(
            "Next: nothing while the base image ships {base_package} >= {base_version}. A base \
             image that goes back below it fails these checks: then strategy pin at a release \
             that carries the API."
        )),
    };
    Ok(Output::Region {
        path: image.dockerfile.clone(),
        region: REGION,
        body: super::lines(template.render()?),
    })
}
