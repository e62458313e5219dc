//! A region that nothing in api.toml renders any more (its image removed, renamed, or moved
//! to another strategy) is a located error from `regen` and from `regen --check` alike,
//! naming the file, the line and what to do (the lines to delete, or, when the file gets
//! another region instead, the marker lines to rename); nothing is written; and following the
//! message makes the next regen pass.

use crate::common::RegenIn;
use crate::common::Sandbox;

/// The `[image.ID]` table (up to the next table) cut out of `text`.
fn without_image(text: &str, id: &str) -> String {
    let start = text
        .find(&format!("[image.{id}]"))
        .unwrap_or_else(|| panic!("no [image.{id}]"));
    let rest = &text[start + 1..];
    let end = rest.find("\n[").map_or(text.len(), |i| start + 1 + i + 1);
    format!("{}{}", &text[..start], &text[end..])
}

/// `path:LINE:1` and `delete lines A-B` out of each error; (path, line, a, b).
fn leftovers(out: &str) -> Vec<(String, usize, usize, usize)> {
    out.lines()
        .filter(|l| l.contains("is left behind"))
        .map(|l| {
            let (loc, rest) = l.split_once(": error: ").expect("located");
            let mut parts = loc.rsplitn(3, ':');
            let (_, line, path) = (parts.next(), parts.next(), parts.next());
            let range = rest
                .split("delete lines ")
                .nth(1)
                .and_then(|r| r.split(' ').next())
                .expect("the lines to delete");
            let (a, b) = range.split_once('-').expect("A-B");
            (
                path.expect("path").to_owned(),
                line.expect("line").parse().expect("line number"),
                a.parse().expect("A"),
                b.parse().expect("B"),
            )
        })
        .collect()
}

fn delete_lines(sb: &Sandbox, path: &str, a: usize, b: usize) {
    let text = sb.read(path);
    let kept: String = text
        .split_inclusive('\n')
        .enumerate()
        .filter(|(i, _)| !(a..=b).contains(&(i + 1)))
        .map(|(_, l)| l)
        .collect();
    sb.write(path, &kept);
}

#[test]
fn regions_left_behind_are_located_errors_whose_fix_works() {
    // (what changes in api.toml, the files whose regions are left behind)
    type Edit = fn(&Sandbox);
    let cases: [(&str, Edit, &[&str]); 5] = [
        (
            "[image.rocm] removed",
            |sb| sb.write("api.toml", &without_image(&sb.read("api.toml"), "rocm")),
            &["docker/Dockerfile.rocm"],
        ),
        (
            "[image.cuda] removed",
            |sb| sb.write("api.toml", &without_image(&sb.read("api.toml"), "cuda")),
            &["docker/Dockerfile"],
        ),
        (
            "both images removed",
            |sb| {
                let text = without_image(&sb.read("api.toml"), "cuda");
                sb.write("api.toml", &without_image(&text, "rocm"));
            },
            &[
                "docker/Dockerfile",
                "docker/Dockerfile.rocm",
                "docker/build.py",
            ],
        ),
        (
            "the CUDA image moved to docker/Dockerfile.cuda",
            |sb| {
                let text = sb.read("docker/Dockerfile");
                let begin = text.find("# >>> api.toml:").unwrap();
                let end = text.find("# <<< ").unwrap();
                let end = end + text[end..].find('\n').unwrap() + 1;
                let fresh = "# >>> api.toml: mooncake-sos pin (x)\n# <<< mooncake-sos pin\n";
                let moved = format!("{}{fresh}{}", &text[..begin], &text[end..]);
                sb.write("docker/Dockerfile.cuda", &moved);
                sb.edit(
                    "api.toml",
                    "dockerfile = \"docker/Dockerfile\"",
                    "dockerfile = \"docker/Dockerfile.cuda\"",
                );
            },
            &["docker/Dockerfile"],
        ),
        (
            "[image.rocm] removed, its Dockerfile moved to the root",
            |sb| {
                std::fs::rename(
                    sb.path("docker/Dockerfile.rocm"),
                    sb.path("Dockerfile.rocm"),
                )
                .unwrap();
                sb.write("api.toml", &without_image(&sb.read("api.toml"), "rocm"));
            },
            &["Dockerfile.rocm"],
        ),
    ];
    for (what, edit, files) in cases {
        let sb = Sandbox::new();
        edit(&sb);
        let before = sb.snapshot();
        for args in [&["--check"][..], &[][..]] {
            let (code, out) = sb.regen(args);
            assert_eq!(code, 2, "{what}, regen {args:?}: {out}");
            let found = leftovers(&out);
            let mut named: Vec<&str> = found.iter().map(|(p, ..)| p.as_str()).collect();
            named.sort();
            assert_eq!(named, files, "{what}, regen {args:?}: {out}");
            for (path, line, a, _) in &found {
                assert_eq!(line, a, "{what}: {path} located at its begin marker");
                let text = sb.read(path);
                let marker = text.lines().nth(line - 1).unwrap();
                assert!(
                    marker.starts_with("# >>> api.toml: mooncake-sos "),
                    "{what}: {marker}"
                );
            }
            assert_eq!(sb.snapshot(), before, "{what}, regen {args:?} wrote");
        }
        // Do what the messages say, then regen completes.
        let (_, out) = sb.regen(&[]);
        for (path, _, a, b) in leftovers(&out) {
            delete_lines(&sb, &path, a, b);
        }
        let (code, out) = sb.regen(&[]);
        assert_eq!(code, 0, "{what}, after deleting the regions: {out}");
        assert_eq!(sb.regen(&["--check"]).0, 0, "{what}");
    }
}

