//! `verify --fix [--prune] [--dry-run]`: writes the declarations the module needs into
//! api.toml (planned by `mooncake_sos_native::fix`; and each parameter's `domain` as the
//! module gives it, from `verify`'s report), keeping its comments and layout
//! (toml_edit), with regen as one change under the manifest's lock, and prints the unified
//! diff of api.toml. Nothing is written when any use needs a person, nor when the edited
//! manifest would not pass `verify` itself.

use crate::exit::{BadInput, Outcome, Result};
use crate::manifest::Manifest;
use mooncake_sos_manifest::edit::{self, Edit};
use mooncake_sos_manifest::load_str;
use mooncake_sos_manifest::parse::unfit_string;
use mooncake_sos_native::fix;
use mooncake_sos_native::images;
use mooncake_sos_pysource::domain::repr;
use mooncake_sos_pysource::report::DomainFix;
use mooncake_sos_pysource::source::ModuleSource;
use mooncake_sos_pysource::surface;
use mooncake_sos_support::diag::{Diagnostic, Diagnostics, Source};
use mooncake_sos_support::drift::unified_diff;
use mooncake_sos_support::escape::{self, text};

pub fn run(manifest: &Manifest, source: &ModuleSource, prune: bool, dry_run: bool) -> Result {
    let api = &manifest.api;
    let sides = images::load_all(manifest.root(), api)?;
    let report = surface::check(api, source)?;
    let findings = images::check(&sides, &report.file, &report.uses);
    let file = source
        .display
        .rsplit(['/', '!'])
        .next()
        .unwrap_or(&source.display);
    let mut plan = fix::plan(&report, &findings, &sides, &source.text, file, prune);
    // The domains the module gives its parameters: facts of its source, written as found.
    let symbols = mooncake_sos_pysource::verify(api, source)?;
    unwritable_domains(source, &symbols.domain_fixes)?;
    plan.edits.extend(
        symbols
            .domain_fixes
            .iter()
            .cloned()
            .map(|f| Edit::SetDomain {
                owner: f.owner,
                param: f.param,
                domain: f.found,
            }),
    );
    // What --fix cannot write (a symbol the module lacks or declares otherwise): nothing is
    // written, with or without --prune, since verify would fail after it all the same.
    let unwritable: Vec<String> = (symbols.lines().into_iter())
        .filter(|l| !l.contains(" domain: "))
        .collect();
    if !unwritable.is_empty() {
        for line in &unwritable {
            println!("{}", text(line));
        }
        println!(
            "verify --fix: nothing written: {} does not match api.toml's symbols in {} way(s) \
             --fix does not write (above); change api.toml's [[symbol]] entries by hand, or \
             check a module that carries the API",
            text(&source.display),
            unwritable.len()
        );
        return Ok(Outcome::Failed);
    }
    if !plan.refusals.is_empty() {
        for line in &plan.refusals {
            println!("{}", text(line));
        }
        println!(
            "verify --fix: nothing written: {} use(s) of {} need a person (above)",
            plan.refusals.len(),
            text(&source.display)
        );
        return Ok(Outcome::Failed);
    }
    if plan.edits.is_empty() {
        let stale = manifest.stale_outputs()?;
        if !stale.is_empty() {
            println!(
                "verify --fix: api.toml declares what {} uses, but {} output(s) are out of date \
                 ({}): run `cargo xtask regen`",
                text(&source.display),
                stale.len(),
                text(&stale.join(", "))
            );
            return Ok(Outcome::Failed);
        }
        println!(
            "verify --fix: nothing to fix: api.toml already declares what {} uses",
            text(&source.display)
        );
        return Ok(Outcome::Ok);
    }
    let text = manifest.editable();
    let edited = edit::apply(&text, &plan.edits)
        .map_err(|e| BadInput(format!("{}: error: {e}", manifest.display)))?;
    // What is written must pass what it was written for.
    let edited_api = load_str(&manifest.display, &edited)?;
    let after = surface::check(&edited_api, source)?;
    let domains = mooncake_sos_pysource::verify(&edited_api, source)?;
    if !after.ok() || !domains.ok() {
        let mut lines = after.failure_lines();
        lines.extend(
            domains
                .lines()
                .into_iter()
                .filter(|l| l.contains(" domain: ")),
        );
        return Err(BadInput(format!(
            "error: internal: the planned declarations do not satisfy verify; nothing written:\n{}",
            lines.join("\n")
        )));
    }
    let name = manifest.path.file_name().map(|f| f.to_string_lossy());
    let name = name.as_deref().unwrap_or("api.toml");
    print!("{}", escape::lines(&unified_diff(name, &text, &edited)));
    let count = plan.edits.len();
    if dry_run {
        println!("verify --fix --dry-run: {count} declaration change(s); nothing written");
        return Ok(Outcome::Ok);
    }
    crate::manifest::written(manifest.edit("verify --fix", |_| Ok(edited))?)?;
    println!(
        "verify --fix: {count} declaration change(s) written to {name} (review the diff above)"
    );
    Ok(Outcome::Ok)
}

/// Refuses, located at each in the module, the domain values api.toml cannot carry (a line
/// break, a control character): written, they would make the manifest fail its own check.
fn unwritable_domains(source: &ModuleSource, fixes: &[DomainFix]) -> Result<()> {
    let module = Source::new(source.display.as_str(), source.text.as_str());
    let mut diags = Diagnostics::default();
    for fix in fixes {
        let values = fix.found.iter().flatten().zip(&fix.spans);
        for (value, span) in values {
            if let Some(why) = unfit_string("domain", value) {
                diags.push(Diagnostic::new(
                    &module,
                    span.clone(),
                    format!(
                        "{}({}) takes {}, which api.toml cannot declare: {why}; nothing written",
                        fix.owner,
                        fix.param,
                        repr(value)
                    ),
                ));
            }
        }
    }
    Ok(diags.finish(())?)
}
