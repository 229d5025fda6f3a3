//! aarch64 detection.
//!
//! - `dpb` (FEAT_DPB, `dc cvap`): with `std`, `AT_HWCAP` on Linux and Android (`getauxval`,
//!   read directly: `std_detect` can fall back to reading `/proc` into allocated buffers, and
//!   detection must not allocate), `std_detect` elsewhere (`sysctl` on macOS); without `std`,
//!   `ID_AA64ISAR1_EL1.DPB` read with `mrs`. EL0 cannot read ID registers
//!   architecturally: Linux (since 4.11, `HWCAP_CPUID`) traps the `mrs` and emulates it with the
//!   system-wide safe value, and QEMU user mode does the same. `no_std` builds therefore assume
//!   Linux user space or EL1 (kernels, firmware, bare metal); elsewhere the `mrs` would fault.
//! - The line size comes from `CTR_EL0`, which EL0 may read on Linux and macOS (`SCTLR_EL1.UCT`).
//! - The implementer and part come from `MIDR_EL1` (emulated like the ID registers), read only
//!   where that emulation is known to exist: Linux or `no_std`.
//! - Cache sizes, with `std` on Linux: `/sys/devices/system/cpu/cpu0/cache` (arm64 has no
//!   CPUID-like size report for user space; `CCSIDR_EL1` is EL1-only).

#[cfg(all(
    feature = "std",
    any(target_os = "linux", target_os = "android"),
    not(miri)
))]
use core::mem::MaybeUninit;

use crate::cpu::{Caches, Cpu, Features, FlushOp, Text};

/// The system register `$reg`, read with `mrs` (no memory access). Unsafe: the register must be
/// readable at this exception level, natively or emulated by the kernel; otherwise it traps.
macro_rules! mrs {
    ($reg:literal) => {{
        let v: u64;
        core::arch::asm!(concat!("mrs {}, ", $reg), out(reg) v, options(nomem, nostack, preserves_flags));
        v
    }};
}

/// `4 << CTR_EL0.DminLine`: the smallest data-cache line in bytes.
pub(super) fn ctr_dminline() -> usize {
    cfg_if::cfg_if! {
        if #[cfg(miri)] {
            64
        } else {
            // SAFETY: a register EL0 may read on Linux and macOS (or that the kernel emulates).
            let ctr = unsafe { mrs!("ctr_el0") };
            4 << ((ctr >> 16) & 0xf)
        }
    }
}

/// `4 << DCZID_EL0.BS`, the `dc zva` block in bytes, or 0 when `DCZID_EL0.DZP` is set.
pub(super) fn dczid_block() -> usize {
    cfg_if::cfg_if! {
        if #[cfg(miri)] {
            0
        } else {
            // SAFETY: DCZID_EL0 is readable at EL0 by definition.
            let dczid = unsafe { mrs!("dczid_el0") };
            if dczid & 0x10 != 0 {
                0
            } else {
                4 << (dczid & 0xf)
            }
        }
    }
}

/// FEAT_DPB: `dc cvap` exists.
fn dpb() -> bool {
    cfg_if::cfg_if! {
        if #[cfg(miri)] {
            false
        } else if #[cfg(all(feature = "std", any(target_os = "linux", target_os = "android")))] {
            // SAFETY: `getauxval` has no preconditions (dispatch keeps the caller's `errno`).
            unsafe { libc::getauxval(libc::AT_HWCAP) & libc::HWCAP_DCPOP != 0 }
        } else if #[cfg(feature = "std")] {
            std::arch::is_aarch64_feature_detected!("dpb")
        } else {
            // SAFETY: EL1 reads it natively; Linux user space gets the emulated, sanitised value
            // (module docs).
            let isar1 = unsafe { mrs!("ID_AA64ISAR1_EL1") };
            // DPB, bits 3:0: 1 = DC CVAP, 2 = DC CVAP and DC CVADP.
            isar1 & 0xf != 0
        }
    }
}

/// `MIDR_EL1`, where reading it cannot fault.
fn midr() -> Option<u64> {
    cfg_if::cfg_if! {
        if #[cfg(all(not(miri), any(target_os = "linux", target_os = "android", not(feature = "std"))))] {
            // SAFETY: Linux emulates EL0 reads of MIDR_EL1 (module docs); EL1 reads it natively.
            Some(unsafe { mrs!("MIDR_EL1") })
        } else {
            None
        }
    }
}

