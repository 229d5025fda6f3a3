//! One line of text built in a stack buffer and written with one `write(2)`: the library's
//! warning and its exit statistics. No `core::fmt`, no allocation, and nothing the compiler can
//! turn into a call to the `memcpy` or `memset` this library defines: the buffer is the caller's,
//! not zeroed, and bytes are stored one at a time with volatile stores.

use core::mem::MaybeUninit;

/// Room for one line.
pub const CAP: usize = 1024;

/// The storage of a [`Line`]: `let mut buf = Buf::uninit();` (a separate local, so that no
/// constant with uninitialised bytes is built and zeroed with `memset`).
pub type Buf = MaybeUninit<[u8; CAP]>;

/// A line of at most [`CAP`] bytes in a caller's [`Buf`]; what does not fit is dropped.
pub struct Line<'a> {
    buf: &'a mut Buf,
    len: usize,
}

impl<'a> Line<'a> {
    /// An empty line in `buf`.
    pub fn new(buf: &'a mut Buf) -> Line<'a> {
        Line { buf, len: 0 }
    }

    fn base(&mut self) -> *mut u8 {
        self.buf.as_mut_ptr().cast()
    }

    /// Appends `bytes`, as much as fits.
    pub fn push(&mut self, bytes: &[u8]) -> &mut Line<'a> {
        for &b in bytes.iter().take(CAP - self.len) {
            // SAFETY: `len < CAP` (`take` stops at the end), inside the buffer.
            unsafe { self.base().add(self.len).write_volatile(b) };
            self.len += 1;
        }
        self
    }

    /// Appends `n` in decimal.
    pub fn num(&mut self, n: u64) -> &mut Line<'a> {
        // The largest power of ten not above `n` (1 for 0), then one digit per power.
        let mut p = 1u64;
        while n / p >= 10 {
            p *= 10;
        }
        loop {
            self.push(&[b'0' + (n / p % 10) as u8]);
            if p == 1 {
                return self;
            }
            p /= 10;
        }
    }

    /// Appends the target of the symbolic link `path` (a NUL-terminated name), or nothing.
    pub fn link(&mut self, path: &core::ffi::CStr) -> &mut Line<'a> {
        let room = CAP - self.len;
        let at = self.len;
        // SAFETY: `readlink` writes at most `room` bytes at `at`, inside the buffer.
        let n = unsafe { libc::readlink(path.as_ptr(), self.base().add(at).cast(), room) };
        if n > 0 {
            self.len += n as usize;
        }
        self
    }

    /// The bytes so far.
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: the first `len` bytes were written.
        unsafe { core::slice::from_raw_parts(self.buf.as_ptr().cast(), self.len) }
    }

    /// Writes the line to `fd` in one `write(2)` (a short or failed write loses it).
    pub fn write_to(&self, fd: libc::c_int) {
        let b = self.bytes();
        // SAFETY: `b` is a live byte slice.
        let _ = unsafe { libc::write(fd, b.as_ptr().cast(), b.len()) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_text_and_numbers() {
        let mut buf = Buf::uninit();
        let mut l = Line::new(&mut buf);
        l.push(b"n=")
            .num(0)
            .push(b" m=")
            .num(1234567890123)
            .push(b" max=")
            .num(u64::MAX);
        l.push(b" ")
            .num(9)
            .push(b" ")
            .num(10)
            .push(b" ")
            .num(99)
            .push(b" ")
            .num(100);
        assert_eq!(
            l.bytes(),
            b"n=0 m=1234567890123 max=18446744073709551615 9 10 99 100"
        );
    }

    #[test]
    fn stops_at_capacity() {
        let mut buf = Buf::uninit();
        let mut l = Line::new(&mut buf);
        for _ in 0..CAP {
            l.push(b"ab");
        }
        assert_eq!(l.bytes().len(), CAP);
        assert!(l.bytes().chunks(2).all(|c| c == b"ab"));
    }

    #[test]
    fn reads_links() {
        let mut buf = Buf::uninit();
        let mut l = Line::new(&mut buf);
        l.link(c"/proc/self/exe");
        assert!(l.bytes().starts_with(b"/"), "{:?}", l.bytes());
    }
}
