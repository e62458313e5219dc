//! What the docker tests feed the recipes: the manifest's facts, module files out of the real
//! release wheels, the overlay download served on 127.0.0.1, and regenerated repositories.

use super::{Build, Failure, LocalIndex};
use crate::repo_root;
use mooncake_sos_codegen::{render, sync};
use mooncake_sos_manifest::load_str;
use mooncake_sos_manifest::model::Api;
use mooncake_sos_support::diag::Source;
use mooncake_sos_testkit::{FileServer, env_path, wheel, wheels_dir};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::Path;

/// The module's path inside a wheel.
pub const WHEEL_MODULE: &str = "mooncake/structured_object_store.py";

pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

pub fn shipped_manifest() -> String {
    std::fs::read_to_string(repo_root().join("api.toml")).expect("read api.toml")
}

pub fn api_of(text: &str) -> Api {
    load_str("api.toml", text).unwrap_or_else(|d| panic!("{d}"))
}

pub fn api() -> Api {
    api_of(&shipped_manifest())
}

/// The shim's line when every check passed: `api`'s native requirements counted.
pub fn shim_ok(api: &Api) -> String {
    format!(
        "ok: mooncake.structured_object_store provides FieldSchema, MooncakeBundleTransfer, \
         export_ref, import_ref and {} native requirement(s)",
        api.native.len()
    )
}

/// The build arg that tells the check step the builder has no GPU driver.
pub const BUILDER_HAS_NO_DRIVER: (&str, &str) = ("MOONCAKE_SOS_BUILDER_HAS_NO_DRIVER", "1");

/// Lines of a build log in the order they must appear.
pub fn assert_in_order(log: &str, lines: &[&str]) {
    let mut at = 0;
    for line in lines {
        match log[at..].find(line) {
            Some(i) => at += i + line.len(),
            None => panic!("{line:?} not found (in this order) in:\n{log}"),
        }
    }
}

/// The build failed at the generated check step (not at the layer's own step).
pub fn assert_check_step(f: &Failure) {
    assert!(
        f.instruction.starts_with("RUN set -eu;") && f.instruction.contains("say() {"),
        "not the check step: {f}"
    );
}

/// A build on a builder with neither a GPU driver nor its stub: the check step refuses it,
/// having checked nothing.
pub fn assert_refused_without_a_driver(f: &Failure) {
    assert_check_step(f);
    f.assert_says(&no_driver_refusal());
    f.assert_never_says("ok: ");
}

/// The same build with BUILDER_HAS_NO_DRIVER: it passes without loading the native core, and
/// says that it did not prove `api`'s native requirements, nor `more_not_proved` after them.
pub fn assert_passed_without_the_core(log: &str, api: &Api, more_not_proved: &str) {
    assert_in_order(
        log,
        &[
            &no_driver_not_loading(),
            "every check of the shim that needs no native core passed",
            &format!(
                "mooncake-sos check: passed, WITHOUT loading the native core; not proved: that \
                 it loads, nor the {} native requirement(s) api.toml lists{more_not_proved}",
                api.native.len()
            ),
        ],
    );
    assert!(!log.contains(&shim_ok(api)), "{log}");
}

/// The check step's refusal on a builder with neither a GPU driver nor its stub.
fn no_driver_refusal() -> String {
    format!(
        "mooncake-sos check: error: {NO_DRIVER} and there is no driver stub at \
         /usr/local/cuda/lib64/stubs/libcuda.so, so the native core cannot be loaded. Build \
         where the driver or its stub is present, or pass --build-arg \
         MOONCAKE_SOS_BUILDER_HAS_NO_DRIVER=1"
    )
}

/// The check step's line when the build says the builder has no driver: no core loaded.
fn no_driver_not_loading() -> String {
    format!(
        "mooncake-sos check: {NO_DRIVER} and there is no driver stub at \
         /usr/local/cuda/lib64/stubs/libcuda.so; MOONCAKE_SOS_BUILDER_HAS_NO_DRIVER=1: NOT \
         loading the native core"
    )
}

