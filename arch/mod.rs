//! Per-ISA leaves: vector trait impls, fences, cache-maintenance instructions and feature
//! detection. Nothing here knows about modes, dispatch policy or cursors; `src/` does.
//!
//! Each target module provides the same items:
//! - `STREAM_LINE`: the granularity at which streamed and ordinary stores are kept apart;
//! - `stream_fence()`: orders streamed stores before any later store (run before returning);
//! - `flush_range(op, ptr, len)`, `flush_fence(op)`: write lines back to memory, then wait;
//! - `detect() -> Cpu` and `tables()`: what the CPU can run, best backend last.

pub(crate) mod generic;

cfg_if::cfg_if! {
    if #[cfg(target_arch = "x86_64")] {
        mod x86_64;
        pub(crate) use self::x86_64::*;
    } else if #[cfg(target_arch = "aarch64")] {
        mod aarch64;
        pub(crate) use self::aarch64::*;
    } else {
        mod other;
        pub(crate) use self::other::*;
    }
}
