//! The forms for callers who fence themselves, take C's shapes, or ask for one backend: the
//! unfenced calls (one [`fence`](crate::fence) after many), the C-shaped calls that return the
//! destination, the C entries of a plan chosen once ([`c_entries`]: `memmove` and `memset` as
//! function pointers, what the preload library binds its exports to), and the `*_with` calls
//! that run exactly one backend, engine or flush instruction (for tests, benchmarks and
//! comparisons).

pub use crate::batch::batch_with;
pub use crate::copy::{
    copy_raw_unfenced, copy_with, copy_with_engine, copy_with_flush, fill_raw_unfenced, fill_with,
    fill_with_engine, fill_with_flush, memset_raw,
};
pub use crate::entries::{c_entries, CEntries, MemmoveFn, MemsetFn};
pub use crate::moves::{copy_within_with_engine, memmove_raw, move_raw_unfenced};
