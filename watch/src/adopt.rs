//! `adopt`: moves an image to another strategy, but only where watch's verdict allows it,
//! and says how api.toml changes (`mooncake_sos_manifest::edit::move_image` writes it): the image's `strategy`,
//! its `pin_version`, and for a pin the release's `[[release]]` with every wheel's sha256.

use super::Report;
use super::release::ReleaseReport;
use mooncake_sos_manifest::model::{Api, Layer, Strategy};

/// Where an image is to go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    Pin { version: String },
    Check,
    Overlay,
}

impl Target {
    pub fn strategy(&self) -> Strategy {
        match self {
            Target::Pin { .. } => Strategy::Pin,
            Target::Check => Strategy::Check,
            Target::Overlay => Strategy::Overlay,
        }
    }
}

/// Why watch's verdict allows the move; `Err`: why it does not.
pub fn decide(api: &Api, report: &Report, image: &str, target: &Target) -> Result<String, String> {
    let img = api
        .images
        .iter()
        .find(|i| i.id == image)
        .ok_or_else(|| format!("api.toml has no [image.{image}]"))?;
    let (package, base_version) = match &img.layer {
        Layer::Overlay {
            base_package,
            base_version,
        }
        | Layer::Pin {
            base_package,
            base_version,
            ..
        }
        | Layer::Check {
            base_package,
            base_version,
        } => (base_package, base_version),
        Layer::Fill { .. } => {
            return Err(format!(
                "image `{image}` is a fill image: its native core is built in its base, so no wheel's release can stand for it"
            ));
        }
    };
    if img.layer.strategy() == target.strategy() && !matches!(target, Target::Pin { .. }) {
        return Err(format!(
            "image `{image}` already has strategy {}",
            target.strategy()
        ));
    }
    let release = |version: &str| -> Result<&ReleaseReport, String> {
        report
            .packages
            .iter()
            .flat_map(|p| &p.releases)
            .find(|r| &r.package == package && r.version == version)
            .ok_or_else(|| format!("watch found no release {package} {version} on the index"))
    };
    match target {
        Target::Pin { version } => {
            if let Layer::Pin { release: r, .. } = &img.layer
                && &r.version == version
            {
                return Err(format!("image `{image}` already pins {package} {version}"));
            }
            let r = release(version)?;
            r.fit_for_pin()
                .map(|()| format!("{package} {version} carries the API and its core serves it"))
                .map_err(|why| format!("{package} {version} {why}"))
        }
        Target::Check => {
            let r = release(base_version)?;
            r.fit_for_pin()
                .map(|()| {
                    format!(
                        "the base image ({}) ships {package} {base_version}, which carries the API and whose core serves it",
                        img.base_tag
                    )
                })
                .map_err(|why| {
                    format!(
                        "the base image ({}) ships {package} {base_version}, which {why}",
                        img.base_tag
                    )
                })
        }
        Target::Overlay => Ok(format!(
            "the overlay puts the pinned module ({}) over the base's {package} {base_version}; `verify` and `bump` check it against that core's record",
            api.upstream.short_commit()
        )),
    }
}
