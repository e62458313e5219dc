//! The strategies an image can take, as one typed unit: each one's name in api.toml, the image
//! keys it takes, and whether `adopt` moves an image to it. [`Layer`](super::Layer) carries a
//! strategy's values; `docs/architecture.md` lists the renderer, the image facts, the watch
//! transitions and the adopt edit each strategy has in the crates above.

use serde::Serialize;
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Strategy {
    /// The pinned module downloaded over the base image's package.
    Overlay,
    /// The pure-Python files the base image lacks, from a release wheel.
    Fill,
    /// The base image's package installed at a release that carries the API, hash-checked.
    Pin,
    /// The base image already ships such a release: only the checks run.
    Check,
}

/// Every image key a strategy may take; each strategy takes some of them.
pub const LAYER_KEYS: [&str; 5] = [
    "base_package",
    "base_version",
    "fill_package",
    "fill_version",
    "pin_version",
];

impl Strategy {
    pub const ALL: [Strategy; 4] = [
        Strategy::Overlay,
        Strategy::Fill,
        Strategy::Pin,
        Strategy::Check,
    ];

    /// Its name in api.toml (`strategy = "pin"`).
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Overlay => "overlay",
            Strategy::Fill => "fill",
            Strategy::Pin => "pin",
            Strategy::Check => "check",
        }
    }

    pub fn from_name(name: &str) -> Option<Strategy> {
        Strategy::ALL.into_iter().find(|s| s.name() == name)
    }

    /// The image keys it takes (of [`LAYER_KEYS`]); any other of them is an error.
    pub fn keys(self) -> &'static [&'static str] {
        match self {
            Strategy::Overlay | Strategy::Check => &["base_package", "base_version"],
            Strategy::Fill => &["fill_package", "fill_version"],
            Strategy::Pin => &["base_package", "base_version", "pin_version"],
        }
    }

    /// Whether `adopt` moves an image to it: a fill is chosen by hand, for a base image
    /// whose package comes from no wheel.
    pub fn adoptable(self) -> bool {
        self != Strategy::Fill
    }

    /// `overlay, fill, pin or check`, for messages.
    pub fn names() -> String {
        let names: Vec<&str> = Strategy::ALL.iter().map(|s| s.name()).collect();
        let (last, rest) = names.split_last().expect("four strategies");
        format!("{} or {last}", rest.join(", "))
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_keys_are_layer_keys() {
        for s in Strategy::ALL {
            assert_eq!(Strategy::from_name(s.name()), Some(s));
            assert!(s.keys().iter().all(|k| LAYER_KEYS.contains(k)), "{s}");
        }
        assert_eq!(Strategy::from_name("Pin"), None);
        assert_eq!(Strategy::names(), "overlay, fill, pin or check");
    }
}
