//! The contract a check reads: api.toml, and the records beside it (`cores/`, `consumers/`).
//! In this repository it is the checkout's; the package's executable carries the one it was
//! built from ([`Contract::from_files`]) and reads another with `--manifest`.

use crate::{BadInput, Result};
use mooncake_sos_manifest::model::{Api, Layer};
use std::path::{Path, PathBuf};

pub struct Contract {
    pub api: Api,
    /// The directory its records are read from (`cores/`, `consumers/`).
    pub root: PathBuf,
    /// The directory records are written to (`core --record`, `users --record`): the
    /// manifest's own; for a built-in contract, the working directory.
    pub out: PathBuf,
    /// How messages name the manifest.
    pub display: String,
    /// A built-in contract's files, unpacked for the run (removed when it ends).
    _unpacked: Option<tempfile::TempDir>,
}

impl Contract {
    /// A manifest already read and validated, its records beside it.
    pub fn new(api: Api, root: &Path, display: &str) -> Contract {
        Contract {
            api,
            root: root.to_owned(),
            out: root.to_owned(),
            display: display.to_owned(),
            _unpacked: None,
        }
    }

    /// Reads and validates the manifest at `path` (its records beside it).
    pub fn load(path: &Path) -> Result<Contract> {
        let display = path.display().to_string();
        let text = mooncake_sos_manifest::read_manifest(path, &display)?;
        let api = mooncake_sos_manifest::load_str(&display, &text)?;
        let root = match path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir.to_owned(),
            _ => PathBuf::from("."),
        };
        Ok(Contract::new(api, &root, &display))
    }

    /// A built-in contract: `files` (`api.toml`, `cores/…`, `consumers/…` and their texts)
    /// unpacked into a scratch directory for the run; records written go to `out`.
    pub fn from_files(files: &[(&str, &str)], out: &Path) -> Result<Contract> {
        let unpacked = mooncake_sos_support::bounded::scratch("contract")
            .map_err(|e| BadInput(format!("error: cannot unpack the built-in contract: {e}")))?;
        for (rel, text) in files {
            let path = unpacked.path().join(rel);
            let written = path
                .parent()
                .map_or(Ok(()), std::fs::create_dir_all)
                .and_then(|()| std::fs::write(&path, text));
            written
                .map_err(|e| BadInput(format!("{}: error: cannot unpack: {e}", path.display())))?;
        }
        let text = files
            .iter()
            .find(|(rel, _)| *rel == "api.toml")
            .map(|(_, text)| *text)
            .ok_or_else(|| BadInput("error: the built-in contract has no api.toml".into()))?;
        let api = mooncake_sos_manifest::load_str("api.toml (built in)", text)?;
        Ok(Contract {
            api,
            root: unpacked.path().to_owned(),
            out: out.to_owned(),
            display: "api.toml (built in)".into(),
            _unpacked: Some(unpacked),
        })
    }

    /// What `--version` names: the upstream module at its commit, each image with its base
    /// and its layer's pins, and the records the contract carries.
    pub fn describe(&self, records: &[&str]) -> Vec<String> {
        let up = &self.api.upstream;
        let mut lines = vec![format!(
            "contract: {} {}: {} at {}@{} (sha256 {})",
            self.display,
            self.api.name,
            up.module,
            up.repo,
            up.commit,
            &up.sha256[..up.sha256.len().min(12)]
        )];
        for image in &self.api.images {
            let layer = match &image.layer {
                Layer::Pin {
                    base_package,
                    base_version,
                    release,
                } => format!("pin {base_package} {base_version} -> {}", release.version),
                Layer::Overlay {
                    base_package,
                    base_version,
                } => format!("overlay on {base_package} {base_version} at the upstream commit"),
                Layer::Fill { package, version } => format!("fill from {package} {version}"),
                Layer::Check {
                    base_package,
                    base_version,
                } => format!("check {base_package} {base_version}"),
            };
            let users: Vec<String> = image
                .users
                .iter()
                .map(|u| format!("{} {}", u.package, u.version))
                .collect();
            let users = match users.is_empty() {
                true => String::new(),
                false => format!("; users: {}", users.join(", ")),
            };
            lines.push(format!(
                "image {}: {}:{}: {layer}{users}",
                image.id, image.base_image, image.base_tag
            ));
        }
        if !records.is_empty() {
            lines.push(format!("records: {}", records.join(", ")));
        }
        lines
    }
}
