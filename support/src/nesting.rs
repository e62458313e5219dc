//! A bound on how deeply Python text nests, checked on its tokens before it is parsed: ruff's
//! parser grows its own stack, but the tree it builds is dropped (and walked) recursively, so
//! a million nested `-`, `.b` or brackets overflow the stack. The measure is an upper bound on
//! the syntax tree's depth: every token that can add a level (an operator, a keyword
//! operator, an opening bracket) counts, along the chain of enclosing brackets, from the last
//! `,` / `;` / newline at each level — except a `,` inside a `lambda`'s parameters.
//! pysource bounds whole modules with it; the manifest bounds its expressions.

use ruff_python_ast::token::TokenKind;
use ruff_python_parser::{Mode, lexer};

/// The bounds a text is held to.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Levels of nested expressions, as measured here.
    pub depth: usize,
    /// Brackets (and f-string replacement fields) open at once.
    pub brackets: usize,
    /// Indentation levels.
    pub indent: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    Indent,
    Brackets,
    Depth,
}

/// Which bound `text` exceeds first, if any; stops lexing there.
pub fn violation(text: &str, limits: &Limits) -> Option<Bound> {
    let mut lx = lexer::lex(text, Mode::Module);
    // Per open bracket level: tokens counted since the level's last separator, and how many
    // `lambda`s wait for their `:`.
    let mut levels: Vec<(usize, usize)> = vec![(0, 0)];
    let mut depth = 0usize; // the sum of the counts along `levels`
    let mut indent = 0usize;
    loop {
        let kind = lx.next_token();
        let (count, lambdas) = levels.last_mut().expect("level 0 is never popped");
        match kind {
            TokenKind::EndOfFile => return None,
            TokenKind::Indent => {
                indent += 1;
                if indent > limits.indent {
                    return Some(Bound::Indent);
                }
            }
            TokenKind::Dedent => indent = indent.saturating_sub(1),
            TokenKind::Comma if *lambdas > 0 => {}
            TokenKind::Comma | TokenKind::Semi | TokenKind::Newline => {
                depth -= *count;
                *count = 0;
            }
            TokenKind::Colon if *lambdas > 0 => *lambdas -= 1,
            TokenKind::Lpar
            | TokenKind::Lsqb
            | TokenKind::Lbrace
            | TokenKind::FStringStart
            | TokenKind::TStringStart => {
                *count += 1;
                depth += 1;
                levels.push((0, 0));
                if levels.len() > limits.brackets {
                    return Some(Bound::Brackets);
                }
            }
            TokenKind::Rpar
            | TokenKind::Rsqb
            | TokenKind::Rbrace
            | TokenKind::FStringEnd
            | TokenKind::TStringEnd => {
                if levels.len() > 1 {
                    let (count, _) = levels.pop().expect("more than one level");
                    depth -= count;
                }
            }
            k if adds_no_level(k) => {}
            k => {
                if k == TokenKind::Lambda {
                    *lambdas += 1;
                }
                *count += 1;
                depth += 1;
            }
        }
        if depth > limits.depth {
            return Some(Bound::Depth);
        }
    }
}

/// Operands and trivia: they sit inside a level, they do not open one.
fn adds_no_level(kind: TokenKind) -> bool {
    matches!(
        kind,
        TokenKind::Name
            | TokenKind::Int
            | TokenKind::Float
            | TokenKind::Complex
            | TokenKind::String
            | TokenKind::FStringMiddle
            | TokenKind::TStringMiddle
            | TokenKind::Comment
            | TokenKind::NonLogicalNewline
            | TokenKind::None
            | TokenKind::True
            | TokenKind::False
            | TokenKind::Ellipsis
    )
}
