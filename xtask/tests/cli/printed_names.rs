//! Names a hostile wheel or a doctored record can hold (an escape sequence, a bell, a line
//! break, a carriage return, a bidi override, a pipe, HTML, a heading, backticks), through
//! every output that prints them: `verify`, `users`, `core` (summary, `--json`, `--diff` as
//! text, Markdown and JSON), `matrix --core`, `verify --consumer` / `--surface`. Each name is
//! shown escaped on its own line, tables keep their rows (rendered by GitHub's cmark-gfm),
//! JSON reads back the same names, and `core --record` / `users --record` refuse such names,
//! writing nothing. (watch's formats: watch/src/render_tests.rs.)

use crate::common::cores::{compile_shared, make_wheel};
use crate::common::{Run, Sandbox, repo_root, write_file, xtask, xtask_in};
use mooncake_sos_testkit::{render_markdown, wheel};
use serde_json::{Value, json};

/// Each hostile name, and how text shows it.
const NAMES: [(&str, &str); 9] = [
    ("put\x1b[31m", "put\\x1b[31m"),
    ("ring\x07", "ring\\x07"),
    ("two\nlines", "two\\nlines"),
    ("over\rwrite", "over\\rwrite"),
    ("abc\u{202e}fed", "abc\\u{202e}fed"),
    ("a|b", "a|b"),
    ("<img src=x>", "<img src=x>"),
    ("# heading", "# heading"),
    ("`tick`", "`tick`"),
];

const BASE: &str = "cores/mooncake-transfer-engine-cuda13-0.3.11.post1.json";
const USERS: &str = "consumers/sglang-0.5.16.json";

/// Nothing in `out` is a character that does not print, but line breaks.
fn all_printing(out: &str) -> bool {
    out.chars()
        .all(|c| c == '\n' || mooncake_sos_support::escape::prints(c))
}

fn edit_json(path: &std::path::Path, edit: impl Fn(&mut Value)) {
    let mut value: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    edit(&mut value);
    std::fs::write(path, serde_json::to_string_pretty(&value).unwrap()).unwrap();
}

/// The base core holds each name as a read-only property of the store class; sglang's record
/// probes each on `ReplicateConfig` (lines 1..) and reads each on the store (lines 100..).
fn doctored_sandbox() -> Sandbox {
    let repo = Sandbox::new();
    edit_json(&repo.path(BASE), |core| {
        let members = &mut core["classes"]["MooncakeDistributedStore"]["members"];
        for (name, _) in NAMES {
            members[name] = json!({"kind": "property", "readonly": true});
        }
    });
    edit_json(&repo.path(USERS), |record| {
        let uses = record["uses"].as_array_mut().unwrap();
        for (i, (name, _)) in NAMES.iter().enumerate() {
            uses.push(json!({"file": "sglang/hostile.py", "line": i + 1,
                "module": "mooncake.store", "member": format!("ReplicateConfig.{name}"),
                "access": {"kind": "probe"}, "guard": format!("probed by hasattr at line {}", i + 1)}));
            uses.push(json!({"file": "sglang/hostile.py", "line": i + 100,
                "module": "mooncake.store", "member": format!("MooncakeDistributedStore.{name}"),
                "access": {"kind": "read"}, "guard": null}));
        }
    });
    repo
}

fn warning(i: usize, shown: &str) -> String {
    format!(
        "warning: sglang/hostile.py:{}: mooncake.store.ReplicateConfig.{shown}: image cuda: \
         probed, absent from the base core 0.3.11.post1 too: the fallback is taken before and \
         after the pin",
        i + 1
    )
}

fn failure(i: usize, shown: &str) -> String {
    format!(
        "sglang/hostile.py:{}: mooncake.store.MooncakeDistributedStore.{shown}: image cuda: \
         served by the base core 0.3.11.post1, absent from the pinned 0.3.12.post1",
        i + 100
    )
}

