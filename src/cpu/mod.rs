//! What the CPU was found to have: the facts dispatch and the report use, and the OS's base page
//! size (`page`), which the cursors and the page walks share.

use core::fmt;

// x86 CPUID decoding: the x86_64 detection's, and the unit tests' on every target (the zoo's
// x86 records replay on any host).
#[cfg(any(target_arch = "x86_64", all(test, feature = "std")))]
pub(crate) mod cpuid;
pub(crate) mod page;

/// The instruction a [`Mode::FlushCache`](crate::Mode::FlushCache) copy uses to write lines back
/// to memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FlushOp {
    /// x86 `clwb`: write back, keep the (now clean) line cached. Preferred.
    Clwb,
    /// x86 `clflushopt`: write back and evict; weakly ordered, so lines flush in parallel.
    Clflushopt,
    /// x86 `clflush`: write back and evict; serialized per line, the slow fallback.
    Clflush,
    /// arm64 `dc cvap`: clean to the point of persistence (FEAT_DPB).
    DcCvap,
    /// arm64 `dc cvac`: clean to the point of coherency, the fallback without FEAT_DPB.
    DcCvac,
    /// No cache-maintenance instruction is available (or it cannot run, as under Miri): a
    /// flush-cache copy streams what it can and ends with a full fence.
    Fence,
}

impl FlushOp {
    /// The instruction's name as written in assembly.
    pub fn name(self) -> &'static str {
        match self {
            FlushOp::Clwb => "clwb",
            FlushOp::Clflushopt => "clflushopt",
            FlushOp::Clflush => "clflush",
            FlushOp::DcCvap => "dc cvap",
            FlushOp::DcCvac => "dc cvac",
            FlushOp::Fence => "fence only",
        }
    }

    pub(crate) const ALL: [FlushOp; 6] = [
        FlushOp::Clwb,
        FlushOp::Clflushopt,
        FlushOp::Clflush,
        FlushOp::DcCvap,
        FlushOp::DcCvac,
        FlushOp::Fence,
    ];

    pub(crate) fn index(self) -> u8 {
        FlushOp::ALL.iter().position(|&op| op == self).unwrap_or(5) as u8
    }
}

impl fmt::Display for FlushOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Instruction-set features that matter to copies.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Features {
    /// x86 SSE2 (baseline on x86_64).
    pub sse2: bool,
    /// x86 AVX2, with the OS saving YMM state.
    pub avx2: bool,
    /// x86 AVX-512 Foundation, with the OS saving ZMM state.
    pub avx512f: bool,
    /// x86 AVX-512 Byte/Word (byte-masked moves); the AVX-512 backend needs F and BW.
    pub avx512bw: bool,
    /// x86 Enhanced REP MOVSB/STOSB.
    pub erms: bool,
    /// x86 Fast Short REP MOVSB.
    pub fsrm: bool,
    /// x86 `clflush`.
    pub clflush: bool,
    /// x86 `clflushopt`.
    pub clflushopt: bool,
    /// x86 `clwb`.
    pub clwb: bool,
    /// arm64 Advanced SIMD.
    pub neon: bool,
    /// arm64 FEAT_DPB (`dc cvap`).
    pub dpb: bool,
}

impl Features {
    /// The flush instructions a CPU of `arch` (as [`Cpu::arch`]) with these features executes,
    /// preferred first.
    fn flush_ops(self, arch: &str) -> impl Iterator<Item = FlushOp> + '_ {
        FlushOp::ALL.into_iter().filter(move |op| match op {
            FlushOp::Clwb => self.clwb,
            FlushOp::Clflushopt => self.clflushopt,
            FlushOp::Clflush => self.clflush,
            FlushOp::DcCvap => self.dpb,
            FlushOp::DcCvac => arch == "aarch64",
            FlushOp::Fence => true,
        })
    }

    /// The flush instruction such a CPU prefers (detection's [`Cpu::flush`]): `clwb`, else
    /// `clflushopt`, else `clflush` on x86; `dc cvap` with FEAT_DPB, else `dc cvac` on arm64;
    /// else a fence alone.
    // Not every target's detection picks one (`arch/other.rs`).
    #[cfg_attr(
        not(any(target_arch = "x86_64", target_arch = "aarch64", test)),
        allow(dead_code)
    )]
    pub(crate) fn preferred_flush(self, arch: &str) -> FlushOp {
        self.flush_ops(arch).next().unwrap_or(FlushOp::Fence)
    }
}