/// The check's note on a builder without a GPU driver, the other libraries resolving.
pub const NO_DRIVER: &str = "this builder has no GPU driver (libcuda.so.1 not found; every other \
                             library of /usr/local/lib/python3.11/dist-packages/mooncake/store.so, \
                             /usr/local/lib/python3.11/dist-packages/mooncake/engine.so \
                             resolves)";

/// Where the overlay downloads the pinned module, below MOONCAKE_SOS_BASE_URL.
pub fn pinned_path(api: &Api) -> String {
    let u = &api.upstream;
    format!("/{}/{}/{}", u.repo, u.commit, u.path)
}

/// Every `mooncake/*.py` member of the non-cuda wheel of `version`, with its bytes.
pub fn wheel_python_files(version: &str) -> BTreeMap<String, Vec<u8>> {
    let file = std::fs::File::open(wheel(version)).expect("open the wheel");
    let mut zip = zip::ZipArchive::new(file).expect("read the wheel");
    let names: Vec<String> = zip
        .file_names()
        .filter_map(|n| n.ok().map(|n| n.into_owned()))
        .filter(|n| n.starts_with("mooncake/") && n.matches('/').count() == 1 && n.ends_with(".py"))
        .collect();
    names
        .into_iter()
        .map(|name| {
            let mut bytes = Vec::new();
            zip.by_name(&name)
                .expect("member")
                .read_to_end(&mut bytes)
                .expect("read member");
            (name, bytes)
        })
        .collect()
}

/// A PEP 503 index on 127.0.0.1 of the CUDA 13 release wheels (MC_TEST_CORE_WHEELS: the
/// cuda13 0.3.11.post1 and 0.3.12.post1 wheels and the CUDA 13 runtime), what a pin installs.
pub fn core_wheels_index() -> LocalIndex {
    LocalIndex::start(&[&env_path("MC_TEST_CORE_WHEELS")])
}

/// A PEP 503 index on 127.0.0.1 of MC_TEST_WHEELS (the non-cuda releases), what a fill installs.
pub fn wheels_index() -> LocalIndex {
    LocalIndex::start(&[&wheels_dir()])
}

/// The structured_object_store.py of the non-cuda wheel of `version`.
pub fn module_of_release(version: &str) -> Vec<u8> {
    wheel_python_files(version)
        .remove(WHEEL_MODULE)
        .unwrap_or_else(|| panic!("no {WHEEL_MODULE} in the {version} wheel"))
}

/// An overlay build of `<context>/docker/Dockerfile`: `module` served at the pinned path of
/// `api` from a server on 127.0.0.1 (its sha256 passed as MOONCAKE_SOS_SHA256, since the
/// pinned file itself is not on disk), with `args` besides.
pub fn overlay(api: &Api, context: &Path, module: &[u8], args: &[(&str, &str)]) -> OverlayRun {
    let server = FileServer::start(HashMap::from([(pinned_path(api), module.to_vec())]));
    let build = Build::cuda()
        .context(context)
        .arg("MOONCAKE_SOS_BASE_URL", &server.base_url)
        .arg("MOONCAKE_SOS_SHA256", &sha256_hex(module))
        .args(args);
    OverlayRun {
        built: build.run(),
        server,
    }
}

pub struct OverlayRun {
    pub built: super::Built,
    pub server: FileServer,
}

impl OverlayRun {
    pub fn requests(&self) -> usize {
        self.server.requests().len()
    }
}

/// The shipped manifest with the CUDA image back on strategy overlay (the module alone over the
/// base's 0.3.11.post1 wheel and core), as it was before the pin.
pub fn overlay_manifest() -> String {
    let shipped = shipped_manifest();
    let at = shipped.find("[image.cuda]").expect("[image.cuda]");
    let end = at + shipped[at..].find("\n\n").expect("end of [image.cuda]");
    let image = shipped[at..end]
        .replace("strategy = \"pin\"", "strategy = \"overlay\"")
        .lines()
        .filter(|l| !l.starts_with("pin_version"))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(image.contains("strategy = \"overlay\""), "{image}");
    format!("{}{image}{}", &shipped[..at], &shipped[end..])
}

