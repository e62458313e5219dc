//! The drift check covers every generated line: changing any one line of any output makes
//! `sync::plan` report that file (stale, or hand-edited for a region).

#[path = "common/mod.rs"]
mod common;

use mooncake_sos_codegen::render::{self, Output};
use mooncake_sos_codegen::sync::{self, Status};
use mooncake_sos_support::diag::Source;
use std::path::PathBuf;

fn root() -> PathBuf {
    mooncake_sos_testkit::repo_root()
}

#[test]
fn every_line_of_every_output_is_checked() {
    let text = std::fs::read_to_string(root().join("api.toml")).unwrap();
    let api = mooncake_sos_manifest::load_str("api.toml", &text).unwrap();
    let outputs = render::render_all(&api, &common::image_cores(&api)).unwrap();
    let source = Source::new("api.toml", text.as_str());
    let dir = tempfile::tempdir().unwrap();
    // Start from exactly what regen writes: the region targets copied, the rest written.
    for o in &outputs {
        if let Output::Region { path, .. } = o {
            let to = dir.path().join(path.as_str());
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(root().join(path.as_str()), to).unwrap();
        }
    }
    let changes = sync::plan(dir.path(), &source, &api.name, &outputs, true).unwrap();
    sync::apply(&dir.path().join("api.toml"), &changes).unwrap();
    let clean = sync::plan(dir.path(), &source, &api.name, &outputs, false).unwrap();
    assert!(clean.iter().all(|c| c.status == Status::Unchanged));

    let mut checked = 0;
    for output in &outputs {
        let path = dir.path().join(output.path().as_str());
        let original = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = original.split_inclusive('\n').collect();
        let (first, last) = match output {
            Output::File { .. } => (0, lines.len()),
            // The region body: the lines between the markers (the markers are checked
            // by the region parser's own tests).
            Output::Region { .. } => {
                let begin = lines
                    .iter()
                    .position(|l| l.starts_with("# >>> api.toml:"))
                    .unwrap();
                let end = lines.iter().position(|l| l.starts_with("# <<< ")).unwrap();
                (begin + 1, end)
            }
        };
        for i in first..last {
            let mut edited: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
            edited[i] = format!("{}x\n", edited[i].trim_end_matches('\n'));
            std::fs::write(&path, edited.concat()).unwrap();
            let plan = sync::plan(dir.path(), &source, &api.name, &outputs, true).unwrap();
            let change = plan.iter().find(|c| c.path == *output.path()).unwrap();
            let want = match output {
                Output::File { .. } => Status::Stale,
                Output::Region { .. } => Status::HandEdited,
            };
            assert_eq!(
                change.status,
                want,
                "{}:{} edited but reported {:?}",
                output.path(),
                i + 1,
                change.status
            );
            checked += 1;
        }
        std::fs::write(&path, &original).unwrap();
    }
    assert!(checked > 500, "only {checked} lines checked");
}
