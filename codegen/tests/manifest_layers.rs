//! What the image layers stand on, in the manifest: each image's native core (`core = {...}`
//! of a fill image; a pin image's pinned release) and the overlay's file set
//! (`[[upstream.file]]`). Valid declarations reach the model; bad ones are located errors.
//! Each case edits the repository's own api.toml.

mod common;

use mooncake_sos_manifest::load_str;
use mooncake_sos_manifest::model::{CoreSource, ImageCore, UpstreamFile};

const API: &str = include_str!("../../api.toml");
const SHA: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
const ROCM_CORE: &str = "core = { package = \"mooncake-transfer-engine-non-cuda\", version = \"0.3.12.post1\", source = ";

fn with_files(files: &str) -> String {
    API.replacen(
        "\n# The Python shim",
        &format!("\n{files}\n# The Python shim"),
        1,
    )
}

fn file(path: &str, sha256: &str) -> String {
    format!("[[upstream.file]]\npath = \"{path}\"\nsha256 = \"{sha256}\"\n")
}

/// The first error of `text`: its `line:col` and message; `at` is where it must point.
fn error_at(text: &str, at: &str, message: &str) {
    let offset = text
        .find(at)
        .unwrap_or_else(|| panic!("{at:?} not in the text"));
    common::first_error_at(text, offset, message);
}

#[test]
fn each_image_runs_on_a_core_derived_or_declared() {
    let api = load_str("api.toml", API).unwrap_or_else(|d| panic!("{d}"));
    let core = |id: &str| api.images.iter().find(|i| i.id == id).unwrap().core.clone();
    assert_eq!(
        core("cuda"),
        ImageCore {
            package: "mooncake-transfer-engine-cuda13".into(),
            version: "0.3.12.post1".into(),
            source: CoreSource::PinnedRelease,
        }
    );
    let rocm = core("rocm");
    assert_eq!(
        (rocm.package.as_str(), rocm.version.as_str()),
        ("mooncake-transfer-engine-non-cuda", "0.3.12.post1")
    );
    let CoreSource::Declared(why) = &rocm.source else {
        panic!("{rocm:?}")
    };
    assert!(
        why.starts_with("built from source in rocm/sgl-dev:"),
        "{why}"
    );
    assert!(api.upstream.files.is_empty());
}

#[test]
fn a_bad_image_core_is_located() {
    let (start, rest) = API.split_at(API.find(ROCM_CORE).expect("the ROCm image's core"));
    let end = rest.find('\n').unwrap();
    let without = format!("{start}{}", &rest[end + 1..]);
    error_at(
        &without,
        "[image.rocm]",
        "image `rocm` (strategy fill) needs `core = { package, version, source }`",
    );
    let bad_version = API.replacen(
        "version = \"0.3.12.post1\", source",
        "version = \"0.3.12-post1 \", source",
        1,
    );
    error_at(&bad_version, "\"0.3.12-post1 \"", "invalid core version");
    let empty_source = format!("{start}{ROCM_CORE}\" \" }}{}", &rest[end..]);
    error_at(&empty_source, "\" \" }", "invalid core source (empty)");
    let unknown = API.replacen(
        ROCM_CORE,
        "core = { tag = \"x\", package = \"p\", version = \"1\", source = ",
        1,
    );
    error_at(&unknown, "tag = \"x\"", "unknown field `tag`");
    // A pin image runs on its pinned release: a `core` there is refused, not ignored (an
    // overlay's likewise: tests/manifest_strategies.rs).
    let overlay = API.replacen(
        "base_version = \"0.3.11.post1\"\n",
        "base_version = \"0.3.11.post1\"\ncore = { package = \"x\", version = \"1\", source = \"y\" }\n",
        1,
    );
    error_at(
        &overlay,
        "{ package = \"x\"",
        "(strategy pin) runs on the release it installs (base_package == pin_version)",
    );
}

