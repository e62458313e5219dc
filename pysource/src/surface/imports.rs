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
            if let Some(target) = self.module_target(full) {
                let guard = self.import_guard(true);
                self.record(line, target, Access::Import, guard);
            }
            let native = self.config.native_module.as_str();
            match &alias.asname {
                Some(name) if full == native => self.bind(name, [Val::NativeModule].into()),
                Some(name) if self.in_program(full) => {
                    let module = Remote::Module(full.to_owned());
                    self.bind(name, [Val::Remote(module)].into());
                }
                Some(_) => {}
                None => {
                    let first = full.split('.').next().unwrap_or(full);
                    if native == first {
                        self.bind(first, [Val::NativeModule].into());
                    } else if native.starts_with(&format!("{first}.")) {
                        self.bind(first, [Val::Package(first.to_owned())].into());
                    } else if self.in_program(first) {
                        let module = Remote::Module(first.to_owned());
                        self.bind(first, [Val::Remote(module)].into());
                    }
                }
            }
        }
    }

    pub fn import_from(&mut self, i: &'a ast::StmtImportFrom) {
        let base = self.absolute(i.module.as_deref(), i.level);
        let native = self.config.native_module.clone();
        for alias in &i.names {
            let name = alias.name.as_str();
            let bound = alias.asname.as_ref().unwrap_or(&alias.name);
            let line = self.line(alias);
            let full = format!("{base}.{name}");
            if base == native {
                let guard = self.import_guard(false);
                if name == "*" {
                    let target = Target::Dynamic {
                        owner: String::new(),
                        on: On::Module,
                    };
                    self.record(line, target, Access::Read, guard);
                    continue;
                }
                let target = Target::Native {
                    path: name.to_owned(),
                    on: On::Module,
                };
                self.record(line, target, Access::Read, guard.clone());
                let member = Member {
                    path: name.to_owned(),
                    on: On::Module,
                    probe: None,
                };
                self.bind(bound, [Val::Member(member)].into());
            } else if full == native {
                self.bind(bound, [Val::NativeModule].into());
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

    /// Another module of the package: not this module, the native core, another extension
    /// module read for, or a package on the way to the core.
    pub fn is_sibling(&self, module: &str) -> bool {
        let c = self.config;
        module.starts_with(&format!("{}.", c.package))
            && module != c.module
            && module != c.native_module
            && !self.is_extension(module)
            && !c.native_module.starts_with(&format!("{module}."))
    }

    /// One of the package's other extension modules ([`SurfaceConfig::extensions`]), not
    /// the one this pass reads for.
    fn is_extension(&self, module: &str) -> bool {
        module != self.config.native_module && self.config.extensions.iter().any(|e| e == module)
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
        let Some((names, _, _)) = args.positional.first() else {
            return Vals::new();
        };
        let mut out = Vals::new();
        for module in strings(names) {
            if module == self.config.native_module {
                out.insert(Val::NativeModule);
            } else if let Some(target) = self.module_target(module) {
                let guard = self.import_guard(true);
                self.record(line, target, Access::Import, guard);
            }
        }
        out
    }
}
