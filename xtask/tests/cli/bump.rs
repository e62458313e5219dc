//! `cargo xtask bump`: verify first, then move exactly the two pin lines of api.toml and
//! regenerate; `--fetch` through a local HTTP server on 127.0.0.1.

use crate::common::{NothingWritten, Run, Sandbox, xtask, xtask_in};
use mooncake_sos_testkit::{FileServer, module_of};
use std::collections::HashMap;
use std::path::Path;

/// Tag v0.3.12.post1, whose module is the one in the 0.3.12.post1 wheel.
const COMMIT: &str = "6041a609a8c3af35e778f70db344f145c2914980";
const SHA256: &str = "611ebb876be7cd3b6f8d611ac6f821b722ef857aad88aec264bd9053ef3c7a7f";
const RAW_PATH: &str = "/kvcache-ai/Mooncake/6041a609a8c3af35e778f70db344f145c2914980/mooncake-wheel/mooncake/structured_object_store.py";

/// `xtask bump --manifest <repo>/api.toml --commit C --module FILE`.
fn bump(repo: &Sandbox, commit: &str, module: &Path) -> Run {
    let module = module.to_str().unwrap();
    xtask_in(repo, &["bump", "--commit", commit, "--module", module])
}

/// `bump --commit C` on the module of release `version`, in a fresh sandbox: it must exit
/// `code` and write nothing.
fn bump_refused(commit: &str, version: &str, code: i32) -> Run {
    let repo = Sandbox::new();
    let module = module_of(version, repo.root());
    repo.run_writing_nothing(code, || bump(&repo, commit, &module))
}

/// `xtask COMMAND --manifest M --fetch --raw-base-url URL --cache-dir DIR [EXTRA...]`.
fn fetching(command: &str, m: &str, url: &str, cache: &str, extra: &[&str]) -> Run {
    let mut args = vec![command, "--manifest", m];
    args.extend(["--fetch", "--raw-base-url", url, "--cache-dir", cache]);
    args.extend_from_slice(extra);
    xtask(&args, &[])
}

/// The lines that differ between two texts of the same line count.
fn changed_lines(before: &str, after: &str) -> Vec<(String, String)> {
    let (b, a): (Vec<_>, Vec<_>) = (before.lines().collect(), after.lines().collect());
    assert_eq!(b.len(), a.len(), "line count changed:\n{after}");
    b.iter()
        .zip(&a)
        .filter(|(x, y)| x != y)
        .map(|(x, y)| (x.to_string(), y.to_string()))
        .collect()
}

fn assert_pinned_to_0_3_12(before: &str, after: &str) {
    let old_commit = before.lines().find(|l| l.starts_with("commit = ")).unwrap();
    let old_sha = before.lines().find(|l| l.starts_with("sha256 = ")).unwrap();
    assert_eq!(
        changed_lines(before, after),
        [
            (old_commit.to_owned(), format!("commit = \"{COMMIT}\"")),
            (old_sha.to_owned(), format!("sha256 = \"{SHA256}\"")),
        ]
    );
}

#[test]
fn bump_moves_only_the_pin_lines_and_regenerates() {
    let repo = Sandbox::new();
    let before = repo.read("api.toml");
    let module = module_of("0.3.12.post1", repo.root());
    let run = bump(&repo, COMMIT, &module);
    assert_eq!(run.code, Some(0), "{run:?}");
    run.assert_stdout_has("upstream pin 4dbe5a4c -> 6041a609");
    assert_pinned_to_0_3_12(&before, &repo.read("api.toml"));

    let shim =
        std::fs::read_to_string(repo.root().join("generated/python/mooncake_sos.py")).unwrap();
    assert!(
        shim.contains(&format!("UPSTREAM_COMMIT = \"{COMMIT}\"")),
        "the shim was regenerated"
    );
    let check = xtask_in(&repo, &["regen", "--check"]);
    assert_eq!(check.code, Some(0), "{check:?}");
    // The new pin is the file: --sha256 now passes.
    let m = module.to_str().unwrap();
    let run = xtask_in(&repo, &["verify", "--module", m, "--sha256"]);
    assert_eq!(run.code, Some(0), "{run:?}");
}

#[test]
fn bump_refuses_a_module_without_the_api_and_writes_nothing() {
    let run = bump_refused(COMMIT, "0.3.11.post1", 1);
    run.assert_stdout_has("FieldSchema: missing: expected dataclass, found nothing");
    run.assert_refused("bump");
}