#[test]
fn a_file_set_names_each_file_its_place_and_module() {
    let text = with_files(&format!(
        "{}{}",
        file("mooncake-wheel/mooncake/_partial_read.py", SHA),
        file("mooncake-wheel/mooncake/store/__init__.py", SHA)
    ));
    let api = load_str("api.toml", &text).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(
        api.upstream.files,
        [
            UpstreamFile {
                path: "mooncake-wheel/mooncake/_partial_read.py".into(),
                sha256: SHA.into(),
                install: "mooncake/_partial_read.py".into(),
                module: "mooncake._partial_read".into(),
            },
            UpstreamFile {
                path: "mooncake-wheel/mooncake/store/__init__.py".into(),
                sha256: SHA.into(),
                install: "mooncake/store/__init__.py".into(),
                module: "mooncake.store".into(),
            },
        ]
    );
    // The file set is part of the contract: it changes the fingerprint.
    let plain = load_str("api.toml", API).unwrap();
    assert_ne!(api.fingerprint(), plain.fingerprint());
}

#[test]
fn a_bad_file_is_located() {
    for (path, sha256, at, message) in [
        (
            "mooncake-wheel/mooncake/_x.py",
            "abc",
            "\"abc\"",
            "invalid sha256",
        ),
        ("../mooncake/_x.py", SHA, "\"../mooncake", "a `..` part"),
        (
            "mooncake-wheel/mooncake/a b.py",
            SHA,
            "\"mooncake-wheel/mooncake/a b",
            "the character ' '",
        ),
        (
            "mooncake-wheel/mooncake/$(id).py",
            SHA,
            "\"mooncake-wheel/mooncake/$(id)",
            "the character '$'",
        ),
        (
            "mooncake-wheel/mooncake/*.py",
            SHA,
            "\"mooncake-wheel/mooncake/*",
            "the character '*'",
        ),
        (
            "mooncake-wheel/mooncake/ü.py",
            SHA,
            "\"mooncake-wheel/mooncake/ü",
            "the character 'ü'",
        ),
        (
            "mooncake-wheel//mooncake/x.py",
            SHA,
            "\"mooncake-wheel//",
            "an empty part",
        ),
        (
            "mooncake-wheel/mooncake/x.so",
            SHA,
            "\"mooncake-wheel/mooncake/x.so",
            "not a .py file of the package `mooncake`",
        ),
        (
            "other/mooncake/_x.py",
            SHA,
            "\"other/",
            "not a .py file of the package `mooncake`",
        ),
        (
            "mooncake-wheel/numpy/_x.py",
            SHA,
            "\"mooncake-wheel/numpy",
            "not a .py file of the package `mooncake`",
        ),
        (
            "mooncake-wheel/mooncake/a-b.py",
            SHA,
            "\"mooncake-wheel/mooncake/a-b",
            "each part a Python name",
        ),
        (
            "mooncake-wheel/mooncake/structured_object_store.py",
            SHA,
            "\"mooncake-wheel/mooncake/structured_object_store.py\"\nsha256 = \"0123",
            "the module itself is `upstream.path`",
        ),
    ] {
        error_at(&with_files(&file(path, sha256)), at, message);
    }
    let twice = file("mooncake-wheel/mooncake/_x.py", SHA);
    let text = with_files(&format!("{twice}{twice}"));
    let second = text.rfind("\"mooncake-wheel/mooncake/_x.py\"").unwrap();
    let diags = load_str("api.toml", &text).unwrap_err();
    assert!(diags.0[0].message.contains("listed twice"), "{diags}");
    let line = text[..second].matches('\n').count() + 1;
    assert!(
        diags.0[0]
            .location()
            .starts_with(&format!("api.toml:{line}:")),
        "{diags}"
    );
    // Without the module's own path at the end of upstream.path, files cannot be placed.
    let moved = with_files(&file("mooncake-wheel/mooncake/_x.py", SHA)).replacen(
        "path = \"mooncake-wheel/mooncake/structured_object_store.py\"",
        "path = \"mooncake-wheel/sos.py\"",
        1,
    );
    error_at(&moved, "\"mooncake-wheel/mooncake/_x.py\"", "cannot place");
}
