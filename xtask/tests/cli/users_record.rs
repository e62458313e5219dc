//! `cargo xtask users --record` with no wheel: each user an image names (cuda: sglang==0.5.16)
//! read from a loopback PEP 503 index serving the real sglang wheel, through watch's index and
//! sha256-keyed cache. The record is the committed one, byte for byte, as from the wheel file;
//! a second run reads the cache; a release the index lacks, bytes that are not the page's
//! sha256 and an index nothing answers are bad input naming the image and the user, with
//! nothing written. A redirect is followed only within the index's scheme, host and port,
//! and the `read:` line names the URL finally read.

use crate::common::{Run, Sandbox, XTASK, repo_root};
use mooncake_sos_pysource::source::sha256_hex as sha256;
use mooncake_sos_testkit::{FileServer, SimpleIndex, env_path};
use std::path::{Path, PathBuf};
use std::process::Command;

const WHEEL: &str = "sglang-0.5.16-cp311-cp311-manylinux_2_34_x86_64.whl";
const RECORD: &str = "consumers/sglang-0.5.16.json";

fn sglang_wheel() -> PathBuf {
    env_path("MC_TEST_CONSUMER_WHEELS").join(WHEEL)
}

/// A sandbox without sglang's record, so every run must write it.
fn sandbox() -> Sandbox {
    let sandbox = Sandbox::new();
    std::fs::remove_file(sandbox.path(RECORD)).unwrap();
    sandbox
}

/// `xtask users --record ARGS --manifest <sandbox>/api.toml`, in the sandbox.
fn record(sandbox: &Sandbox, args: &[&str]) -> Run {
    let mut cmd = Command::new(XTASK);
    cmd.args(["users", "--record"])
        .args(args)
        .arg("--manifest")
        .arg(sandbox.manifest())
        .current_dir(sandbox.root());
    Run::from(cmd.output().expect("run xtask"))
}

fn from_index(sandbox: &Sandbox, url: &str, cache: &Path) -> Run {
    let cache = cache.to_str().unwrap();
    record(sandbox, &["--index-url", url, "--watch-cache", cache])
}