#[test]
fn verify_and_users_print_each_recorded_name_escaped_on_its_own_line() {
    let repo = doctored_sandbox();
    let warnings: Vec<String> = (NAMES.iter().enumerate())
        .map(|(i, (_, shown))| warning(i, shown))
        .collect();
    let failures: Vec<String> = (NAMES.iter().enumerate())
        .map(|(i, (_, shown))| failure(i, shown))
        .collect();

    let run = xtask_in(&repo, &["users"]);
    assert_eq!(run.code, Some(1), "{run:?}");
    let lines: Vec<&str> = run.stdout.lines().collect();
    // sglang's own three warnings (group_ids), then one line per name and use, the summary.
    assert_eq!(lines.len(), 3 + 9 + 9 + 1, "{run:?}");
    let ours: Vec<&str> = lines
        .iter()
        .filter(|l| l.contains("sglang/hostile.py"))
        .copied()
        .collect();
    let want: Vec<&str> = warnings
        .iter()
        .chain(&failures)
        .map(String::as_str)
        .collect();
    assert_eq!(ours, want);
    assert_eq!(
        lines[21],
        "image cuda: sglang 0.5.16: 76 uses across the cuda pin 0.3.11.post1 -> 0.3.12.post1: 9 \
         broken, 12 warnings"
    );
    assert!(all_printing(&run.stdout), "{run:?}");

    let whl = wheel("0.3.12.post1");
    let run = xtask_in(&repo, &["verify", "--wheel", whl.to_str().unwrap()]);
    assert_eq!(run.code, Some(1), "{run:?}");
    let report = run.report();
    assert_eq!(report, failures, "{run:?}");
    assert!(
        run.last_line().starts_with("verify: 9 mismatch(es) in "),
        "{run:?}"
    );
    let stderr: Vec<&str> = run.stderr.lines().collect();
    for w in &warnings {
        assert!(stderr.contains(&w.as_str()), "no line {w:?}: {run:?}");
    }
    assert!(
        all_printing(&run.stdout) && all_printing(&run.stderr),
        "{run:?}"
    );
}

#[test]
fn core_diff_shows_each_name_escaped_as_text_a_table_row_in_markdown_and_as_is_in_json() {
    let repo = doctored_sandbox();
    let (old, new) = (repo.path(BASE), repo_root().join(BASE));
    let (old, new) = (old.to_str().unwrap(), new.to_str().unwrap());
    // The record's members in its order (BTreeMap: by bytes).
    let mut sorted = NAMES.to_vec();
    sorted.sort();
    let path = |shown: &str| format!("mooncake.store.MooncakeDistributedStore.{shown}");

    let run = xtask(&["core", "--diff", old, new], &[]);
    assert_eq!(run.code, Some(1), "{run:?}");
    let mut want = vec![
        "mooncake-transfer-engine-cuda13 0.3.11.post1 -> mooncake-transfer-engine-cuda13 \
         0.3.11.post1: 9 breaking, 0 added, 0 compatible"
            .to_owned(),
        "breaking:".to_owned(),
    ];
    want.extend(
        sorted
            .iter()
            .map(|(_, shown)| format!("  {}: read-only property removed", path(shown))),
    );
    assert_eq!(run.stdout.lines().collect::<Vec<_>>(), want, "{run:?}");

    let run = xtask(&["core", "--markdown", "--diff", old, new], &[]);
    assert_eq!(run.code, Some(1), "{run:?}");
    let rows: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.starts_with("| `"))
        .collect();
    let code = |s: String| {
        let s = s.replace('|', "\\|");
        if s.contains('`') {
            format!("`` {s} ``")
        } else {
            format!("`{s}`")
        }
    };
    let want: Vec<String> = sorted
        .iter()
        .map(|(_, shown)| format!("| {} | `read-only property removed` |", code(path(shown))))
        .collect();
    assert_eq!(rows, want, "{run:?}");
    // As GitHub shows it: the one heading, one table of 9 rows, each name as text.
    let page = render_markdown(&run.stdout);
    assert_eq!(
        (page.count("h3"), page.count("table"), page.count("tr")),
        (1, 1, 10),
        "{}",
        page.html
    );
    for tag in ["a", "img", "h1", "h2", "h4"] {
        assert_eq!(page.count(tag), 0, "<{tag}> in {}", page.html);
    }
    let cells = page.cells();
    let names: Vec<String> = cells.iter().step_by(2).cloned().collect();
    let shown: Vec<String> = sorted.iter().map(|(_, s)| path(s)).collect();
    assert_eq!(names, shown);

    let run = xtask(&["core", "--json", "--diff", old, new], &[]);
    assert!(all_printing(&run.stdout), "{run:?}");
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    let paths: Vec<&str> = (report["changes"].as_array().unwrap().iter())
        .map(|c| c["path"].as_str().unwrap())
        .collect();
    let raw: Vec<String> = sorted.iter().map(|(name, _)| path(name)).collect();
    assert_eq!(paths, raw);
}

