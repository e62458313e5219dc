//! What every side of the tool shares, none of it about api.toml: located errors ([`diag`]),
//! bounded reads ([`input`]), user JSON with each key once ([`json`]), cache entries trusted
//! only as written ([`kept`]), atomic writes ([`atomic`]), one bounded subprocess runner
//! ([`bounded`]), the nesting limit for parsed Python ([`nesting`]), how outside text is
//! printed in each kind of output ([`escape`]) and the text diff drift is shown with
//! ([`drift`]).

pub mod atomic;
pub mod bounded;
pub mod diag;
pub mod drift;
pub mod escape;
pub mod input;
pub mod json;
pub mod kept;
pub mod nesting;
