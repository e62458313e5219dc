//! A consumer's uses against the symbols, signatures, domains and dict keys api.toml
//! declares: each use goes to the rules that judge it ([`crate::rules`]).

use super::{ConsumerUse, UseKind};
use crate::rules::declared::{Declared, declared};
use crate::rules::{Finding, api_call, api_undeclared, api_value, computed, dict_key};
use mooncake_sos_manifest::model::Api;

/// Every finding the consumer's API uses make, in use order.
pub(super) fn api_failures(api: &Api, uses: &[ConsumerUse]) -> Vec<Finding> {
    let mut out = Vec::new();
    for u in uses {
        if let UseKind::DictKeys { .. } = &u.kind {
            out.extend(dict_key::check(api, u));
            continue;
        }
        if let Some(f) = computed::check(u) {
            out.push(f);
            continue;
        }
        let Some(found) = declared(api, &u.subject) else {
            out.push(api_undeclared::check(api, u));
            continue;
        };
        let UseKind::Call {
            shape,
            on_class,
            args,
        } = &u.kind
        else {
            continue;
        };
        // A method called through its class takes the instance first.
        let through_class = match &found {
            Declared::Callable { static_method, .. } => {
                *on_class && !static_method && shape.positional > 0
            }
            Declared::Value => false,
        };
        if let Declared::Callable { params, .. } = &found {
            out.extend(api_value::check(
                u,
                params,
                args,
                usize::from(through_class),
            ));
        }
        out.extend(api_call::check(u, &found, shape, args, through_class));
    }
    out
}
