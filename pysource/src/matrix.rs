//! Releases × declared items: which release's wheel carries which part of the API, and the
//! drop condition's verdict (the first release carrying all of it).

use crate::extract::ModuleFacts;
use crate::report::Status;
use crate::source::{LoadError, ModuleSource};
use crate::version::{Release, compare};
use mooncake_sos_manifest::model::Api;
use serde::Serialize;
use std::path::PathBuf;

#[derive(Clone, Debug, Serialize)]
pub struct Matrix {
    /// Row labels, in manifest order.
    pub items: Vec<String>,
    /// One per wheel, in version order.
    pub releases: Vec<Column>,
    /// The first release (by version) whose wheel carries the whole API.
    pub first_release: Option<Release>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Column {
    #[serde(flatten)]
    pub release: Release,
    pub wheel: String,
    /// sha256 of the module in the wheel; `None` when the wheel has no such module.
    pub module_sha256: Option<String>,
    pub ok: bool,
    /// Parallel to [`Matrix::items`].
    pub status: Vec<Status>,
    /// The verify report's lines for this wheel.
    pub mismatches: Vec<String>,
}

/// Checks the module in every wheel against `api`.
pub fn build(api: &Api, wheels: &[PathBuf]) -> Result<Matrix, LoadError> {
    let mut releases = Vec::new();
    for wheel in wheels {
        let display = wheel.display().to_string();
        let release = Release::from_wheel(wheel).ok_or_else(|| {
            LoadError::new(
                &display,
                "not a wheel file name ({dist}-{version}-{tags}.whl)",
            )
        })?;
        let module = &api.upstream.module;
        let (report, sha) = match ModuleSource::read_wheel_if_present(wheel, module)? {
            Some(source) => (crate::verify(api, &source)?, Some(source.sha256)),
            None => {
                let display = format!("{display}!{}", crate::source::module_member(module));
                let empty = ModuleFacts::default();
                (crate::check::check(api, &empty, &display, ""), None)
            }
        };
        releases.push(Column {
            release,
            wheel: display,
            module_sha256: sha,
            ok: report.ok(),
            status: report.statuses(),
            mismatches: report.lines(),
        });
    }
    releases.sort_by(|a, b| compare(&a.release, &b.release));
    let first_release = releases.iter().find(|c| c.ok).map(|c| c.release.clone());
    let items = crate::report::Items::for_api(api).labels;
    Ok(Matrix {
        items,
        releases,
        first_release,
    })
}

impl Matrix {
    pub fn markdown(&self) -> String {
        let one_package = self
            .releases
            .windows(2)
            .all(|w| w[0].release.package == w[1].release.package);
        let head = |c: &Column| {
            if one_package {
                c.release.version.clone()
            } else {
                format!("{} {}", c.release.package, c.release.version)
            }
        };
        let mut out = String::new();
        if let (true, Some(c)) = (one_package, self.releases.first()) {
            out.push_str(&format!(
                "Releases of {} against api.toml\n\n",
                c.release.package
            ));
        }
        let row = |cells: Vec<String>| format!("| {} |\n", cells.join(" | "));
        let mut header = vec!["api.toml item".to_owned()];
        header.extend(self.releases.iter().map(head));
        out.push_str(&row(header));
        out.push_str(&row(vec!["---".into(); self.releases.len() + 1]));
        for (i, item) in self.items.iter().enumerate() {
            let mut cells = vec![format!("`{item}`")];
            cells.extend(self.releases.iter().map(|c| cell(c.status[i]).to_owned()));
            out.push_str(&row(cells));
        }
        let mut totals = vec!["**mismatches**".to_owned()];
        totals.extend(self.releases.iter().map(|c| c.mismatches.len().to_string()));
        out.push_str(&row(totals));
        out.push('\n');
        out.push_str(&self.verdict());
        out.push('\n');
        out
    }

    /// One sentence: which release satisfies the drop condition.
    pub fn verdict(&self) -> String {
        match &self.first_release {
            Some(r) => format!(
                "Drop condition: the first release carrying the whole API is {} {}.",
                r.package, r.version
            ),
            None => "Drop condition: no release given carries the whole API.".to_owned(),
        }
    }

    pub fn json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

fn cell(status: Status) -> &'static str {
    match status {
        Status::Present => "✓",
        Status::Differs => "≠ differs",
        Status::Missing => "✗ missing",
    }
}
