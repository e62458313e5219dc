//! Modules × native cores: for each module's uses and each core, compatible or the first
//! use the core cannot serve.

use super::needs::{Requirement, Verdict, from_manifest, serve};
use super::requirements::of_surface;
use mooncake_sos_manifest::core_record::CoreSurface;
use mooncake_sos_manifest::model::Api;
use mooncake_sos_pysource::source::{LoadError, ModuleSource};
use mooncake_sos_pysource::surface::{SurfaceConfig, derive};
use mooncake_sos_pysource::version::{Release, compare};
use mooncake_sos_support::escape;
use serde::Serialize;

/// A module's side: what it needs of the core, under the label its row carries.
#[derive(Clone, Debug, Serialize)]
pub struct ModuleNeeds {
    pub label: String,
    pub needs: Vec<Requirement>,
}

impl ModuleNeeds {
    /// The row of what api.toml's `[[native]]` declares (the pinned module and the consumer).
    pub fn from_manifest(api: &Api) -> ModuleNeeds {
        ModuleNeeds {
            label: format!("api.toml [[native]] (pin {})", api.upstream.short_commit()),
            needs: from_manifest(&api.native),
        }
    }

    /// The row of a module's own source: the uses its derived surface makes.
    pub fn from_source(
        api: &Api,
        source: &ModuleSource,
        label: String,
    ) -> Result<ModuleNeeds, LoadError> {
        let surface = derive(source, &SurfaceConfig::from_api(api))?;
        Ok(ModuleNeeds {
            label,
            needs: of_surface(&surface),
        })
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct CoreMatrix {
    /// Row labels.
    pub modules: Vec<String>,
    /// Columns, in package then version order.
    pub cores: Vec<CoreColumn>,
    /// `cells[m][c]`: module `m` over core `c`.
    pub cells: Vec<Vec<Verdict>>,
}

#[derive(Clone, Debug, Serialize)]
pub struct CoreColumn {
    pub package: String,
    pub version: String,
    /// The core's module and file in the wheel, and its sha256.
    pub module: String,
    pub file: String,
    pub sha256: String,
    /// The wheel or record it was read from.
    pub source: String,
}

/// Every module over every core; `cores` pairs each surface with where it came from.
pub fn build(modules: &[ModuleNeeds], cores: &[(CoreSurface, String)]) -> CoreMatrix {
    let mut cores: Vec<&(CoreSurface, String)> = cores.iter().collect();
    let release = |s: &CoreSurface| Release {
        package: s.wheel.package.clone(),
        version: s.wheel.version.clone(),
    };
    cores.sort_by(|a, b| {
        a.0.wheel
            .package
            .cmp(&b.0.wheel.package)
            .then_with(|| compare(&release(&a.0), &release(&b.0)))
    });
    CoreMatrix {
        modules: modules.iter().map(|m| m.label.clone()).collect(),
        cells: modules
            .iter()
            .map(|m| {
                cores
                    .iter()
                    .map(|(core, _)| serve(core, &m.needs))
                    .collect()
            })
            .collect(),
        cores: cores
            .into_iter()
            .map(|(s, source)| CoreColumn {
                package: s.wheel.package.clone(),
                version: s.wheel.version.clone(),
                module: s.core.module.clone(),
                file: s.core.file.clone(),
                sha256: s.core.sha256.clone(),
                source: source.clone(),
            })
            .collect(),
    }
}

impl CoreMatrix {
    pub fn markdown(&self) -> String {
        let one_package = self.cores.windows(2).all(|w| w[0].package == w[1].package);
        let mut out = String::from("Modules over native cores\n\n");
        if let (true, Some(c)) = (one_package, self.cores.first()) {
            out = format!("Modules over native cores of {}\n\n", c.package);
        }
        let row = |cells: Vec<String>| format!("| {} |\n", cells.join(" | "));
        let mut header = vec!["module \\ core".to_owned()];
        header.extend(self.cores.iter().map(|c| {
            if one_package {
                c.version.clone()
            } else {
                format!("{} {}", c.package, c.version)
            }
        }));
        out.push_str(&row(header));
        out.push_str(&row(vec!["---".into(); self.cores.len() + 1]));
        for (label, cells) in self.modules.iter().zip(&self.cells) {
            // Labels are the tool's own: `module 0.3.12.post1`, api.toml's row.
            let mut line = vec![label.clone()];
            line.extend(cells.iter().map(cell));
            out.push_str(&row(line));
        }
        out
    }
}

/// `matrix --json`: the releases matrix's fields in their order, then `module_x_core` when
/// cores were given.
pub fn json_with_releases(
    releases: &mooncake_sos_pysource::matrix::Matrix,
    cores: Option<&CoreMatrix>,
) -> String {
    #[derive(Serialize)]
    struct Json<'a> {
        #[serde(flatten)]
        releases: &'a mooncake_sos_pysource::matrix::Matrix,
        #[serde(skip_serializing_if = "Option::is_none")]
        module_x_core: Option<&'a CoreMatrix>,
    }
    let json = serde_json::to_string_pretty(&Json {
        releases,
        module_x_core: cores,
    })
    .unwrap_or_default();
    escape::json(&json).into_owned()
}

/// `✓`, or `✗ `first missing (use): why`` with how many more the module would hit after it.
/// The use and why name the module's members and the core's: one code span
/// ([`escape::markdown`]), which no name can break out of.
fn cell(verdict: &Verdict) -> String {
    let probed = match verdict.optional_missing.len() {
        0 => String::new(),
        n => format!(" ({n} probed use(s) missing)"),
    };
    match verdict.first_missing() {
        None => format!("✓{probed}"),
        Some(miss) => {
            let more = match verdict.missing.len() - 1 {
                0 => String::new(),
                n => format!(" (+{n} more)"),
            };
            let miss = format!(
                "{} ({}): {}",
                miss.requirement.object,
                miss.requirement.usage.label(),
                miss.reason()
            );
            format!("✗ {}{more}", escape::markdown(&miss))
        }
    }
}
