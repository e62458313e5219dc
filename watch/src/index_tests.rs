//! The cache's bound and pip's listing.
use super::{Index, Wheel};
use std::time::{Duration, SystemTime};

#[test]
fn the_cache_keeps_within_its_bound_least_recently_used_first_never_this_runs() {
    let dir = tempfile::tempdir().unwrap();
    let index = Index {
        python: "python3".into(),
        url: None,
        cache_dir: dir.path().to_owned(),
        max_cache_bytes: 250,
        offline: true,
        timeout: Duration::from_secs(1),
    };
    let mut wheels = Vec::new();
    for (i, name) in ["a", "b", "c"].iter().enumerate() {
        let path = index.blob(
            &format!("{name}{name}"),
            &format!("{name}-1-py3-none-any.whl"),
        );
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, [0u8; 100]).unwrap();
        let age = SystemTime::now() - Duration::from_secs(100 * (3 - i as u64));
        std::fs::File::options()
            .append(true)
            .open(&path)
            .unwrap()
            .set_modified(age)
            .unwrap();
        wheels.push(Wheel {
            package: (*name).into(),
            version: "1".into(),
            file: String::new(),
            sha256: String::new(),
            size: 100,
            url: None,
            path,
            downloaded: false,
        });
    }
    // 300 bytes over a 250-byte bound: the oldest goes, unless this run uses it.
    let removed = index.trim(&[&wheels[0]]);
    assert_eq!(removed.len(), 1, "{removed:?}");
    assert!(wheels[0].path.exists() && !wheels[1].path.exists() && wheels[2].path.exists());
    assert!(index.trim(&[]).is_empty(), "within the bound now");
}

fn index_in(dir: &std::path::Path) -> Index {
    Index {
        python: "python3".into(),
        url: None,
        cache_dir: dir.to_owned(),
        max_cache_bytes: 1 << 20,
        offline: true,
        timeout: Duration::from_secs(1),
    }
}

/// An oversize wheel (here a sparse 1.1 GB file: no disk used) is refused and leaves nothing
/// in `partial/`; before, it stayed there, outside the cache's bound, run after run.
#[test]
fn a_refused_download_leaves_nothing_in_partial() {
    let dir = tempfile::tempdir().unwrap();
    let index = index_in(dir.path());
    let partial = dir.path().join("partial/big-1");
    std::fs::create_dir_all(&partial).unwrap();
    let wheel = std::fs::File::create(partial.join("big-1-py3-none-any.whl")).unwrap();
    wheel.set_len(1_100_000_000).unwrap();
    let err = index.settle(&partial, "big", "1").unwrap_err();
    assert!(
        err.to_string()
            .contains("is larger than the 1024 MiB a wheel may be"),
        "{err}"
    );
    assert!(!partial.exists());
    // No wheel at all: refused, and gone too.
    std::fs::create_dir_all(&partial).unwrap();
    let err = index.settle(&partial, "big", "1").unwrap_err();
    assert!(err.to_string().contains("left no wheel"), "{err}");
    assert!(!partial.exists());
}

/// What a killed run left in `partial/` goes at the next trim once stale; a fresh entry (a
/// download that may resume) stays.
#[test]
fn trim_sweeps_stale_partial_downloads() {
    let dir = tempfile::tempdir().unwrap();
    let index = index_in(dir.path());
    let stale = dir.path().join("partial/a-1");
    let fresh = dir.path().join("partial/b-1");
    for d in [&stale, &fresh] {
        std::fs::create_dir_all(d).unwrap();
    }
    let old = SystemTime::now() - Duration::from_secs(7200);
    std::fs::File::open(&stale)
        .unwrap()
        .set_modified(old)
        .unwrap();
    let removed = index.trim(&[]);
    assert_eq!(removed, [stale.display().to_string()]);
    assert!(!stale.exists() && fresh.exists());
}

/// A cached wheel is trusted by its hash alone, taken on every use: altered in place (same
/// size, mtime and inode), it is no longer served; before, a stamp of its size, mtime and
/// inode stood in for the hash once it had matched.
#[test]
fn a_cached_wheel_altered_in_place_is_not_served() {
    let dir = tempfile::tempdir().unwrap();
    let index = index_in(dir.path());
    let downloaded = dir.path().join("p-1.0-py3-none-any.whl");
    std::fs::write(&downloaded, b"the wheel's bytes").unwrap();
    let wheel = index
        .keep("p", "1.0", &downloaded, "p-1.0-py3-none-any.whl")
        .unwrap();
    let record = index.index_dir().join("p").join("1.0.json");
    let key = index.answer_key(&["wheel", "p", "1.0"]);
    let json = serde_json::to_string(&wheel).unwrap();
    super::store(&record, &key, json.as_bytes(), "p 1.0").unwrap();
    let served = index.wheel("p", "1.0").unwrap();
    assert_eq!(
        (served.sha256, served.path.clone()),
        (wheel.sha256, wheel.path)
    );

    let before = std::fs::metadata(&served.path).unwrap();
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(&served.path)
        .unwrap();
    std::os::unix::fs::FileExt::write_all_at(&file, b"THE", 0).unwrap();
    file.set_modified(before.modified().unwrap()).unwrap();
    drop(file);
    let after = std::fs::metadata(&served.path).unwrap();
    use std::os::unix::fs::MetadataExt;
    assert_eq!(
        (after.len(), after.mtime(), after.mtime_nsec(), after.ino()),
        (
            before.len(),
            before.mtime(),
            before.mtime_nsec(),
            before.ino()
        )
    );
    let err = index.wheel("p", "1.0").unwrap_err();
    assert_eq!(
        err.to_string(),
        "p 1.0: error: --offline: this release's wheel is not in the cache; run once without --offline"
    );
}

/// What the index answered is served only as this tool kept it: a listing edited by hand
/// (a release dropped) is a miss.
#[test]
fn an_edited_listing_is_not_served() {
    let dir = tempfile::tempdir().unwrap();
    let index = index_in(dir.path());
    let record = index.index_dir().join("p.versions.json");
    let key = index.answer_key(&["versions", "p"]);
    super::store(&record, &key, br#"{"versions": ["1.0", "1.1"]}"#, "p").unwrap();
    assert_eq!(index.versions("p").unwrap(), ["1.0", "1.1"]);
    let text = std::fs::read_to_string(&record).unwrap();
    std::fs::write(&record, text.replace(", \"1.1\"", "")).unwrap();
    let err = index.versions("p").unwrap_err();
    assert_eq!(
        err.to_string(),
        "p: error: --offline: the cache has no listing of this package; run watch online once"
    );
}
