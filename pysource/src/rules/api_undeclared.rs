//! `api-undeclared`: a use of an API name or method that api.toml does not declare, with the
//! nearest declared name when one is close (`put_strucured` -> `put`? no: too far; `exprot_ref`
//! -> `export_ref`).

use super::declared::neighbours;
use super::{Finding, Rule, nearest};
use crate::surface::api_use::{ConsumerUse, UseKind};
use mooncake_sos_manifest::model::Api;

pub fn check(api: &Api, u: &ConsumerUse) -> Finding {
    let entry = if u.subject.contains('.') {
        "a method of the [[symbol]] entry"
    } else {
        "a [[symbol]] entry"
    };
    let found = match &u.kind {
        UseKind::Import => "an import",
        UseKind::Call { .. } => "a call",
        _ => "a use",
    };
    let name = u.subject.rsplit('.').next().unwrap_or(&u.subject);
    let near = nearest(name, neighbours(api, &u.subject));
    Finding::new(Rule::ApiUndeclared, &u.subject, "undeclared")
        .at(u.line, u.col)
        .expected(entry, found)
        .suggest(near)
}

#[cfg(test)]
mod tests {
    use crate::consumer::tests::failures;

    #[test]
    fn an_undeclared_name_is_located_with_the_nearest_declared_one() {
        let text = "from mooncake.structured_object_store import exprot_ref, export_ref_v9\n\
                    import mooncake.structured_object_store as sos\n\
                    t = sos.MooncakeBundleTransfer(None)\n\
                    t.puts({}, type='dict')\n";
        assert_eq!(
            failures(text),
            [
                "consumer.py:1:46: exprot_ref: undeclared: expected a [[symbol]] entry, found an import; did you mean `export_ref`?",
                "consumer.py:1:58: export_ref_v9: undeclared: expected a [[symbol]] entry, found an import",
                "consumer.py:4:3: MooncakeBundleTransfer.puts: undeclared: expected a method of the [[symbol]] entry, found a call; did you mean `put`?",
            ]
        );
    }
}
