//! `computed-name`: a use of the API whose name no one can read in the source, so api.toml
//! cannot vouch for it: a member or module named at run time (`getattr(t, "p" + "ut")`,
//! `import_module("mooncake." + name)`), and `from <module> import *`.

use super::{Finding, Rule};
use crate::surface::api_use::{COMPUTED, ConsumerUse, UseKind};

/// The finding `u` makes, if it is such a use.
pub fn check(u: &ConsumerUse) -> Option<Finding> {
    let finding = Finding::new(Rule::ComputedName, &u.subject, "").at(u.line, u.col);
    if u.subject.ends_with(COMPUTED) {
        return Some(Finding {
            what: "computed name".into(),
            ..finding.expected(
                "a name written in the source, which api.toml can check",
                "a name computed at run time",
            )
        });
    }
    (u.subject == "*" && u.kind == UseKind::Import).then(|| Finding {
        what: "star import".into(),
        ..finding.expected(
            "named imports (`from module import A, B`)",
            "`import *`, whose names are known only at run time",
        )
    })
}
