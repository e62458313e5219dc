//! What the docker tests feed the recipes: the manifest's facts, module files out of the real
//! release wheels, the overlay download served on 127.0.0.1, and regenerated repositories.

use super::Build;
use crate::repo_root;
use mooncake_sos_codegen::diag::Source;
use mooncake_sos_codegen::model::Api;
use mooncake_sos_codegen::{load_str, render, sync};
use mooncake_sos_testkit::{FileServer, wheel};
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
    let mut build = Build::cuda()
        .context(context)
        .arg("MOONCAKE_SOS_BASE_URL", &server.base_url)
        .arg("MOONCAKE_SOS_SHA256", &sha256_hex(module));
    for (k, v) in args {
        build = build.arg(k, v);
    }
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

/// A copy of the repository's build inputs (docker/, .dockerignore, generated/) regenerated
/// from `manifest`, as `cargo xtask regen --manifest` writes them.
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
    let outputs = render::render_all(&api).unwrap_or_else(|e| panic!("{e}"));
    let source = Source::new("api.toml", manifest);
    let changes = sync::plan(dir.path(), &source, &api.name, &outputs, false)
        .unwrap_or_else(|d| panic!("{d}"));
    sync::apply(dir.path(), &changes).expect("write the regenerated files");
    dir
}
