//! Every format of the report with what a hostile release can put in it: names with an
//! escape sequence, a bell, a line break, a carriage return, a bidi override, a pipe, HTML, a
//! heading and backticks, in each place a release's words reach (its verdict, the image's
//! transition, what blocks it, what it would break).

use super::{github, json, markdown, text};
use crate::PackageReport;
use crate::Report;
use crate::plan::{ImagePlan, Step};
use crate::release::ReleaseReport;
use mooncake_sos_manifest::model::Strategy;
use mooncake_sos_testkit::render_markdown;

fn report() -> Report {
    let release: ReleaseReport = serde_json::from_value(serde_json::json!({
        "package": "mooncake-transfer-engine-cuda13",
        "version": "0.3.99",
        "wheel": "w.whl",
        "wheel_sha256": "0".repeat(64),
        "module_sha256": "1".repeat(64),
        "carries_api": true,
        "api_mismatches": [],
        "undeclared_uses": ["m.py:7: native MooncakeDistributedStore.put\u{1b}[31m\u{7}: read"],
        "core": {"verdict": "fails", "core": "c", "missing": ["X.a|b <img src=x>: absent"]},
        "layers": [{"image": "cuda", "layer": "one-file overlay", "base": "b 1",
                    "works": false, "findings": ["m.py:9: sibling mooncake.x\ny\r: absent"]}],
        "changes": [],
        "smoke": {"verdict": "not_run", "reason": "abc\u{202e}fed"},
    }))
    .unwrap();
    let step = |to, version: Option<&str>, reason: &str| Step {
        to,
        version: version.map(str::to_owned),
        reason: reason.to_owned(),
    };
    Report {
        baseline: "the pinned module\n# heading".into(),
        packages: vec![PackageReport {
            package: "mooncake-transfer-engine-cuda13".into(),
            listed: vec!["0.3.99".into()],
            releases: vec![release],
            skipped: Vec::new(),
        }],
        images: vec![ImagePlan {
            image: "cuda".into(),
            strategy: Strategy::Overlay,
            package: "mooncake-transfer-engine-cuda13".into(),
            version: "0.3.11.post1".into(),
            line: 7,
            transition: Some(step(
                Strategy::Pin,
                Some("0.3.99"),
                "it uses `X.[a](http://x)` | ![i](s)\n| forged | row |\u{1b}[2J",
            )),
            blocked: vec![step(Strategy::Check, None, "core says \u{1b}]0;title\u{7}")],
            breaking: vec![step(
                Strategy::Pin,
                Some("0.3.99"),
                "100% <b>x</b>\r\n::error::y",
            )],
        }],
    }
}

const VERDICT: &str = "carries the API; its core does not serve it (X.a|b <img src=x>: absent); \
    1 use(s) api.toml does not declare (first: m.py:7: native MooncakeDistributedStore.put\\x1b[31m\\x07: read); \
    one-file overlay in image cuda breaks: m.py:9: sibling mooncake.x\\ny\\r: absent; \
    no changes from the baseline; smoke not run (abc\\u{202e}fed)";

#[test]
fn text_is_one_line_per_fact_with_every_hostile_character_escaped() {
    let want = format!(
        "baseline: the pinned module\\n# heading\n\
         \n\
         mooncake-transfer-engine-cuda13 (1 listed, 1 checked)\n\
         \x20 0.3.99: {VERDICT}\n\
         \n\
         cores: 1 of the 1 API-carrying releases' cores checked\n\
         \n\
         image cuda: overlay on mooncake-transfer-engine-cuda13 0.3.11.post1\n\
         \x20 transition: overlay -> pin at 0.3.99: it uses `X.[a](http://x)` | ![i](s)\\n| forged | row |\\x1b[2J\n\
         \x20 blocked: check: core says \\x1b]0;title\\x07\n\
         \x20 breaks: pin at 0.3.99: 100% <b>x</b>\\r\\n::error::y\n"
    );
    assert_eq!(text(&report()), want);
}

#[test]
fn markdown_keeps_its_two_tables_and_adds_no_heading_link_or_image() {
    let out = markdown(&report());
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines,
        [
            "| image | now | transition | blocked | newer releases that break it |",
            "|---|---|---|---|---|",
            "| `cuda` | overlay on mooncake-transfer-engine-cuda13 0.3.11.post1 | \
             **overlay → pin at 0.3.99**: ``it uses `X.[a](http://x)` \\| ![i](s)\\n\\| forged \\| row \\|\\x1b[2J`` | \
             `check: core says \\x1b]0;title\\x07` | `pin at 0.3.99: 100% <b>x</b>\\r\\n::error::y` |",
            "",
            "| package | release | verdict |",
            "|---|---|---|",
            &format!(
                "| mooncake-transfer-engine-cuda13 | 0.3.99 | `{}` |",
                VERDICT.replace('|', "\\|")
            ),
            "",
            "Baseline: `the pinned module\\n# heading`",
            "",
            "Cores: 1 of the 1 API-carrying releases' cores checked",
        ]
    );
    // As GitHub renders it: two tables of one row each, every cell the text itself.
    let page = render_markdown(&out);
    assert_eq!(page.count("table"), 2, "{}", page.html);
    assert_eq!(page.count("tr"), 4, "{}", page.html);
    for tag in ["a", "img", "b", "h1", "h2", "h3", "h4", "h5", "h6"] {
        assert_eq!(page.count(tag), 0, "<{tag}> in {}", page.html);
    }
    assert_eq!(
        page.cells(),
        [
            "cuda",
            "overlay on mooncake-transfer-engine-cuda13 0.3.11.post1",
            "overlay → pin at 0.3.99: it uses `X.[a](http://x)` | ![i](s)\\n| forged | row |\\x1b[2J",
            "check: core says \\x1b]0;title\\x07",
            "pin at 0.3.99: 100% <b>x</b>\\r\\n::error::y",
            "mooncake-transfer-engine-cuda13",
            "0.3.99",
            VERDICT,
        ]
    );
}

#[test]
fn github_annotations_stay_one_command_each() {
    let out = github(&report(), "api.toml");
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        [
            "::warning file=api.toml,line=7::image cuda: overlay -> pin at 0.3.99 is possible: \
             it uses `X.[a](http://x)` | ![i](s)%0A| forged | row |\\x1b[2J",
            "::warning file=api.toml,line=7::image cuda: mooncake-transfer-engine-cuda13 0.3.99 \
             would break it: 100%25 <b>x</b>%0D%0A::error::y",
        ]
    );
    // A path that holds what ends a property is encoded too.
    let out = github(&report(), "a,b:c\n.toml");
    assert!(
        out.starts_with("::warning file=a%2Cb%3Ac%0A.toml,line=7::"),
        "{out}"
    );
}

#[test]
fn json_reads_back_the_same_and_shows_nothing_that_does_not_print() {
    let out = json(&report());
    assert!(
        out.chars()
            .all(|c| c == '\n' || mooncake_sos_support::escape::prints(c))
    );
    let value: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        value["images"][0]["blocked"][0]["reason"],
        "core says \u{1b}]0;title\u{7}"
    );
    assert_eq!(
        value["packages"][0]["releases"][0]["smoke"]["reason"],
        "abc\u{202e}fed"
    );
}
