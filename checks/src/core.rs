//! `core`: read wheels' native cores (what each serves), record image cores in `cores/`,
//! check the records for drift, and check the images' recorded cores offline against
//! api.toml's `[[native]]` needs; `core --diff` is [`crate::core_diff`].

use crate::args::Reading;
use crate::findings::{self, Finding, Format, RuleInfo};
use crate::{BadInput, Contract, Outcome, Result};
use mooncake_sos_manifest::core_record::{CoreSurface, Member};
use mooncake_sos_manifest::model::Api;
use mooncake_sos_native::images::{self, Unread};
use mooncake_sos_native::needs::{from_manifest, serve};
use mooncake_sos_native::read::Origin;
use mooncake_sos_native::record::{self, Drift};
use mooncake_sos_support::escape::{self, text};
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("what").required(true).multiple(true).args(["wheels", "images", "diff"])))]
pub struct CoreArgs {
    /// Wheels whose native core is read (the package's `store` extension module).
    #[arg(value_name = "WHEEL")]
    pub wheels: Vec<PathBuf>,
    /// Print the surfaces as a JSON array instead of one summary line per core (with
    /// --diff: the diff as JSON). The same as --format json.
    #[arg(long, conflicts_with_all = ["record", "check", "format"])]
    pub json: bool,
    /// What the NEW core breaks for code written against OLD (each a wheel or a cores/
    /// record), and what it adds; exit 1 when anything breaks.
    #[arg(long, num_args = 2, value_names = ["OLD", "NEW"], conflicts_with_all = ["wheels", "record", "check", "images"])]
    pub diff: Vec<PathBuf>,
    /// With --diff: print the diff as Markdown. The same as --format markdown.
    #[arg(long, requires = "diff", conflicts_with_all = ["json", "format"])]
    pub markdown: bool,
    /// The report's format: text; json (the surfaces, or the diff); markdown (--diff); github
    /// or sarif (the findings of --diff, --images and --check).
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<Format>,
    /// Write each surface to cores/<package>-<version>.json (nothing is written if any wheel
    /// fails).
    #[arg(long, conflicts_with = "check")]
    pub record: bool,
    /// Compare each surface with its record; exit 1 with a diff on any difference.
    #[arg(long)]
    pub check: bool,
    /// Check every image's recorded core against api.toml's [[native]] needs, offline; exit 1
    /// when one is not served or not recorded.
    #[arg(long)]
    pub images: bool,
    #[command(flatten)]
    pub reading: Reading,
}

/// The rules of `core --images` and `core --check`.
pub const RULES: [RuleInfo; 3] = [
    RuleInfo {
        id: "image-needs",
        summary: "an image's recorded native core does not serve api.toml's [[native]] needs",
        help: "Move the image to a core that serves them (watch, adopt), or change the needs in api.toml.",
    },
    RuleInfo {
        id: "core-unrecorded",
        summary: "a core the contract needs has no record in cores/",
        help: "Record it: `core --record WHEEL` on that release's wheel.",
    },
    RuleInfo {
        id: "core-stale",
        summary: "a core's record in cores/ is not what its wheel serves",
        help: "Record it again: `core --record WHEEL`, and review the diff.",
    },
];

/// Runs `core` as `args` ask; `cache` holds the read cores and runtimes.
pub fn run(args: &CoreArgs, contract: &Contract, cache: &Path) -> Result {
    let api = &contract.api;
    let format = crate::args::format(args.json, args.markdown, args.format);
    let reader = args.reading.reader(cache)?;
    if !args.diff.is_empty() {
        return crate::core_diff::run(&reader, &api.upstream.native_module, &args.diff, format);
    }
    match format {
        Format::Markdown => {
            return Err(BadInput("error: --format markdown goes with --diff".into()));
        }
        Format::Json if args.record || args.check => {
            return Err(BadInput(
                "error: --format json goes with reading wheels or --diff, not --record or --check"
                    .into(),
            ));
        }
        _ => {}
    }
    let located = matches!(format, Format::Github | Format::Sarif);
    // Every wheel is read before anything is printed or written.
    let mut surfaces = Vec::new();
    for wheel in &args.wheels {
        let (surface, origin) = reader.read_traced(wheel, &api.upstream.native_module)?;
        surfaces.push((wheel, surface, origin));
    }
    let mut outcome = Outcome::Ok;
    let mut found = Vec::new();
    if format == Format::Json {
        let all: Vec<&CoreSurface> = surfaces.iter().map(|(_, s, _)| s).collect();
        let json = serde_json::to_string_pretty(&all).unwrap_or_default();
        println!("{}", escape::json(&json));
    } else if args.record {
        record_all(&surfaces, &contract.out, located)?;
    } else if args.check {
        for (wheel, surface, _) in &surfaces {
            let rel = record::relative_path(&surface.wheel.package, &surface.wheel.version);
            let (rel, wheel) = (text(&rel), wheel.display().to_string());
            let finding = |rule: &'static str, message: String| Finding {
                file: rel.to_string(),
                line: 0,
                column: 0,
                rule,
                message,
                images: Vec::new(),
            };
            match record::drift(&contract.root, surface) {
                Drift::Current if !located => println!("current: {rel}"),
                Drift::Current => {}
                Drift::Missing => {
                    let fix = format!("`cargo xtask core --record {}`", text(&wheel));
                    match located {
                        true => found.push(finding(
                            "core-unrecorded",
                            format!("no record of {wheel}'s core: {fix}"),
                        )),
                        false => println!("missing: {rel} ({fix})"),
                    }
                    outcome = Outcome::Failed;
                }
                Drift::Differs(diff) => {
                    let fix = format!("`cargo xtask core --record {}`", text(&wheel));
                    match located {
                        true => found.push(finding(
                            "core-stale",
                            format!("not what {wheel}'s core serves: {fix}\n{diff}"),
                        )),
                        false => print!("stale: {rel} ({fix})\n{}", escape::lines(&diff)),
                    }
                    outcome = Outcome::Failed;
                }
            }
        }
    } else if !located {
        for (wheel, surface, origin) in &surfaces {
            println!("{}", text(&summary(api, wheel, surface, *origin)));
        }
    }
    if args.images {
        let (ok, image_findings) = images(api, &contract.root, located)?;
        found.extend(image_findings);
        if !ok {
            outcome = Outcome::Failed;
        }
    }
    if located {
        let summary = format!("core: {} finding(s)", found.len());
        match format {
            Format::Github => print!("{}", findings::github(&found, &summary)),
            _ => println!("{}", findings::sarif("core", &RULES, &found, &summary)),
        }
    }
    Ok(outcome)
}

