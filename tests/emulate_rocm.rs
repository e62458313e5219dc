//! The ROCm recipe (docker/Dockerfile.rocm, fill region) built for real in a stand-in base
//! image: a venv with the 0.3.12.post1 wheel whose pure-Python files were removed from the
//! installed package, as CMake's install rules leave a source build. The fill step installs
//! from the local wheel (PIP_FIND_LINKS + PIP_NO_INDEX in the base image's env: offline).

use mooncake_sos_codegen::model::Layer;
use mooncake_sos_tests::emulate::{
    Image, Venv, base_venv, file_sha256, native_files, wheel, wheel_member, wheels_dir,
};
use mooncake_sos_tests::repo_root;
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// Files the source build did install; the fill must leave them as they are.
const KEPT: [&str; 2] = ["__init__.py", "mooncake_config.py"];
const KEPT_MARK: &str = "\n# installed by the source build (emulated)\n";

/// `base_image:base_tag` and the fill version of the ROCm image in api.toml.
fn rocm_image() -> (String, String) {
    let api = mooncake_sos_codegen::load(&repo_root().join("api.toml"), "api.toml")
        .unwrap_or_else(|d| panic!("{d}"));
    let image = api
        .images
        .iter()
        .find(|i| i.id == "rocm")
        .expect("[image.rocm]");
    let Layer::Fill { version, .. } = &image.layer else {
        panic!("[image.rocm] is not a fill");
    };
    (
        format!("{}:{}", image.base_image, image.base_tag),
        version.clone(),
    )
}

fn base() -> &'static Venv {
    static BASE: OnceLock<Venv> = OnceLock::new();
    BASE.get_or_init(|| base_venv("0.3.12.post1"))
}

/// A copy of the base with every *.py of the mooncake package gone but `kept` (marked).
fn source_built(kept: &[&str]) -> Image {
    let mut image = Image::from_base(base());
    let pkg = image.venv.mooncake_dir();
    let _ = std::fs::remove_dir_all(pkg.join("__pycache__"));
    for entry in std::fs::read_dir(&pkg).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if kept.contains(&name.as_str()) {
            let mut text = std::fs::read_to_string(&path).unwrap();
            text.push_str(KEPT_MARK);
            std::fs::write(&path, text).unwrap();
        } else if name.ends_with(".py") {
            std::fs::remove_file(&path).unwrap();
        }
    }
    image.base_env = vec![
        ("PIP_FIND_LINKS".into(), wheels_dir().display().to_string()),
        ("PIP_NO_INDEX".into(), "1".into()),
        ("PIP_DISABLE_PIP_VERSION_CHECK".into(), "1".into()),
    ];
    image
}

fn kept_hashes(image: &Image) -> BTreeMap<&'static str, String> {
    KEPT.iter()
        .map(|k| (*k, file_sha256(&image.venv.mooncake_dir().join(k))))
        .collect()
}

fn wheel_py_files(version: &str) -> Vec<String> {
    let out = std::process::Command::new(base().python())
        .args(["-c", "import sys, zipfile; print('\\n'.join(n for n in zipfile.ZipFile(sys.argv[1]).namelist() if n.startswith('mooncake/') and n.count('/') == 1 and n.endswith('.py')))"])
        .arg(wheel(version))
        .output()
        .unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn fill_restores_the_module_and_leaves_every_native_file_byte_identical() {
    let image = source_built(&KEPT);
    // The source build's __init__.py imports a module it did not install.
    let (ok, out) = image.python(
        "import mooncake.structured_object_store",
        &[],
        std::time::Duration::from_secs(60),
    );
    assert!(
        !ok && out.contains("ModuleNotFoundError: No module named 'mooncake."),
        "{out}"
    );
    assert!(!image.venv.module_file().exists());
    let site = image.venv.site_packages();
    let natives = native_files(&site);
    for must in [
        "mooncake/store.so",
        "mooncake/engine.so",
        "mooncake/mooncake_master",
    ] {
        assert!(
            natives.contains_key(must),
            "{must} not found among {:?}",
            natives.keys()
        );
    }
    let kept = kept_hashes(&image);

    let log = image
        .build(&repo_root(), "docker/Dockerfile.rocm", "fill", &[])
        .unwrap_or_else(|e| panic!("the fill build failed:\n{e}"));
    let (from, fill_version) = rocm_image();
    assert_eq!(log.from, [from]);
    let label = |k: &str| log.labels.get(k).map(String::as_str);
    assert_eq!(
        label("org.opencontainers.image.base.name"),
        Some(log.from[0].as_str())
    );
    assert_eq!(
        label("io.mooncake-sos.fill-version"),
        Some(fill_version.as_str())
    );
    assert!(
        log.output().contains("ok: mooncake.structured_object_store provides FieldSchema, MooncakeBundleTransfer, export_ref, import_ref"),
        "{}",
        log.output()
    );
    assert_eq!(native_files(&site), natives, "a native file changed");
    assert_eq!(
        kept_hashes(&image),
        kept,
        "the fill overwrote a file the source build installed"
    );
    // Every other *.py (structured_object_store.py among them) is the fill wheel's.
    let whl = wheel(&fill_version);
    let pkg = image.venv.mooncake_dir();
    for name in wheel_py_files(&fill_version)
        .iter()
        .filter(|n| !KEPT.iter().any(|k| n.ends_with(k)))
    {
        let installed = std::fs::read(pkg.join(&name["mooncake/".len()..]))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            installed == wheel_member(&whl, name),
            "{name} differs from the wheel's"
        );
    }
    assert!(image.venv.module_file().exists());
    // The step removed its download.
    let leftovers: Vec<_> = std::fs::read_dir(image.root.join("tmp")).unwrap().collect();
    assert!(leftovers.is_empty(), "left in TMPDIR: {leftovers:?}");
}

#[test]
fn fill_from_a_release_without_the_api_fails_the_check_naming_it() {
    // A source build that installed no Python file: the old release's own __init__.py lands.
    let image = source_built(&[]);
    let natives = native_files(&image.venv.site_packages());
    let err = image
        .build(
            &repo_root(),
            "docker/Dockerfile.rocm",
            "fill",
            &[("MOONCAKE_VERSION", "0.3.11.post1")],
        )
        .unwrap_err();
    assert!(
        err.instruction
            .starts_with("RUN python3 -c \"from mooncake.structured_object_store import"),
        "{err}"
    );
    assert!(
        err.output.contains(
            "ImportError: cannot import name 'FieldSchema' from 'mooncake.structured_object_store'"
        ),
        "{err}"
    );
    assert_eq!(
        native_files(&image.venv.site_packages()),
        natives,
        "a native file changed"
    );
}

#[test]
fn fill_of_a_version_pip_cannot_find_fails_that_step() {
    let image = source_built(&KEPT);
    let err = image
        .build(
            &repo_root(),
            "docker/Dockerfile.rocm",
            "fill",
            &[("MOONCAKE_VERSION", "0.0.0")],
        )
        .unwrap_err();
    assert!(
        err.instruction
            .contains("pip install --no-cache-dir --no-deps --target="),
        "{err}"
    );
    assert!(
        err.output.contains(
            "No matching distribution found for mooncake-transfer-engine-non-cuda==0.0.0"
        ),
        "{err}"
    );
    assert!(
        !image.venv.module_file().exists(),
        "the module appeared although pip failed"
    );
}
