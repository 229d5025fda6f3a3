//! The environment and the one warning line: how the per-CPU record ([`super::tune`]) reads
//! `CACHECOPY_*` variables and complains about a bad one, without allocating or locking (an
//! allocator may be the first caller). `getenv` returns a pointer into the process
//! environment, the value is parsed in place, and a complaint is formatted on the stack and
//! written with one `write(2)`. In secure mode ([`secure`]) nothing is read: the environment
//! of a set-user-ID program is its caller's, not a setting to trust. Detection keeps the
//! caller's `errno` ([`KeepErrno`]): it runs inside the first copy, which must not change it.

/// The value of environment variable `name`, as bytes (with `std`; `None` without it, and in
/// secure mode). Neither allocates nor locks.
#[allow(unused_variables)]
pub(crate) fn env(name: &core::ffi::CStr) -> Option<&'static [u8]> {
    if secure() {
        return None;
    }
    cfg_if::cfg_if! {
        if #[cfg(all(feature = "std", unix, not(miri)))] {
            // SAFETY: `name` is NUL-terminated; `getenv` returns null or a pointer to a
            // NUL-terminated string in the process environment. Like every reader of the
            // environment, this relies on no thread calling `setenv` concurrently (Rust's
            // `std::env::set_var` is `unsafe` for that reason).
            unsafe {
                let p = libc::getenv(name.as_ptr());
                if p.is_null() {
                    None
                } else {
                    Some(core::ffi::CStr::from_ptr(p).to_bytes())
                }
            }
        } else if #[cfg(feature = "std")] {
            // No libc `getenv` (Windows) or no FFI (Miri): std's reader. It allocates the
            // value, which leaks here on purpose so the slice can be 'static: once per
            // variable per process, at detection.
            let v = std::env::var(name.to_str().ok()?).ok()?;
            Some(std::boxed::Box::leak(v.into_boxed_str()).as_bytes())
        } else {
            None
        }
    }
}

/// Whether the process runs in secure mode: set-user-ID, set-group-ID or with file
/// capabilities (Linux's `AT_SECURE`, the BSDs' and macOS's `issetugid`), where the environment
/// comes from a less privileged user. No allocation, no lock, `errno` unchanged. False where
/// neither exists, and without `std` (nothing is read then anyway).
pub(crate) fn secure() -> bool {
    cfg_if::cfg_if! {
        if #[cfg(all(feature = "std", any(target_os = "linux", target_os = "android"), not(miri)))] {
            let _keep = KeepErrno::new();
            // SAFETY: `getauxval` has no preconditions (it sets `errno` for a missing entry,
            // restored above).
            unsafe { libc::getauxval(libc::AT_SECURE) != 0 }
        } else if #[cfg(all(
            feature = "std",
            any(
                target_vendor = "apple",
                target_os = "freebsd",
                target_os = "dragonfly",
                target_os = "openbsd",
                target_os = "netbsd"
            ),
            not(miri)
        ))] {
            // SAFETY: `issetugid` has no preconditions.
            unsafe { libc::issetugid() != 0 }
        } else {
            false
        }
    }
}

/// Restores the calling thread's `errno` when dropped to what it was when made (Linux and
/// Android; elsewhere it does nothing): detection's sysfs reads and a failed warning write set
/// it, and detection runs inside a caller's copy.
pub(crate) struct KeepErrno {
    #[cfg(all(
        feature = "std",
        any(target_os = "linux", target_os = "android"),
        not(miri)
    ))]
    saved: core::ffi::c_int,
}

impl KeepErrno {
    /// Saves `errno`.
    pub(crate) fn new() -> KeepErrno {
        KeepErrno {
            #[cfg(all(feature = "std", any(target_os = "linux", target_os = "android"), not(miri)))]
            // SAFETY: the thread's own `errno`, live as long as the thread.
            saved: unsafe { *errno() },
        }
    }
}

impl Drop for KeepErrno {
    fn drop(&mut self) {
        #[cfg(all(
            feature = "std",
            any(target_os = "linux", target_os = "android"),
            not(miri)
        ))]
        // SAFETY: as in `new`.
        unsafe {
            *errno() = self.saved
        };
    }
}

/// The calling thread's `errno`.
#[cfg(all(
    feature = "std",
    any(target_os = "linux", target_os = "android"),
    not(miri)
))]
fn errno() -> *mut core::ffi::c_int {
    cfg_if::cfg_if! {
        if #[cfg(target_os = "android")] {
            // SAFETY: no preconditions.
            unsafe { libc::__errno() }
        } else {
            // SAFETY: no preconditions.
            unsafe { libc::__errno_location() }
        }
    }
}

/// Prints one line on stderr, once per process, however many threads race detection. The line
/// is formatted into a stack buffer (cut at 512 bytes) and written with one `write(2)`: no
/// allocation and no lock.
#[allow(unused_variables)]
pub(crate) fn warn(msg: core::fmt::Arguments<'_>) {
    #[cfg(feature = "std")]
    {
        use core::sync::atomic::{AtomicBool, Ordering};
        static WARNED: AtomicBool = AtomicBool::new(false);
        if WARNED.swap(true, Ordering::Relaxed) {
            return;
        }
        let mut buf = core::mem::MaybeUninit::<[u8; 512]>::uninit();
        let mut line = Line {
            buf: &mut buf,
            len: 0,
        };
        let _ = core::fmt::write(&mut line, msg);
        let _ = core::fmt::Write::write_str(&mut line, "\n");
        line.emit();
    }
}

/// A fixed stack buffer that keeps what fits: its first `len` bytes are written.
///
/// The buffer is not zeroed and bytes are stored one at a time with volatile stores, so that
/// neither becomes a call to `memset` or `memcpy`: detection runs inside the first `memcpy` of a
/// process that preloads cachecopy (docs/preload.md), where such a call would land in that
/// `memcpy`.
#[cfg(feature = "std")]
struct Line<'a> {
    buf: &'a mut core::mem::MaybeUninit<[u8; 512]>,
    len: usize,
}

#[cfg(feature = "std")]
impl core::fmt::Write for Line<'_> {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        let base = self.buf.as_mut_ptr().cast::<u8>();
        for &b in s.as_bytes().iter().take(512 - self.len) {
            // SAFETY: `len < 512` (`take` stops at the end of the buffer).
            unsafe { base.add(self.len).write_volatile(b) };
            self.len += 1;
        }
        Ok(())
    }
}

#[cfg(feature = "std")]
impl Line<'_> {
    fn emit(&self) {
        // SAFETY: the first `len` bytes were written (`write_str`).
        let bytes =
            unsafe { core::slice::from_raw_parts(self.buf.as_ptr().cast::<u8>(), self.len) };
        cfg_if::cfg_if! {
            if #[cfg(all(unix, not(miri)))] {
                // SAFETY: writes `len` initialised bytes of our own buffer to fd 2; a failed or
                // short write only loses the warning.
                let _ = unsafe { libc::write(2, bytes.as_ptr().cast(), bytes.len()) };
            } else {
                use std::io::Write;
                let _ = std::io::stderr().write_all(bytes);
            }
        }
    }
}
