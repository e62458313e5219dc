//! A PEP 503 simple index on loopback over given wheels, served by [`FileServer`]: the
//! package index `cargo xtask watch` lists and downloads through pip in the tests (the same
//! layout scripts/local-index.py serves to image builds).

use crate::FileServer;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// `/simple/<project>/` pages linking `/files/<wheel>#sha256=<hex>`; `url` is the index URL
/// for pip.
pub struct SimpleIndex {
    pub server: FileServer,
    pub url: String,
}

/// The PEP 503 normalized project name of a wheel file name.
fn project(file: &str) -> String {
    let dist = file.split('-').next().unwrap_or(file).to_ascii_lowercase();
    dist.replace(['_', '.'], "-")
}

impl SimpleIndex {
    pub fn serve(wheels: &[PathBuf]) -> SimpleIndex {
        let mut files = Vec::new();
        let mut projects: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for wheel in wheels {
            let name = wheel
                .file_name()
                .and_then(|n| n.to_str())
                .expect("a wheel file name")
                .to_owned();
            let bytes = std::fs::read(wheel).unwrap_or_else(|e| panic!("{}: {e}", wheel.display()));
            let sha256: String = Sha256::digest(&bytes)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            files.push((format!("/files/{name}"), bytes));
            projects
                .entry(project(&name))
                .or_default()
                .push(format!("{name}#sha256={sha256}"));
        }
        let page =
            |links: String| format!("<!DOCTYPE html>\n<html><body>\n{links}</body></html>\n");
        let root: String = projects
            .keys()
            .map(|p| format!("<a href=\"{p}/\">{p}</a>\n"))
            .collect();
        files.push(("/simple/".to_owned(), page(root).into_bytes()));
        for (p, names) in &projects {
            let links: String = names
                .iter()
                .map(|n| {
                    let file = n.split('#').next().unwrap_or(n);
                    format!("<a href=\"../../files/{n}\">{file}</a>\n")
                })
                .collect();
            files.push((format!("/simple/{p}/"), page(links).into_bytes()));
        }
        let server = FileServer::start(files);
        let url = format!("{}/simple/", server.base_url);
        SimpleIndex { server, url }
    }
}
