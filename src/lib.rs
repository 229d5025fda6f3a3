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
//! - [`Mode::Auto`]: `NonTemporal` from the plan's `nt` (copies) or `fill_nt` (fills) bytes up,
//!   `Temporal` below.
//!
//! Every mode also moves bytes within one buffer, the ranges overlapping: [`copy_within`]
//! ([`slice::copy_within`] with a mode) and [`move_raw`] (`memmove`).
//!
//! # The crate's face
//! The root holds the calls: [`copy()`], [`fill`], [`zero`], [`copy_within`], their raw forms
//! ([`copy_raw`], [`fill_raw`], [`move_raw`]), [`Mode`], [`batch()`] and [`Batch`] (many copies,
//! one fence), and [`fence`]. Beside them: [`iter`] (`iov_iter`-shaped cursors), [`net`]
//! (checksums fused into copies, frames), [`page`] (page walks), [`policy`] (modes as types),
//! [`tune`] (the per-CPU plan, engines, backends, what the CPU has, calibration) and [`raw`]
//! (unfenced and C-shaped forms, one named backend or engine).
//!
//! # The plan
//! The first call detects the CPU (CPUID and XGETBV without `std`, `std_detect` with it) and
//! builds this process's [`Plan`](tune::Plan): which backend runs each job, every threshold and
//! the variant of each path, chosen for this CPU by rules that cite their runs and refined by
//! `CACHECOPY_TUNE` (with `std`; the crate's one environment variable, read once, never in
//! secure mode). The plan never changes; every call loads it once and runs its kernels with it.
//! [`tune::publish`] makes another plan the process's: calls in flight finish on the old one. A
//! plan built by hand also runs without being published ([`tune::Plan::copy`]).
//!
//! # Environment
//! With `std`, the first call reads one variable, `CACHECOPY_TUNE` (its fields:
//! [`tune::Tuning`]), and no other. **In secure mode it reads none**: a set-user-ID or set-group-ID program, or one with file
//! capabilities (Linux's and Android's `AT_SECURE`, `issetugid` on macOS and the BSDs), runs
//! with an environment its less privileged caller chose, so there every choice is the built-in
//! rules'. The first call also leaves the caller's `errno` as it found it (on Linux and Android),
//! whatever detection did.
//!
//! # Allocators and other callers that must not allocate
//! With `std` on Unix, no data-path call allocates, takes a lock or panics on valid input: not
//! the first call, which detects the CPU and reads `CACHECOPY_TUNE`, and not any later one,
//! however many threads race it and whatever the variable holds (unset, valid or unparsable).
//! The data path is [`copy()`], [`copy_raw`], [`fill`], [`fill_raw`], [`zero`], the moves
//! ([`copy_within`], [`move_raw`]), [`batch()`], the forms in [`raw`], the cursor operations in
//! [`iter`], the checksum copies in [`net`], [`Plan::current`](tune::Plan::current) and the
//! runs of a plan ([`tune::Plan::copy`] and its kin). A `#[global_allocator]` may therefore
//! call `fill_raw(p, 0, n, Mode::Auto)` from `alloc_zeroed`. The environment is read with
//! `getenv` and parsed in place; a bad field is reported once per process with one `write(2)`
//! from a stack buffer; `CACHECOPY_TUNE=calibrate` measures on `mmap`'d buffers; without `std`
//! nothing reads the environment; on aarch64 Linux the cache sizes are read from sysfs with
//! `open`/`read` into stack buffers. Not covered: [`tune::cpu()`] (a report), building and
//! publishing plans ([`tune::update`] allocates each new plan once), and the `alloc` types such
//! as `net::Frame`. `tests/no_alloc.rs` checks this on x86_64 and aarch64 Linux with a global
//! allocator that aborts on any allocation and, on the racing threads, a seccomp filter (a
//! system-call trace under QEMU) that fails on any `futex` wait, sleep, poll or yield.
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
mod copy;
mod cpu;
mod dispatch;
mod entries;
pub mod iter;
mod kernel;
mod mode;
mod moves;
pub mod net;
pub mod page;
pub mod policy;
pub mod raw;
#[cfg(all(test, feature = "std"))]
mod testutil;
pub mod tune;
mod vector;

pub use batch::{batch, Batch};
pub use copy::{copy, copy_raw, fence, fill, fill_raw, zero};
pub use mode::{Mode, UnknownMode};
pub use moves::{copy_within, move_raw};
