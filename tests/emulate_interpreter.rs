//! The Dockerfile interpreter behind the layer emulation tests does what docker does with
//! the parts the generated regions use: ARG scoping and overrides, expansion, /bin/sh, COPY
//! into the root, and a failing step reported with its line and output.

use mooncake_sos_tests::dockerfile::{Build, BuildError, parse, region};
use mooncake_sos_tests::repo_root;
use std::path::Path;
use std::time::{Duration, Instant};

fn build(root: &Path, args: &[(&str, &str)]) -> Build {
    Build {
        context: root.to_owned(),
        root: root.to_owned(),
        // No venv needed here: bin/ of a missing directory on PATH is harmless.
        venv: root.join("no-venv"),
        base_env: vec![("BASE_ONLY".into(), "from-base".into())],
        build_args: args
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        step_timeout: Duration::from_secs(30),
    }
}

fn run(args: &[(&str, &str)], text: &str) -> (tempfile::TempDir, Result<(), BuildError>) {
    let dir = tempfile::tempdir().unwrap();
    let result = build(dir.path(), args).run(text, 1).map(|_| ());
    (dir, result)
}

fn read(dir: &tempfile::TempDir, name: &str) -> String {
    std::fs::read_to_string(dir.path().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn arg_scope_and_overrides_are_docker_s() {
    let text = "ARG TAG=1.0\nARG GLOBAL_ONLY=g\nFROM base:${TAG}\nARG TAG\nARG LOCAL=\"a b\"\nARG OVER=default\n\
                RUN printf '%s|%s|%s|%s|%s' \"$TAG\" \"${GLOBAL_ONLY:-unset}\" \"$LOCAL\" \"$OVER\" \"$BASE_ONLY\" > out\n";
    let (dir, result) = run(&[("OVER", "given"), ("TAG", "2.0")], text);
    result.unwrap();
    // TAG re-declared in the stage takes the override; GLOBAL_ONLY is not in the stage.
    assert_eq!(read(&dir, "out"), "2.0|unset|a b|given|from-base");
}

#[test]
fn from_uses_global_args_and_rejects_an_empty_tag() {
    let dir = tempfile::tempdir().unwrap();
    let log = build(dir.path(), &[])
        .run("ARG TAG=v1\nFROM img:${TAG}\n", 1)
        .unwrap();
    assert_eq!(log.from, ["img:v1"]);
    let err = build(dir.path(), &[])
        .run("ARG TAG\nFROM img:${TAG}\n", 1)
        .unwrap_err();
    assert_eq!((err.step, err.line), (2, 2));
    assert!(err.message.contains("invalid reference format"), "{err}");
}

#[test]
fn an_unconsumed_build_arg_is_an_error() {
    let (_dir, result) = run(&[("TYPO_ARG", "x")], "FROM base:1\nARG REAL=1\n");
    let err = result.unwrap_err();
    assert!(
        err.message.contains("[\"TYPO_ARG\"] were not consumed"),
        "{err}"
    );
}

#[test]
fn env_wins_over_arg_and_run_text_is_left_to_the_shell() {
    let text = "FROM b:1\nARG X=arg\nENV X=env Y=${X}-y\nRUN echo \"$X $Y $0\" > out; echo '${X}' >> out\n";
    let (dir, result) = run(&[], text);
    result.unwrap();
    assert_eq!(read(&dir, "out"), "env arg-y /bin/sh\n${X}\n");
}

#[test]
fn a_failing_step_names_itself_and_keeps_its_output() {
    let text = "FROM b:1\n\n# a comment\nRUN echo one\nRUN set -eu; \\\n    echo before-the-failure; \\\n    exit 3\nRUN echo never > never\n";
    let (dir, result) = run(&[], text);
    let err = result.unwrap_err();
    assert_eq!((err.step, err.steps, err.line), (3, 4, 5), "{err}");
    assert!(
        err.instruction
            .starts_with("RUN set -eu;     echo before-the-failure;"),
        "{err}"
    );
    assert!(err.message.contains("exit status: 3"), "{err}");
    assert_eq!(err.output, "before-the-failure\n");
    assert!(
        !dir.path().join("never").exists(),
        "a step after the failure ran"
    );
}

#[test]
fn copy_writes_inside_the_root_only() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("src.txt"), "payload").unwrap();
    let dest = dir.path().join("opt/x");
    let text = "ARG DEST=/opt/x\nFROM b:1\nARG DEST\nCOPY src.txt ${DEST}/copied.txt\n";
    let b = build(dir.path(), &[("DEST", dest.to_str().unwrap())]);
    b.run(text, 1).unwrap();
    assert_eq!(
        std::fs::read_to_string(dest.join("copied.txt")).unwrap(),
        "payload"
    );
    // Two sources go into the destination directory.
    std::fs::write(dir.path().join("second.txt"), "two").unwrap();
    let into = format!("{}/", dest.join("dir").display());
    let two = format!("FROM b:1\nCOPY src.txt second.txt {into}\n");
    build(dir.path(), &[]).run(&two, 1).unwrap();
    assert_eq!(
        std::fs::read_to_string(dest.join("dir/second.txt")).unwrap(),
        "two"
    );
    assert_eq!(
        std::fs::read_to_string(dest.join("dir/src.txt")).unwrap(),
        "payload"
    );
    // The default /opt/x is outside the root: refused, naming the fix.
    let err = build(dir.path(), &[]).run(text, 1).unwrap_err();
    assert!(
        err.message
            .contains("/opt/x/copied.txt is outside the emulation root"),
        "{err}"
    );
}

#[test]
fn a_hanging_step_is_killed() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = build(dir.path(), &[]);
    b.step_timeout = Duration::from_secs(1);
    let started = Instant::now();
    let err = b.run("FROM b:1\nRUN sleep 30 & wait\n", 1).unwrap_err();
    assert!(err.message.contains("timed out"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn the_regions_of_the_shipped_dockerfiles_parse_with_their_line_numbers() {
    for (file, id) in [
        ("docker/Dockerfile", "overlay"),
        ("docker/Dockerfile.rocm", "fill"),
    ] {
        let text = std::fs::read_to_string(repo_root().join(file)).unwrap();
        let (body, first) = region(&text, "mooncake-sos", id).unwrap();
        let instructions = parse(&body, first).unwrap();
        let keywords: Vec<&str> = instructions.iter().map(|i| i.keyword.as_str()).collect();
        assert_eq!(keywords.first(), Some(&"ARG"), "{file}");
        assert!(
            keywords.contains(&"FROM") && keywords.contains(&"COPY"),
            "{file}: {keywords:?}"
        );
        assert_eq!(
            keywords.iter().filter(|k| **k == "RUN").count(),
            2,
            "{file}: {keywords:?}"
        );
        for ins in &instructions {
            let line = text.lines().nth(ins.line - 1).unwrap();
            assert!(
                line.starts_with(&ins.keyword),
                "{file}:{}: {line}",
                ins.line
            );
        }
    }
}
