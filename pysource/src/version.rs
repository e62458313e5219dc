//! Wheel file names (`{dist}-{version}-{python}-{abi}-{platform}.whl`) and release order.
//! Versions are read by the manifest's own rule (`values::parse_version`, pep440_rs), so a
//! release the matrix names is one api.toml can record.

use mooncake_sos_manifest::model::values::{is_dist_name, parse_version};
use std::cmp::Ordering;
use std::path::Path;

/// A release as a wheel names it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Release {
    /// The distribution with `_` as `-`, e.g. `mooncake-transfer-engine-non-cuda`.
    pub package: String,
    pub version: String,
}

impl Release {
    /// From a wheel's file name; `None` when it does not follow the wheel naming rule (a
    /// distribution name of PEP 508's characters, a version api.toml can record: what the
    /// tables print of it cannot be markup).
    pub fn from_wheel(path: &Path) -> Option<Release> {
        let name = path.file_name()?.to_str()?.strip_suffix(".whl")?;
        let mut parts = name.split('-');
        let package = parts.next()?.replace('_', "-");
        let version = parts.next()?.to_owned();
        // python, abi, platform tags (and an optional build tag before them).
        (parts.count() >= 3 && is_dist_name(&package) && parse_version(&version).is_some())
            .then_some(Release { package, version })
    }
}

/// PEP 440 order, then package name; unparsable versions last, by text.
pub fn compare(a: &Release, b: &Release) -> Ordering {
    match (parse_version(&a.version), parse_version(&b.version)) {
        (Some(x), Some(y)) => x.cmp(&y),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => a.version.cmp(&b.version),
    }
    .then_with(|| a.package.cmp(&b.package))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted(versions: &[&str]) -> Vec<String> {
        let mut v: Vec<Release> = versions
            .iter()
            .map(|v| Release {
                package: "p".into(),
                version: (*v).into(),
            })
            .collect();
        v.sort_by(compare);
        v.into_iter().map(|r| r.version).collect()
    }

    #[test]
    fn orders_like_pep_440() {
        let want = [
            "0.3.9",
            "0.3.11",
            "0.3.11.post1",
            "0.3.12.dev1",
            "0.3.12rc1",
            "0.3.12",
            "0.3.12.post1",
            "0.3.13.post1",
            "0.3.14",
            "0.10",
        ];
        let mut shuffled = want.to_vec();
        shuffled.reverse();
        assert_eq!(sorted(&shuffled), want);
    }

    #[test]
    fn reads_wheel_names() {
        let r = Release::from_wheel(Path::new(
            "/w/mooncake_transfer_engine_non_cuda-0.3.12.post1-cp311-cp311-manylinux_2_28_x86_64.whl",
        ))
        .unwrap();
        assert_eq!(r.package, "mooncake-transfer-engine-non-cuda");
        assert_eq!(r.version, "0.3.12.post1");
        assert_eq!(Release::from_wheel(Path::new("x.whl")), None);
        assert_eq!(Release::from_wheel(Path::new("a-b-c-d-e.whl")), None);
        let markup = "x|<img src=y>\x1b[31m-1.0-py3-none-any.whl";
        assert_eq!(Release::from_wheel(Path::new(markup)), None);
    }
}
