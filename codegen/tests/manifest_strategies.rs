//! The strategies `pin` (install the base package at a `[[release]]`, hash-checked) and
//! `check` (the base ships it; only the checks run) in the manifest: valid declarations reach
//! the model with the image's native core; bad ones are located errors. Each case puts its own
//! `[image.cuda]` and `[[release]]` tables into the repository's api.toml.

mod common;

use mooncake_sos_manifest::load_str;
use mooncake_sos_manifest::model::{CoreSource, ImageCore, Layer, Release, Wheel};

const API: &str = include_str!("../../api.toml");
const SHA_A: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
const SHA_B: &str = "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210";
const WHEEL_A: &str =
    "mooncake_transfer_engine_cuda13-0.3.12.post1-cp311-cp311-manylinux_2_28_x86_64.whl";
const WHEEL_B: &str =
    "mooncake_transfer_engine_cuda13-0.3.12.post1-cp312-cp312-manylinux_2_28_x86_64.whl";

/// api.toml with `[image.cuda]` replaced by `image` and every `[[release]]` by `releases`.
fn manifest(image: &str, releases: &str) -> String {
    let start = API.find("[image.cuda]").expect("[image.cuda]");
    let end = start + API[start..].find("\n\n").expect("end of [image.cuda]");
    let mut text = format!("{}{image}{}", &API[..start], &API[end..]);
    // The shipped manifest's own releases go; the case's come at the end.
    while let Some(at) = text.find("\n[[release]]") {
        let next = text[at + 1..]
            .find("\n[")
            .map_or(text.len(), |i| at + 1 + i);
        text.replace_range(at..next, "");
    }
    format!("{text}\n{releases}")
}

fn cuda(strategy: &str, extra: &str) -> String {
    format!(
        "[image.cuda]\ndockerfile = \"docker/Dockerfile\"\nstrategy = \"{strategy}\"\n\
         base_image = \"lmsysorg/sglang\"\nbase_tag = \"v0.5.16-cu130\"\n\
         base_package = \"mooncake-transfer-engine-cuda13\"\nbase_version = \"0.3.11.post1\"\n\
         build_py = \"docker/build.py\"\nbuild_py_variant = \"cu130\"\n{extra}"
    )
}

fn release(version: &str, wheels: &[(&str, &str)]) -> String {
    let wheels: Vec<String> = wheels
        .iter()
        .map(|(f, s)| format!("    {{ file = \"{f}\", sha256 = \"{s}\" }},\n"))
        .collect();
    format!(
        "[[release]]\npackage = \"mooncake-transfer-engine-cuda13\"\nversion = \"{version}\"\n\
         wheels = [\n{}]\n",
        wheels.concat()
    )
}

/// The first error of `text`: at the first occurrence of `at` (after `after`, if given),
/// saying `message`.
fn error_at(text: &str, after: &str, at: &str, message: &str) {
    let from = text
        .find(after)
        .unwrap_or_else(|| panic!("{after:?} not in the text"));
    let offset = from
        + text[from..]
            .find(at)
            .unwrap_or_else(|| panic!("{at:?} not in the text"));
    common::first_error_at(text, offset, message);
}

#[test]
fn a_pin_image_runs_on_the_release_it_installs() {
    let text = manifest(
        &cuda("pin", "pin_version = \"0.3.12.post1\"\n"),
        &release("0.3.12.post1", &[(WHEEL_A, SHA_A), (WHEEL_B, SHA_B)]),
    );
    let api = load_str("api.toml", &text).unwrap_or_else(|d| panic!("{d}"));
    let image = api.images.iter().find(|i| i.id == "cuda").unwrap();
    let want = Release {
        package: "mooncake-transfer-engine-cuda13".into(),
        version: "0.3.12.post1".into(),
        wheels: vec![
            Wheel {
                file: WHEEL_A.into(),
                sha256: SHA_A.into(),
            },
            Wheel {
                file: WHEEL_B.into(),
                sha256: SHA_B.into(),
            },
        ],
    };
    let Some((base_package, base_version, release)) = image.layer.pin() else {
        panic!("{:?}", image.layer)
    };
    assert_eq!(
        (base_package, base_version),
        ("mooncake-transfer-engine-cuda13", "0.3.11.post1")
    );
    assert_eq!(release, &want);
    assert_eq!(api.releases, vec![want]);
    assert_eq!(
        image.core,
        ImageCore {
            package: "mooncake-transfer-engine-cuda13".into(),
            version: "0.3.12.post1".into(),
            source: CoreSource::PinnedRelease,
        }
    );
    assert_eq!(image.layer.strategy().name(), "pin");
}

#[test]
fn a_check_image_runs_on_its_base_wheel() {
    let text = manifest(&cuda("check", ""), "");
    let api = load_str("api.toml", &text).unwrap_or_else(|d| panic!("{d}"));
    let image = api.images.iter().find(|i| i.id == "cuda").unwrap();
    assert!(
        matches!(&image.layer, Layer::Check { base_version, .. } if base_version == "0.3.11.post1"),
        "{:?}",
        image.layer
    );
    assert_eq!(
        image.core,
        ImageCore {
            package: "mooncake-transfer-engine-cuda13".into(),
            version: "0.3.11.post1".into(),
            source: CoreSource::BaseWheel,
        }
    );
}

