//! Imports: of the native module (bound as values) and of sibling modules (uses).

use super::expr::Args;
use super::value::Remote;
use super::value::{Member, Val, Vals};
use super::walk::{Analyzer, strings};
use super::{Access, On, Target};
use ruff_python_ast as ast;

impl<'a> Analyzer<'a> {
    pub fn import(&mut self, i: &'a ast::StmtImport) {
        for alias in &i.names {
            let full = alias.name.as_str();
            let line = self.line(alias);
            if self.is_sibling(full) {
                let guard = self.import_guard(true);
                let target = Target::Sibling {
                    module: full.to_owned(),
                };
                self.record(line, target, Access::Import, guard);
            }
            match &alias.asname {
                Some(name) if self.config.native(full).is_some() => {
                    let vals = self.config.module_value(full).into_iter().collect();
                    self.bind(name, vals);
                }
                Some(name) if self.in_program(full) => {
                    let module = Remote::Module(full.to_owned());
                    self.bind(name, [Val::Remote(module)].into());
                }
                Some(_) => {}
                None => {
                    let first = full.split('.').next().unwrap_or(full);
                    match self.config.module_value(first) {
                        Some(v) => self.bind(first, [v].into()),
                        None if self.in_program(first) => {
                            let module = Remote::Module(first.to_owned());
                            self.bind(first, [Val::Remote(module)].into());
                        }
                        None => {}
                    }
                }
            }
        }
    }

    pub fn import_from(&mut self, i: &'a ast::StmtImportFrom) {
        let base = self.absolute(i.module.as_deref(), i.level);
        for alias in &i.names {
            let name = alias.name.as_str();
            let bound = alias.asname.as_ref().unwrap_or(&alias.name);
            let line = self.line(alias);
            let full = format!("{base}.{name}");
            if let Some(m) = self.config.native(&base) {
                let guard = self.import_guard(false);
                if name == "*" {
                    let target = Target::Dynamic {
                        owner: self.config.member_path(m, ""),
                        on: On::Module,
                    };
                    self.record(line, target, Access::Read, guard);
                    continue;
                }
                let path = self.config.member_path(m, name);
                let target = Target::Native {
                    path: path.clone(),
                    on: On::Module,
                };
                self.record(line, target, Access::Read, guard.clone());
                let member = Member {
                    path,
                    on: On::Module,
                    probe: None,
                };
                self.bind(bound, [Val::Member(member)].into());
            } else if let Some(m) = self.config.native(&full) {
                self.bind(bound, [Val::NativeModule(m)].into());
            } else if self.in_program(&base) || self.in_program(&full) {
                let vals = self.imported(&base, name);
                self.bind(bound, vals);
            } else {
                // `from pkg.mod import x` imports pkg.mod; `from pkg import mod` imports pkg.mod.
                let module = if base == self.config.package {
                    full
                } else {
                    base.clone()
                };
                if self.is_sibling(&module) {
                    let guard = self.import_guard(true);
                    let target = Target::Sibling { module };
                    let statement = self.line(i);
                    self.record(statement, target, Access::Import, guard);
                }
            }
        }
    }

    /// `from .x import y` in `pkg.mod` is `pkg.x`.
    fn absolute(&self, module: Option<&str>, level: u32) -> String {
        if level == 0 {
            return module.unwrap_or_default().to_owned();
        }
        let mut parts: Vec<&str> = self.config.module.split('.').collect();
        for _ in 0..level {
            parts.pop();
        }
        let mut base = parts.join(".");
        if let Some(m) = module {
            if !base.is_empty() {
                base.push('.');
            }
            base.push_str(m);
        }
        base
    }

    /// Another module of the package: not this module, a native module or a package on the
    /// way to one.
    pub fn is_sibling(&self, module: &str) -> bool {
        let c = self.config;
        module.starts_with(&format!("{}.", c.package))
            && module != c.module
            && c.module_value(module).is_none()
    }
    /// `importlib.import_module("pkg.mod")` / `__import__("pkg.mod")`.
    pub fn dynamic_import(&mut self, args: &Args<'a>, line: usize) -> Vals<'a> {
        let Some((names, _, _)) = args.positional.first() else {
            return Vals::new();
        };
        let mut out = Vals::new();
        for module in strings(names) {
            if let Some(m) = self.config.native(module) {
                out.insert(Val::NativeModule(m));
            } else if self.is_sibling(module) {
                let guard = self.import_guard(true);
                let module = module.to_owned();
                self.record(line, Target::Sibling { module }, Access::Import, guard);
            }
        }
        out
    }
}
