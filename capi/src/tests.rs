//! The C functions called from Rust: the argument checks (bad modes, NULL, oversized lengths
//! write nothing) and the names. The byte-level tables run from C (capi/tests/*.c, .ci/run).

use super::*;

const BAD: [c_uint; 4] = [4, 5, 0x8000_0000, u32::MAX];

fn modes() -> impl Iterator<Item = ModeArg> {
    (0..4).map(ModeArg)
}

#[test]
fn every_mode_copies_and_fills() {
    let src: Vec<u8> = (0..5000u32).map(|i| (i * 7 + 1) as u8).collect();
    for m in modes() {
        for len in [0, 1, 63, 64, 4097, 5000] {
            let mut dst = vec![0xeeu8; 5001];
            // SAFETY: live, disjoint buffers of at least `len` bytes.
            let r = unsafe { cachecopy_copy(dst.as_mut_ptr().cast(), src.as_ptr().cast(), len, m) };
            assert_eq!(r, 0);
            assert_eq!(&dst[..len], &src[..len]);
            assert!(dst[len..].iter().all(|&b| b == 0xee));
            // SAFETY: as above.
            let r = unsafe { cachecopy_fill(dst.as_mut_ptr().cast(), 0x1ab, len, m) };
            assert_eq!(r, 0);
            assert!(
                dst[..len].iter().all(|&b| b == 0xab),
                "fill truncates like memset"
            );
        }
    }
}

#[test]
fn every_mode_moves_overlapping_ranges() {
    let data: Vec<u8> = (0..10_000u32).map(|i| (i * 13 + i / 251) as u8).collect();
    for m in modes() {
        for len in [0, 1, 63, 64, 4097, 5000] {
            for (from, to) in [(0, 3), (3, 0), (0, 4096), (4096, 0)] {
                let mut buf = data.clone();
                let mut want = data.clone();
                want.copy_within(from..from + len, to);
                let p = buf.as_mut_ptr();
                // SAFETY: both ranges inside `buf`; overlap is allowed.
                let r = unsafe { cachecopy_move(p.add(to).cast(), p.add(from).cast(), len, m) };
                assert_eq!(r, 0);
                assert!(buf == want, "move {len} from {from} to {to}");
                let mut buf = data.clone();
                let p = buf.as_mut_ptr();
                // SAFETY: as above; fenced just below.
                let r = unsafe {
                    cachecopy_move_unfenced(p.add(to).cast(), p.add(from).cast(), len, m)
                };
                cachecopy_fence();
                assert_eq!(r, 0);
                assert!(buf == want, "unfenced move {len} from {from} to {to}");
            }
        }
    }
}

#[test]
fn bad_modes_and_nulls_write_nothing() {
    let src = [1u8; 256];
    let mut dst = [0u8; 256];
    let (d, s) = (
        dst.as_mut_ptr().cast::<c_void>(),
        src.as_ptr().cast::<c_void>(),
    );
    let null_mut = core::ptr::null_mut::<c_void>();
    let null = core::ptr::null::<c_void>();
    // SAFETY: every call is either refused before touching memory or has `len == 0`.
    unsafe {
        for b in BAD.map(ModeArg) {
            assert_eq!(cachecopy_copy(d, s, 256, b), EINVAL);
            assert_eq!(cachecopy_copy_unfenced(d, s, 256, b), EINVAL);
            assert_eq!(cachecopy_fill(d, 9, 256, b), EINVAL);
            assert_eq!(cachecopy_fill_unfenced(d, 9, 256, b), EINVAL);
            assert_eq!(cachecopy_move(d, s, 256, b), EINVAL);
            assert_eq!(
                cachecopy_move_unfenced(d.cast::<u8>().add(1).cast(), d, 9, b),
                EINVAL
            );
            assert_eq!(cachecopy_csum_and_copy(d, s, 256, b), 0);
            let iov = libc::iovec {
                iov_base: d,
                iov_len: 256,
            };
            assert_eq!(cachecopy_copy_to_iov(&iov, 1, s, 256, b), 0);
            assert_eq!(cachecopy_copy_from_iov(d, 256, &iov, 1, b), 0);
        }
        for m in modes() {
            assert_eq!(cachecopy_copy(null_mut, s, 1, m), EINVAL);
            assert_eq!(cachecopy_copy(d, null, 1, m), EINVAL);
            assert_eq!(cachecopy_copy(d, s, isize::MAX as usize + 1, m), EINVAL);
            assert_eq!(cachecopy_fill(null_mut, 1, 1, m), EINVAL);
            assert_eq!(cachecopy_fill(d, 1, usize::MAX, m), EINVAL);
            assert_eq!(cachecopy_move(null_mut, s, 1, m), EINVAL);
            assert_eq!(cachecopy_move(d, null, 1, m), EINVAL);
            assert_eq!(
                cachecopy_move_unfenced(d, s, isize::MAX as usize + 1, m),
                EINVAL
            );
            assert_eq!(cachecopy_move(null_mut, null, 0, m), 0);
            assert_eq!(cachecopy_copy(null_mut, null, 0, m), 0);
            assert_eq!(cachecopy_fill(null_mut, 1, 0, m), 0);
            assert_eq!(
                cachecopy_copy_from_iov(null_mut, 0, core::ptr::null(), 0, m),
                0
            );
            let iov = [libc::iovec {
                iov_base: null_mut,
                iov_len: 1,
            }];
            assert_eq!(cachecopy_copy_from_iov(d, 256, iov.as_ptr(), 1, m), 0);
            assert_eq!(cachecopy_copy_to_iov(iov.as_ptr(), 1, s, 256, m), 0);
            let big = [
                libc::iovec {
                    iov_base: d,
                    iov_len: usize::MAX,
                },
                libc::iovec {
                    iov_base: d,
                    iov_len: 2,
                },
            ];
            assert_eq!(cachecopy_copy_to_iov(big.as_ptr(), 2, s, 256, m), 0);
        }
    }
    cachecopy_fence();
    assert_eq!(dst, [0u8; 256]);
}

#[test]
fn names_and_thresholds() {
    // SAFETY: static NUL-terminated strings.
    let backend = unsafe { CStr::from_ptr(cachecopy_backend()) };
    assert_eq!(
        backend.to_str().unwrap(),
        cachecopy::tune::Plan::current()
            .tuning()
            .engine
            .stream
            .name()
    );
    // SAFETY: as above.
    let version = unsafe { CStr::from_ptr(cachecopy_version()) };
    assert_eq!(version.to_str().unwrap(), env!("CARGO_PKG_VERSION"));
    assert_eq!(
        cachecopy_nt_threshold(),
        cachecopy::tune::Plan::current().tuning().nt
    );
    assert_eq!(
        cachecopy_fill_nt_threshold(),
        cachecopy::tune::Plan::current().tuning().fill_nt
    );
    assert_eq!(
        cachecopy_csum_fold(0x1_fffe),
        0,
        "0xfffe + carry 1, complemented"
    );
    assert_eq!(cachecopy_csum_fold(0x1234), !0x1234);
    assert_eq!(
        ModeArg::from(cachecopy_mode::CACHECOPY_AUTO).mode(),
        Some(Mode::Auto)
    );
}
