//! x86_64 detection: CPUID through `raw-cpuid`, SIMD through `std_detect` when `std` is on and
//! through CPUID + XGETBV (the OS must save YMM/ZMM state) without it, so `no_std` builds still
//! pick AVX2 and AVX-512 at run time.

use raw_cpuid::{CacheType, CpuId};

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
    let id = CpuId::new();
    let basic = id.get_feature_info();
    let ext = id.get_extended_feature_info();
    let has = |f: fn(&raw_cpuid::ExtendedFeatures) -> bool| ext.as_ref().is_some_and(f);

    let (avx2, avx512f, avx512bw) = simd(&id);
    let features = Features {
        sse2: true,
        avx2,
        avx512f,
        avx512bw,
        erms: has(|e| e.has_rep_movsb_stosb()),
        fsrm: fsrm(&id),
        clflush: basic.as_ref().is_some_and(|b| b.has_clflush()),
        clflushopt: has(|e| e.has_clflushopt()),
        clwb: has(|e| e.has_clwb()),
        neon: false,
        dpb: false,
    };
    let flush = if features.clwb {
        FlushOp::Clwb
    } else if features.clflushopt {
        FlushOp::Clflushopt
    } else if features.clflush {
        FlushOp::Clflush
    } else {
        FlushOp::Fence
    };
    let line = basic
        .as_ref()
        .map(|b| b.cflush_cache_line_size() as usize * 8)
        .filter(|&l| l.is_power_of_two())
        .unwrap_or(64);
    Cpu {
        arch: "x86_64",
        features,
        caches: caches(&id, line),
        flush,
        vendor: Text::new(
            id.get_vendor_info()
                .as_ref()
                .map_or("", |v| v.as_str())
                .as_bytes(),
        ),
        brand: Text::new(
            id.get_processor_brand_string()
                .as_ref()
                .map_or("", |b| b.as_str())
                .as_bytes(),
        ),
        family_model: basic.as_ref().map(|b| (b.family_id(), b.model_id())),
    }
}

/// (AVX2, AVX-512F, AVX-512BW), each only when the OS saves the register state.
#[cfg(feature = "std")]
fn simd(_: &CpuId<raw_cpuid::CpuIdReaderNative>) -> (bool, bool, bool) {
    (
        std::is_x86_feature_detected!("avx2"),
        std::is_x86_feature_detected!("avx512f"),
        std::is_x86_feature_detected!("avx512bw"),
    )
}

/// (AVX2, AVX-512F, AVX-512BW), each only when XCR0 says the OS saves the register state.
#[cfg(not(feature = "std"))]
fn simd(id: &CpuId<raw_cpuid::CpuIdReaderNative>) -> (bool, bool, bool) {
    /// XCR0 bits: SSE and AVX (YMM upper halves) state.
    const XCR0_YMM: u64 = 0b110;
    /// XCR0 bits: SSE, AVX, opmask, ZMM upper halves and ZMM16-31 state.
    const XCR0_ZMM: u64 = 0b1110_0110;
    let Some(basic) = id.get_feature_info() else {
        return (false, false, false);
    };
    let xcr0 = if basic.has_oxsave() {
        // SAFETY: OSXSAVE set means XGETBV is enabled; XCR0 (index 0) always exists then.
        unsafe { core::arch::x86_64::_xgetbv(0) }
    } else {
        0
    };
    let ext = id.get_extended_feature_info();
    let ymm = basic.has_avx() && xcr0 & XCR0_YMM == XCR0_YMM;
    let zmm = ymm && xcr0 & XCR0_ZMM == XCR0_ZMM;
    let ext_has = |f: fn(&raw_cpuid::ExtendedFeatures) -> bool| ext.as_ref().is_some_and(f);
    (
        ymm && ext_has(|e| e.has_avx2()),
        zmm && ext_has(|e| e.has_avx512f()),
        zmm && ext_has(|e| e.has_avx512bw()),
    )
}

/// Fast Short REP MOVSB: CPUID.(EAX=7,ECX=0):EDX[4]; `raw-cpuid` does not name it.
fn fsrm(id: &CpuId<raw_cpuid::CpuIdReaderNative>) -> bool {
    if id.get_extended_feature_info().is_none() {
        return false;
    }
    // Leaf 7 exists: raw-cpuid read it above.
    let r = core::arch::x86_64::__cpuid_count(7, 0);
    r.edx & (1 << 4) != 0
}

/// Cache sizes from the deterministic cache parameters leaf: 4 on Intel, 0x8000001D on AMD.
/// The legacy AMD leaf 0x80000006 is not used: it reports a 256 MiB L3 on some VMs (this
/// project's Zen3 VM among them), which is what pushes glibc's own threshold to 192 MiB.
fn caches(id: &CpuId<raw_cpuid::CpuIdReaderNative>, line: usize) -> Caches {
    let mut c = Caches {
        line,
        source: "defaults",
        ..Caches::default()
    };
    let Some(params) = id.get_cache_parameters() else {
        return c;
    };
    for p in params {
        if !matches!(p.cache_type(), CacheType::Data | CacheType::Unified) {
            continue;
        }
        let size =
            p.associativity() * p.physical_line_partitions() * p.coherency_line_size() * p.sets();
        match p.level() {
            1 => c.l1d = Some(size),
            2 => c.l2 = Some(size),
            3 => {
                c.l3 = Some(size);
                c.l3_shared_by = Some(p.max_cores_for_cache());
                c.l3_inclusive = Some(p.is_inclusive());
            }
            _ => {}
        }
    }
    if c.l1d.is_some() || c.l2.is_some() || c.l3.is_some() {
        let amd = id
            .get_vendor_info()
            .is_some_and(|v| matches!(v.as_str(), "AuthenticAMD" | "HygonGenuine"));
        c.source = if amd { "cpuid 0x8000001d" } else { "cpuid 4" };
    }
    c
}