/// An image moved to another strategy leaves its old region in the same file.
#[test]
fn a_strategy_change_leaves_the_old_region_behind() {
    let sb = Sandbox::new();
    let text = sb.read("api.toml");
    let cuda = text.find("[image.cuda]").unwrap();
    let edited = format!(
        "{}{}",
        &text[..cuda],
        text[cuda..]
            .replacen("strategy = \"pin\"", "strategy = \"fill\"", 1)
            .replacen("pin_version = \"0.3.12.post1\"\n", "", 1)
            // A fill image has no base package for users to use.
            .replacen("users = [\"sglang==0.5.16\"]\n", "", 1)
            .replacen(
                "base_package = \"mooncake-transfer-engine-cuda13\"\nbase_version = \"0.3.11.post1\"",
                "fill_package = \"mooncake-transfer-engine-cuda13\"\nfill_version = \"0.3.12.post1\"\n\
                 core = { package = \"mooncake-transfer-engine-cuda13\", version = \"0.3.12.post1\", source = \"a fill needs its core declared\" }",
                1
            )
    );
    assert_ne!(edited, text);
    sb.write("api.toml", &edited);
    let before = sb.snapshot();
    let (code, out) = sb.regen(&[]);
    assert_eq!(code, 2, "{out}");
    // Located at the region's begin marker, wherever the file has it.
    let begin = sb
        .read("docker/Dockerfile")
        .lines()
        .position(|l| l.starts_with("# >>> api.toml: mooncake-sos pin"))
        .unwrap()
        + 1;
    let end = sb
        .read("docker/Dockerfile")
        .lines()
        .position(|l| l.starts_with("# <<< mooncake-sos pin"))
        .unwrap()
        + 1;
    assert!(
        out.contains(&format!("docker/Dockerfile:{begin}:1: error: region `mooncake-sos pin` is left behind: api.toml renders only `fill` into docker/Dockerfile; rename it to `mooncake-sos fill` on lines {begin} and {end} and regen fills it, or restore what rendered it in api.toml (an [image.*] naming this file)\n")),
        "{out}"
    );
    assert_eq!(sb.snapshot(), before);
    // Do what the message says, in one step: regen then passes, --check too.
    let renamed: Vec<String> = (sb.read("docker/Dockerfile").lines().enumerate())
        .map(|(i, l)| match i + 1 == begin || i + 1 == end {
            true => l.replacen("mooncake-sos pin", "mooncake-sos fill", 1),
            false => l.to_owned(),
        })
        .collect();
    sb.write("docker/Dockerfile", &(renamed.join("\n") + "\n"));
    let (code, out) = sb.regen(&[]);
    assert_eq!(code, 0, "after renaming the markers: {out}");
    assert_eq!(sb.regen(&["--check"]).0, 0);
    assert!(!sb.read("docker/Dockerfile").contains("mooncake-sos pin"));
}
