//! JSON a user supplies (a core or user record): serde_json keeps the last of two equal keys
//! in an object, so a record could say one thing to a reviewer and another to the tool.
//! [`keys_once`] refuses that, at the second key.

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use std::collections::HashSet;
use std::fmt;

/// `Ok` when `text` is JSON in which no object names a key twice; else serde_json's error,
/// located just after the repeated key (or at the syntax error).
pub fn keys_once(text: &str) -> Result<(), serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    KeysOnce.deserialize(&mut de)?;
    de.end()
}

struct KeysOnce;

impl<'de> DeserializeSeed<'de> for KeysOnce {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for KeysOnce {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("JSON")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(KeysOnce)?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !seen.insert(key.clone()) {
                return Err(de::Error::custom(format!(
                    "the key {key:?} twice in one object"
                )));
            }
            map.next_value_seed(KeysOnce)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::keys_once;

    #[test]
    fn a_key_named_twice_is_refused_where_it_repeats() {
        assert!(keys_once(r#"{"a": 1, "b": {"a": [1, {"c": null}]}, "c": "a"}"#).is_ok());
        let text = "{\n  \"format\": 3,\n  \"x\": {\"a\": 1,\n    \"a\": 2}\n}";
        let e = keys_once(text).unwrap_err();
        assert_eq!((e.line(), e.column()), (4, 7), "{e}");
        assert!(
            e.to_string()
                .starts_with("the key \"a\" twice in one object"),
            "{e}"
        );
        assert!(keys_once("{\"a\": 1} x").is_err());
    }
}
