//! `api-call`: a call of the API whose arguments do not fit its declared signature (a keyword
//! no parameter takes, a required parameter missing, too many positional arguments), located
//! at the keyword at fault when one is, with the nearest parameter's name.

use super::declared::{Declared, signature};
use super::{Finding, Rule, nearest};
use crate::surface::api_use::{Arg, ConsumerUse};
use mooncake_sos_manifest::model::Param;
use mooncake_sos_manifest::signature::{CallShape, declared_params, fits, misfit};

/// The finding a call makes against what its subject declares.
pub(crate) fn check(
    u: &ConsumerUse,
    declared: &Declared<'_>,
    shape: &CallShape,
    args: &[Arg],
    through_class: bool,
) -> Option<Finding> {
    let params: &[Param] = match declared {
        Declared::Callable { params, .. } => params,
        Declared::Value => {
            return Some(
                Finding::new(Rule::ApiCall, &u.subject, "call")
                    .at(u.line, u.col)
                    .expected("a callable", "a call of a field"),
            );
        }
    };
    let shifted;
    let shape = if through_class {
        shifted = CallShape {
            positional: shape.positional - 1,
            ..shape.clone()
        };
        &shifted
    } else {
        shape
    };
    let why = fits(&declared_params(params), shape).err()?;
    let (expected, found) = misfit(&signature(params), shape, &why);
    let at = why
        .keyword()
        .and_then(|k| args.iter().find(|a| a.keyword.as_deref() == Some(k)))
        .map_or((u.line, u.col), |a| (a.line, a.col));
    let near = why
        .keyword()
        .and_then(|k| nearest(k, params.iter().map(|p| p.name.as_str())));
    Some(
        Finding::new(Rule::ApiCall, &u.subject, "call")
            .at(at.0, at.1)
            .expected(expected, found)
            .suggest(near),
    )
}

#[cfg(test)]
mod tests {
    use crate::consumer::tests::failures;

    #[test]
    fn a_call_that_does_not_fit_is_located_at_the_keyword_at_fault() {
        let text = "from mooncake.structured_object_store import MooncakeBundleTransfer\n\
                    t = MooncakeBundleTransfer(None)\n\
                    t.put(\n    {},\n    type='dict',\n    namesapce='x',\n)\n\
                    t.get()\n\
                    t.get(1, type='dict')\n";
        assert_eq!(
            failures(text),
            [
                "consumer.py:6:5: MooncakeBundleTransfer.put: call: expected a call that fits (data, *, type=..., namespace=..., partition=..., stage=..., chunk_bytes=..., policy=..., config=..., field_schemas=...), found call(1 arg, namesapce=, type=): no parameter `namesapce`; did you mean `namespace`?",
                "consumer.py:8:3: MooncakeBundleTransfer.get: call: expected a call that fits (ref, *, type=..., fields=..., batch_fields=..., non_tensor_fields=..., meta_info_keys=..., data_cls=..., destinations=..., rows=...), found call(): misses required `ref`",
            ]
        );
    }
}
