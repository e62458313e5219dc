//! scripts/docker-e2e.sh with a name filter that matches no docker test: a mistake (a test
//! renamed, a typo), not a pass. The script lists the filter's tests first (`cargo test --
//! --list`), so it fails at once, saying so, before it asks for the Docker daemon or makes an
//! image; and a run in which no test ran fails too.

use mooncake_sos_tests::repo_root;
use std::process::Command;

#[test]
fn a_filter_that_matches_no_docker_test_fails_before_docker_is_asked() {
    let filter = "no_docker_test_is_named_so";
    let out = Command::new("bash")
        .arg(repo_root().join("scripts/docker-e2e.sh"))
        .arg(filter)
        .output()
        .expect("run scripts/docker-e2e.sh");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert_eq!(
        stderr,
        format!("docker-e2e: the filter `{filter}` matches no test\n")
    );
    // Nothing else: no Docker Engine line, no base images, no test run.
    assert_eq!(stdout, "docker-e2e: 0 passed, 1 failed\n");
}
