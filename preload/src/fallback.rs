//! The copies a call gets while cachecopy may not be asked yet: before the C library has started
//! (a program's `.preinit_array`, an IFUNC resolver, an audit module: the environment is not set
//! up, so `CACHECOPY_TUNE` could not be read and detection must wait), and while this process is
//! initialising the library (a signal handler or another thread arriving meanwhile). Plain and
//! correct for any length and overlap, never fast, and never a call to `memcpy`: on x86_64 the
//! string instructions, elsewhere volatile byte stores, which the compiler cannot turn into a
//! library call.

/// Moves `n` bytes from `s` to `d`; the ranges may overlap.
///
/// # Safety
/// `s` readable and `d` writable for `n` bytes.
pub unsafe fn move_bytes(d: *mut u8, s: *const u8, n: usize) {
    if n == 0 {
        return;
    }
    let backward = (d as usize) > (s as usize) && (d as usize) - (s as usize) < n;
    cfg_if_x86(
        // SAFETY: the caller's contract; the direction never overwrites an unread source byte.
        || unsafe { string_move(d, s, n, backward) },
        || {
            // SAFETY: as above, one byte at a time, in the direction the overlap needs.
            unsafe {
                if backward {
                    for i in (0..n).rev() {
                        d.add(i).write_volatile(s.add(i).read());
                    }
                } else {
                    for i in 0..n {
                        d.add(i).write_volatile(s.add(i).read());
                    }
                }
            }
        },
    )
}

/// Sets `n` bytes at `d` to `byte`.
///
/// # Safety
/// `d` writable for `n` bytes.
pub unsafe fn set_bytes(d: *mut u8, byte: u8, n: usize) {
    cfg_if_x86(
        // SAFETY: the caller's contract.
        || unsafe { string_set(d, byte, n) },
        || {
            for i in 0..n {
                // SAFETY: the caller's contract; `i < n`.
                unsafe { d.add(i).write_volatile(byte) };
            }
        },
    )
}

/// Runs `x86` on x86_64, `other` elsewhere (both are type-checked everywhere).
#[inline(always)]
fn cfg_if_x86(x86: impl FnOnce(), other: impl FnOnce()) {
    if cfg!(target_arch = "x86_64") {
        x86()
    } else {
        other()
    }
}

/// `rep movsb`, forward or (direction flag set, from the last byte) backward.
///
/// # Safety
/// As [`move_bytes`]; `n > 0`.
#[inline(always)]
unsafe fn string_move(d: *mut u8, s: *const u8, n: usize, backward: bool) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `rep movsb` copies `rcx` bytes from `rsi` to `rdi`, within the caller's ranges;
    // backward it starts at the last byte of each and the direction flag is cleared again
    // before the block ends (the ABI requires it clear at calls and returns).
    unsafe {
        if backward {
            core::arch::asm!(
                "std", "rep movsb", "cld",
                inout("rcx") n => _,
                inout("rdi") d.add(n - 1) => _,
                inout("rsi") s.add(n - 1) => _,
                options(nostack),
            );
        } else {
            core::arch::asm!(
                "rep movsb",
                inout("rcx") n => _,
                inout("rdi") d => _,
                inout("rsi") s => _,
                options(nostack, preserves_flags),
            );
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (d, s, n, backward);
}

/// `rep stosb`.
///
/// # Safety
/// As [`set_bytes`].
#[inline(always)]
unsafe fn string_set(d: *mut u8, byte: u8, n: usize) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `rep stosb` stores `al` into `rcx` bytes from `rdi`, the caller's range.
    unsafe {
        core::arch::asm!(
            "rep stosb",
            inout("rcx") n => _,
            inout("rdi") d => _,
            in("al") byte,
            options(nostack, preserves_flags),
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (d, byte, n);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moves_match_copy_within_at_every_overlap() {
        for n in [0usize, 1, 2, 7, 64, 65, 300] {
            for (from, to) in [
                (0usize, 0usize),
                (0, 1),
                (1, 0),
                (0, 33),
                (33, 0),
                (0, 400),
                (400, 0),
            ] {
                let mut buf: Vec<u8> = (0..800u32).map(|i| (i * 7 + 1) as u8).collect();
                let mut want = buf.clone();
                want.copy_within(from..from + n, to);
                let p = buf.as_mut_ptr();
                // SAFETY: both ranges inside `buf` (at most 400 + 300 < 800).
                unsafe { move_bytes(p.add(to), p.add(from), n) };
                assert_eq!(buf, want, "n {n} from {from} to {to}");
            }
        }
    }

    #[test]
    fn sets_touch_only_their_range() {
        for n in [0usize, 1, 5, 64, 333] {
            let mut buf = vec![0xeeu8; 400];
            // SAFETY: `3 + n <= 400`.
            unsafe { set_bytes(buf.as_mut_ptr().add(3), 0x5a, n) };
            assert!(buf[3..3 + n].iter().all(|&b| b == 0x5a));
            assert!(buf[..3].iter().chain(&buf[3 + n..]).all(|&b| b == 0xee));
        }
    }
}
