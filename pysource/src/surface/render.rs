//! How uses read in reports: one line each, `FILE:LINE: native Path on an instance: call(3
//! args, config=): optional, probed by getattr at line 3862 (fallback None)`.

use super::{Access, Guard, On, SurfaceReport, Target, Use};
use std::fmt;

impl fmt::Display for Access {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Read => f.write_str("read"),
            Self::Write => f.write_str("write"),
            Self::Probe => f.write_str("probe (hasattr)"),
            Self::Call(shape) => write!(f, "{shape}"),
            Self::Import => f.write_str("import"),
        }
    }
}

impl fmt::Display for Guard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Getattr { line, fallback } if fallback.is_empty() => {
                write!(f, "probed by getattr at line {line}")
            }
            Self::Getattr { line, fallback } => {
                write!(f, "probed by getattr at line {line} (fallback {fallback})")
            }
            Self::Guarded { line } => write!(f, "only where the test at line {line} finds it"),
            Self::Try { line } => write!(f, "a failure is caught at line {line}"),
            Self::Lazy { line } => write!(f, "lazy, in the function at line {line}"),
        }
    }
}

fn on(on: On) -> &'static str {
    match on {
        On::Module => "",
        On::Class => " on the class",
        On::Instance => " on an instance",
    }
}

impl Use {
    /// `write on an instance`, `call(1 arg)`, `import`: what the module does with it.
    pub fn describe_access(&self) -> String {
        match &self.target {
            Target::Native { on: o, .. } | Target::Dynamic { on: o, .. } => {
                format!("{}{}", self.access, on(*o))
            }
            Target::Sibling { .. } | Target::Extension { .. } if self.required() => {
                "import at module level".into()
            }
            Target::Sibling { .. } | Target::Extension { .. } => "import".into(),
        }
    }

    /// The line `verify --surface` prints for this use (without the file).
    pub fn describe(&self, native_module: &str) -> String {
        let (kind, subject) = match &self.target {
            Target::Native { path, .. } => ("native", path.clone()),
            Target::Dynamic { owner, .. } if owner.is_empty() => {
                ("native", format!("{native_module}.<computed>"))
            }
            Target::Dynamic { owner, .. } => ("native", format!("{owner}.<computed>")),
            Target::Sibling { module } => ("sibling", module.clone()),
            Target::Extension { module } => ("extension", module.clone()),
        };
        let usage = match &self.optional {
            None => "required".to_owned(),
            Some(Guard::Guarded { line }) if self.access == Access::Probe => {
                format!("optional, probed by hasattr at line {line}")
            }
            Some(g) => format!("optional, {g}"),
        };
        let via = self
            .via
            .map(|l| format!(" (arguments from the call at line {l})"))
            .unwrap_or_default();
        format!("{kind} {subject}: {}: {usage}{via}", self.describe_access())
    }
}

impl SurfaceReport {
    /// `FILE:LINE: native ...`, one per use, in line order.
    pub fn use_lines(&self) -> Vec<String> {
        self.uses
            .iter()
            .map(|u| {
                format!(
                    "{}:{}: {}",
                    self.file,
                    u.line,
                    u.describe(&self.native_module)
                )
            })
            .collect()
    }
}
