//! The upstream module, as verify and bump both read and check it: from a file, a wheel or
//! a download, parsed and compared with the manifest statically.

use crate::manifest::Manifest;
use mooncake_sos_codegen::model::Api;
use mooncake_sos_upstream::fetch::Fetch;
use mooncake_sos_upstream::source::{LoadError, ModuleSource};
use std::path::PathBuf;

/// Where `--fetch` downloads from and keeps the files.
#[derive(clap::Args, Clone, Debug)]
pub struct FetchArgs {
    /// For --fetch: the raw-file server (default: upstream.raw_base_url in api.toml).
    #[arg(long, value_name = "URL")]
    raw_base_url: Option<String>,
    /// For --fetch: where downloads are kept (default: target/upstream-cache beside the manifest).
    #[arg(long, value_name = "DIR")]
    cache_dir: Option<PathBuf>,
}

impl FetchArgs {
    pub fn fetcher(&self, manifest: &Manifest) -> Fetch {
        Fetch {
            base_url: self
                .raw_base_url
                .clone()
                .unwrap_or_else(|| manifest.api.upstream.raw_base_url.clone()),
            cache_dir: self
                .cache_dir
                .clone()
                .unwrap_or_else(|| manifest.root().join("target/upstream-cache")),
        }
    }
}

/// The checked module: its mismatch lines (none when all match) and a one-line summary.
pub struct Checked {
    pub lines: Vec<String>,
    pub summary: String,
}

impl Checked {
    pub fn ok(&self) -> bool {
        self.lines.is_empty()
    }

    pub fn print(&self) {
        for line in &self.lines {
            println!("{line}");
        }
        println!("{}", self.summary);
    }
}

/// Checks `source` against every declared symbol; `sha256`: it must also be the pinned file.
pub fn check(api: &Api, source: &ModuleSource, sha256: bool) -> Result<Checked, LoadError> {
    let report = mooncake_sos_upstream::verify(api, source)?;
    let mut lines = report.lines();
    if sha256 && let Some(line) = mooncake_sos_upstream::sha256_mismatch(api, source) {
        lines.push(line);
    }
    let summary = if lines.is_empty() {
        format!(
            "verify: {} matches api.toml: {} symbols, {} items checked{} (sha256 {})",
            source.display,
            api.symbols.len(),
            report.items.len(),
            if sha256 { ", the pinned file" } else { "" },
            &source.sha256[..12]
        )
    } else {
        format!(
            "verify: {} mismatch(es) in {} against api.toml (pin {})",
            lines.len(),
            source.display,
            api.upstream.short_commit()
        )
    };
    Ok(Checked { lines, summary })
}