/// A made-up core wheel whose `mooncake.store` is a module its package's `__init__.py` puts in
/// `sys.modules` (as the venv's `store.so`, which is never loaded): a class whose members
/// are the hostile names, and whose constructor's pybind11-style signature names a parameter
/// with an escape sequence. (the temp dir, the wheel)
fn hostile_core_wheel() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let so = compile_shared(
        dir.path(),
        "store",
        "void *PyInit_store(void) { return 0; }\n",
    );
    let file = "store.cpython-311-x86_64-linux-gnu.so";
    let names: Vec<String> = NAMES.iter().map(|(n, _)| python_str(n)).collect();
    let init = format!(
        "import os, sys, types\n\
         store = types.ModuleType('mooncake.store')\n\
         store.__file__ = os.path.join(os.path.dirname(__file__), {file:?})\n\
         class MooncakeDistributedStore:\n\
         \x20   def __init__(self, key):\n\
         \x20       '__init__(self, key\\x1b[31m: str) -> None'\n\
         for name in [{}]:\n\
         \x20   setattr(MooncakeDistributedStore, name, property(lambda self: 1))\n\
         store.MooncakeDistributedStore = MooncakeDistributedStore\n\
         sys.modules['mooncake.store'] = store\n",
        names.join(", ")
    );
    let whl = make_wheel(
        dir.path(),
        "mooncake-hostile",
        "1.0",
        &[
            ("mooncake/__init__.py", init.as_bytes()),
            (&format!("mooncake/{file}"), &so),
        ],
    );
    (dir, whl.display().to_string())
}

/// `s` as a Python string literal, every character but plain ASCII as `\UXXXXXXXX`.
fn python_str(s: &str) -> String {
    let body: String = s
        .chars()
        .map(|c| match c {
            ' '..='~' if c != '\'' && c != '\\' => c.to_string(),
            c => format!("\\U{:08x}", c as u32),
        })
        .collect();
    format!("'{body}'")
}

/// stderr without the line saying how the wheel's code ran.
fn after_isolation(run: &Run) -> &str {
    match run.stderr.split_once('\n') {
        Some((first, rest)) if first.starts_with("the wheels' code runs ") => rest,
        _ => &run.stderr,
    }
}

#[test]
fn a_core_with_hostile_names_is_not_recorded_and_every_reading_prints_them_escaped() {
    let (_dir, whl) = hostile_core_wheel();
    let repo = Sandbox::new();
    let cores_before = std::fs::read_dir(repo.path("cores")).unwrap().count();
    let run = xtask_in(&repo, &["core", "--no-cache", "--record", &whl]);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert_eq!(run.stdout, "");
    assert_eq!(
        after_isolation(&run),
        format!(
            "{whl}: error: its core has a name that is not a Python identifier: mooncake.store: \
             class MooncakeDistributedStore: member '# heading' (ASCII letters, digits and `_`, \
             not starting with a digit); nothing written\n"
        )
    );
    let cores_after = std::fs::read_dir(repo.path("cores")).unwrap().count();
    assert_eq!(cores_after, cores_before, "nothing written");

    // Read, not recorded: the summary quotes the constructor the core has, escaped.
    let run = xtask(&["core", "--no-cache", &whl], &[]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.stdout.lines().count(), 1, "{run:?}");
    run.assert_stdout_has(
        "first: MooncakeDistributedStore (call ()): overload differs; found (key\\x1b[31m: str)",
    );
    assert!(all_printing(&run.stdout), "{run:?}");

    let run = xtask(&["core", "--no-cache", "--json", &whl], &[]);
    assert!(all_printing(&run.stdout), "{run:?}");
    let surfaces: Value = serde_json::from_str(&run.stdout).unwrap();
    let members = surfaces[0]["classes"]["MooncakeDistributedStore"]["members"]
        .as_object()
        .unwrap();
    let mut want: Vec<&str> = NAMES.iter().map(|(n, _)| *n).collect();
    want.push("__init__");
    want.sort();
    assert_eq!(members.keys().map(String::as_str).collect::<Vec<_>>(), want);

    // Against the image's core: every name an addition, one line each.
    let base = repo_root().join(BASE);
    let run = xtask(
        &["core", "--no-cache", "--diff", base.to_str().unwrap(), &whl],
        &[],
    );
    assert_eq!(run.code, Some(1), "{run:?}");
    let json = xtask(
        &[
            "core",
            "--no-cache",
            "--json",
            "--diff",
            base.to_str().unwrap(),
            &whl,
        ],
        &[],
    );
    let report: Value = serde_json::from_str(&json.stdout).unwrap();
    let changes = report["changes"].as_array().unwrap().len();
    let sections = ["breaking:", "added:", "changed, still compatible:"];
    let present = sections
        .iter()
        .filter(|s| run.stdout.contains(&format!("\n{s}\n")))
        .count();
    assert_eq!(run.stdout.lines().count(), 1 + present + changes, "{run:?}");
    for (_, shown) in NAMES {
        let line = format!("  mooncake.store.MooncakeDistributedStore.{shown}: read-only property");
        assert!(
            run.stdout.lines().any(|l| l == line),
            "no line {line:?}: {run:?}"
        );
    }
}

