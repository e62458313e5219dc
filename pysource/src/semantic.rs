//! The semantic model of a Python program, built once per run: each file is parsed once (its
//! nesting bounded first) and indexed once (its scopes and the names each binds, its
//! functions and classes, see [`crate::surface`]'s index) the first time an analysis reads
//! it, and kept for every later round of the flow between files and every analysis of the
//! run. A file no analysis reaches is never parsed (a tree that never names the package costs
//! only its reading).

use crate::source::{Lines, LoadError, ModuleSource};
use crate::surface::reach::imported_modules;
use ruff_python_ast::{ModModule, Stmt};
use ruff_python_parser::Parsed;
use std::sync::OnceLock;

pub(crate) use crate::surface::index::Index;

/// A file of the program as given: its source, its dotted module name, and whether it is
/// read from the start (it names the package, or was named on the command line).
pub struct SourceFile<'s> {
    pub source: &'s ModuleSource,
    pub module: &'s str,
    pub seed: bool,
}

/// A parsed file: its syntax tree and where its lines start.
pub struct Tree {
    parsed: Parsed<ModModule>,
    pub lines: Lines,
}

impl Tree {
    pub fn body(&self) -> &[Stmt] {
        self.parsed.suite()
    }
}

/// A file as the analyses read it.
pub struct File<'m> {
    pub source: &'m ModuleSource,
    pub module: &'m str,
    pub tree: &'m Tree,
    pub(crate) index: &'m Index<'m>,
}

/// The program: its files, each parsed and indexed on first use.
pub struct Model<'m> {
    pub files: &'m [SourceFile<'m>],
    /// What each file's import lines name, read from its text on first use (no parse needed).
    imports: Vec<OnceLock<Vec<String>>>,
    trees: &'m [OnceLock<Result<Tree, LoadError>>],
    indexes: Vec<OnceLock<Index<'m>>>,
}

impl<'m> Model<'m> {
    /// The modules file `i`'s import lines name ([`imported_modules`]), read once.
    pub fn imports(&self, i: usize) -> &[String] {
        let f = &self.files[i];
        self.imports[i].get_or_init(|| imported_modules(&f.source.text, f.module))
    }

    /// File `i`, parsed and indexed the first time it is asked for (from any thread).
    pub fn file(&self, i: usize) -> Result<File<'_>, LoadError> {
        let f = &self.files[i];
        let tree = self.trees[i]
            .get_or_init(|| parse(f.source))
            .as_ref()
            .map_err(Clone::clone)?;
        let index = self.indexes[i].get_or_init(|| Index::build(tree.body()));
        Ok(File {
            source: f.source,
            module: f.module,
            tree,
            index,
        })
    }
}

/// Runs `f` over the model of `files`. Everything that touches a syntax tree (the parse, the
/// walks, the drop) runs on threads with [`crate::bounded_parse::PARSE_STACK`] of stack, whatever
/// stack the caller has.
pub fn with_model<T: Send>(
    files: &[SourceFile<'_>],
    f: impl for<'m> FnOnce(&Model<'m>) -> T + Send,
) -> Result<T, LoadError> {
    let pool = rayon::ThreadPoolBuilder::new()
        .stack_size(crate::bounded_parse::PARSE_STACK)
        .thread_name(|i| format!("python-model-{i}"))
        .build()
        .map_err(|e| LoadError::new("the Python model", format!("cannot start threads: {e}")))?;
    Ok(pool.install(|| {
        let trees: Vec<OnceLock<Result<Tree, LoadError>>> =
            files.iter().map(|_| OnceLock::new()).collect();
        let out = {
            let model = Model {
                files,
                imports: files.iter().map(|_| OnceLock::new()).collect(),
                trees: &trees,
                indexes: files.iter().map(|_| OnceLock::new()).collect(),
            };
            f(&model)
        };
        // The trees are dropped here, on this thread's large stack.
        drop(trees);
        out
    }))
}

/// `source` parsed, after its nesting is checked; a syntax error is located.
fn parse(source: &ModuleSource) -> Result<Tree, LoadError> {
    crate::bounded_parse::check(source)?;
    let parsed = ruff_python_parser::parse_module(&source.text).map_err(|e| {
        let (line, col) = crate::source::line_col(&source.text, e.location.start().to_usize());
        LoadError::new(
            format!("{}:{line}:{col}", source.display),
            format!("Python syntax error: {}", e.error),
        )
    })?;
    Ok(Tree {
        parsed,
        lines: Lines::new(&source.text),
    })
}
