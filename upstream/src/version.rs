//! Wheel file names (`{dist}-{version}-{python}-{abi}-{platform}.whl`) and release order.
//! Hand-written: the forms mooncake releases use (`N.N.N`, `aN`/`bN`/`rcN`, `.postN`,
//! `.devN`) are a few lines; a full PEP 440 crate would add far more than this checks.

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
    /// From a wheel's file name; `None` when it does not follow the wheel naming rule.
    pub fn from_wheel(path: &Path) -> Option<Release> {
        let name = path.file_name()?.to_str()?.strip_suffix(".whl")?;
        let mut parts = name.split('-');
        let package = parts.next()?.replace('_', "-");
        let version = parts.next()?.to_owned();
        // python, abi, platform tags (and an optional build tag before them).
        (parts.count() >= 3 && !package.is_empty() && version_key(&version).is_some())
            .then_some(Release { package, version })
    }
}

/// Phase order inside one release number: dev < a < b < rc < final < post.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct VersionKey {
    release: Vec<u64>,
    pre: (u8, u64),
    post: Option<u64>,
    dev: Option<u64>,
}

/// The sort key of a version, `None` if it is not in a supported form.
pub fn version_key(version: &str) -> Option<VersionKey> {
    // The release ends at the first char that is neither a digit nor a dot starting
    // another number ("0.3.12.post1": the release is "0.3.12").
    let b = version.as_bytes();
    let mut end = 0;
    while end < b.len()
        && (b[end].is_ascii_digit()
            || (b[end] == b'.' && b.get(end + 1).is_some_and(u8::is_ascii_digit)))
    {
        end += 1;
    }
    let release: Vec<u64> = version[..end]
        .split('.')
        .map(|n| n.parse().ok())
        .collect::<Option<_>>()?;
    let mut rest = &version[end..];
    let mut take = |tag: &str| -> Option<Option<u64>> {
        let after = rest.strip_prefix(tag)?;
        let digits = after
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(after.len());
        rest = &after[digits..];
        Some(after[..digits].parse().ok().or(Some(0)))
    };
    let mut pre = (3, 0);
    for (rank, tag) in [(0, "a"), (1, "b"), (2, "rc")] {
        if let Some(n) = take(tag) {
            pre = (rank, n.unwrap_or(0));
            break;
        }
    }
    let post = take(".post").flatten();
    let dev = take(".dev").flatten();
    if !rest.is_empty() {
        return None;
    }
    // A dev release of a final sorts before that final.
    if dev.is_some() && pre.0 == 3 && post.is_none() {
        pre = (0, 0);
    }
    Some(VersionKey {
        release,
        pre,
        post,
        dev: dev.or(Some(u64::MAX)),
    })
}

/// Version order, then package name; unparsable versions last, by text.
pub fn compare(a: &Release, b: &Release) -> Ordering {
    let key = |r: &Release| version_key(&r.version);
    match (key(a), key(b)) {
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
    }
}
