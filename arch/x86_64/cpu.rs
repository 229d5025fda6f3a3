//! x86_64 detection: CPUID through `raw-cpuid`'s native reader, decoded by `crate::cpu::cpuid`
//! (the same decoding the zoo's recorded CPUs run through); the vector register state the OS
//! saves through `std_detect` when `std` is on and through XGETBV (XCR0) without it, so
//! `no_std` builds still pick AVX2 and AVX-512 at run time.

use raw_cpuid::CpuIdReaderNative;

use crate::cpu::cpuid::{self, Os};
use crate::cpu::{Caches, Cpu, Features, FlushOp, Text};

pub(crate) fn detect() -> Cpu {
    if cfg!(miri) {
        // Miri executes no CPUID: report the x86_64 baseline.
        return Cpu {
            arch: "x86_64",
            features: Features {
                sse2: true,
                ..Features::default()
            },
            caches: Caches {
                line: 64,
                source: "defaults (miri)",
                ..Caches::default()
            },
            flush: FlushOp::Fence,
            vendor: Text::new(b"miri"),
            brand: Text::EMPTY,
            family_model: None,
        };
    }
    cpuid::decode(CpuIdReaderNative, os())
}

/// AVX2 and AVX-512 as `std_detect` finds them (CPUID and the OS's XCR0).
#[cfg(feature = "std")]
fn os() -> Os {
    Os::Detected {
        avx2: std::is_x86_feature_detected!("avx2"),
        avx512f: std::is_x86_feature_detected!("avx512f"),
        avx512bw: std::is_x86_feature_detected!("avx512bw"),
    }
}

/// The OS's XCR0, read natively.
#[cfg(not(feature = "std"))]
fn os() -> Os {
    Os::Xcr0(xcr0())
}

/// XCR0 as this CPU's XGETBV reads it: the register state the OS saves (0 when CPUID says
/// OSXSAVE is off, since XGETBV is then disabled). Also for the tests that run the decoding
/// both ways.
#[cfg(any(not(feature = "std"), test))]
#[cfg_attr(miri, allow(dead_code))]
pub(crate) fn xcr0() -> u64 {
    if raw_cpuid::CpuId::new()
        .get_feature_info()
        .is_some_and(|b| b.has_oxsave())
    {
        // SAFETY: OSXSAVE set means XGETBV is enabled; XCR0 (index 0) always exists then.
        unsafe { core::arch::x86_64::_xgetbv(0) }
    } else {
        0
    }
}