#[test]
fn a_users_wheel_with_a_hostile_name_is_refused_where_it_is_and_nothing_is_written() {
    let cases: [(&str, &[u8], &str); 2] = [
        (
            "sglang/hostile.py",
            b"from mooncake.store import MooncakeDistributedStore\n\
              store = MooncakeDistributedStore()\n\
              store.put(**{\"a\\nb\": 1})\n",
            "sglang/hostile.py:3: error: the keyword 'a\\nb' is not a Python identifier (ASCII \
             letters, digits and `_`, not starting with a digit)",
        ),
        (
            "sglang/ho\x1b[31mstile.py",
            b"from mooncake.store import MooncakeDistributedStore\n",
            "sglang/ho\\x1b[31mstile.py:1: error: the file's name holds a character that does \
             not print",
        ),
    ];
    for (file, source, says) in cases {
        let dir = tempfile::tempdir().unwrap();
        let whl = make_wheel(dir.path(), "sglang", "0.5.16", &[(file, source)]);
        let whl = whl.to_str().unwrap();
        let repo = Sandbox::new();
        let run = xtask_in(&repo, &["users", "--record", whl]);
        assert_eq!(run.code, Some(2), "{run:?}");
        assert_eq!(run.stdout, "");
        assert_eq!(run.stderr, format!("{whl}!{says}\n"));
        assert_eq!(
            repo.read(USERS),
            std::fs::read_to_string(repo_root().join(USERS)).unwrap()
        );
    }
}

