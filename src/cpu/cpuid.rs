//! x86 CPUID, decoded: the features, caches and identity a CPUID source reports, through
//! `raw-cpuid`. The source is the CPU at hand (`arch/x86_64/cpu.rs`) or, in the tests, a
//! recorded CPU of the zoo (`crate::dispatch::zoo`), so every CPU the project has met runs through the
//! same decoding as the one at hand. Which vector register state the OS saves is not CPUID's to
//! say: the caller tells ([`Os`]).
//!
//! Portable code (no instruction is executed here): it builds for x86_64, and for the unit
//! tests on every target, so the zoo's x86 records replay on an aarch64 host too.

use raw_cpuid::{CacheType, CpuId, CpuIdReader};

use super::{Caches, Cpu, Features, Text};

/// What the OS saves of the vector registers, which decides whether AVX2 and AVX-512 may run.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Os {
    /// XCR0 as XGETBV reads it: the register state the OS saves (taken as 0 when CPUID says
    /// OSXSAVE is off, since XGETBV is then disabled).
    // Without std, detection reads XCR0 itself; with std only the zoo's records give it.
    #[cfg_attr(all(feature = "std", not(test)), allow(dead_code))]
    Xcr0(u64),
    /// `std_detect`'s verdicts (it checks CPUID and XCR0 the same way): AVX2, AVX-512F and
    /// AVX-512BW.
    // Only native detection with std uses it.
    #[cfg_attr(not(all(feature = "std", target_arch = "x86_64")), allow(dead_code))]
    Detected {
        avx2: bool,
        avx512f: bool,
        avx512bw: bool,
    },
}

/// XCR0 bits: SSE and AVX (YMM upper halves) state.
const XCR0_YMM: u64 = 0b110;
/// XCR0 bits: SSE, AVX, opmask, ZMM upper halves and ZMM16-31 state.
const XCR0_ZMM: u64 = 0b1110_0110;

/// What `reader` (CPUID) and `os` say about an x86_64 CPU.
pub(crate) fn decode<R: CpuIdReader>(reader: R, os: Os) -> Cpu {
    let id = CpuId::with_cpuid_reader(reader.clone());
    let basic = id.get_feature_info();
    let ext = id.get_extended_feature_info();
    let has = |f: fn(&raw_cpuid::ExtendedFeatures) -> bool| ext.as_ref().is_some_and(f);

    let (avx2, avx512f, avx512bw) = match os {
        Os::Detected {
            avx2,
            avx512f,
            avx512bw,
        } => (avx2, avx512f, avx512bw),
        Os::Xcr0(xcr0) => {
            let xcr0 = if basic.as_ref().is_some_and(|b| b.has_oxsave()) {
                xcr0
            } else {
                0
            };
            let ymm = basic.as_ref().is_some_and(|b| b.has_avx()) && xcr0 & XCR0_YMM == XCR0_YMM;
            let zmm = ymm && xcr0 & XCR0_ZMM == XCR0_ZMM;
            (
                ymm && has(|e| e.has_avx2()),
                zmm && has(|e| e.has_avx512f()),
                zmm && has(|e| e.has_avx512bw()),
            )
        }
    };
    let features = Features {
        sse2: true,
        avx2,
        avx512f,
        avx512bw,
        erms: has(|e| e.has_rep_movsb_stosb()),
        // Fast Short REP MOVSB: CPUID.(EAX=7,ECX=0):EDX[4], which `raw-cpuid` does not name;
        // leaf 7 exists when raw-cpuid read it above.
        fsrm: ext.is_some() && reader.cpuid2(7, 0).edx & (1 << 4) != 0,
        clflush: basic.as_ref().is_some_and(|b| b.has_clflush()),
        clflushopt: has(|e| e.has_clflushopt()),
        clwb: has(|e| e.has_clwb()),
        neon: false,
        dpb: false,
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
        flush: features.preferred_flush("x86_64"),
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

/// Cache sizes from the deterministic cache parameters leaf: 4 on Intel, 0x8000001D on AMD.
/// The legacy AMD leaf 0x80000006 is not used: it reports a 256 MiB L3 on some VMs (this
/// project's Zen3 VM among them), which is what pushes glibc's own threshold to 192 MiB.
fn caches<R: CpuIdReader>(id: &CpuId<R>, line: usize) -> Caches {
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
