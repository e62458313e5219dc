//! Imports: of the native module (bound as values) and of sibling modules (uses).

use super::expr::Args;
use super::value::Remote;
use super::value::{Member, Val, Vals};
use super::walk::{Analyzer, strings};
use super::{Access, On, Target};
use ruff_python_ast::{self as ast, Expr};
use ruff_text_size::Ranged;

impl<'a> Analyzer<'a> {
    pub fn import(&mut self, i: &'a ast::StmtImport) {
        for alias in &i.names {
            let full = alias.name.as_str();
            let line = self.line(alias);
            if let Some(target) = self.module_target(full) {
                let guard = self.import_guard(true);
                self.record_at(line, alias.start(), target, Access::Import, guard);
            }
            match &alias.asname {
                Some(name) if self.config.module_itself(full).is_some() => {
                    let vals = self.config.module_itself(full).into_iter().collect();
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
            if self.config.api.as_ref().is_some_and(|a| a.module == base) {
                self.import_api(alias);
            } else if let Some(m) = self.config.native(&base) {
                let guard = self.import_guard(false);
                if name == "*" {
                    let target = Target::Dynamic {
                        owner: self.config.member_path(m, ""),
                        on: On::Module,
                    };
                    self.record_at(line, alias.start(), target, Access::Read, guard);
                    continue;
                }
                let path = self.config.member_path(m, name);
                let target = Target::Native {
                    path: path.clone(),
                    on: On::Module,
                };
                self.record_at(line, alias.start(), target, Access::Read, guard.clone());
                let member = Member {
                    path,
                    on: On::Module,
                    probe: None,
                };
                self.bind(bound, [Val::Member(member)].into());
            } else if let Some(v) = self.config.module_itself(&full) {
                // `from mooncake import engine`: importing another extension module whole.
                if self.is_extension(&full) {
                    let guard = self.import_guard(true);
                    let target = Target::Extension { module: full };
                    self.record_at(self.line(i), alias.start(), target, Access::Import, guard);
                }
                self.bind(bound, [v].into());
            } else if self.in_program(&base) || self.in_program(&full) {
                let vals = self.imported(&base, name);
                self.bind(bound, vals);
            } else {
                // `from pkg.mod import x` imports pkg.mod; `from pkg import mod` imports pkg.mod.
                // (An extension module's members taken so are recorded by its own pass.)
                let module = if base == self.config.package {
                    full
                } else if self.is_extension(&base) {
                    continue;
                } else {
                    base.clone()
                };
                if let Some(target) = self.module_target(&module) {
                    let guard = self.import_guard(true);
                    let statement = self.line(i);
                    self.record_at(statement, alias.start(), target, Access::Import, guard);
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
    /// Whether `e` is a string built at run time whose literal start names a module of the
    /// package (`"mooncake." + name`, `f"mooncake.{x}"`).
    fn names_package(&self, e: &Expr) -> bool {
        let package = &self.config.package;
        let text = self.source(e).trim_start_matches(['f', 'F']);
        let text = text.trim_start_matches(['"', '\'']);
        !matches!(e, Expr::StringLiteral(_))
            && text.starts_with(package.as_str())
            && text[package.len()..].starts_with(['.', '"', '\''])
    }

    /// One of the package's other extension modules read with the core ([`SurfaceConfig::others`]).
    fn is_extension(&self, module: &str) -> bool {
        self.config.native(module).is_some_and(|m| m > 0)
    }

    /// What importing `module` whole uses: a sibling, another extension module, or nothing
    /// recorded (the core, a module of another package).
    fn module_target(&self, module: &str) -> Option<Target> {
        let module = module.to_owned();
        if self.is_extension(&module) {
            Some(Target::Extension { module })
        } else if self.is_sibling(&module) {
            Some(Target::Sibling { module })
        } else {
            None
        }
    }

    /// `importlib.import_module("pkg.mod")` / `__import__("pkg.mod")`.
    pub fn dynamic_import(&mut self, args: &Args<'a>, line: usize) -> Vals<'a> {
        let Some((names, _, arg)) = args.positional.first() else {
            return Vals::new();
        };
        let mut out = Vals::new();
        // `import_module("mooncake." + name)`: a module of the package no one can name.
        if strings(names).is_empty() && self.config.api.is_some() && self.names_package(arg) {
            let computed = super::api_use::COMPUTED.to_owned();
            self.record_api(arg.start(), computed, super::api_use::UseKind::Import);
        }
        for module in strings(names) {
            if let Some(target) = self.module_target(module) {
                let guard = self.import_guard(true);
                self.record(line, target, Access::Import, guard);
            }
            out.extend(self.config.module_itself(module));
        }
        out
    }
}
