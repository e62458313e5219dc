//! `watch` warm: verdicts kept by the hash of their inputs. A second online run on the same
//! cache prints the cold run's bytes; a kept verdict is served only while every input it
//! rests on (api.toml's text, the core records) is unchanged.

use crate::watch::{cache_copy, online, pinned_sandbox, watch};
use mooncake_sos_testkit::Sandbox;
use std::path::Path;

/// The mark a served verdict carries: in place of why its smoke was not run, which no plan
/// reads (a count of undeclared uses would change the plans' reasons too).
const SERVED: &str = "served from the verdict cache";

/// Marks every kept verdict, so that a served one shows in the report.
fn tamper_verdicts(cache: &Path) -> usize {
    let dir = cache.join("verdicts");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        // Other tests write verdicts into the cache copied: a half-written one is skipped.
        let Ok(mut v) =
            serde_json::from_str::<serde_json::Value>(&std::fs::read_to_string(&path).unwrap())
        else {
            continue;
        };
        // A --smoke run's verdicts (another test's, in the cache copied) are kept apart: the
        // runs here ask for no smoke.
        if v["smoke"]["verdict"] != "not_run" {
            continue;
        }
        v["smoke"]["reason"] = SERVED.into();
        // A new file: the copy's files are hard links to the shared cache's.
        std::fs::remove_file(&path).unwrap();
        std::fs::write(&path, v.to_string()).unwrap();
        n += 1;
    }
    n
}

fn online_run(sandbox: &Sandbox, cache: &Path) -> String {
    let run = watch(sandbox, cache, &["--json", "--index-url", &online().url]);
    assert_eq!(run.code, Some(1), "{run:?}");
    run.stdout
}

#[test]
fn a_warm_run_prints_the_cold_runs_bytes_and_serves_kept_verdicts() {
    let online = online();
    let cache = cache_copy();
    assert_eq!(
        online_run(&online.sandbox, cache.path()),
        online.run.stdout,
        "warm = cold, byte for byte"
    );
    // The warm run read its verdicts from the cache: the marked ones show, and nothing else
    // differs from the cold report.
    assert!(tamper_verdicts(cache.path()) >= 1);
    let served = online_run(&online.sandbox, cache.path());
    assert!(served.matches(SERVED).count() >= 1, "{served}");
    let mut served: serde_json::Value = serde_json::from_str(&served).unwrap();
    for package in served["packages"].as_array_mut().unwrap() {
        for release in package["releases"].as_array_mut().unwrap() {
            if release["smoke"]["reason"] == SERVED {
                release["smoke"]["reason"] = "not asked for (--smoke)".into();
            }
        }
    }
    assert_eq!(served, online.json);
}

#[test]
fn a_changed_input_is_not_served_a_stale_verdict() {
    let online = online();
    let cache = cache_copy();
    tamper_verdicts(cache.path());

    // api.toml's text: a comment at the end changes no verdict, but it is another input.
    let sandbox = pinned_sandbox();
    let text = sandbox.read("api.toml");
    sandbox.write("api.toml", &format!("{text}# edited\n"));
    let run = online_run(&sandbox, cache.path());
    assert!(!run.contains(SERVED), "{run}");
    assert_eq!(run, online.run.stdout);

    // A core record's content (a value no check asks about): again another input.
    tamper_verdicts(cache.path());
    let sandbox = pinned_sandbox();
    let mut edited = 0;
    for entry in std::fs::read_dir(sandbox.path("cores")).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let mut record: serde_json::Value = serde_json::from_str(&text).unwrap();
        record["values"]["ZZ_ADDED_BY_THE_TEST"] = serde_json::json!({"type": "int"});
        std::fs::write(&path, serde_json::to_string_pretty(&record).unwrap()).unwrap();
        edited += 1;
    }
    assert!(edited > 0);
    let run = online_run(&sandbox, cache.path());
    assert!(!run.contains(SERVED), "{run}");
    assert_eq!(run, online.run.stdout);
}
