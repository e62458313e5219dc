//! The typed stubs (generated/stubs/mooncake-stubs) against the real things: mypy's stubtest
//! on the real modules of every image's wheel, and basedpyright over real consumer files
//! (sglang 0.5.16's mooncake files, read out of its wheel, and the repository's consumer
//! fixture) with no stubs, with ours and with pybind11-stubgen's: no new error on the files
//! as they are, and the realistic mistakes of `stub_mistakes` caught at least as often.

use mooncake_sos_manifest::model::Api;
use mooncake_sos_testkit::{copy_tree, env_path, python, wheel, wheel_in, wheel_member};
use mooncake_sos_tests::stub_mistakes::{FIXTURE, MISTAKES};
use mooncake_sos_tests::{SETUP_HINT, repo_root};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The stub package as regen writes it.
fn stub_package() -> PathBuf {
    repo_root().join("generated/stubs/mooncake-stubs")
}

/// The modules the package has stubs of (`mooncake.store`, ...), sorted.
fn stub_modules() -> Vec<String> {
    let mut modules: Vec<String> = std::fs::read_dir(stub_package())
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            Some(format!("mooncake.{}", name.strip_suffix(".pyi")?))
        })
        .collect();
    modules.sort();
    modules
}

fn api() -> Api {
    let text = std::fs::read_to_string(repo_root().join("api.toml")).unwrap();
    mooncake_sos_manifest::load_str("api.toml", &text).unwrap()
}

/// `wheel` unpacked into `dir`, as pip puts it in site-packages.
fn unpack(wheel: &Path, dir: &Path) {
    let status = Command::new(python())
        .args(["-m", "zipfile", "-e"])
        .arg(wheel)
        .arg(dir)
        .status()
        .unwrap();
    assert!(status.success(), "unzip {}", wheel.display());
}

/// Each image's core as a wheel of this machine's python, with the libraries it loads: the
/// -non-cuda wheels are in MC_TEST_WHEELS (libcudart.so.12 is on LD_LIBRARY_PATH), the
/// cuda13 ones in MC_TEST_CORE_WHEELS (with MC_TEST_CUDA13_LIBS).
fn image_wheels() -> Vec<(String, PathBuf, String)> {
    let mut out: Vec<(String, PathBuf, String)> = Vec::new();
    let base = std::env::var("LD_LIBRARY_PATH").unwrap_or_default();
    for image in api().images {
        let (package, version) = (&image.core.package, &image.core.version);
        let label = format!("{package} {version}");
        if out.iter().any(|(l, _, _)| *l == label) {
            continue;
        }
        let prefix = format!("{}-{version}-", package.replace('-', "_"));
        let (wheel, libs) = if package.ends_with("-cuda13") {
            let cuda = std::env::var("MC_TEST_CUDA13_LIBS")
                .unwrap_or_else(|_| panic!("MC_TEST_CUDA13_LIBS is not set: {SETUP_HINT}"));
            (
                wheel_in("MC_TEST_CORE_WHEELS", &prefix),
                format!("{cuda}:{base}"),
            )
        } else {
            (wheel_in("MC_TEST_WHEELS", &prefix), base.clone())
        };
        out.push((label, wheel, libs));
    }
    out
}

