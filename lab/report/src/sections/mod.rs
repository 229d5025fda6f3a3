//! The report's sections, one file each, in the order they run (`main.rs`): each measures, prints
//! its text through the session and registers its figures against their baselines
//! (`crate::findings`). Section 1 is `crate::machine`, which every other section reads.

pub mod bandwidth;
pub mod calibrate;
pub mod frames;
pub mod mixes;
pub mod moves;
pub mod pollution;
pub mod seed;
pub mod slower;
pub mod small;
