//! Raw manifest → `Api`. Every rule that serde's shape check cannot express lives here, and
//! every failure points at the offending value. All problems are collected, not just the first.
//! Symbols and parameters are in `symbols.rs`, the native surface in `native.rs`, images in
//! `images.rs`.

mod clashes;
mod images;
mod layers;
mod native;
mod scenarios;
mod symbols;

use super::values::*;
use super::*;
use crate::parse::{RawManifest, S};
use mooncake_sos_support::diag::{Diagnostic, Diagnostics, Source};
use std::collections::BTreeSet;

/// The rule a list's names follow.
#[derive(Clone, Copy)]
enum Name {
    Python,
    Kebab,
}

pub fn validate(raw: &RawManifest, source: &Source) -> Result<Api, Diagnostics> {
    let mut v = Validator {
        source,
        diags: Diagnostics::default(),
    };
    let api = v.manifest(raw);
    v.diags.finish(api)
}

struct Validator<'a> {
    source: &'a Source,
    diags: Diagnostics,
}

impl Validator<'_> {
    fn error<T>(&mut self, value: &S<T>, message: impl Into<String>) {
        let d = Diagnostic::new(self.source, value.span(), message);
        self.diags.push(d);
    }

    /// The value's text if `ok` holds for it, else an error naming `what`.
    fn text(&mut self, value: &S<String>, ok: fn(&str) -> bool, what: &str) -> String {
        if !ok(value.get_ref()) {
            self.error(value, format!("invalid {what}: {:?}", value.get_ref()));
        }
        value.get_ref().clone()
    }

    /// A name that must differ from the others of its list (`seen`): a Python identifier,
    /// or, for `Name::Kebab`, lowercase words joined by `-`. `what` names the list's items.
    fn unique_name(
        &mut self,
        value: &S<String>,
        rule: Name,
        what: &str,
        seen: &mut BTreeSet<String>,
    ) -> String {
        let name = match rule {
            Name::Python => self.text(
                value,
                is_python_identifier,
                &format!("{what} name (a Python identifier)"),
            ),
            Name::Kebab => self.text(
                value,
                is_kebab,
                &format!("{what} name (lowercase words joined by -)"),
            ),
        };
        if !seen.insert(name.clone()) {
            self.error(value, format!("duplicate {what} `{name}`"));
        }
        name
    }

    /// Two keys that go together: both or neither (`what` is their names, as written).
    fn both<'r, A, B>(
        &mut self,
        a: &'r Option<S<A>>,
        b: &'r Option<S<B>>,
        what: [&str; 2],
    ) -> Option<(&'r S<A>, &'r S<B>)> {
        match (a, b) {
            (Some(a), Some(b)) => Some((a, b)),
            (None, None) => None,
            (Some(a), None) => {
                self.error(a, format!("{} needs {}", what[0], what[1]));
                None
            }
            (None, Some(b)) => {
                self.error(b, format!("{} needs {}", what[1], what[0]));
                None
            }
        }
    }

    fn path(&mut self, value: &S<String>, what: &str) -> RelPath {
        RelPath::parse(value.get_ref()).unwrap_or_else(|why| {
            self.error(value, format!("{what} {:?}: {why}", value.get_ref()));
            RelPath::new("invalid").expect("literal is a valid path")
        })
    }

    fn manifest(&mut self, raw: &RawManifest) -> Api {
        let name = self.text(&raw.name, is_kebab, "name (lowercase words joined by -)");
        let u = raw.upstream.get_ref();
        let repo = self.text(&u.repo, is_repo, "repo (owner/name)");
        let path = self.text(
            &u.path,
            |p| p.ends_with(".py") && RelPath::new(p).is_some(),
            "upstream path (a relative .py path)",
        );
        let module = self.text(&u.module, is_dotted_name, "module (a dotted Python name)");
        let commit = self.text(
            &u.commit,
            |c| is_hex(c, 40),
            "commit (40 lowercase hex digits)",
        );
        let sha256 = self.text(
            &u.sha256,
            |c| is_hex(c, 64),
            "sha256 (64 lowercase hex digits)",
        );
        let prs = u
            .prs
            .iter()
            .filter_map(|pr| match u32::try_from(*pr.get_ref()) {
                Ok(n) if n > 0 => Some(n),
                _ => {
                    self.error(pr, format!("invalid PR number: {}", pr.get_ref()));
                    None
                }
            })
            .collect();
        let raw_base_url = self.text(
            &u.raw_base_url,
            is_base_url,
            "raw_base_url (http(s)://host[/path], no trailing /)",
        );
        let native_module = match &u.native_module {
            Some(m) => self.text(m, is_dotted_name, "native_module (a dotted Python name)"),
            None => format!("{}.store", module.split('.').next().unwrap_or_default()),
        };
        let shim = Shim {
            module: self.shim_module(&raw.shim.get_ref().module, &module),
        };
        if let Some(old) = &raw.shim.get_ref().image_copy_from {
            self.error(
                old,
                "`image_copy_from` is derived now (the shim is written to \
                 generated/python/<module>.py and copied from there): remove the key",
            );
        }
        let files = self.upstream_files(&u.file, &path, &module);
        let drop = self.drop(raw);
        let symbols = self.symbols(&raw.symbol);
        self.name_clashes(&raw.symbol);
        let releases = self.releases(&raw.release);
        let images = self.images(raw, &releases);
        let upstream = Upstream {
            repo,
            path,
            module,
            native_module,
            commit,
            sha256,
            prs,
            raw_base_url,
            files,
        };
        let (surface, native) = self.surface(raw, &upstream);
        let scenarios = self.scenarios(&raw.scenario);
        Api {
            name,
            upstream,
            shim,
            drop,
            symbols,
            native,
            surface,
            images,
            releases,
            scenarios,
        }
    }

    /// The shim is installed as a top-level module: a name Python already resolves elsewhere
    /// (the standard library, the upstream package) would make `python3 -m <shim>` run that
    /// module instead, and the image's check prove nothing.
    fn shim_module(&mut self, value: &S<String>, upstream_module: &str) -> String {
        let name = self.text(
            value,
            is_python_identifier,
            "shim module (a Python identifier)",
        );
        let package = upstream_module.split('.').next().unwrap_or_default();
        if name == package {
            self.error(
                value,
                format!("shim module {name:?} is the upstream package's own name: pick a name of its own (e.g. \"{package}_sos\")"),
            );
        } else if is_stdlib_module(&name) {
            self.error(
                value,
                format!("shim module {name:?} is a Python standard-library module: `python3 -m {name}` would run that module, not the shim; pick another name"),
            );
        }
        name
    }

    fn drop(&mut self, raw: &RawManifest) -> DropCondition {
        let d = raw.drop.get_ref();
        let condition = self.text(
            &d.condition,
            |c| !c.trim().is_empty(),
            "drop condition (empty)",
        );
        let first_release = self
            .both(
                &d.first_release,
                &d.first_release_package,
                ["first_release", "first_release_package"],
            )
            .map(|(v, p)| {
                (
                    self.text(p, is_dist_name, "package name"),
                    self.text(v, is_version, "version"),
                )
            });
        DropCondition {
            condition,
            first_release,
        }
    }
}