#[test]
fn verify_consumer_and_surface_show_a_hostile_keyword_escaped_in_each_line() {
    let dir = tempfile::tempdir().unwrap();
    let source = "from mooncake.store import MooncakeDistributedStore\n\
                  store = MooncakeDistributedStore()\n\
                  store.put(**{\"a\\nb|<img src=x>\\x1b[31m\": 1})\n";
    let file = write_file(dir.path(), "c.py", source);
    let file = file.to_str().unwrap();
    let kw = "a\\nb|<img src=x>\\x1b[31m";
    let fits = "(key: str, value: Buffer, config: mooncake.store.ReplicateConfig = \
                <mooncake.store.ReplicateConfig object>)";
    let mut want = vec![
        format!("{file}:1: native MooncakeDistributedStore: read: required"),
        format!("{file}:2: native MooncakeDistributedStore: call(): required"),
        format!(
            "{file}:3: native MooncakeDistributedStore.put: call({kw}=) on an instance: required"
        ),
        format!(
            "{file}:3: native MooncakeDistributedStore.put: call: expected a call that fits \
             {fits}, found call({kw}=): no parameter `{kw}`"
        ),
    ];
    for (image, core) in [
        ("cuda", "mooncake-transfer-engine-cuda13"),
        ("rocm", "mooncake-transfer-engine-non-cuda"),
    ] {
        want.push(format!(
            "{file}:3: native MooncakeDistributedStore.put: image {image}: expected its core \
             {core} 0.3.12.post1 (cores/{core}-0.3.12.post1.json) to serve a call({kw}=), found \
             no overload takes the call (no parameter `{kw}`); found {fits}"
        ));
    }
    // The consumer scan: its findings, each at its place, the images that fail one named
    // together.
    let consumer = vec![
        format!(
            "{file}:3:7: native MooncakeDistributedStore.put: call: expected a call that fits \
             {fits}, found call({kw}=): no parameter `{kw}` [native-use]"
        ),
        format!(
            "{file}:3:7: native MooncakeDistributedStore.put: image: expected the cores of images \
             cuda (mooncake-transfer-engine-cuda13 0.3.12.post1), rocm \
             (mooncake-transfer-engine-non-cuda 0.3.12.post1) to serve a call({kw}=), found no \
             overload takes the call (no parameter `{kw}`); found {fits} [image-core]"
        ),
    ];
    for (args, want) in [
        (vec!["verify", "--consumer", file], consumer),
        (vec!["verify", "--surface", "--module", file], want),
    ] {
        let run = xtask(&args, &[]);
        assert_eq!(run.code, Some(1), "{run:?}");
        assert_eq!(run.report(), want, "{run:?}");
        assert!(
            all_printing(&run.stdout) && all_printing(&run.stderr),
            "{run:?}"
        );
        let mut json_args = args.clone();
        json_args.push("--json");
        let run = xtask(&json_args, &[]);
        assert!(all_printing(&run.stdout), "{run:?}");
        let report: Value = serde_json::from_str(&run.stdout).unwrap();
        // JSON keeps the text as it is, escaped as JSON escapes it.
        assert!(
            report.to_string().contains(r#"a\nb|<img src=x>\u001b[31m"#),
            "{report:#}"
        );
    }
}

#[test]
fn matrix_keeps_its_table_when_a_recorded_overload_holds_markup() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir
        .path()
        .join("mooncake-transfer-engine-non-cuda-0.3.12.post1.json");
    std::fs::copy(
        repo_root().join("cores/mooncake-transfer-engine-non-cuda-0.3.12.post1.json"),
        &record,
    )
    .unwrap();
    let hostile = "key: str, | forged | row |\n# heading <img src=x> [l](http://x) \x1b[31m`";
    edit_json(&record, |core| {
        core["classes"]["MooncakeDistributedStore"]["members"]["setup"]["overloads"] =
            json!([hostile]);
    });
    let whl = wheel("0.3.12.post1");
    let args = [
        "matrix",
        whl.to_str().unwrap(),
        "--core",
        record.to_str().unwrap(),
    ];
    let run = xtask(&args, &[]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(all_printing(&run.stdout), "{run:?}");
    let lines: Vec<&str> = run.stdout.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("| module \\ core"))
        .unwrap();
    assert_eq!(lines.len(), at + 4, "a header, its rule, two rows: {run:?}");
    // api.toml's row: its `setup` does not fit the doctored overload, which the cell quotes.
    let (row, cell) = (
        lines[at + 2],
        " | ✗ ``MooncakeDistributedStore.setup (call (config: dict)): overload differs; found \
         (key: str, \\| forged \\| row \\|\\n# heading <img src=x> [l](http://x) \
         \\x1b[31m`)`` |",
    );
    assert!(
        row.starts_with("| api.toml [[native]] (pin ") && row.ends_with(cell),
        "{run:?}"
    );
    let page = render_markdown(&lines[at..].join("\n"));
    assert_eq!(
        (page.count("tr"), page.count("td")),
        (3, 4),
        "{}",
        page.html
    );
    for tag in ["a", "img", "h1"] {
        assert_eq!(page.count(tag), 0, "<{tag}> in {}", page.html);
    }
}

#[test]
fn an_adopt_refusal_naming_a_hostile_release_is_one_line() {
    let online = crate::watch::online();
    let sandbox = Sandbox::new();
    let args = [
        "--index-url",
        online.url.as_str(),
        "--offline",
        "--image",
        "cuda",
        "--strategy",
        "pin",
        "--version",
        "9.9\x1b[31m\n# heading\u{202e}",
    ];
    let run = crate::watch::command("adopt", &sandbox, online.cache.path(), &args);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert_eq!(
        run.stdout,
        "adopt: refused: image `cuda` -> pin: watch found no release \
         mooncake-transfer-engine-cuda13 9.9\\x1b[31m\\n# heading\\u{202e} on the index; nothing \
         written\n"
    );
    assert_eq!(
        sandbox.read("api.toml"),
        std::fs::read_to_string(repo_root().join("api.toml")).unwrap()
    );
}