/// `text` with every region of `name` (whatever strategy wrote it) renamed `id`, in the form
/// of a new region (no checksum), for regen to fill: how a strategy change is made by hand.
fn renamed_regions(text: &str, name: &str, id: &str) -> String {
    text.lines()
        .map(|line| {
            for strategy in ["overlay", "fill", "pin", "check"] {
                let begin = format!("# >>> api.toml: {name} {strategy} (");
                if line.starts_with(&begin) {
                    return line.replacen(&begin, &format!("# >>> api.toml: {name} {id} ("), 1);
                }
                if line.starts_with(&format!("# <<< {name} {strategy}")) {
                    return format!("# <<< {name} {id}");
                }
            }
            line.to_owned()
        })
        .map(|l| l + "\n")
        .collect()
}

/// A copy of the repository's build inputs (docker/, .dockerignore, generated/) regenerated
/// from `manifest`, as `cargo xtask regen --manifest` writes them (an image whose strategy
/// the manifest changes gets its region renamed first).
pub fn regenerated_repo(manifest: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir_all(dir.path().join("docker")).expect("mkdir docker");
    for file in [
        "docker/Dockerfile",
        "docker/Dockerfile.rocm",
        "docker/build.py",
        ".dockerignore",
    ] {
        std::fs::copy(repo_root().join(file), dir.path().join(file))
            .unwrap_or_else(|e| panic!("copy {file}: {e}"));
    }
    std::fs::write(dir.path().join("api.toml"), manifest).expect("write api.toml");
    let api = api_of(manifest);
    for image in &api.images {
        let path = dir.path().join(image.dockerfile.as_str());
        let text = std::fs::read_to_string(&path).expect("read a Dockerfile");
        let renamed = renamed_regions(&text, &api.name, image.layer.strategy().name());
        std::fs::write(&path, renamed).expect("write a Dockerfile");
    }
    let records = mooncake_sos_native::images::cores(&repo_root(), &api)
        .unwrap_or_else(|e| panic!("{e}"))
        .iter()
        .map(|r| r.to_json())
        .collect::<Vec<_>>();
    let cores = render::Cores::from_records(&records).unwrap_or_else(|e| panic!("{e}"));
    let outputs = render::render_all(&api, &cores).unwrap_or_else(|e| panic!("{e}"));
    let source = Source::new("api.toml", manifest);
    let changes = sync::plan(dir.path(), &source, &api.name, &outputs, false)
        .unwrap_or_else(|d| panic!("{d}"));
    sync::apply(dir.path(), &changes).expect("write the regenerated files");
    dir
}

/// The check step's log from its smoke on.
pub fn from_the_smoke(log: &str) -> &str {
    let smoke = log
        .find("mooncake-sos check: smoke: the consumer's scenarios")
        .unwrap_or_else(|| panic!("no smoke in the check step:\n{log}"));
    &log[smoke..]
}

/// What the check step's smoke ran, from its per-scenario lines in `log` (from the smoke on):
/// every scenario is `ok`, or `not run (needs torch)` where it needs torch and the image has
/// none. The words the step's last line must end its `(--smoke): ` with, e.g.
/// `2 passed, 1 not run (needs torch)`.
pub fn scenarios_ran(log: &str) -> String {
    let (mut passed, mut without_torch) = (0, 0);
    for s in &api().scenarios {
        if log.contains(&format!("smoke {}: ok (", s.name)) {
            passed += 1;
        } else if s.needs_torch && log.contains(&format!("smoke {}: not run (needs torch)", s.name))
        {
            without_torch += 1;
        } else {
            panic!(
                "{}: neither ok nor not run for want of torch:\n{log}",
                s.name
            );
        }
    }
    match without_torch {
        0 => format!("{passed} passed"),
        n => format!("{passed} passed, {n} not run (needs torch)"),
    }
}
