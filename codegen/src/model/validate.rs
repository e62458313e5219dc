//! Raw manifest → `Api`. Every rule that serde's shape check cannot express lives here, and
//! every failure points at the offending value. All problems are collected, not just the first.

use super::values::*;
use super::*;
use crate::diag::{Diagnostic, Diagnostics, Source};
use crate::parse::{RawImage, RawManifest, RawNative, RawParam, RawSymbol, S};
use std::collections::BTreeMap;

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

    fn path(&mut self, value: &S<String>, what: &str) -> RelPath {
        RelPath::new(value.get_ref()).unwrap_or_else(|| {
            self.error(
                value,
                format!(
                    "{what} {:?} is outside the repository: give a relative path without `..`",
                    value.get_ref()
                ),
            );
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
            module: self.text(
                &raw.shim.get_ref().module,
                is_python_identifier,
                "shim module (a Python identifier)",
            ),
            image_copy_from: self.path(&raw.shim.get_ref().image_copy_from, "image_copy_from"),
        };
        let drop = self.drop(raw);
        let symbols = self.symbols(&raw.symbol);
        let native = raw.native.iter().map(|n| self.native(n)).collect();
        let images = self.images(raw);
        Api {
            name,
            upstream: Upstream {
                repo,
                path,
                module,
                native_module,
                commit,
                sha256,
                prs,
                raw_base_url,
            },
            shim,
            drop,
            symbols,
            native,
            images,
        }
    }

    fn drop(&mut self, raw: &RawManifest) -> DropCondition {
        let d = raw.drop.get_ref();
        let condition = self.text(
            &d.condition,
            |c| !c.trim().is_empty(),
            "drop condition (empty)",
        );
        let first_release = match (&d.first_release, &d.first_release_package) {
            (Some(v), Some(p)) => Some((
                self.text(p, is_dist_name, "package name"),
                self.text(v, is_version, "version"),
            )),
            (None, None) => None,
            (Some(v), None) => {
                self.error(v, "first_release needs first_release_package");
                None
            }
            (None, Some(p)) => {
                self.error(p, "first_release_package needs first_release");
                None
            }
        };
        DropCondition {
            condition,
            first_release,
        }
    }

    fn symbols(&mut self, raw: &[S<RawSymbol>]) -> Vec<Symbol> {
        let mut seen = BTreeMap::new();
        let mut out = Vec::new();
        for s in raw {
            let name = self.text(
                &s.get_ref().name,
                is_python_identifier,
                "symbol name (a Python identifier)",
            );
            if seen.insert(name.clone(), ()).is_some() {
                self.error(&s.get_ref().name, format!("duplicate symbol `{name}`"));
            }
            if let Some(kind) = self.symbol_kind(s) {
                out.push(Symbol { name, kind });
            }
        }
        if out.is_empty() && raw.is_empty() {
            self.diags.push(Diagnostic::new(
                self.source,
                0..0,
                "the manifest declares no [[symbol]]",
            ));
        }
        out
    }

    fn symbol_kind(&mut self, s: &S<RawSymbol>) -> Option<SymbolKind> {
        let r = s.get_ref();
        let kind = r.kind.get_ref().as_str();
        // Keys that do not belong to this kind are errors, not silently ignored.
        let allowed: &[&str] = match kind {
            "dataclass" => &["frozen", "fields"],
            "class" => &["init", "method"],
            "function" => &["params", "returns"],
            "alias" => &["target", "params", "returns"],
            _ => {
                self.error(
                    &r.kind,
                    format!(
                        "unknown symbol kind {kind:?}: expected dataclass, class, function or alias"
                    ),
                );
                return None;
            }
        };
        let present = [
            ("frozen", r.frozen.as_ref().map(|x| x.span())),
            ("fields", r.fields.as_ref().map(|x| x.span())),
            ("init", r.init.as_ref().map(|x| x.span())),
            ("method", r.method.first().map(|x| x.span())),
            ("target", r.target.as_ref().map(|x| x.span())),
            ("params", r.params.as_ref().map(|x| x.span())),
            ("returns", r.returns.as_ref().map(|x| x.span())),
        ];
        for (key, span) in present {
            if let Some(span) = span.filter(|_| !allowed.contains(&key)) {
                let msg = format!("`{key}` does not apply to a {kind} symbol");
                self.diags.push(Diagnostic::new(self.source, span, msg));
            }
        }
        let params = |v: &mut Self, p: &Option<S<Vec<S<RawParam>>>>, fields: bool| {
            p.as_ref()
                .map(|p| v.params(p.get_ref(), fields))
                .unwrap_or_default()
        };
        Some(match kind {
            "dataclass" => SymbolKind::Dataclass {
                frozen: r.frozen.as_ref().is_some_and(|f| *f.get_ref()),
                fields: params(self, &r.fields, true),
            },
            "class" => {
                let mut names = BTreeMap::new();
                let methods = r
                    .method
                    .iter()
                    .map(|m| {
                        let m = m.get_ref();
                        let name = self.text(
                            &m.name,
                            is_python_identifier,
                            "method name (a Python identifier)",
                        );
                        if names.insert(name.clone(), ()).is_some() {
                            self.error(&m.name, format!("duplicate method `{name}`"));
                        }
                        Method {
                            name,
                            staticmethod: m.staticmethod.as_ref().is_some_and(|s| *s.get_ref()),
                            params: self.params(&m.params, false),
                            returns: m.returns.as_ref().map(|x| x.get_ref().clone()),
                        }
                    })
                    .collect();
                SymbolKind::Class {
                    init: params(self, &r.init, false),
                    methods,
                }
            }
            "function" => SymbolKind::Function {
                params: params(self, &r.params, false),
                returns: r.returns.as_ref().map(|x| x.get_ref().clone()),
            },
            _ => {
                let target = match &r.target {
                    Some(t) => self.text(
                        t,
                        is_python_identifier,
                        "alias target (a Python identifier)",
                    ),
                    None => {
                        self.error(&r.name, "an alias needs `target`, the name it points to");
                        String::new()
                    }
                };
                SymbolKind::Alias {
                    target,
                    params: params(self, &r.params, false),
                    returns: r.returns.as_ref().map(|x| x.get_ref().clone()),
                }
            }
        })
    }

    /// Parameters (or dataclass fields) in order, with Python's own ordering rules.
    fn params(&mut self, raw: &[S<RawParam>], fields: bool) -> Vec<Param> {
        let mut seen = BTreeMap::new();
        let (mut saw_default, mut saw_keyword) = (false, false);
        let mut out = Vec::new();
        for p in raw {
            let r = p.get_ref();
            let name = self.text(
                &r.name,
                is_python_identifier,
                "parameter name (a Python identifier)",
            );
            if seen.insert(name.clone(), ()).is_some() {
                self.error(&r.name, format!("duplicate parameter `{name}`"));
            }
            let kind = match r.kind.as_ref().map(|k| k.get_ref().as_str()) {
                None | Some("positional") => ParamKind::Positional,
                Some("keyword") if !fields => ParamKind::KeywordOnly,
                Some(other) => {
                    let kinds = if fields {
                        "positional"
                    } else {
                        "positional or keyword"
                    };
                    self.error(
                        r.kind.as_ref().expect("matched Some"),
                        format!("unknown parameter kind {other:?}: expected {kinds}"),
                    );
                    ParamKind::Positional
                }
            };
            let default = match (&r.default, &r.default_factory) {
                (Some(d), None) => Some(DefaultValue::Expr(self.text(
                    d,
                    |e| !e.trim().is_empty(),
                    "default (an empty expression)",
                ))),
                (None, Some(f)) if fields => Some(DefaultValue::Factory(self.text(
                    f,
                    is_dotted_name,
                    "default_factory (a dotted Python name)",
                ))),
                (None, Some(f)) => {
                    self.error(f, "default_factory applies to dataclass fields only");
                    None
                }
                (Some(d), Some(_)) => {
                    self.error(d, "give either default or default_factory, not both");
                    None
                }
                (None, None) => None,
            };
            if kind == ParamKind::Positional {
                if saw_keyword {
                    self.error(
                        &r.name,
                        format!("positional parameter `{name}` after a keyword-only one"),
                    );
                } else if saw_default && default.is_none() {
                    self.error(
                        &r.name,
                        format!("parameter `{name}` without a default follows one with a default"),
                    );
                }
                saw_default |= default.is_some();
            } else {
                saw_keyword = true;
            }
            let rust = r.rust.as_ref().and_then(|t| self.rust_type(t, kind));
            let annotation = r.annotation.as_ref().map(|a| a.get_ref().clone());
            out.push(Param {
                name,
                kind,
                annotation,
                default,
                rust,
            });
        }
        out
    }

    fn rust_type(&mut self, t: &S<String>, kind: ParamKind) -> Option<RustType> {
        let found = RustType::ALL
            .iter()
            .find(|(n, _)| n == t.get_ref())
            .map(|(_, ty)| *ty);
        match found {
            None => {
                let names: Vec<_> = RustType::ALL.iter().map(|(n, _)| *n).collect();
                self.error(
                    t,
                    format!(
                        "unknown rust type {:?}: expected one of {}",
                        t.get_ref(),
                        names.join(", ")
                    ),
                );
                None
            }
            Some(_) if kind != ParamKind::KeywordOnly => {
                self.error(
                    t,
                    "`rust` applies to keyword-only parameters (they form the option struct)",
                );
                None
            }
            some => some,
        }
    }

    fn native(&mut self, n: &S<RawNative>) -> NativeRequirement {
        let r: &RawNative = n.get_ref();
        let object = self.text(
            &r.object,
            is_dotted_name,
            "native object (a dotted Python name)",
        );
        let reason = self.text(&r.reason, |s| !s.trim().is_empty(), "reason (empty)");
        let check = match (&r.overload, &r.attribute) {
            (Some(o), None) => {
                if let Some(i) = &r.instance {
                    self.error(i, "`instance` applies to attribute checks only");
                }
                NativeCheck::Overload(o.get_ref().trim().to_string())
            }
            (None, Some(a)) => NativeCheck::Attribute {
                name: self.text(a, is_python_identifier, "attribute (a Python identifier)"),
                instance: r.instance.as_ref().is_some_and(|i| *i.get_ref()),
            },
            (Some(o), Some(_)) => {
                self.error(o, "give either overload or attribute, not both");
                NativeCheck::Overload(String::new())
            }
            (None, None) => {
                self.error(
                    &r.object,
                    "a native requirement needs `overload` or `attribute`",
                );
                NativeCheck::Overload(String::new())
            }
        };
        NativeRequirement {
            object,
            check,
            reason,
        }
    }

    fn images(&mut self, raw: &RawManifest) -> Vec<Image> {
        let mut dockerfiles = BTreeMap::new();
        let mut out = Vec::new();
        for (id, img) in &raw.image {
            if !is_kebab(id) {
                self.error(
                    img,
                    format!("invalid image id {id:?}: lowercase words joined by -"),
                );
            }
            let image = self.image(id, img);
            if let Some(previous) = dockerfiles.insert(image.dockerfile.clone(), id.clone()) {
                let msg = format!(
                    "image `{id}` writes {} too, like image `{previous}`",
                    image.dockerfile
                );
                self.error(&img.get_ref().dockerfile, msg);
            }
            out.push(image);
        }
        out
    }

    fn image(&mut self, id: &str, img: &S<RawImage>) -> Image {
        let r = img.get_ref();
        let dockerfile = self.path(&r.dockerfile, "dockerfile");
        let base_image = self.text(&r.base_image, is_image_name, "base image name");
        let base_tag = self.text(&r.base_tag, is_image_tag, "base image tag");
        let required = |v: &mut Self,
                        value: &Option<S<String>>,
                        key: &str,
                        ok: fn(&str) -> bool,
                        what: &str| match value {
            Some(x) => v.text(x, ok, what),
            None => {
                let strategy = r.strategy.get_ref();
                v.error(
                    img,
                    format!("image `{id}` (strategy {strategy}) needs `{key}`"),
                );
                String::new()
            }
        };
        let (layer, unused) = match r.strategy.get_ref().as_str() {
            "overlay" => (
                Layer::Overlay {
                    base_package: required(
                        self,
                        &r.base_package,
                        "base_package",
                        is_dist_name,
                        "package name",
                    ),
                    base_version: required(
                        self,
                        &r.base_version,
                        "base_version",
                        is_version,
                        "version",
                    ),
                },
                [
                    ("fill_package", &r.fill_package),
                    ("fill_version", &r.fill_version),
                ],
            ),
            "fill" => (
                Layer::Fill {
                    package: required(
                        self,
                        &r.fill_package,
                        "fill_package",
                        is_dist_name,
                        "package name",
                    ),
                    version: required(self, &r.fill_version, "fill_version", is_version, "version"),
                },
                [
                    ("base_package", &r.base_package),
                    ("base_version", &r.base_version),
                ],
            ),
            other => {
                self.error(
                    &r.strategy,
                    format!("unknown strategy {other:?}: expected overlay or fill"),
                );
                (
                    Layer::Fill {
                        package: String::new(),
                        version: String::new(),
                    },
                    [("", &None), ("", &None)],
                )
            }
        };
        for (key, value) in unused {
            if let Some(v) = value {
                self.error(
                    v,
                    format!(
                        "`{key}` does not apply to strategy {}",
                        r.strategy.get_ref()
                    ),
                );
            }
        }
        let build_py = match (&r.build_py, &r.build_py_variant) {
            (Some(p), Some(v)) => Some(BuildPyVariant {
                path: self.path(p, "build_py"),
                variant: self.text(v, |s| is_kebab(s) || is_image_tag(s), "build_py_variant"),
            }),
            (None, None) => None,
            (Some(p), None) => {
                self.error(p, "build_py needs build_py_variant");
                None
            }
            (None, Some(v)) => {
                self.error(v, "build_py_variant needs build_py");
                None
            }
        };
        Image {
            id: id.to_string(),
            dockerfile,
            base_image,
            base_tag,
            layer,
            build_py,
        }
    }
}

fn is_repo(s: &str) -> bool {
    let ok = |p: &str| {
        !p.is_empty()
            && p.bytes()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
    };
    matches!(s.split_once('/'), Some((owner, name)) if ok(owner) && ok(name))
}

fn is_base_url(s: &str) -> bool {
    let rest = s
        .strip_prefix("https://")
        .or_else(|| s.strip_prefix("http://"));
    rest.is_some_and(|r| {
        !r.is_empty()
            && !r.ends_with('/')
            && r.bytes()
                .all(|c| c.is_ascii_graphic() && !matches!(c, b'"' | b'\'' | b'\\' | b'$' | b'`'))
    })
}
