//! The per-CPU plan and everything it is made of: what a caller who tunes, tests or reports
//! needs, kept out of the crate root, which holds the calls.
//!
//! - [`Plan`]: the choices this process runs with (the engine, every threshold, the variant of
//!   each path), built once per process from the CPU's rule and `CACHECOPY_TUNE`, immutable;
//!   [`Plan::current`] is the one in force, [`publish`] replaces it, and a plan built by hand
//!   runs directly ([`Plan::copy`], [`Plan::fill`], [`Plan::copy_within`]) without being
//!   published.
//! - [`Tuning`]: the record a plan is built from; its `Display` is the `CACHECOPY_TUNE` line.
//! - [`Engine`], [`Backend`], [`Edges`], [`Small`], [`EntryCopy`], [`FrameBuild`]: the choices in
//!   it.
//! - [`cpu()`] and [`Cpu`]: what detection found; [`calibrate()`] measures a record here.
//!
//! # The environment
//! With `std`, the crate reads one variable, `CACHECOPY_TUNE`, once, at the first call:
//! comma-separated `name=value` fields of [`Tuning`] (`nt=16M,small=plain,temporal=avx2`...),
//! and a bare `calibrate` to measure the thresholds and the engine at first use. A bad field is
//! reported once on stderr and ignored. In secure mode (set-user-ID, set-group-ID or
//! capability-raising programs: `AT_SECURE`) it reads nothing. Without `std` it reads nothing.
//!
//! ```
//! use cachecopy::tune::{self, Plan};
//!
//! let plan = Plan::current();
//! println!("CACHECOPY_TUNE={}", plan.tuning());
//! // A plan with `Auto` copies streaming from 32 MiB, made the process's.
//! let mut t = *plan.tuning();
//! t.nt = 32 << 20;
//! tune::publish(Box::leak(Box::new(Plan::new(t).unwrap())));
//! assert_eq!(Plan::current().tuning().nt, 32 << 20);
//! ```

#[cfg(all(feature = "std", unix))]
#[path = "calibrate/mod.rs"]
pub mod calibrate;
pub use crate::cpu::{Caches, Cpu, Features, FlushOp};
pub use crate::dispatch::cpu;
pub use crate::dispatch::engine::{Backend, Edges, Engine};
#[cfg(feature = "alloc")]
pub use crate::dispatch::plan::update;
pub use crate::dispatch::plan::{publish, Plan};
pub use crate::dispatch::rules::default_nt_threshold;
pub use crate::dispatch::supported::Unsupported;
pub use crate::dispatch::tune::{BadField, Tuning};
pub use crate::kernel::small::{EntryCopy, Small};
pub use crate::net::iter::FrameBuild;
#[cfg(all(feature = "std", unix))]
pub use calibrate::calibrate;
