//! `dict-key`: a key of the dict a consumer passes to a native callable declared with
//! `dict_keys` (`store.setup({...})`) that api.toml does not declare, with the nearest
//! declared key.

use super::{Finding, Rule, nearest};
use crate::surface::api_use::{ConsumerUse, UseKind};
use mooncake_sos_manifest::model::Api;

pub fn check(api: &Api, u: &ConsumerUse) -> Vec<Finding> {
    let UseKind::DictKeys { keys, .. } = &u.kind else {
        return Vec::new();
    };
    let Some(member) = api.surface.members.iter().find(|m| m.object == u.subject) else {
        return Vec::new();
    };
    keys.iter()
        .filter(|k| !member.dict_keys.contains(k))
        .map(|k| {
            let near = nearest(k, member.dict_keys.iter().map(String::as_str));
            Finding::new(Rule::DictKey, format!("native {}", u.subject), "dict key")
                .at(u.line, u.col)
                .expected(
                    format!(
                        "one of the dict_keys api.toml declares ({})",
                        member.dict_keys.join(", ")
                    ),
                    format!("{k:?}"),
                )
                .suggest(near)
        })
        .collect()
}
