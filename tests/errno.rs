//! The first call detects the CPU and reads the environment inside the caller's copy, and it
//! leaves the caller's `errno` as it found it, although what it does may set it: a warning about
//! a bad variable written to a standard error that cannot take it (`EBADF`), the sysfs cache files
//! probed on aarch64 (`ENOENT`). Each case runs in a fresh process (this binary re-executed with
//! one ignored test), since detection happens once per process. Linux (`__errno_location`).
#![cfg(target_os = "linux")]

use std::fs::File;

use cachecopy::Mode;

mod common;

/// The calling thread's `errno`.
fn errno() -> i32 {
    // SAFETY: `__errno_location` returns this thread's `errno`, valid for its life.
    unsafe { *libc::__errno_location() }
}

fn set_errno(v: i32) {
    // SAFETY: as in `errno`.
    unsafe { *libc::__errno_location() = v };
}

#[test]
#[ignore = "run in a child by first_call_keeps_errno"]
fn child_first_call() {
    let src: Vec<u8> = (0..100_000u32).map(|i| (i * 7) as u8).collect();
    let mut dst = vec![0u8; src.len()];
    set_errno(4242);
    cachecopy::copy(&mut dst, &src, Mode::Auto);
    let after = errno();
    // The standard error is read-only here: a write there fails and sets errno, as the
    // warning's write did (the case is not vacuous).
    // SAFETY: writes one byte of a live buffer to fd 2.
    let r = unsafe { libc::write(2, b"x".as_ptr().cast(), 1) };
    let unwritable = r < 0 && errno() == libc::EBADF;
    println!("errno after the first call: {after}; stderr unwritable: {unwritable}");
    assert_eq!(after, 4242, "the first call changed errno");
    assert!(dst == src, "the first call's copy");
}

/// The first call, with `CACHECOPY_TUNE` unset and then bad (its warning's write fails).
#[test]
fn first_call_keeps_errno() {
    if common::miri() {
        return; // no processes under Miri
    }
    for tune in [None, Some("nt=lots")] {
        let mut cmd = common::run_target_binary(std::env::current_exe().unwrap());
        cmd.args([
            "--ignored",
            "--exact",
            "child_first_call",
            "--nocapture",
            "--test-threads=1",
        ]);
        for var in [
            "CACHECOPY_BACKEND",
            "CACHECOPY_ENGINE",
            "CACHECOPY_TUNE",
            "CACHECOPY_NT_THRESHOLD",
            "CACHECOPY_FILL_NT_THRESHOLD",
            "CACHECOPY_REP_MOVSB_THRESHOLD",
            "CACHECOPY_FILL_REP_THRESHOLD",
        ] {
            cmd.env_remove(var);
        }
        if let Some(v) = tune {
            cmd.env("CACHECOPY_TUNE", v);
        }
        // A read-only standard error: every write to it fails with EBADF.
        cmd.stderr(File::open("/dev/null").unwrap());
        let out = cmd.output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "CACHECOPY_TUNE={tune:?}:\n{stdout}");
        assert!(
            stdout.contains("stderr unwritable: true"),
            "CACHECOPY_TUNE={tune:?}: {stdout}"
        );
    }
}