/// Cache geometry, in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Caches {
    /// Data cache line size (the flush and streaming granularity).
    pub line: usize,
    /// Level 1 data cache per core.
    pub l1d: Option<usize>,
    /// Level 2 cache per core (or per cluster where shared).
    pub l2: Option<usize>,
    /// Last-level (L3) cache, one instance.
    pub l3: Option<usize>,
    /// How many logical CPUs share one L3 instance, when reported.
    pub l3_shared_by: Option<usize>,
    /// Whether the L3 holds a copy of every line in the L2s (CPUID leaf 4 / 0x8000001D
    /// "inclusive" bit), when reported. Intel server parts since Skylake-SP are non-inclusive:
    /// there a line evicted from L2 by a copy lands in L3 as a victim, and streaming pays from
    /// about the L2 size.
    pub l3_inclusive: Option<bool>,
    /// The block aarch64 `dc zva` zeroes in one instruction (`4 << DCZID_EL0.BS`), which
    /// `Temporal` zeroing uses; `None` when `DCZID_EL0.DZP` prohibits it and on other
    /// architectures.
    pub zero_block: Option<usize>,
    /// Where the figures came from (e.g. `"cpuid 0x8000001d"`), or `"defaults"`.
    pub source: &'static str,
}

/// What was detected about this CPU. See [`cpu()`](crate::tune::cpu()).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Cpu {
    /// Target architecture (`"x86_64"`, `"aarch64"`, ...).
    pub arch: &'static str,
    /// Instruction-set features.
    pub features: Features,
    /// Cache geometry.
    pub caches: Caches,
    /// The instruction flush-cache copies use.
    pub flush: FlushOp,
    pub(crate) vendor: Text<16>,
    pub(crate) brand: Text<48>,
    /// x86 CPUID family and model (extended fields folded in, as `lscpu` prints them), which
    /// the engine's rules key on; `None` elsewhere.
    pub(crate) family_model: Option<(u8, u8)>,
}

impl Cpu {
    /// The vendor string (`"AuthenticAMD"`, `"GenuineIntel"`, or the arm64 implementer).
    pub fn vendor(&self) -> &str {
        self.vendor.as_str()
    }

    /// The processor's brand string, when the CPU reports one.
    pub fn brand(&self) -> &str {
        self.brand.as_str()
    }

    /// The flush instructions this CPU can execute, preferred first (the first is [`Cpu::flush`]).
    pub fn flush_ops(&self) -> impl Iterator<Item = FlushOp> + '_ {
        self.features.flush_ops(self.arch)
    }
}

/// A fixed-capacity ASCII string, so `Cpu` stays `Copy` and `no_std`.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Text<const N: usize> {
    bytes: [u8; N],
    len: u8,
}

impl<const N: usize> Text<N> {
    pub(crate) const EMPTY: Self = Text {
        bytes: [0; N],
        len: 0,
    };

    /// Keeps the printable ASCII of `raw`, trimmed, truncated to `N` bytes.
    ///
    /// Built in place, byte by byte, with no copy of a slice: detection runs inside the first
    /// `memcpy` of a process that preloads cachecopy (docs/preload.md), where a slice copy would
    /// be a call to that `memcpy`.
    // Targets without a detection leaf (`arch/other.rs`) report no vendor or brand.
    #[cfg_attr(
        not(any(target_arch = "x86_64", target_arch = "aarch64")),
        allow(dead_code)
    )]
    pub(crate) fn new(raw: &[u8]) -> Self {
        let mut t = Self::EMPTY;
        for &b in raw.iter().filter(|b| b.is_ascii_graphic() || **b == b' ') {
            if (t.len as usize) < N && !(t.len == 0 && b == b' ') {
                t.bytes[t.len as usize] = b;
                t.len += 1;
            }
        }
        while t.len > 0 && t.bytes[t.len as usize - 1] == b' ' {
            t.len -= 1;
            t.bytes[t.len as usize] = 0;
        }
        t
    }

    pub(crate) fn as_str(&self) -> &str {
        // Only ASCII is ever stored.
        core::str::from_utf8(&self.bytes[..self.len as usize]).unwrap_or("")
    }
}

impl<const N: usize> fmt::Debug for Text<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}
