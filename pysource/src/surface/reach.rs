//! What a file's text says of its imports, read without parsing it: which modules its
//! import lines name (so the program can grow to the files that import a file carrying a
//! native value), and whether it names a module of the package at all.

/// The modules a file's import statements name, absolute: `import a.b` gives `a.b`; `from
/// .x import y, z` in `p.q` gives `p.x`, `p.x.y` and `p.x.z` (a name may be a module). Lines
/// are read as text (an import inside a function counts too); a parenthesised list may span
/// lines.
pub fn imported_modules(text: &str, module: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let line = line.trim_start();
        if let Some(rest) = line.strip_prefix("import ") {
            for part in rest.split(',') {
                let name = part.split_whitespace().next().unwrap_or_default();
                out.push(name.to_owned());
            }
        } else if let Some(rest) = line.strip_prefix("from ") {
            let Some((from, names)) = rest.split_once(" import ") else {
                continue;
            };
            let base = absolute(from.trim(), module);
            let mut names = names.to_owned();
            if names.contains('(') && !names.contains(')') {
                for more in lines.by_ref() {
                    names.push_str(more);
                    if more.contains(')') {
                        break;
                    }
                }
            }
            for part in names.split(',') {
                let name = part
                    .trim_matches(|c: char| c == '(' || c == ')' || c.is_whitespace())
                    .split_whitespace()
                    .next()
                    .unwrap_or_default();
                if !name.is_empty() && name != "*" && !name.starts_with('#') {
                    out.push(format!("{base}.{name}"));
                }
            }
            out.push(base);
        }
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

/// Whether `text` can import `module` (`pkg.leaf`): it names it whole, or imports `leaf`
/// from the package.
pub fn names_module(text: &str, module: &str, leaf: &str) -> bool {
    text.contains(module)
        || text.lines().any(|l| {
            let l = l.trim_start();
            l.starts_with("from ")
                && l.contains(" import ")
                && l.split(" import ").nth(1).is_some_and(|names| {
                    names
                        .split(|c: char| c == ',' || c == '(' || c == ')' || c.is_whitespace())
                        .any(|n| n == leaf)
                })
        })
}
