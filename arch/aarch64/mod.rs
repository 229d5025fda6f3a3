//! aarch64: placeholder until the NEON leaf lands; runs the word backend only.
include!("../other.rs");