/// The implementer's name (MIDR_EL1 bits 31:24), as the Arm ARM's table of implementer codes.
fn implementer(code: u8) -> &'static str {
    match code {
        0x00 => "software",
        0x41 => "ARM",
        0x42 => "Broadcom",
        0x43 => "Cavium",
        0x46 => "Fujitsu",
        0x48 => "HiSilicon",
        0x4e => "NVIDIA",
        0x50 => "Applied Micro",
        0x51 => "Qualcomm",
        0x61 => "Apple",
        0x6d => "Microsoft",
        0xc0 => "Ampere",
        _ => "unknown",
    }
}

/// A few well-known Arm parts by name; the rest as `part 0xNNN rXpY`.
fn brand(midr: u64) -> Text<48> {
    let part = ((midr >> 4) & 0xfff) as u16;
    let name = match ((midr >> 24) as u8, part) {
        (0x41, 0xd03) => "Cortex-A53",
        (0x41, 0xd07) => "Cortex-A57",
        (0x41, 0xd08) => "Cortex-A72",
        (0x41, 0xd0b) => "Cortex-A76",
        (0x41, 0xd0c) => "Neoverse N1",
        (0x41, 0xd40) => "Neoverse V1",
        (0x41, 0xd49) => "Neoverse N2",
        (0x41, 0xd4f) => "Neoverse V2",
        (0x41, 0xd84) => "Neoverse V3",
        _ => "part",
    };
    let hex = |d: u64| b"0123456789abcdef"[(d & 0xf) as usize];
    let tail = [
        b' ',
        b'0',
        b'x',
        hex(u64::from(part) >> 8),
        hex(u64::from(part) >> 4),
        hex(u64::from(part)),
        b' ',
        b'r',
        hex(midr >> 20),
        b'p',
        hex(midr),
    ];
    // Assembled byte by byte with volatile stores into a buffer that is not zeroed: neither a
    // `memset` nor a slice copy (`memcpy`), as `read_index_file`'s path.
    let mut buf = [core::mem::MaybeUninit::<u8>::uninit(); 48];
    let mut n = 0;
    for &b in name.as_bytes().iter().chain(&tail).take(buf.len()) {
        // SAFETY: `n < buf.len()` (`take`): inside `buf`.
        unsafe { buf.as_mut_ptr().add(n).cast::<u8>().write_volatile(b) };
        n += 1;
    }
    // SAFETY: the first `n` bytes were written above.
    Text::new(unsafe { core::slice::from_raw_parts(buf.as_ptr().cast::<u8>(), n) })
}

pub(crate) fn detect() -> Cpu {
    let neon = cfg!(target_feature = "neon");
    let dpb = dpb();
    let midr = midr();
    let features = Features {
        neon,
        dpb,
        ..Features::default()
    };
    Cpu {
        arch: "aarch64",
        features,
        caches: caches(super::dcache_line()),
        flush: if cfg!(miri) {
            FlushOp::Fence
        } else {
            features.preferred_flush("aarch64")
        },
        vendor: midr.map_or(Text::EMPTY, |m| {
            Text::new(implementer((m >> 24) as u8).as_bytes())
        }),
        brand: midr.map_or(Text::EMPTY, brand),
        family_model: None,
    }
}

/// Cache sizes from sysfs (Linux, `std`), else the line size alone.
fn caches(line: usize) -> Caches {
    let block = super::zva_block();
    let c = Caches {
        line,
        zero_block: (block != 0).then_some(block),
        source: "ctr_el0",
        ..Caches::default()
    };
    #[cfg(all(
        feature = "std",
        any(target_os = "linux", target_os = "android"),
        not(miri)
    ))]
    let c = sysfs(c);
    c
}

