//! The environment and the one warning line: how the per-CPU record ([`super::tune`]) reads
//! `CACHECOPY_*` variables and complains about a bad one, without allocating or locking (an
//! allocator may be the first caller). `getenv` returns a pointer into the process
//! environment, the value is parsed in place, and a complaint is formatted on the stack and
//! written with one `write(2)`.

/// The value of environment variable `name`, as bytes (with `std`; `None` without it). Neither
/// allocates nor locks.
#[allow(unused_variables)]
pub(crate) fn env(name: &core::ffi::CStr) -> Option<&'static [u8]> {
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
        let mut line = Line {
            buf: [0; 512],
            len: 0,
        };
        let _ = core::fmt::write(&mut line, msg);
        let _ = core::fmt::Write::write_str(&mut line, "\n");
        line.emit();
    }
}

/// A fixed stack buffer that keeps what fits.
#[cfg(feature = "std")]
struct Line {
    buf: [u8; 512],
    len: usize,
}

#[cfg(feature = "std")]
impl core::fmt::Write for Line {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        let n = s.len().min(self.buf.len() - self.len);
        self.buf[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        Ok(())
    }
}

#[cfg(feature = "std")]
impl Line {
    fn emit(&self) {
        cfg_if::cfg_if! {
            if #[cfg(all(unix, not(miri)))] {
                // SAFETY: writes `len` initialised bytes of our own buffer to fd 2; a failed or
                // short write only loses the warning.
                let _ = unsafe { libc::write(2, self.buf.as_ptr().cast(), self.len) };
            } else {
                use std::io::Write;
                let _ = std::io::stderr().write_all(&self.buf[..self.len]);
            }
        }
    }
}