#[test]
fn bump_rejects_a_malformed_commit() {
    let run = bump_refused("6041a60", "0.3.12.post1", 2);
    run.assert_stderr_has("expected 40 lowercase hex digits");
}

#[test]
fn fetch_downloads_checks_and_caches_the_pinned_module() {
    let repo = Sandbox::new();
    let m = repo.manifest();
    let m = m.to_str().unwrap();
    let cache = repo.root().join("cache");
    let c = cache.to_str().unwrap();
    let module = module_of("0.3.12.post1", repo.root());
    let bytes = std::fs::read(&module).unwrap();
    let server = FileServer::start(HashMap::from([(RAW_PATH.to_owned(), bytes.clone())]));
    let url = server.base_url.clone();

    // bump --fetch: the module at the new commit, verified, then pinned.
    let before = std::fs::read_to_string(m).unwrap();
    let run = fetching("bump", m, &url, c, &["--commit", COMMIT]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_pinned_to_0_3_12(&before, &std::fs::read_to_string(m).unwrap());
    let cached = cache.join(COMMIT).join("structured_object_store.py");
    assert_eq!(std::fs::read(&cached).unwrap(), bytes);
    assert_eq!(server.requests().len(), 1);

    // verify --fetch: the cached copy has the pinned hash, so there is no second request.
    let run = fetching("verify", m, &url, c, &["--sha256"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(server.requests().len(), 1);

    // A server handing out another file is refused on its hash, and nothing is cached.
    let other = module_of("0.3.13.post1", repo.root());
    let liar = FileServer::start(HashMap::from([(
        RAW_PATH.to_owned(),
        std::fs::read(other).unwrap(),
    )]));
    let fresh = repo.root().join("fresh-cache");
    let f = fresh.to_str().unwrap();
    let run = fetching("verify", m, &liar.base_url, f, &[]);
    assert_eq!(run.code, Some(2), "{run:?}");
    let want = format!("{}{RAW_PATH}: error: sha256 is 41ba64e6", liar.base_url);
    run.assert_stderr(|e| e.starts_with(&want));
    assert!(!fresh.exists(), "a file with the wrong hash was cached");

    // A missing file is a located error too.
    drop(server);
    let empty = FileServer::start(HashMap::new());
    let run = fetching("verify", m, &empty.base_url, f, &[]);
    assert_eq!(run.code, Some(2), "{run:?}");
    run.assert_stderr_has("server answered `HTTP/1.1 404 Not Found`");
}

#[test]
fn fetch_checks_the_file_set_at_the_new_commit_before_writing() {
    const FILE_PATH: &str = "/kvcache-ai/Mooncake/6041a609a8c3af35e778f70db344f145c2914980/mooncake-wheel/mooncake/_partial_read.py";
    let file = b"def plan_matrix_read():\n    pass\n".to_vec();
    let sha = mooncake_sos_pysource::source::sha256_hex(&file);
    let repo = Sandbox::new();
    repo.edit(
        "api.toml",
        "\n# The Python shim",
        &format!(
            "\n[[upstream.file]]\npath = \"mooncake-wheel/mooncake/_partial_read.py\"\nsha256 = \"{sha}\"\n\n# The Python shim"
        ),
    );
    let m = repo.manifest();
    let m = m.to_str().unwrap();
    let module = std::fs::read(module_of("0.3.12.post1", repo.root())).unwrap();
    let bump = |url: &str| {
        let cache = repo.root().join("cache");
        fetching(
            "bump",
            m,
            url,
            cache.to_str().unwrap(),
            &["--commit", COMMIT],
        )
    };
    // The file at the new commit is not the one declared: refused, nothing written.
    let liar = FileServer::start(HashMap::from([
        (RAW_PATH.to_owned(), module.clone()),
        (FILE_PATH.to_owned(), b"something else\n".to_vec()),
    ]));
    let run = repo.run_writing_nothing(2, || bump(&liar.base_url));
    assert_eq!(run.stdout, "", "{run:?}");
    let want = format!("{}{FILE_PATH}: error: sha256 is ", liar.base_url);
    run.assert_stderr(|e| e.starts_with(&want));
    run.assert_stderr_has(&format!(
        "expected {sha} ([[upstream.file]] mooncake-wheel/mooncake/_partial_read.py in api.toml)"
    ));
    // The declared file: the pin moves.
    let server = FileServer::start(HashMap::from([
        (RAW_PATH.to_owned(), module),
        (FILE_PATH.to_owned(), file),
    ]));
    let run = bump(&server.base_url);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        repo.read("api.toml")
            .contains(&format!("commit = \"{COMMIT}\""))
    );
}