/// Fills `c` from `/sys/devices/system/cpu/cpu0/cache/index*/{level,type,size,shared_cpu_list}`.
///
/// Allocation-free (detection runs inside allocators, crate docs): each path is assembled in a
/// stack buffer, each file read with `open`/`read` into another and parsed in place. The buffers
/// are not zeroed and the path is stored byte by byte with volatile stores, so that neither
/// becomes a call to `memset` or `memcpy` (detection runs inside the first `memcpy` of a process
/// that preloads cachecopy, docs/preload.md).
#[cfg(all(
    feature = "std",
    any(target_os = "linux", target_os = "android"),
    not(miri)
))]
fn sysfs(mut c: Caches) -> Caches {
    let mut found = false;
    for i in 0..8u8 {
        let mut bufs = [[MaybeUninit::<u8>::uninit(); 64]; 3];
        let [lb, kb, sb] = &mut bufs;
        let (Some(level), Some(kind), Some(size)) = (
            read_index_file(i, b"level", lb),
            read_index_file(i, b"type", kb),
            read_index_file(i, b"size", sb),
        ) else {
            continue;
        };
        if !matches!(trim(kind), b"Data" | b"Unified") {
            continue;
        }
        let Some(size) = parse_size(trim(size)) else {
            continue;
        };
        found = true;
        match trim(level) {
            b"1" => c.l1d = Some(size),
            b"2" => c.l2 = Some(size),
            b"3" => {
                c.l3 = Some(size);
                let mut lbuf = [MaybeUninit::<u8>::uninit(); 4096]; // an attribute is at most a page
                c.l3_shared_by = read_index_file(i, b"shared_cpu_list", &mut lbuf)
                    .and_then(|l| count_cpus(trim(l)));
            }
            _ => {}
        }
    }
    if found {
        c.source = "ctr_el0 + sysfs";
    }
    c
}

/// Reads `/sys/devices/system/cpu/cpu0/cache/index<i>/<file>` into `buf`: the bytes read, or
/// `None` if it cannot be opened or read, or does not fit (`buf` is larger than any value
/// these files hold).
#[cfg(all(
    feature = "std",
    any(target_os = "linux", target_os = "android"),
    not(miri)
))]
fn read_index_file<'b>(i: u8, file: &[u8], buf: &'b mut [MaybeUninit<u8>]) -> Option<&'b [u8]> {
    const DIR: &[u8] = b"/sys/devices/system/cpu/cpu0/cache/index";
    let mut path = [MaybeUninit::<u8>::uninit(); 80];
    let n = DIR.len() + 2 + file.len();
    if i > 9 || n >= path.len() {
        return None;
    }
    let digit = [b'0' + i, b'/'];
    for (k, &b) in DIR.iter().chain(&digit).chain(file).chain(&[0]).enumerate() {
        // SAFETY: `k <= n < path.len()`: inside `path`.
        unsafe { path.as_mut_ptr().add(k).cast::<u8>().write_volatile(b) };
    }
    // SAFETY: `path[..=n]` was written above and ends in NUL (`n < path.len()`); `open` keeps
    // no reference to it.
    let fd = unsafe {
        libc::open(
            path.as_ptr().cast(),
            libc::O_RDONLY | libc::O_CLOEXEC | libc::O_NOFOLLOW,
        )
    };
    if fd < 0 {
        return None;
    }
    let mut len = 0;
    let ok = loop {
        if len == buf.len() {
            break false; // too long for a sysfs value of this kind
        }
        // SAFETY: writes at most `buf.len() - len` bytes into the live, exclusive `buf[len..]`.
        let r = unsafe { libc::read(fd, buf.as_mut_ptr().add(len).cast(), buf.len() - len) };
        match r {
            0 => break true,
            r if r > 0 => len += r as usize,
            _ if errno() == libc::EINTR => {}
            _ => break false,
        }
    };
    // SAFETY: `fd` is the descriptor opened above, closed once.
    unsafe { libc::close(fd) };
    // SAFETY: `read` initialised the first `len` bytes.
    ok.then(|| unsafe { core::slice::from_raw_parts(buf.as_ptr().cast::<u8>(), len) })
}

/// The calling thread's `errno` (read directly: `std::io::Error` has drop glue that frees).
#[cfg(all(
    feature = "std",
    any(target_os = "linux", target_os = "android"),
    not(miri)
))]
fn errno() -> i32 {
    cfg_if::cfg_if! {
        if #[cfg(target_os = "android")] {
            // SAFETY: the thread's own `errno`, live as long as the thread.
            unsafe { *libc::__errno() }
        } else {
            // SAFETY: as above.
            unsafe { *libc::__errno_location() }
        }
    }
}

/// `s` without leading and trailing ASCII whitespace (sysfs values end in a newline).
#[cfg(all(
    feature = "std",
    any(target_os = "linux", target_os = "android"),
    not(miri)
))]
fn trim(s: &[u8]) -> &[u8] {
    s.trim_ascii()
}

