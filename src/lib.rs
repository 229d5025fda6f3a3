//! Copy and fill primitives with a cache policy chosen per call, for network stacks, allocators
//! and storage engines.
//!
//! ```
//! use cachecopy::{copy, Mode};
//!
//! let src = vec![7u8; 1 << 20];
//! let mut dst = vec![0u8; 1 << 20];
//! // A transmit copy the CPU will not read again: stream it past the cache.
//! copy(&mut dst, &src, Mode::NonTemporal);
//! assert_eq!(dst, src);
//! ```
//!
//! # Modes
//! - [`Mode::Temporal`]: `memcpy`. Small sizes with overlapping moves, a vector body.
//! - [`Mode::NonTemporal`]: whole destination lines written with streaming stores
//!   (`movntdq`, `vmovntdq`, `movnti`, `stnp`), the partial lines at the ends with ordinary
//!   stores (never one line both ways), a store fence before returning. Below 1 KiB it is a
//!   temporal copy, so passing it is never a trap.
//! - [`Mode::FlushCache`]: on return every destination byte has been written back to memory
//!   (persistent memory, DMA, another agent): streamed body, `clwb`/`clflushopt`/`clflush` (or
//!   `dc cvap`/`dc cvac`) of the lines written with ordinary stores, then the fence.
//! - [`Mode::Auto`]: `NonTemporal` from [`nt_threshold`] bytes up, `Temporal` below.
//!
//! Every mode also moves bytes within one buffer, the ranges overlapping: [`copy_within`]
//! ([`slice::copy_within`] with a mode) and [`move_raw`] (`memmove`).
//!
//! # Dispatch
//! The first call detects the CPU (CPUID and XGETBV without `std`, `std_detect` with it) and
//! picks the best [`Backend`]; every later call is one indirect call. With `std`,
//! `CACHECOPY_BACKEND=generic|sse2|avx2|avx512|neon` forces a backend and
//! `CACHECOPY_NT_THRESHOLD=bytes` sets the `Auto` thresholds (`CACHECOPY_FILL_NT_THRESHOLD` the
//! fill one alone) and
//! `CACHECOPY_FILL_REP_THRESHOLD=bytes` the size from which x86 `Temporal` fills use `rep stosb`.
//! `CACHECOPY_TUNE=nt=16M,fill_nt=16M,rep_movsb=never,fill_rep=2K` sets them all in one line,
//! the one a [`Calibration`](calibrate::Calibration) writes (see [`calibrate()`]); an individual variable wins over its
//! field.
//!
//! # Environment
//! With `std`, the first call reads these variables, and no others: `CACHECOPY_TUNE`,
//! `CACHECOPY_NT_THRESHOLD`, `CACHECOPY_FILL_NT_THRESHOLD`, `CACHECOPY_REP_MOVSB_THRESHOLD`,
//! `CACHECOPY_FILL_REP_THRESHOLD`, `CACHECOPY_BACKEND` and `CACHECOPY_ENGINE` (see [`Tuning`]).
//! **In secure mode it reads none**: a set-user-ID or set-group-ID program, or one with file
//! capabilities (Linux's and Android's `AT_SECURE`, `issetugid` on macOS and the BSDs), runs
//! with an environment its less privileged caller chose, so there every choice is the built-in
//! rules'. The first call also leaves the caller's `errno` as it found it (on Linux and Android),
//! whatever detection did.
//!
//! # Allocators and other callers that must not allocate
//! With `std` on Unix, no data-path call allocates, takes a lock or panics on valid input: not
//! the first call, which detects the CPU and reads the `CACHECOPY_*` variables, and not any later
//! one, however many threads race it and whatever the variables hold (unset, valid or
//! unparsable). The data path is [`copy()`], [`copy_raw`], [`copy_with`], [`copy_with_flush`],
//! [`fill`], [`fill_raw`], [`zero`], [`fill_with`], [`fill_with_flush`], the moves
//! ([`copy_within`], [`move_raw`] and their forms), [`batch()`], the cursor operations in
//! [`iter`], the checksum copies in [`net`], the threshold getters and setters, and
//! [`Backend::active`] / [`Backend::supported`]. A `#[global_allocator]` may therefore call
//! `fill_raw(p, 0, n, Mode::Auto)` from `alloc_zeroed`. The environment is read with `getenv`
//! and parsed in place; a bad value is reported once per process with one `write(2)` from a
//! stack buffer; `CACHECOPY_NT_THRESHOLD=calibrate` measures on `mmap`'d buffers; without `std`
//! nothing reads the environment; on aarch64 Linux the cache sizes are read from sysfs with
//! `open`/`read` into stack buffers. Not covered: [`cpu()`] (a report) and the `alloc` types
//! such as `net::Frame`. `tests/no_alloc.rs` checks this on x86_64 and aarch64 Linux with a
//! global allocator that aborts on any allocation and, on the racing threads, a seccomp filter
//! (a system-call trace under QEMU) that fails on any `futex` wait, sleep, poll or yield.
//!
//! # Platforms
//! Linux on x86_64 and aarch64 is tested (aarch64 under QEMU), and so are `no_std` builds for
//! bare-metal targets. macOS and the BSDs build the same Unix code but are not tested.
//! **Windows is not supported**: nothing builds or tests it. Where the code does compile there,
//! the environment is read through `std::env::var`, which allocates, so the allocator guarantee
//! above does not hold on Windows.
#![no_std]
#![deny(unsafe_op_in_unsafe_fn, missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks, clippy::missing_safety_doc)]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

// The modules form one-way layers, each using only the ones below it: docs/layout.md lists
// them and says how to check.
#[path = "../arch/mod.rs"]
mod arch;
mod batch;
#[cfg(all(feature = "std", unix))]
pub mod calibrate;
mod copy;
mod cpu;
mod dispatch;
pub mod iter;
mod kernel;
mod mode;
mod moves;
pub mod net;
pub mod page;
pub mod policy;
#[cfg(all(test, feature = "std"))]
mod testutil;
mod threshold_cells;
mod thresholds;
mod vector;

pub use batch::{batch, batch_with, Batch};
#[cfg(all(feature = "std", unix))]
pub use calibrate::calibrate;
pub use copy::{
    copy, copy_raw, copy_raw_unfenced, copy_with, copy_with_engine, copy_with_flush, fence, fill,
    fill_raw, fill_raw_unfenced, fill_with, fill_with_engine, fill_with_flush, memset_raw, zero,
};
pub use cpu::{Caches, Cpu, Features, FlushOp};
pub use dispatch::engine::{Backend, Edges, Engine};
pub use dispatch::rules::default_nt_threshold;
pub use dispatch::supported::Unsupported;
pub use dispatch::tune::{Small, Tuning};
pub use dispatch::{cpu, engine, tuning};
pub use mode::{Mode, UnknownMode};
pub use moves::{copy_within, copy_within_with_engine, memmove_raw, move_raw, move_raw_unfenced};
pub use thresholds::{
    fill_nt_threshold, fill_rep_threshold, nt_threshold, rep_movsb_threshold,
    set_fill_nt_threshold, set_fill_rep_threshold, set_nt_threshold, set_rep_movsb_threshold,
    set_stream_pages, stream_pages,
};