#[test]
fn a_bad_pin_is_located() {
    let good = release("0.3.12.post1", &[(WHEEL_A, SHA_A)]);
    let image = "[image.cuda]";
    // No pin_version.
    error_at(
        &manifest(&cuda("pin", ""), &good),
        image,
        image,
        "image `cuda` (strategy pin) needs `pin_version`",
    );
    // No [[release]] of it.
    error_at(
        &manifest(&cuda("pin", "pin_version = \"0.3.13.post1\"\n"), &good),
        image,
        "\"0.3.13.post1\"",
        "image `cuda` pins mooncake-transfer-engine-cuda13 0.3.13.post1, which no [[release]] lists",
    );
    // Not newer than what the base ships (PEP 440 order: 0.3.11 < 0.3.11.post1).
    for old in ["0.3.11.post1", "0.3.11"] {
        error_at(
            &manifest(
                &cuda("pin", &format!("pin_version = \"{old}\"\n")),
                &release(
                    old,
                    &[(
                        &format!("mooncake_transfer_engine_cuda13-{old}-py3-none-any.whl"),
                        SHA_A,
                    )],
                ),
            ),
            "pin_version",
            &format!("\"{old}\""),
            "is not newer than base_version 0.3.11.post1, which the base image ships: nothing to install, use strategy check",
        );
    }
    // Not a version.
    error_at(
        &manifest(&cuda("pin", "pin_version = \"v0.3.12\"\n"), &good),
        image,
        "\"v0.3.12\"",
        "invalid pin_version: \"v0.3.12\"",
    );
    // Keys of other strategies.
    error_at(
        &manifest(&cuda("check", "pin_version = \"0.3.12.post1\"\n"), &good),
        image,
        "\"0.3.12.post1\"",
        "`pin_version` does not apply to strategy check",
    );
    error_at(
        &manifest(&cuda("overlay", "pin_version = \"0.3.12.post1\"\n"), &good),
        image,
        "\"0.3.12.post1\"",
        "`pin_version` does not apply to strategy overlay",
    );
    error_at(
        &manifest(
            &cuda(
                "pin",
                "pin_version = \"0.3.12.post1\"\nfill_version = \"0.3.12.post1\"\n",
            ),
            &good,
        ),
        "fill_version",
        "\"0.3.12.post1\"",
        "`fill_version` does not apply to strategy pin",
    );
    // A core is the release's, not declared.
    error_at(
        &manifest(
            &cuda(
                "pin",
                "pin_version = \"0.3.12.post1\"\ncore = { package = \"x\", version = \"1\", source = \"y\" }\n",
            ),
            &good,
        ),
        image,
        "{ package = \"x\"",
        "image `cuda` (strategy pin) runs on the release it installs (base_package == pin_version): remove `core`",
    );
    error_at(
        &manifest(
            &cuda(
                "overlay",
                "core = { package = \"x\", version = \"1\", source = \"y\" }\n",
            ),
            &good,
        ),
        image,
        "{ package = \"x\"",
        "image `cuda` (strategy overlay) runs on the wheel its base image installs (base_package == base_version): remove `core`",
    );
    error_at(
        &manifest(&cuda("bake", ""), &good),
        image,
        "\"bake\"",
        "unknown strategy \"bake\": expected overlay, fill, pin or check",
    );
}

#[test]
fn a_bad_release_is_located() {
    let pin = cuda("pin", "pin_version = \"0.3.12.post1\"\n");
    let releases = "[[release]]";
    for (wheels, at, message) in [
        (
            vec![],
            "[\n]",
            "release mooncake-transfer-engine-cuda13 0.3.12.post1 lists no wheels",
        ),
        (
            vec![(WHEEL_A, "0123")],
            "\"0123\"",
            "invalid sha256 (64 lowercase hex digits): \"0123\"",
        ),
        (
            vec![(WHEEL_A, &SHA_A.to_uppercase())],
            "\"0123456789ABCDEF",
            "invalid sha256 (64 lowercase hex digits)",
        ),
        (
            vec![(
                "mooncake_transfer_engine_cuda13-0.3.13.post1-cp311-cp311-manylinux_2_28_x86_64.whl",
                SHA_A,
            )],
            "\"mooncake_transfer_engine_cuda13-0.3.13",
            "is not a wheel file of mooncake-transfer-engine-cuda13 0.3.12.post1",
        ),
        (
            vec![("x'; id; '.whl", SHA_A)],
            "\"x'; id",
            "is not a wheel file of mooncake-transfer-engine-cuda13 0.3.12.post1",
        ),
        (vec![(WHEEL_A, SHA_A), (WHEEL_A, SHA_B)], SHA_B, ""),
    ] {
        // The second of two same files: after the first one's sha256.
        let (after, at, message) = if at == SHA_B {
            (SHA_A, "\"mooncake_transfer", "is listed twice")
        } else {
            (releases, at, message)
        };
        error_at(
            &manifest(&pin, &release("0.3.12.post1", &wheels)),
            after,
            at,
            message,
        );
    }
    // A release listed twice; a version that is not PEP 440.
    let once = release("0.3.12.post1", &[(WHEEL_A, SHA_A)]);
    let twice = manifest(&pin, &format!("{once}\n# the second\n{once}"));
    error_at(
        &twice,
        "# the second",
        "\"0.3.12.post1\"",
        "release mooncake-transfer-engine-cuda13 0.3.12.post1 is listed twice",
    );
    error_at(
        &manifest(
            &cuda("check", ""),
            &release("0.3.12-1", &[(WHEEL_A, SHA_A)]),
        ),
        releases,
        "\"0.3.12-1\"",
        "invalid release version (PEP 440): \"0.3.12-1\"",
    );
}