/// A decimal `usize`: digits only, no sign, no overflow.
#[cfg(all(
    feature = "std",
    any(target_os = "linux", target_os = "android"),
    not(miri)
))]
fn parse_usize(s: &[u8]) -> Option<usize> {
    if s.is_empty() {
        return None;
    }
    s.iter().try_fold(0usize, |n, &d| {
        d.is_ascii_digit()
            .then_some(())
            .and_then(|()| n.checked_mul(10)?.checked_add(usize::from(d - b'0')))
    })
}

/// `"48K"`, `"2048K"`, `"32M"` or plain bytes.
#[cfg(all(
    feature = "std",
    any(target_os = "linux", target_os = "android"),
    not(miri)
))]
fn parse_size(s: &[u8]) -> Option<usize> {
    let (num, mul) = match s.split_last()? {
        (b'K', num) => (num, 1 << 10),
        (b'M', num) => (num, 1 << 20),
        (b'G', num) => (num, 1 << 30),
        _ => (s, 1),
    };
    parse_usize(num)?.checked_mul(mul)
}

/// The number of CPUs in a list such as `"0-15"` or `"0,2,4-7"`.
#[cfg(all(
    feature = "std",
    any(target_os = "linux", target_os = "android"),
    not(miri)
))]
fn count_cpus(list: &[u8]) -> Option<usize> {
    let mut n = 0usize;
    for part in list.split(|&b| b == b',') {
        n = n.checked_add(match part.iter().position(|&b| b == b'-') {
            Some(dash) => {
                let (a, b) = (&part[..dash], &part[dash + 1..]);
                parse_usize(b)?.checked_sub(parse_usize(a)?)? + 1
            }
            None => {
                parse_usize(part)?;
                1
            }
        })?;
    }
    (n > 0).then_some(n)
}

#[cfg(all(
    test,
    feature = "std",
    any(target_os = "linux", target_os = "android"),
    not(miri)
))]
mod tests {
    use super::*;

    #[test]
    fn sysfs_formats() {
        assert_eq!(parse_size(b"48K"), Some(48 << 10));
        assert_eq!(parse_size(b"32M"), Some(32 << 20));
        assert_eq!(parse_size(b"2G"), Some(2 << 30));
        assert_eq!(parse_size(b"512"), Some(512));
        assert_eq!(parse_size(b"x"), None);
        assert_eq!(parse_size(b"K"), None);
        assert_eq!(parse_size(b"-4K"), None);
        assert_eq!(parse_size(b"99999999999999999999K"), None);
        assert_eq!(count_cpus(b"0-15"), Some(16));
        assert_eq!(count_cpus(b"0,2,4-7"), Some(6));
        assert_eq!(count_cpus(b"3"), Some(1));
        assert_eq!(count_cpus(b"7-3"), None);
        assert_eq!(count_cpus(b""), None);
        assert_eq!(count_cpus(b"1,,2"), None);
        assert_eq!(trim(b" 48K\n"), b"48K");
    }

    /// The reader against `std::fs` on whatever this machine's sysfs holds (QEMU user mode
    /// passes the host's through), and its refusals.
    #[test]
    fn sysfs_reader_matches_std() {
        for i in 0..8u8 {
            for f in ["level", "type", "size", "shared_cpu_list"] {
                let path = std::format!("/sys/devices/system/cpu/cpu0/cache/index{i}/{f}");
                let mut buf = [MaybeUninit::uninit(); 256];
                let got = read_index_file(i, f.as_bytes(), &mut buf);
                assert_eq!(got, std::fs::read(&path).ok().as_deref(), "{path}");
            }
        }
        let mut tiny = [MaybeUninit::uninit(); 1];
        if std::fs::metadata("/sys/devices/system/cpu/cpu0/cache/index0/type").is_ok() {
            assert_eq!(
                read_index_file(0, b"type", &mut tiny),
                None,
                "too long for buf"
            );
        }
        assert_eq!(
            read_index_file(0, b"no-such-file", &mut [MaybeUninit::uninit(); 8]),
            None
        );
        assert_eq!(
            read_index_file(10, b"size", &mut [MaybeUninit::uninit(); 8]),
            None
        );
    }

    #[test]
    fn brand_strings() {
        assert_eq!(brand(0x410f_d083).as_str(), "Cortex-A72 0xd08 r0p3");
        assert_eq!(brand(0x611f_0221).as_str(), "part 0x022 r1p1");
        assert_eq!(implementer(0xc0), "Ampere");
    }
}
