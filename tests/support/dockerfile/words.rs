//! Docker's word splitting and variable expansion for ARG, ENV, FROM, COPY and WORKDIR.

use std::collections::BTreeMap;

/// Splits instruction arguments at unquoted whitespace, keeping quotes for [`expand`].
pub fn words(text: &str) -> Vec<String> {
    let (mut out, mut cur, mut quote, mut chars) = (Vec::new(), String::new(), None, text.chars());
    while let Some(c) = chars.next() {
        match (c, quote) {
            ('\\', _) => {
                cur.push(c);
                cur.extend(chars.next());
            }
            ('"' | '\'', None) => {
                quote = Some(c);
                cur.push(c);
            }
            (c, Some(q)) if c == q => {
                quote = None;
                cur.push(c);
            }
            (c, None) if c.is_whitespace() => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            _ => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Docker's word expansion: variables (unset = empty), quotes removed, `\` escapes.
pub fn expand(word: &str, vars: &BTreeMap<String, String>) -> Result<String, String> {
    let chars: Vec<char> = word.chars().collect();
    let (mut out, mut i, mut quote) = (String::new(), 0, None::<char>);
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        match (c, quote) {
            ('\'', None) | ('"', None) => quote = Some(c),
            (c, Some(q)) if c == q => quote = None,
            ('\\', q) if q != Some('\'') && i < chars.len() => {
                out.push(chars[i]);
                i += 1;
            }
            ('$', q) if q != Some('\'') && i < chars.len() => {
                if chars[i] == '{' {
                    let close = chars[i..]
                        .iter()
                        .position(|&c| c == '}')
                        .ok_or_else(|| format!("{word}: unclosed ${{"))?;
                    let inner: String = chars[i + 1..i + close].iter().collect();
                    i += close + 1;
                    let (name, op) = match inner.find(':') {
                        Some(p) => (&inner[..p], Some(&inner[p..])),
                        None => (inner.as_str(), None),
                    };
                    let value = vars.get(name).filter(|v| !v.is_empty());
                    match op {
                        None => out.push_str(value.map_or("", |v| v)),
                        Some(o) if o.starts_with(":-") => match value {
                            Some(v) => out.push_str(v),
                            None => out.push_str(&expand(&o[2..], vars)?),
                        },
                        Some(o) if o.starts_with(":+") => {
                            if value.is_some() {
                                out.push_str(&expand(&o[2..], vars)?);
                            }
                        }
                        Some(o) => return Err(format!("{word}: unsupported modifier {o}")),
                    }
                } else {
                    let len = chars[i..]
                        .iter()
                        .take_while(|c| c.is_ascii_alphanumeric() || **c == '_')
                        .count();
                    if len == 0 {
                        out.push('$');
                    } else {
                        let name: String = chars[i..i + len].iter().collect();
                        out.push_str(vars.get(&name).map_or("", |v| v));
                        i += len;
                    }
                }
            }
            (c, _) => out.push(c),
        }
    }
    if quote.is_some() {
        return Err(format!("{word}: unclosed quote"));
    }
    Ok(out)
}
