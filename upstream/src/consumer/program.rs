//! The files given, read as one program: which modules each imports (relative imports
//! resolved against its own package), and so which files reach the package at all: those
//! that name it, and those that import one of the program's modules that does (directly or
//! through others). Only those are parsed and analysed (every file named on the command line
//! is); the rest cannot use the package, short of a module name computed at run time, which
//! the analysis could not follow either. Reading imports from the text, not the syntax tree,
//! spares parsing the thousands of files that touch nothing.

use super::ConsumerFile;
use rayon::prelude::*;
use std::collections::{HashMap, HashSet};

/// `from ..x import y` in `a.b.c` is `a.x`; in a package's `a.b.__init__`, `.x` is `a.b.x`.
pub(super) fn absolute(module: &str, from: Option<&str>, level: u32) -> String {
    if level == 0 {
        return from.unwrap_or_default().to_owned();
    }
    let mut parts: Vec<&str> = module.split('.').collect();
    for _ in 0..level {
        parts.pop();
    }
    parts.extend(from);
    parts.join(".")
}

/// The module a file is imported as: `a.b` for `a/b.py` and for `a/b/__init__.py`.
pub(super) fn importable(module: &str) -> &str {
    module.strip_suffix(".__init__").unwrap_or(module)
}

/// The modules a file's import statements name, read from its text without parsing it (a
/// statement spans lines inside brackets or after a backslash), relative ones resolved.
/// Text, not syntax: an import in a string counts, one after `;` or `:` on a line does not.
fn imports_in_text(text: &str, module: &str) -> HashSet<String> {
    let mut out = HashSet::new();
    let mut statement = String::new();
    let mut depth = 0isize;
    for line in text.lines() {
        let t = line.split('#').next().unwrap_or_default();
        if statement.is_empty() {
            let t = t.trim_start();
            if !(t.starts_with("import ") || t.starts_with("from ")) {
                continue;
            }
        }
        depth += t.matches('(').count() as isize - t.matches(')').count() as isize;
        let continued = t.trim_end().ends_with('\\');
        statement.push(' ');
        statement.push_str(t.trim_end().trim_end_matches('\\'));
        if depth <= 0 && !continued {
            statement_imports(&statement, module, &mut out);
            statement.clear();
            depth = 0;
        }
    }
    out
}

/// `import a.b as c, d` or `from .x import (y, z as w)`, one statement's text.
fn statement_imports(statement: &str, module: &str, out: &mut HashSet<String>) {
    let clean = statement.replace(['(', ')'], " ");
    let mut words = clean.split_whitespace();
    let names = |rest: &str| -> Vec<String> {
        rest.split(',')
            .filter_map(|n| n.split_whitespace().next().map(str::to_owned))
            .collect()
    };
    match words.next() {
        Some("import") => {
            let rest: Vec<&str> = words.collect();
            out.extend(names(&rest.join(" ")));
        }
        Some("from") => {
            let Some(from) = words.next() else { return };
            let level = from.chars().take_while(|&c| c == '.').count();
            let name = &from[level..];
            let base = absolute(module, (!name.is_empty()).then_some(name), level as u32);
            if words.next() != Some("import") {
                return;
            }
            let rest: Vec<&str> = words.collect();
            for n in names(&rest.join(" ")) {
                out.insert(format!("{base}.{n}"));
            }
            out.insert(base);
        }
        _ => {}
    }
}

/// For each file: does it reach `package`? A file named on the command line always does (it
/// is analysed, whatever it holds); another does when its text names the package, or when
/// its import statements name a module of the program that reaches it.
pub(super) fn reaching(files: &[ConsumerFile], package: &str) -> Vec<bool> {
    let by_module: HashMap<&str, usize> = files
        .iter()
        .enumerate()
        .map(|(i, f)| (importable(&f.module), i))
        .collect();
    let imported: Vec<Vec<usize>> = files
        .par_iter()
        .map(|f| {
            let modules = imports_in_text(&f.source.text, &f.module);
            modules
                .iter()
                .filter_map(|m| by_module.get(m.as_str()).copied())
                .collect()
        })
        .collect();
    // importers[j]: the files that import file j.
    let mut importers: Vec<Vec<usize>> = vec![Vec::new(); files.len()];
    for (i, js) in imported.iter().enumerate() {
        for &j in js {
            importers[j].push(i);
        }
    }
    let mut reach: Vec<bool> = files
        .par_iter()
        .map(|f| f.named || f.source.text.contains(package))
        .collect();
    let mut todo: Vec<usize> = (0..files.len()).filter(|&i| reach[i]).collect();
    while let Some(j) = todo.pop() {
        for &i in &importers[j] {
            if !reach[i] {
                reach[i] = true;
                todo.push(i);
            }
        }
    }
    reach
}