/// mypy's stubtest of `modules` against what `site` holds (a wheel unpacked, the stubs beside
/// it), every name the runtime has and the stubs leave out aside: they hold the contract's
/// symbols of the module, and what every image's core has. Run elsewhere (its cache there):
/// mypy reads the working directory's modules before any stub package.
fn stubtest(site: &Path, modules: &[String], libs: &str) -> Output {
    let cwd = tempfile::tempdir().unwrap();
    Command::new(python())
        .args(["-m", "mypy.stubtest", "--ignore-missing-stub"])
        .args(modules)
        .current_dir(cwd.path())
        .env("PYTHONPATH", site)
        .env("LD_LIBRARY_PATH", libs)
        .output()
        .unwrap()
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn stubtest_passes_on_every_image_wheel() {
    let modules = stub_modules();
    assert_eq!(
        modules,
        [
            "mooncake.engine",
            "mooncake.store",
            "mooncake.structured_object_store"
        ]
    );
    let wheels = image_wheels();
    assert_eq!(wheels.len(), 2, "{wheels:?}");
    for (i, (label, wheel, libs)) in wheels.iter().enumerate() {
        let site = tempfile::tempdir().unwrap();
        unpack(wheel, site.path());
        copy_tree(&stub_package(), &site.path().join("mooncake-stubs"));
        let out = stubtest(site.path(), &modules, libs);
        let said = text(&out);
        assert_eq!(out.status.code(), Some(0), "{label}:\n{said}");
        assert_eq!(
            said.trim(),
            "Success: no issues found in 3 modules",
            "{label}"
        );
        if i > 0 {
            continue;
        }
        // The check is real: a member no core has is reported.
        let store = site.path().join("mooncake-stubs/store.pyi");
        let text_of = std::fs::read_to_string(&store).unwrap();
        let class = "class MooncakeDistributedStore(metaclass=pybind11_type):\n";
        assert!(text_of.contains(class));
        let doctored = text_of.replace(
            class,
            &format!("{class}    def put_everything(self) -> Any: ...\n"),
        );
        std::fs::write(&store, doctored).unwrap();
        let out = stubtest(site.path(), &modules, libs);
        assert_eq!(out.status.code(), Some(1), "{}", text(&out));
        assert!(
            text(&out).contains(
                "error: mooncake.store.MooncakeDistributedStore.put_everything is not present at runtime"
            ),
            "{}",
            text(&out)
        );
    }
}

/// The stubs a type checker is given, by name.
const CONFIGS: [&str; 3] = ["none", "ours", "pybind11-stubgen"];

/// A checker's errors: per root (`clean`, `m01`, ...), (file, line, rule, message).
type Errors = BTreeMap<String, BTreeSet<(String, u64, String, String)>>;

/// The consumer files: the fixture, and every file of sglang 0.5.16's wheel the repository's
/// record of its uses names (consumers/sglang-0.5.16.json); (path, text).
fn consumer_files() -> Vec<(String, String)> {
    let record = std::fs::read_to_string(repo_root().join("consumers/sglang-0.5.16.json")).unwrap();
    let record: serde_json::Value = serde_json::from_str(&record).unwrap();
    let files: BTreeSet<&str> = record["uses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["file"].as_str().unwrap())
        .collect();
    let sglang = wheel_in("MC_TEST_CONSUMER_WHEELS", "sglang-0.5.16-");
    let fixture = repo_root().join("xtask/tests/cli/consumers").join(FIXTURE);
    let mut out = vec![(
        FIXTURE.to_owned(),
        std::fs::read_to_string(fixture).unwrap(),
    )];
    for f in files {
        let bytes = wheel_member(&sglang, f);
        out.push((f.to_owned(), String::from_utf8(bytes).unwrap()));
    }
    out
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// pybind11-stubgen 3.0.0's stubs of the native modules of the 0.3.13.post1 wheel, as a
/// partial stub package in `dir`.
fn stubgen_package(dir: &Path) {
    let site = tempfile::tempdir().unwrap();
    unpack(&wheel("0.3.13.post1"), site.path());
    let out = Command::new(env_path("MC_TEST_STUBGEN"))
        .args(["-o"])
        .arg(dir)
        .args(["mooncake.store", "mooncake.engine"])
        .current_dir(site.path())
        .env("PYTHONPATH", site.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    std::fs::rename(dir.join("mooncake"), dir.join("mooncake-stubs")).unwrap();
    std::fs::write(dir.join("mooncake-stubs/py.typed"), "partial\n").unwrap();
}

/// basedpyright over `project` with each config's pyrightconfig, all at once; its errors.
fn check(project: &Path) -> BTreeMap<&'static str, Errors> {
    let children: Vec<_> = CONFIGS
        .iter()
        .map(|config| {
            let child = Command::new(env_path("MC_TEST_BASEDPYRIGHT"))
                .arg("--pythonpath")
                .arg(python())
                .args(["--outputjson", "-p", &format!("{config}.json")])
                .current_dir(project)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            (*config, child)
        })
        .collect();
    let mut all = BTreeMap::new();
    for (config, child) in children {
        let out = child.wait_with_output().unwrap();
        let report: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{config}: {e}: {}", text(&out)));
        let mut errors = Errors::new();
        for d in report["generalDiagnostics"].as_array().unwrap() {
            if d["severity"] != "error" {
                continue;
            }
            let file = Path::new(d["file"].as_str().unwrap()).strip_prefix(project);
            let file = file.unwrap().to_string_lossy().into_owned();
            let (root, path) = file.split_once('/').unwrap();
            errors.entry(root.to_owned()).or_default().insert((
                path.to_owned(),
                d["range"]["start"]["line"].as_u64().unwrap_or_default() + 1,
                d["rule"].as_str().unwrap_or_default().to_owned(),
                d["message"].as_str().unwrap().to_owned(),
            ));
        }
        all.insert(config, errors);
    }
    all
}

#[test]
fn basedpyright_finds_no_new_error_in_real_consumers_and_more_of_their_mistakes() {
    let project = tempfile::tempdir().unwrap();
    let p = project.path();
    let files = consumer_files();
    for (path, text) in &files {
        write(&p.join("clean").join(path), text);
    }
    let mut roots = vec!["clean".to_owned()];
    for (i, m) in MISTAKES.iter().enumerate() {
        let (_, original) = files.iter().find(|(f, _)| f == m.file).unwrap();
        assert_eq!(
            original.matches(m.find).count(),
            1,
            "{}: {}",
            m.what,
            m.find
        );
        assert!(
            !m.find.contains('\n') && !m.replace.contains('\n'),
            "{}",
            m.what
        );
        let root = format!("m{:02}", i + 1);
        write(
            &p.join(&root).join(m.file),
            &original.replace(m.find, m.replace),
        );
        roots.push(root);
    }
    copy_tree(&stub_package(), &p.join("ours/mooncake-stubs"));
    stubgen_package(&p.join("pybind11-stubgen"));
    std::fs::create_dir(p.join("none")).unwrap();
    for config in CONFIGS {
        // Each copy resolves its imports in its own root, then among the clean files.
        let environments: Vec<serde_json::Value> = roots
            .iter()
            .map(|root| {
                let mut paths = vec![config];
                paths.extend((root != "clean").then_some("clean"));
                serde_json::json!({"root": root, "extraPaths": paths})
            })
            .collect();
        let settings = serde_json::json!({
            "pythonVersion": "3.11",
            "include": roots,
            "executionEnvironments": environments,
        });
        write(&p.join(format!("{config}.json")), &settings.to_string());
    }
    let errors = check(p);
    let clean = |config: &str| errors[config].get("clean").cloned().unwrap_or_default();
    assert!(
        !clean("none").is_empty(),
        "basedpyright found nothing at all"
    );
    let new_with =
        |config: &str| -> Vec<_> { clean(config).difference(&clean("none")).cloned().collect() };
    assert_eq!(new_with("ours"), [], "new errors with our stubs");
    let mut table =
        String::from("| mistake | none | ours | pybind11-stubgen |\n| --- | --- | --- | --- |\n");
    let mut caught = [0; 3];
    let mut found = Vec::new();
    for (i, m) in MISTAKES.iter().enumerate() {
        let root = format!("m{:02}", i + 1);
        let row: Vec<bool> = CONFIGS
            .iter()
            .map(|config| {
                let before: BTreeSet<_> = clean(config)
                    .into_iter()
                    .filter(|e| e.0 == m.file)
                    .collect();
                let after = errors[config].get(&root).cloned().unwrap_or_default();
                after.difference(&before).next().is_some()
            })
            .collect();
        for (n, hit) in caught.iter_mut().zip(&row) {
            *n += usize::from(*hit);
        }
        let marks: Vec<&str> = row
            .iter()
            .map(|&c| if c { "caught" } else { "-" })
            .collect();
        table.push_str(&format!("| {} | {} |\n", m.what, marks.join(" | ")));
        found.push((m.what, [row[0], row[1], row[2]]));
    }
    table.push_str(&format!(
        "| **caught, of {}** | {} | {} | {} |\n| new errors in the files as they are | - | {} | {} |\n",
        MISTAKES.len(),
        caught[0],
        caught[1],
        caught[2],
        new_with("ours").len(),
        new_with("pybind11-stubgen").len()
    ));
    eprintln!("{table}");
    let expected: Vec<(&str, [bool; 3])> = MISTAKES.iter().map(|m| (m.what, m.caught)).collect();
    assert_eq!(found, expected, "\n{table}");
    assert!(caught[1] >= caught[2], "\n{table}");
}