/// `owner/name` as GitHub spells them: each a plain path part (see [`RelPath`]).
fn is_repo(s: &str) -> bool {
    matches!(s.split_once('/'), Some((owner, name))
        if !name.contains('/') && RelPath::new(owner).is_some() && RelPath::new(name).is_some())
}

/// `http(s)://host[:port][/path]`, no trailing `/`: the host a DNS name or IPv4 address,
/// the path plain parts. The URL becomes an ARG default and a word in a RUN line, so a
/// quote, a space, `$`, `#` or a query string has no place in it.
fn is_base_url(s: &str) -> bool {
    let Some(rest) = s
        .strip_prefix("https://")
        .or_else(|| s.strip_prefix("http://"))
    else {
        return false;
    };
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    let (host, port) = authority.split_once(':').unwrap_or((authority, ""));
    let host_ok = !host.is_empty()
        && !host.starts_with(['-', '.'])
        && host
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'-'));
    let port_ok = !authority.contains(':')
        || (!port.is_empty() && port.len() <= 5 && port.bytes().all(|c| c.is_ascii_digit()));
    host_ok && port_ok && (path.is_empty() && !rest.ends_with('/') || RelPath::new(path).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls() {
        for ok in [
            "https://raw.githubusercontent.com",
            "http://127.0.0.1:8080",
            "http://mirror.local:8080/github/raw",
        ] {
            assert!(is_base_url(ok), "{ok}");
        }
        for bad in [
            "",
            "ftp://x",
            "https://",
            "https://x/",
            "https://x:/a",
            "https://x:99999999",
            "https://x/a b",
            "https://x/$(id)",
            "https://x/a\"b",
            "https://x/a#b",
            "https://x/a?b=c",
            "https://x\nRUN id",
            "https://user@x",
            "https://x//a",
        ] {
            assert!(!is_base_url(bad), "{bad}");
        }
    }

    #[test]
    fn repos() {
        assert!(is_repo("kvcache-ai/Mooncake"));
        for bad in ["x", "a/b/c", "../b", "a/..", "a/b c", "a/$(id)", "-a/b"] {
            assert!(!is_repo(bad), "{bad}");
        }
    }
}