fn consumers(sandbox: &Sandbox) -> Vec<String> {
    std::fs::read_dir(sandbox.path("consumers"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn a_record_from_the_index_is_the_committed_one_and_a_second_run_reads_the_cache() {
    let committed = std::fs::read(repo_root().join(RECORD)).unwrap();
    let bytes = std::fs::read(sglang_wheel()).unwrap();
    let (sha, size) = (sha256(&bytes), bytes.len());
    let index = SimpleIndex::serve(&[sglang_wheel()]);
    let cache = tempfile::tempdir().unwrap();
    let repo = sandbox();

    let run = from_index(&repo, &index.url, cache.path());
    assert_eq!(run.code, Some(0), "{run:?}");
    let lines: Vec<&str> = run.stdout.lines().collect();
    let read = format!(
        "read: image cuda's user sglang==0.5.16: {}/files/{WHEEL}, sha256 {sha}",
        index.server.base_url
    );
    assert_eq!(lines.len(), 2, "{run:?}");
    assert_eq!(lines[0], format!("{read}, downloaded ({size} bytes)"));
    assert!(
        lines[1].starts_with(&format!("written: {RECORD} (")),
        "{run:?}"
    );
    assert!(
        std::fs::read(repo.path(RECORD)).unwrap() == committed,
        "the record from the index is not the committed {RECORD}"
    );
    // Kept in watch's cache under its hash.
    assert!(cache.path().join("blobs").join(&sha).join(WHEEL).is_file());
    let downloads = |i: &SimpleIndex| {
        let requests = i.server.requests();
        requests.iter().filter(|r| r.starts_with("/files/")).count()
    };
    assert_eq!(downloads(&index), 1);

    // Again: the cache alone, not even the index page.
    let asked = index.server.requests().len();
    std::fs::remove_file(repo.path(RECORD)).unwrap();
    let run = from_index(&repo, &index.url, cache.path());
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.stdout.lines().next(), Some(&*format!("{read}, cached")));
    assert_eq!(index.server.requests().len(), asked, "{run:?}");
    assert!(std::fs::read(repo.path(RECORD)).unwrap() == committed);

    // The wheel file given by path writes the same bytes.
    let repo = sandbox();
    let run = record(&repo, &[sglang_wheel().to_str().unwrap()]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(std::fs::read(repo.path(RECORD)).unwrap() == committed);
}

#[test]
fn a_release_the_index_lacks_is_bad_input_and_nothing_is_written() {
    let index = SimpleIndex::serve(&[sglang_wheel()]);
    let cache = tempfile::tempdir().unwrap();
    let refused = |users: &str, why: String| {
        let repo = sandbox();
        repo.edit("api.toml", "users = [\"sglang==0.5.16\"]", users);
        let run = from_index(&repo, &index.url, cache.path());
        assert_eq!(run.code, Some(2), "{run:?}");
        assert_eq!(run.stdout, "", "{run:?}");
        assert_eq!(
            run.stderr,
            format!("api.toml: error: image cuda's {why}; nothing written\n")
        );
        assert_eq!(consumers(&repo), Vec::<String>::new());
    };
    // sglang's page lists 0.5.16 only.
    refused(
        "users = [\"sglang==0.5.17\"]",
        format!(
            "user sglang==0.5.17: the index lists no wheel of this release ({}sglang/)",
            index.url
        ),
    );
    // sglang 0.5.16 is on the index and read first; vllm is not: neither record is written.
    refused(
        "users = [\"sglang==0.5.16\", \"vllm==0.1.0\"]",
        format!(
            "user vllm==0.1.0: {}vllm/: server answered `HTTP/1.1 404 Not Found`",
            index.url
        ),
    );
}

#[test]
fn a_wheel_whose_bytes_are_not_the_pages_sha256_is_refused() {
    let bytes = std::fs::read(sglang_wheel()).unwrap();
    let listed = sha256(&bytes);
    let mut tampered = bytes;
    tampered.extend_from_slice(b"tampered");
    let got = sha256(&tampered);
    let page = format!("<a href=\"../../files/{WHEEL}#sha256={listed}\">{WHEEL}</a>\n");
    let server = FileServer::start([
        ("/simple/sglang/".to_owned(), page.into_bytes()),
        (format!("/files/{WHEEL}"), tampered),
    ]);
    let cache = tempfile::tempdir().unwrap();
    let repo = sandbox();
    let url = format!("{}/simple/", server.base_url);
    let run = from_index(&repo, &url, cache.path());
    assert_eq!(run.code, Some(2), "{run:?}");
    assert_eq!(run.stdout, "", "{run:?}");
    assert_eq!(
        run.stderr,
        format!(
            "api.toml: error: image cuda's user sglang==0.5.16: {WHEEL} has sha256 {got}, the \
             index page lists {listed}; nothing written\n"
        )
    );
    assert!(server.requests().contains(&format!("/files/{WHEEL}")));
    assert_eq!(consumers(&repo), Vec::<String>::new());
    let blobs = std::fs::read_dir(cache.path().join("blobs")).map_or(0, |d| d.count());
    assert_eq!(blobs, 0, "nothing of the refused file is kept");
}

#[test]
fn an_index_nothing_answers_is_bad_input_naming_the_image_and_the_user() {
    // A port nothing listens on: bound, then released.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/simple/");
    let cache = tempfile::tempdir().unwrap();
    let repo = sandbox();
    let run = from_index(&repo, &url, cache.path());
    assert_eq!(run.code, Some(2), "{run:?}");
    assert_eq!(run.stdout, "", "{run:?}");
    let prefix = format!(
        "api.toml: error: image cuda's user sglang==0.5.16: {url}sglang/: cannot download: "
    );
    assert!(run.stderr.starts_with(&prefix), "{run:?}");
    assert!(run.stderr.ends_with("; nothing written\n"), "{run:?}");
    assert_eq!(run.stderr.lines().count(), 1, "{run:?}");
    assert_eq!(consumers(&repo), Vec::<String>::new());
}

/// sglang's page (linking `../../files/WHEEL` with its sha256) and the wheel, on a server of
/// its own: another port than the index's.
fn elsewhere() -> FileServer {
    let bytes = std::fs::read(sglang_wheel()).unwrap();
    let page = format!(
        "<a href=\"../../files/{WHEEL}#sha256={}\">{WHEEL}</a>\n",
        sha256(&bytes)
    );
    FileServer::start([
        ("/simple/sglang/".to_owned(), page.into_bytes()),
        (format!("/files/{WHEEL}"), bytes),
    ])
}

/// An index whose page, or whose file, answers `302 Found` to the same path on another port
/// (a server that has them): refused, located at the URL asked, naming where it led; before,
/// urllib and pip followed it.
#[test]
fn a_redirect_to_another_port_is_refused_naming_both_urls() {
    let other = elsewhere();
    let page = "/simple/sglang/".to_owned();
    let file = format!("/files/{WHEEL}");
    let listing = std::fs::read(sglang_wheel()).map(|b| {
        format!(
            "<a href=\"../../files/{WHEEL}#sha256={}\">{WHEEL}</a>\n",
            sha256(&b)
        )
    });
    for redirected in [&page, &file] {
        let index = FileServer::redirecting(
            [(page.clone(), listing.as_ref().unwrap().clone().into_bytes())],
            [(
                redirected.clone(),
                format!("{}{redirected}", other.base_url),
            )],
        );
        let cache = tempfile::tempdir().unwrap();
        let repo = sandbox();
        let url = format!("{}/simple/", index.base_url);
        let run = from_index(&repo, &url, cache.path());
        assert_eq!(run.code, Some(2), "{run:?}");
        assert_eq!(run.stdout, "", "{run:?}");
        assert_eq!(
            run.stderr,
            format!(
                "api.toml: error: image cuda's user sglang==0.5.16: {0}{redirected}: redirected \
                 (302 Found) to {1}{redirected}: another scheme, host or port; redirects are \
                 followed only within the one asked; nothing written\n",
                index.base_url, other.base_url
            )
        );
        assert_eq!(consumers(&repo), Vec::<String>::new());
        assert!(!other.requests().contains(redirected), "{redirected}");
    }
}

/// A file that moved on the index's own host: followed, and the `read:` line names where it
/// was read.
#[test]
fn a_redirect_within_the_index_is_followed_and_read_names_the_final_url() {
    let bytes = std::fs::read(sglang_wheel()).unwrap();
    let (sha, size) = (sha256(&bytes), bytes.len());
    let page = format!("<a href=\"../../files/{WHEEL}#sha256={sha}\">{WHEEL}</a>\n");
    let moved = format!("/moved/{WHEEL}");
    let index = FileServer::redirecting(
        [
            ("/simple/sglang/".to_owned(), page.into_bytes()),
            (moved.clone(), bytes),
        ],
        [(format!("/files/{WHEEL}"), moved.clone())],
    );
    let cache = tempfile::tempdir().unwrap();
    let repo = sandbox();
    let url = format!("{}/simple/", index.base_url);
    let run = from_index(&repo, &url, cache.path());
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(
        run.stdout.lines().next(),
        Some(&*format!(
            "read: image cuda's user sglang==0.5.16: {}{moved}, sha256 {sha}, downloaded ({size} \
             bytes)",
            index.base_url
        )),
        "{run:?}"
    );
    assert!(index.requests().contains(&moved));
}

/// Without `--index-url` pip reads its configured index (here PIP_INDEX_URL): a release it
/// lacks is said as with `--index-url`, not in pip's words.
#[test]
fn a_release_pips_configured_index_lacks_is_said_in_the_tools_words() {
    let index = SimpleIndex::serve(&[sglang_wheel()]);
    let cache = tempfile::tempdir().unwrap();
    let repo = sandbox();
    repo.edit(
        "api.toml",
        "users = [\"sglang==0.5.16\"]",
        "users = [\"sglang==0.5.17\"]",
    );
    let mut cmd = Command::new(XTASK);
    cmd.args(["users", "--record", "--watch-cache"])
        .arg(cache.path())
        .arg("--manifest")
        .arg(repo.manifest())
        .current_dir(repo.root())
        .env("PIP_INDEX_URL", &index.url)
        .env_remove("PIP_FIND_LINKS")
        .env_remove("PIP_EXTRA_INDEX_URL");
    let run = Run::from(cmd.output().expect("run xtask"));
    assert_eq!(run.code, Some(2), "{run:?}");
    assert_eq!(
        run.stderr,
        "api.toml: error: image cuda's user sglang==0.5.17: the index lists no wheel of this \
         release (pip's configured index); nothing written\n"
    );
    assert_eq!(consumers(&repo), Vec::<String>::new());
}