/// Writes each surface's record under `out` (a name Python could not hold is refused for
/// every wheel before any is written).
fn record_all(surfaces: &[(&PathBuf, CoreSurface, Origin)], out: &Path, quiet: bool) -> Result<()> {
    for (wheel, surface, _) in surfaces {
        if let Some(name) = record::misnamed(surface) {
            return Err(BadInput(format!(
                "{}: error: its core has a name that is not a Python identifier: {name} (ASCII \
                 letters, digits and `_`, not starting with a digit); nothing written",
                wheel.display()
            )));
        }
    }
    for (_, surface, _) in surfaces {
        let state = match record::drift(out, surface) {
            Drift::Current => "unchanged",
            _ => {
                record::write(out, surface).map_err(|e| {
                    BadInput(format!(
                        "{}: error: cannot write the record: {e}",
                        out.display()
                    ))
                })?;
                "written"
            }
        };
        let rel = record::relative_path(&surface.wheel.package, &surface.wheel.version);
        if !quiet {
            println!("{state}: {}", text(&rel));
        }
    }
    Ok(())
}

/// `package version: file (sha256 12…): N classes, N methods, N functions; api.toml's N
/// native needs: served | first missing ...`.
fn summary(api: &Api, wheel: &Path, surface: &CoreSurface, origin: Origin) -> String {
    let methods: usize = surface
        .classes
        .values()
        .flat_map(|c| c.members.values())
        .filter(|m| matches!(m, Member::Method { .. } | Member::Staticmethod { .. }))
        .count();
    let needs = from_manifest(&api.native);
    let verdict = serve(surface, &needs);
    let served = match verdict.first_missing() {
        None => "served".to_owned(),
        Some(miss) => format!(
            "{} not served, first: {}",
            verdict.missing.len(),
            miss.line()
        ),
    };
    format!(
        "{}: {} `{}` (sha256 {}): {} classes, {methods} methods, {} functions; api.toml's {} native needs: {served}{}",
        surface.label(),
        surface.core.file,
        surface.core.module,
        &surface.core.sha256[..12],
        surface.classes.len(),
        surface.functions.len(),
        needs.len(),
        match origin {
            Origin::Cache => format!(" (cached; {})", wheel.display()),
            Origin::Read => format!(" ({})", wheel.display()),
        }
    )
}

/// One line per image (printed unless `located`) and the findings; `false` when any image's
/// core is unrecorded or misses a need.
fn images(api: &Api, root: &Path, located: bool) -> Result<(bool, Vec<Finding>)> {
    let needs = from_manifest(&api.native);
    let mut ok = true;
    let mut found = Vec::new();
    let say = |line: String| {
        if !located {
            println!("{line}");
        }
    };
    for (image, side) in images::load(root, api) {
        match side {
            Ok(side) => {
                let (core, rel) = (&side.core, &side.record);
                let verdict = serve(core, &needs);
                if verdict.compatible {
                    say(format!(
                        "image {image}: core {} ({rel}) serves api.toml's {} native needs",
                        text(&core.label()),
                        needs.len()
                    ));
                } else {
                    ok = false;
                    say(format!(
                        "image {image}: core {} ({rel}) does not serve {} of api.toml's native needs:",
                        text(&core.label()),
                        verdict.missing.len()
                    ));
                    for miss in &verdict.missing {
                        say(format!("  {}", text(&miss.line())));
                        found.push(Finding {
                            file: rel.clone(),
                            line: 0,
                            column: 0,
                            rule: "image-needs",
                            message: format!(
                                "core {} does not serve {}",
                                core.label(),
                                miss.line()
                            ),
                            images: vec![image.clone()],
                        });
                    }
                }
            }
            Err(Unread::Missing(m)) => {
                ok = false;
                say(format!(
                    "image {image}: no record of its {} {} {} ({}): run `cargo xtask core --record` on that wheel",
                    m.role, m.package, m.version, m.record
                ));
                found.push(Finding {
                    file: m.record.clone(),
                    line: 0,
                    column: 0,
                    rule: "core-unrecorded",
                    message: format!(
                        "no record of its {} {} {}: run `core --record` on that wheel",
                        m.role, m.package, m.version
                    ),
                    images: vec![image.clone()],
                });
            }
            Err(Unread::Bad(e)) => return Err(e.into()),
        }
    }
    Ok((ok, found))
}
