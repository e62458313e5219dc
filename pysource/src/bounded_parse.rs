//! A bound on how deeply a module nests, checked on its tokens before it is parsed. Ruff's
//! parser grows its own stack, but the tree it builds is dropped (and walked) recursively:
//! 1,000,000 nested `-` or `.b` abort the process with a stack overflow (100,000 nested
//! f-strings too, after 54 s), and a million brackets take 2 GB. CPython refuses far less:
//! more than 200 nested brackets, 100 indentation levels, expressions ~3,000 operators deep.
//! So a module CPython compiles passes this check, and one that passes parses and drops in
//! a bounded stack ([`PARSE_STACK`]).
//!
//! The measure is an upper bound on the syntax tree's depth: every token that can add a
//! level (an operator, a keyword operator, an opening bracket) counts, along the chain of
//! enclosing brackets, from the last `,` / `;` / newline at each level (those separate
//! siblings) — except a `,` inside a `lambda`'s parameters, which does not end the lambda.

use crate::source::{LoadError, ModuleSource};
use mooncake_sos_support::nesting::{Bound, Limits};

/// The deepest expression accepted, as this module measures it (an upper bound: every
/// operator counts). Over 73,760 real Python files (1 GB: CPython's stdlib, numpy, sympy,
/// ...) the 99th percentile is 24 and the deepest 4,570 (a generated sympy table).
pub const MAX_DEPTH: usize = 10_000;
/// Brackets (and f-string replacement fields) nested deeper than this are refused: CPython
/// refuses more than 200.
pub const MAX_BRACKETS: usize = 1000;
/// CPython refuses 100 indentation levels.
pub const MAX_INDENT: usize = 100;
/// Stack for parsing, walking and dropping a module that passed. Measured (release build),
/// 10,000 nested operators take ~0.6 MiB to parse and drop, 10,000 nested f-strings ~1.1
/// MiB; a debug build and the walks on top take a few times more. Reserved, not touched.
pub const PARSE_STACK: usize = 64 << 20;

const LIMITS: Limits = Limits {
    depth: MAX_DEPTH,
    brackets: MAX_BRACKETS,
    indent: MAX_INDENT,
};

fn violation(text: &str) -> Option<Bound> {
    mooncake_sos_support::nesting::violation(text, &LIMITS)
}

/// The first place where `source` nests past a bound, as a located error.
pub fn check(source: &ModuleSource) -> Result<(), LoadError> {
    let text = source.text.as_str();
    let Some(what) = violation(text) else {
        return Ok(());
    };
    // Ruff's public lexer gives token kinds, not offsets: the place is the shortest prefix
    // that already nests too deeply (a binary search; only on this error path).
    let (mut lo, mut hi) = (0, text.len());
    while lo < hi {
        let mid = floor_char_boundary(text, lo + (hi - lo) / 2);
        let mid = if mid <= lo {
            ceil_char_boundary(text, lo + 1)
        } else {
            mid
        };
        if mid >= hi {
            break;
        }
        if violation(&text[..mid]).is_some() {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    let at = text[..hi].char_indices().next_back().map_or(0, |(i, _)| i);
    let (line, col) = crate::source::line_col(text, at);
    let limit = match what {
        Bound::Indent => format!("{MAX_INDENT} indentation levels"),
        Bound::Brackets => format!("{MAX_BRACKETS} nested brackets"),
        Bound::Depth => format!("{MAX_DEPTH} levels of nested expressions"),
    };
    Err(LoadError::new(
        format!("{}:{line}:{col}", source.display),
        format!(
            "the module nests too deeply here: more than {limit} (CPython itself refuses far \
             less); not a module this tool parses"
        ),
    ))
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_char_boundary(s: &str, mut i: usize) -> usize {
    while i < s.len() && !s.is_char_boundary(i) {
        i += 1;
    }
    i.min(s.len())
}

/// Runs `f` on a thread with [`PARSE_STACK`] of stack after [`check`]: the parse, the walk
/// and the drop of the tree all happen there, whatever stack the caller has (a test thread
/// has 2 MiB). Anything that parses an upstream module should go through this.
pub fn with_parsed<T: Send>(
    source: &ModuleSource,
    f: impl FnOnce(&ruff_python_parser::Parsed<ruff_python_ast::ModModule>) -> T + Send,
) -> Result<T, LoadError> {
    check(source)?;
    std::thread::scope(|scope| {
        let parse = std::thread::Builder::new()
            .name("parse-module".into())
            .stack_size(PARSE_STACK)
            .spawn_scoped(scope, || {
                let parsed = ruff_python_parser::parse_module(&source.text).map_err(|e| {
                    let (line, col) =
                        crate::source::line_col(&source.text, e.location.start().to_usize());
                    LoadError::new(
                        format!("{}:{line}:{col}", source.display),
                        format!("Python syntax error: {}", e.error),
                    )
                })?;
                Ok(f(&parsed))
            })
            .map_err(|e| {
                LoadError::new(&source.display, format!("cannot start the parser: {e}"))
            })?;
        match parse.join() {
            Ok(result) => result,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}
