//! What a file's text says of its imports, read without parsing it: which modules its
//! import lines name (so the program can grow to the files that import a file carrying a
//! native value).

/// The modules a file's import statements name, absolute: `import a.b` gives `a.b`; `from
/// .x import y, z` in `p.q` gives `p.x`, `p.x.y` and `p.x.z` (a name may be a module). Lines
/// are read as text (an import inside a function counts too); a parenthesised list may span
/// lines.
pub fn imported_modules(text: &str, module: &str) -> Vec<String> {
    let mut out = Vec::new();
    // Only lines holding `import` can be import lines: jump from one to the next (a tree of
    // 3,000 files is 60 MB, most of it not imports).
    let mut from = 0;
    while let Some(found) = text[from..].find("import") {
        let at = from + found;
        let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
        let mut end = text[at..].find('\n').map_or(text.len(), |i| at + i);
        let line = text[start..end].trim_start();
        if let Some(rest) = line.strip_prefix("import ") {
            for part in rest.split(',') {
                let name = part.split_whitespace().next().unwrap_or_default();
                out.push(name.to_owned());
            }
        } else if let Some(rest) = line.strip_prefix("from ")
            && let Some((from_part, names)) = rest.split_once(" import ")
        {
            let base = absolute(from_part.trim(), module);
            let mut names = names.to_owned();
            if names.contains('(') && !names.contains(')') {
                // A parenthesised list: on to the line that closes it.
                let close = text[end..].find(')').map_or(text.len(), |i| end + i);
                names.push_str(&text[end..close.min(text.len())]);
                end = text[close..].find('\n').map_or(text.len(), |i| close + i);
            }
            // Comments out, line by line: `y,  # why` names `y` only.
            let names: String = names
                .lines()
                .map(|l| l.split('#').next().unwrap_or_default())
                .collect::<Vec<_>>()
                .join(" ");
            for part in names.split(',') {
                let name = part
                    .trim_matches(|c: char| c == '(' || c == ')' || c.is_whitespace())
                    .split_whitespace()
                    .next()
                    .unwrap_or_default();
                if !name.is_empty() && name != "*" {
                    out.push(format!("{base}.{name}"));
                }
            }
            out.push(base);
        }
        from = end.max(at + "import".len());
    }
    out
}

/// `from .x` in `p.q` is `p.x`; `from ..x` is `x` one package up.
fn absolute(from: &str, module: &str) -> String {
    let level = from.chars().take_while(|c| *c == '.').count();
    if level == 0 {
        return from.to_owned();
    }
    let mut parts: Vec<&str> = module.split('.').collect();
    for _ in 0..level {
        parts.pop();
    }
    let rest = &from[level..];
    if !rest.is_empty() {
        parts.push(rest);
    }
    parts.join(".")
}

#[cfg(test)]
mod tests {
    use super::imported_modules;

    #[test]
    fn import_lines_anywhere_and_parenthesised_lists_are_read() {
        let text = "\"\"\"import nothing here\"\"\"\nimport a.b, c as d\n\
                    def f():\n    from .x import (\n        y,  # why\n        z,\n    )\n\
                    from ..up import *\nx = important\n";
        assert_eq!(
            imported_modules(text, "p.q.m"),
            ["a.b", "c", "p.q.x.y", "p.q.x.z", "p.q.x", "p.up"]
        );
    }
}
