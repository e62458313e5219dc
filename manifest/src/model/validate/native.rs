//! `[upstream] native_roles`, `[[native]]` and `[[sibling]]`: the declared native surface.

use super::Validator;
use crate::model::native::*;
use crate::model::values::*;
use crate::model::{NativeRequirement, Upstream};
use crate::parse::{RawManifest, RawNative, RawSibling, S};
use crate::signature::overload_params;
use std::collections::BTreeMap;

impl Validator<'_> {
    /// The declared surface, and from it the requirements the run-time checkers verify.
    pub(super) fn surface(
        &mut self,
        raw: &RawManifest,
        upstream: &Upstream,
    ) -> (NativeSurface, Vec<NativeRequirement>) {
        let roles = self.roles(raw);
        let mut seen = BTreeMap::new();
        let mut members = Vec::new();
        for n in &raw.native {
            let member = self.member(n, upstream);
            if seen.insert(member.path(), ()).is_some() {
                let what = format!(
                    "`{}` is declared twice: give one [[native]] entry per member",
                    member.path()
                );
                self.error(&n.get_ref().object, what);
            }
            members.push(member);
        }
        let mut seen = BTreeMap::new();
        let mut siblings = Vec::new();
        for s in &raw.sibling {
            let sibling = self.sibling(s, upstream);
            if seen.insert(sibling.module.clone(), ()).is_some() {
                let what = format!("sibling `{}` is declared twice", sibling.module);
                self.error(&s.get_ref().module, what);
            }
            siblings.push(sibling);
        }
        let runtime = members
            .iter()
            .filter_map(NativeMember::runtime_requirement)
            .collect();
        let surface = NativeSurface {
            roles,
            members,
            siblings,
        };
        (surface, runtime)
    }

    fn roles(&mut self, raw: &RawManifest) -> Vec<NativeRole> {
        let Some(table) = &raw.upstream.get_ref().native_roles else {
            return Vec::new();
        };
        let mut roles = Vec::new();
        // A BTreeMap: sorted by parameter name, so the model is deterministic.
        for (param, class) in table.get_ref() {
            if !is_python_identifier(param) {
                let what =
                    format!("native role {param:?}: not a Python identifier (a parameter name)");
                self.error(table, what);
            }
            let class = self.text(
                class,
                is_dotted_name,
                "native role class (a dotted name in the native module)",
            );
            roles.push(NativeRole {
                param: param.clone(),
                class,
            });
        }
        roles
    }

    fn member(&mut self, n: &S<RawNative>, upstream: &Upstream) -> NativeMember {
        let r: &RawNative = n.get_ref();
        let module = r
            .module
            .as_ref()
            .and_then(|m| self.extension_module(m, upstream));
        let object = self.text(
            &r.object,
            is_dotted_name,
            "native object (a dotted Python name)",
        );
        let reason = self.text(&r.reason, |s| !s.trim().is_empty(), "reason (empty)");
        let usage = self.usage(&r.usage);
        let by = match &r.by {
            None => NeededBy::Module,
            Some(b) => match b.get_ref().as_str() {
                "module" => NeededBy::Module,
                "consumer" => NeededBy::Consumer,
                other => {
                    self.error(
                        b,
                        format!("unknown `by` {other:?}: expected module or consumer"),
                    );
                    NeededBy::Module
                }
            },
        };
        let kind = match (&r.overload, &r.attribute) {
            (Some(o), Some(_)) => {
                self.error(o, "give either overload or attribute, not both");
                MemberKind::Callable { overload: None }
            }
            (overload, None) => {
                for (key, value) in [
                    ("instance", r.instance.is_some()),
                    ("access", r.access.is_some()),
                ] {
                    if value {
                        let what = format!("`{key}` applies to attribute entries only");
                        self.error(&r.object, what);
                    }
                }
                let overload = overload.as_ref().map(|o| {
                    let text = o.get_ref().trim().to_string();
                    if let Err(why) = overload_params(&text) {
                        self.error(o, format!("invalid overload: {why}"));
                    }
                    text
                });
                MemberKind::Callable { overload }
            }
            (None, Some(a)) => MemberKind::Attribute {
                name: self.text(a, is_python_identifier, "attribute (a Python identifier)"),
                instance: r.instance.as_ref().is_some_and(|i| *i.get_ref()),
                access: match &r.access {
                    None => Access::Read,
                    Some(x) => Access::ALL
                        .iter()
                        .find(|(name, _)| name == x.get_ref())
                        .map(|(_, a)| *a)
                        .unwrap_or_else(|| {
                            let what = format!(
                                "unknown access {:?}: expected read, write or read-write",
                                x.get_ref()
                            );
                            self.error(x, what);
                            Access::Read
                        }),
                },
            },
        };
        let dict_keys = self.dict_keys(r, &kind);
        NativeMember {
            module,
            object,
            kind,
            usage,
            by,
            dict_keys,
            reason,
        }
    }

    /// `dict_keys`: Python identifiers, each once, on a callable only.
    fn dict_keys(&mut self, r: &RawNative, kind: &MemberKind) -> Vec<String> {
        let Some(keys) = &r.dict_keys else {
            return Vec::new();
        };
        if matches!(kind, MemberKind::Attribute { .. }) {
            self.error(keys, "`dict_keys` applies to callable entries only");
        }
        let mut out: Vec<String> = Vec::new();
        for k in keys.get_ref() {
            let key = self.text(k, is_python_identifier, "dict key (a Python identifier)");
            if out.contains(&key) {
                self.error(k, format!("dict key `{key}` is listed twice"));
            }
            out.push(key);
        }
        out.sort();
        out
    }

    fn usage(&mut self, value: &Option<S<String>>) -> Usage {
        match value {
            None => Usage::Required,
            Some(u) => match u.get_ref().as_str() {
                "required" => Usage::Required,
                "optional" => Usage::Optional,
                other => {
                    self.error(
                        u,
                        format!("unknown `use` {other:?}: expected required or optional"),
                    );
                    Usage::Required
                }
            },
        }
    }

    /// `[[native]] module`: another extension module of the package; the native core's own
    /// name means the default (`None`).
    fn extension_module(&mut self, m: &S<String>, upstream: &Upstream) -> Option<String> {
        let module = self.text(m, is_dotted_name, "native module (a dotted Python name)");
        let package = format!("{}.", upstream.package());
        let problem = if module == upstream.native_module {
            return None;
        } else if !module.starts_with(&package) {
            format!("is not in the package `{}`", upstream.package())
        } else if module == upstream.module {
            "is the upstream module itself, not an extension module".to_owned()
        } else {
            return Some(module);
        };
        self.error(m, format!("native module `{module}` {problem}"));
        None
    }

    fn sibling(&mut self, s: &S<RawSibling>, upstream: &Upstream) -> Sibling {
        let r = s.get_ref();
        let module = self.text(
            &r.module,
            is_dotted_name,
            "sibling module (a dotted Python name)",
        );
        let package = format!("{}.", upstream.package());
        let problem = if !module.starts_with(&package) {
            Some(format!("is not in the package `{}`", upstream.package()))
        } else if module == upstream.module {
            Some("is the upstream module itself".to_owned())
        } else if module == upstream.native_module {
            Some("is the native module: declare its members as [[native]]".to_owned())
        } else {
            None
        };
        if let Some(problem) = problem {
            self.error(&r.module, format!("sibling `{module}` {problem}"));
        }
        Sibling {
            module,
            usage: self.usage(&r.usage),
            reason: self.text(&r.reason, |s| !s.trim().is_empty(), "reason (empty)"),
        }
    }
}
