//! The records of the zoo: every CPU configuration the project has met, then the parts a rule
//! names that nobody here measured. Each expectation is what the rules decide today, with the
//! run that backs it (`Measured`), the place that states the default a CPU no run covers gets
//! (`Stated`), or the run on that CPU that disagrees (`Disputed`).

use super::{Arch, Expect, Facts, Origin, Quote, Record, Why};
use crate::cpu::Caches;

const KIB: usize = 1 << 10;
const MIB: usize = 1 << 20;

// ---------------------------------------------------------------- the facts, built

/// XCR0 with SSE and AVX state (no AVX-512 to save).
const XCR0_AVX: u64 = 0x7;
/// XCR0 with AVX-512 state too (opmask, ZMM): what Linux enables whole where the CPU has it.
const XCR0_AVX512: u64 = 0xe7;
/// XCR0 with AMX tile state as well as ZMM.
const XCR0_AMX: u64 = 0x600e7;

/// Section 1's features of an x86 CPU with AVX2, and of one with AVX-512 too.
const AVX2: &str = "sse2 avx2 erms fsrm clflush clflushopt clwb";
const AVX512: &str = "sse2 avx2 avx512f avx512bw erms fsrm clflush clflushopt clwb";

/// A CPU's identity and features, its caches read from `source` with 64-byte lines; the sizes
/// follow (`Facts::caches`).
const fn facts(
    arch: Arch,
    vendor: &'static str,
    brand: &'static str,
    features: &'static str,
    source: &'static str,
    l3_inclusive: Option<bool>,
) -> Facts {
    let caches = Caches {
        line: 64,
        l1d: None,
        l2: None,
        l3: None,
        l3_shared_by: None,
        l3_inclusive,
        zero_block: None,
        source,
    };
    Facts {
        arch,
        vendor,
        brand,
        features,
        caches,
        legacy_l3: None,
    }
}

/// CPUID family, model and stepping as `lscpu` prints them (stepping `None`: not recorded).
type Id = (u8, u8, Option<u8>);

/// An x86 vendor: its CPUID vendor string and the cache leaf detection reads for it.
type Vendor = (&'static str, &'static str);
const AMD: Vendor = ("AuthenticAMD", "cpuid 0x8000001d");
const INTEL: Vendor = ("GenuineIntel", "cpuid 4");

/// An x86 CPU whose OS saves the register state `xcr0`. Every x86 CPU met has a non-inclusive
/// L3 (AMD's a victim cache; the Zen 4 dump's leaf 0x8000001D says so too).
const fn x86(
    (vendor, source): Vendor,
    id: Id,
    xcr0: u64,
    brand: &'static str,
    features: &'static str,
) -> Facts {
    let (family, model, stepping) = id;
    let arch = Arch::X86 {
        family,
        model,
        stepping,
        xcr0,
    };
    facts(arch, vendor, brand, features, source, Some(false))
}

/// An arm64 CPU with `MIDR_EL1` `midr` and `dc zva` blocks of `zero_block` bytes, its caches
/// from `CTR_EL0` and sysfs (which report no inclusion).
const fn arm(
    midr: u64,
    vendor: &'static str,
    brand: &'static str,
    features: &'static str,
    zero_block: usize,
) -> Facts {
    let mut f = facts(
        Arch::Arm { midr },
        vendor,
        brand,
        features,
        "ctr_el0 + sysfs",
        None,
    );
    f.caches.zero_block = Some(zero_block);
    f
}

impl Facts {
    /// With an L1d, an L2 and an L3 of these sizes, `l3_shared_by` logical CPUs sharing one L3.
    const fn caches(mut self, l1d: usize, l2: usize, l3: usize, l3_shared_by: usize) -> Facts {
        self.caches.l1d = Some(l1d);
        self.caches.l2 = Some(l2);
        self.caches.l3 = Some(l3);
        self.caches.l3_shared_by = Some(l3_shared_by);
        self
    }

    /// With the legacy AMD leaf 0x80000006 reporting an L3 of `bytes`.
    const fn legacy_l3(mut self, bytes: usize) -> Facts {
        self.legacy_l3 = Some(bytes);
        self
    }
}

/// A quote of `file`.
const fn q(file: &'static str, text: &'static str) -> Quote {
    Quote { file, text }
}

/// An expectation.
const fn e(line: &'static str, why: Why) -> Expect {
    Expect { line, why }
}

// ---------------------------------------------------------------- stated rules, quoted once

const ENGINE_DOC: &str = "lab/findings/engine.md";
const PERF: &str = "lab/findings/performance.md";
const RULES: &str = "src/dispatch/rules.rs";

/// The flush instruction: the first of `clwb`, `clflushopt`, `clflush` (arm64 `dc cvap`, else
/// `dc cvac`) the CPU has. A design rule; no run compared the instructions.
const FLUSH_RULE: &[Quote] = &[q(
    "lab/findings/backends.md",
    "streamed body, then `clwb` (else `clflushopt`, else `clflush`; arm64 `dc cvap`, else `dc cvac`)",
)];

/// The engine of an AVX-512 CPU no rule names.
const AVX512_DEFAULT: Quote = q(
    ENGINE_DOC,
    "any other CPU with AVX-512 (Zen 5, family 26; other Intel models; other vendors) | \
     temporal avx512, stream avx512, edges overlap: a stated default",
);
const NO_RUN: Quote = q(ENGINE_DOC, "**no run here backs it**");
const ENGINE_DEFAULT: &[Quote] = &[AVX512_DEFAULT, NO_RUN];

/// The engine of a CPU without AVX-512.
const WIDEST: Quote = q(
    ENGINE_DOC,
    "everything else (Zen 3, AVX2 only; other vendors; aarch64; word-only builds) | the widest \
     backend, edges overlap",
);
const ENGINE_WIDEST: &[Quote] = &[WIDEST];

/// The Zen 4 engine rule, by family.
const ENGINE_ZEN4: &[Quote] = &[
    q(
        ENGINE_DOC,
        "AMD family 25 with AVX-512 (Zen 4; every family-25 part with AVX-512 is Zen 4; run: \
         model 17) | temporal avx2, stream avx2, edges overlap",
    ),
    q(
        ENGINE_DOC,
        "frames batched into a 96 MiB ring 94-95 ns with AVX-512, 62 ns with AVX2",
    ),
];

/// The thresholds of parts no run measured.
const UNMEASURED: Quote = q(
    PERF,
    "Parts not measured (stacked-L3 Milan-X/Genoa-X, Zen 5, other vendors) are what \
     `calibrate()` is for",
);

/// `L3 / 2` from an L2 of 1 MiB.
const HALF_L3: Quote = q(PERF, "`L3 / 2` with an L2 of 1 MiB or more (Zen 4: 16 MiB)");

/// `L3 / 4` below an L2 of 1 MiB.
const QUARTER_L3: Quote = q(
    PERF,
    "The fraction: `L3 / 4` with an L2 below 1 MiB (Zen 3: 8 MiB)",
);

/// AMD: `rep movsb` never.
const AMD_MOVSB: Quote = q(
    PERF,
    "`rep movsb` for `Temporal` copies (Intel with ERMS, from 2 KiB; never on AMD)",
);

/// AMD: `rep stosb` from twice the copy threshold.
const AMD_STOSB: Quote = q(
    PERF,
    "(x86_64 with ERMS, from `fill_rep_threshold()`, twice the copy threshold: 16 MiB on Zen3)",
);

/// Intel with a non-inclusive L3: the L2 size, twice it for fills.
const INTEL_NT: Quote = q(
    PERF,
    "Intel with a non-inclusive L3 (server parts): the L2 size for copies, twice it for fills.",
);

/// Intel with ERMS: `rep movsb` and `rep stosb` from 2 KiB.
const INTEL_MOVSB: Quote = q(
    PERF,
    "`rep movsb` for `Temporal` copies (Intel with ERMS, from 2 KiB; never on AMD)",
);
const INTEL_STOSB: Quote = q(PERF, "Hence the Intel rule (2 KiB, glibc's)");
const INTEL_REP: &[Quote] = &[INTEL_MOVSB, INTEL_STOSB];
/// The Intel models whose runs moved the string instructions to 8 KiB.
const INTEL_STRINGS: Quote = q(
    PERF,
    "So on the models measured both start at 8 KiB (`rules::intel_strings_measured`)",
);

/// No string instructions off x86_64.
const NO_STRING: &[Quote] = &[q(
    RULES,
    "No ERMS, other architectures: never (`usize::MAX`).",
)];

// ---------------------------------------------------------------- the CPUs met

const ZEN3_DOC: &str = "lab/machines/amd-epyc-zen3.md";
const ZEN4_DOC: &str = "lab/machines/amd-epyc-zen4-f25m17.md";
const XEON207_DOC: &str = "lab/machines/intel-xeon-f6m207.md";
const XEON167_DOC: &str = "lab/machines/intel-xeon-f6m167.md";

/// The small calls' classes: where each CPU kind's choice is stated, with its runs.
const SMALL_DOC: &str = "lab/findings/small-calls.md";
/// `small=plain` on an AVX-512 CPU without a run of the masked class.
const SMALL_UNRUN: &[Quote] = &[q(
    SMALL_DOC,
    "| Intel family 6 model 207, AMD Zen 5, the other AVX-512 parts | `plain` | a stated \
     default: no run of the masked class there |",
)];
/// `small=masked-fills` on AMD family 25 with AVX-512 (Zen 4).
const SMALL_ZEN4: Quote = q(
    SMALL_DOC,
    "| AMD family 25 with AVX-512 (Zen 4) | `masked-fills` | \"Masked fills on AMD Zen 4\", below |",
);
/// `small=plain` without AVX-512.
const SMALL_NO_MASKS: &[Quote] = &[q(
    SMALL_DOC,
    "| Zen 3, AVX2-only, aarch64, word-only builds | `plain` | no masks |",
)];

// ---------------------------------------------------------------- expectations records share

/// The flush instruction `clwb`, which every x86 CPU met has.
const FLUSH_CLWB: Expect = e("flush=clwb", Why::Stated(FLUSH_RULE));
/// Plain small classes on an AVX-512 CPU without a run of the masked ones, and without AVX-512.
const PLAIN_UNRUN: Expect = e("small=plain", Why::Stated(SMALL_UNRUN));
const PLAIN_NO_MASKS: Expect = e("small=plain", Why::Stated(SMALL_NO_MASKS));
/// Streamed copies read the source in order where no run compared reading pages at once.
const PAGES_UNRUN: Expect = e(
    "pages=1",
    Why::Stated(&[q(PERF, "The other CPUs keep one page without a run")]),
);
/// 256-bit copy loops at every size where no run put large copies on AVX-512 registers.
const WIDE_NEVER: Expect = e(
    "wide_copy=never",
    Why::Stated(&[q(
        PERF,
        "| every other CPU | `never` | Zen 3 and the AVX2-only parts have no AVX-512; the Intel \
         models measured run AVX-512 for the whole job; the others have no run |",
    )]),
);
/// Large copies on AVX-512 registers from 1 MiB on AMD family 25 with AVX-512 (Zen 4).
const WIDE_ZEN4: Quote = q(
    PERF,
    "| AMD family 25 with AVX-512 (Zen 4) | `1M` | the runs below |",
);

/// The engine line of every AMD record that runs AVX2 (the Zen rules, and the widest backend
/// of a CPU without AVX-512).
const AVX2_ENGINE: &str = "temporal=avx2,stream=avx2,edges=overlap";
/// The default engine of an AVX-512 CPU no rule names.
const AVX512_ENGINE: Expect = e(
    "temporal=avx512,stream=avx512,edges=overlap",
    Why::Stated(ENGINE_DEFAULT),
);
/// AMD: never `rep movsb`; `rep stosb` from 32 MiB (twice a 16 MiB copy threshold).
const AMD_NEVER_MOVSB: Expect = e("rep_movsb=never", Why::Stated(&[AMD_MOVSB]));
const AMD_STOSB_32M: Expect = e("fill_rep=32M", Why::Stated(&[AMD_STOSB]));
/// Zen 4's thresholds, with AVX-512 exposed or hidden (the same caches).
const ZEN4_NT: Expect = e(
    "nt=16M,fill_nt=16M",
    Why::Measured(&[q(
        PERF,
        "hot crossover 16 MiB for copies (0.68x at 8 MiB, 1.23x at 16 MiB) and for \
         fills (0.92x, 1.19x)",
    )]),
);
/// An Intel AVX-512 server part no run covers: every choice a stated rule's.
const INTEL_UNRUN: &[Expect] = &[
    AVX512_ENGINE,
    e("nt=2M,fill_nt=4M", Why::Stated(&[INTEL_NT])),
    e("rep_movsb=2K,fill_rep=2K", Why::Stated(INTEL_REP)),
    FLUSH_CLWB,
    PLAIN_UNRUN,
    PAGES_UNRUN,
    WIDE_NEVER,
];

/// A raw dump's origin, by the record's name: its non-zero leaves in `zoo/<name>.cpuid`, the
/// dump itself in `lab/machines/<name>-cpuid.txt` (lab/machines/README.md, "Adding a
/// machine").
macro_rules! raw {
    ($name:literal) => {
        Origin::Raw {
            leaves: include_str!(concat!($name, ".cpuid")),
            dump: concat!("lab/machines/", $name, "-cpuid.txt"),
        }
    };
}

/// A part nobody here measured, from its public identity (`sources`), every expectation a
/// stated rule's.
const fn public(
    name: &'static str,
    sources: &'static str,
    facts: Facts,
    expect: &'static [Expect],
) -> Record {
    let origin = Origin::Public { sources };
    Record {
        name,
        origin,
        facts,
        seen: &[],
        expect,
    }
}

/// Every record.
pub(super) static ZOO: &[Record] = &[
    // AMD EPYC Zen 3 (Milan), the project's first machine: no dump, rebuilt from its runs.
    // Stepping: no run recorded it. The L3's inclusion was not recorded either; no rule reads it
    // on AMD.
    Record {
        name: "amd-epyc-zen3-f25m1",
        origin: Origin::Reconstructed,
        facts: x86(AMD, (25, 1, None), XCR0_AVX, "AMD EPYC", AVX2)
            .caches(32 * KIB, 512 * KIB, 32 * MIB, 2)
            .legacy_l3(256 * MIB),
        seen: &[
            q(ZEN3_DOC, "| CPU | AMD EPYC VM, family 25 model 1 (Zen 3, Milan), 2 vCPUs"),
            q(ZEN3_DOC, "CPU            AuthenticAMD AMD EPYC (x86_64, 2 CPUs, Linux 6.18.44-fc-v1252)"),
            q(ZEN3_DOC, "features       sse2 avx2 erms fsrm clflush clflushopt clwb"),
            q(
                ZEN3_DOC,
                "caches         line 64 B, L1d 32 KiB, L2 512 KiB, L3 32 MiB shared by 2 (cpuid 0x8000001d)",
            ),
            q(ZEN3_DOC, "legacy CPUID 0x80000006 L3 = 256 MiB"),
            q(
                ZEN3_DOC,
                "tuning         CACHECOPY_TUNE=nt=8M,fill_nt=8M,rep_movsb=never,fill_rep=16M,temporal=avx2,stream=avx2,edges=overlap,flush=clwb",
            ),
        ],
        expect: &[
            e(
                AVX2_ENGINE,
                Why::Measured(&[
                    q(ENGINE_DOC, "**Zen 3 VM** (family 25 model 1, rule AVX2; measured, 2026-12-03"),
                    q(ENGINE_DOC, "SSE2 is never taken."),
                ]),
            ),
            e(
                "nt=8M,fill_nt=8M",
                Why::Measured(&[
                    q(
                        PERF,
                        "the hot-destination crossover of `Temporal` and `NonTemporal` is 8 MiB, \
                         which is `L3 / 4`",
                    ),
                    q(PERF, "so the copy rule's 8 MiB fits fills too"),
                ]),
            ),
            e(
                "rep_movsb=never",
                Why::Measured(&[
                    q(PERF, "`rep movsb` 0.48-0.58x at 1 KiB rising to 0.67-0.72x at 16 KiB"),
                    q(PERF, "`rep_movsb=never` is confirmed"),
                ]),
            ),
            e(
                "fill_rep=16M",
                Why::Measured(&[q(
                    PERF,
                    "from 16 MiB `rep stosb` is ahead, 1.7x at 64 MiB and 2.2x at 256 MiB",
                )]),
            ),
            FLUSH_CLWB,
            PLAIN_NO_MASKS,
            PAGES_UNRUN,
            WIDE_NEVER,
        ],
    },
    // AMD EPYC Zen 4 (Genoa) with AVX-512 exposed: the raw dump of 2026-12-04. XCR0 was not
    // dumped: leaf 0xD lists 0xe7 (x87, SSE, AVX, opmask, ZMM), which Linux enables whole;
    // /proc/cpuinfo shows avx512f, which it hides otherwise.
    Record {
        name: "amd-epyc-zen4-f25m17-avx512",
        origin: raw!("amd-epyc-zen4-f25m17-avx512"),
        facts: x86(AMD, (25, 17, Some(1)), XCR0_AVX512, "AMD EPYC", AVX512)
            .caches(32 * KIB, MIB, 32 * MIB, 2)
            .legacy_l3(320 * MIB),
        seen: &[
            q(
                "../shared/machines/amd-epyc-zen4-f25m17-avx512-2026-12-04.txt",
                "features       sse2 avx2 avx512f avx512bw erms fsrm clflush clflushopt clwb",
            ),
            q(
                "../shared/machines/amd-epyc-zen4-f25m17-avx512-2026-12-04.txt",
                "tuning         CACHECOPY_TUNE=nt=16M,fill_nt=16M,rep_movsb=never,fill_rep=32M,temporal=avx2,stream=avx2,edges=overlap,flush=clwb",
            ),
            q(ZEN4_DOC, "features       sse2 avx2 avx512f avx512bw erms fsrm clflush clflushopt clwb"),
            q(
                ZEN4_DOC,
                "caches         line 64 B, L1d 32 KiB, L2 1 MiB, L3 32 MiB shared by 2 (cpuid 0x8000001d)",
            ),
            q(ZEN4_DOC, "the legacy leaf 0x80000006 reports 320 MiB"),
        ],
        expect: &[
            e(AVX2_ENGINE, Why::Measured(ENGINE_ZEN4)),
            ZEN4_NT,
            e(
                "rep_movsb=never",
                Why::Measured(&[q(
                    ZEN4_DOC,
                    "rep movsb      calibrate(): never (built-in never); string ÷ vector loop, \
                     cold destination: 1 KiB 0.98x, 2 KiB 0.57x",
                )]),
            ),
            e(
                "fill_rep=32M",
                Why::Stated(&[
                    AMD_STOSB,
                    q(
                        ZEN4_DOC,
                        "`rep stosb` from 16 MiB (the rule of that commit: twice the copy \
                         threshold) is neutral there",
                    ),
                ]),
            ),
            FLUSH_CLWB,
            e(
                "small=masked-fills",
                Why::Measured(&[
                    SMALL_ZEN4,
                    q(
                        ZEN4_DOC,
                        "   0-64 B       L2 512 KiB          32      2.89   2.28x   2.32x   2.17x",
                    ),
                ]),
            ),
            e(
                "pages=1",
                Why::Measured(&[q(PERF, "| memory, 256 MiB | 1.77-1.78x | 1.33-1.39x |")]),
            ),
            e(
                "wide_copy=1M",
                Why::Measured(&[
                    WIDE_ZEN4,
                    q(PERF, "| 4 MiB | 0.67-0.86x | 0.99-1.04x | 1.02-1.03x |"),
                ]),
            ),
        ],
    },
    // The same Zen 4 with AVX-512 hidden by the hypervisor: the dump's CPU without the
    // AVX-512 bits, as its run printed it.
    Record {
        name: "amd-epyc-zen4-f25m17-noavx512",
        origin: Origin::Reconstructed,
        facts: x86(AMD, (25, 17, None), XCR0_AVX512, "AMD EPYC", AVX2)
            .caches(32 * KIB, MIB, 32 * MIB, 2)
            .legacy_l3(320 * MIB),
        seen: &[
            q(ZEN4_DOC, "## 2026-12-01: AVX-512 hidden by the hypervisor (main at `0784634`)"),
            q(ZEN4_DOC, "features       sse2 avx2 erms fsrm clflush clflushopt clwb"),
            q(
                ZEN4_DOC,
                "backends       generic, sse2, avx2 (active: avx2)",
            ),
            q(
                ZEN4_DOC,
                "NT threshold   16 MiB (L3 / 2 = 32 MiB / 2 (L2 of 1 MiB or more, as on Zen 4; at least 2 x L2), caches from cpuid 0x8000001d); fills 16 MiB",
            ),
        ],
        expect: &[
            e(
                AVX2_ENGINE,
                Why::Measured(&[
                    WIDEST,
                    q(
                        "../shared/machines/README.md",
                        "AMD Zen 4 without AVX-512 (engine avx2): frames batch at the write limit",
                    ),
                ]),
            ),
            ZEN4_NT,
            e(
                "rep_movsb=never",
                Why::Measured(&[q(
                    ZEN4_DOC,
                    "rep movsb      calibrate(): never (built-in never)",
                )]),
            ),
            AMD_STOSB_32M,
            FLUSH_CLWB,
            PLAIN_NO_MASKS,
            PAGES_UNRUN,
            WIDE_NEVER,
        ],
    },
    // Intel Xeon family 6 model 207 (Emerald Rapids class), twice: no dump, rebuilt from its
    // runs. Stepping and XCR0 not recorded; the OS saved ZMM state (the AVX-512 backend ran).
    Record {
        name: "intel-xeon-f6m207",
        origin: Origin::Reconstructed,
        facts: x86(INTEL, (6, 207, None), XCR0_AVX512, "Intel(R) Xeon(R) Processor", AVX512)
            .caches(48 * KIB, 2 * MIB, 260 * MIB, 2),
        seen: &[
            q(XEON207_DOC, "| CPU | Intel Xeon VM, family 6 model 207 (Sapphire/Emerald Rapids class), 2 vCPUs |"),
            q(XEON207_DOC, "features       sse2 avx2 avx512f avx512bw erms fsrm clflush clflushopt clwb"),
            q(
                XEON207_DOC,
                "caches         line 64 B, L1d 48 KiB, L2 2 MiB, L3 260 MiB shared by 2 (cpuid 4)",
            ),
            q(
                XEON207_DOC,
                "NT threshold   2 MiB (L2 = 2 MiB (Intel, non-inclusive L3: streaming pays from the L2 size), caches from cpuid 4); fills 4 MiB",
            ),
        ],
        expect: &[
            e(
                "temporal=avx512,stream=avx512,edges=overlap",
                Why::Measured(&[
                    q(ENGINE_DOC, "| Intel family 6 model 207 only | temporal avx512, stream avx512, edges overlap |"),
                    q(
                        ENGINE_DOC,
                        "whole frames with masked edges 1.2-1.4x the overlapping ones (table B); \
                         512-bit bodies no slower than 256-bit ones",
                    ),
                ]),
            ),
            e(
                "nt=2M,fill_nt=4M",
                Why::Measured(&[
                    q(
                        PERF,
                        "the measured crossovers are 4 KiB cold and 2 MiB hot, and the report \
                         recommends `CACHECOPY_NT_THRESHOLD=2097152`",
                    ),
                    q(
                        PERF,
                        "Xeon, 2026-11-30, `387b4d7` (section 5b): crossovers 4 KiB cold and 4 MiB \
                         hot",
                    ),
                ]),
            ),
            // The calibrations measured the string instructions slower at 2 KiB, cold, and
            // chose 8 KiB (quoted); the rule follows them for this model.
            e(
                "rep_movsb=8K",
                Why::Measured(&[
                    q(
                        XEON207_DOC,
                        "rep movsb      calibrate(): 8 KiB (built-in 2 KiB); string ÷ vector \
                         loop, cold destination: 1 KiB 0.59x, 2 KiB 0.71x, 4 KiB 0.99x, 8 KiB 1.19x",
                    ),
                    INTEL_STRINGS,
                ]),
            ),
            e(
                "fill_rep=8K",
                Why::Measured(&[
                    q(
                        XEON207_DOC,
                        "rep stosb      calibrate(): 8 KiB (built-in 2 KiB); string ÷ vector \
                         loop, cold destination: 1 KiB 0.65x, 2 KiB 0.69x, 4 KiB 1.90x",
                    ),
                    q(
                        XEON207_DOC,
                        "rep stosb      calibrate(): 8 KiB (built-in 4 KiB); string ÷ vector \
                         loop, cold destination: 1 KiB 0.81x, 2 KiB 0.75x, 4 KiB 0.87x, 8 KiB 1.00x",
                    ),
                    INTEL_STRINGS,
                ]),
            ),
            FLUSH_CLWB,
            PLAIN_UNRUN,
            PAGES_UNRUN,
            WIDE_NEVER,
        ],
    },
    // Intel Xeon family 6 model 167, this session's CPU: the raw dump. XCR0 read on the VM (the
    // dump's file has it): AMX tile state as well as ZMM.
    Record {
        name: "intel-xeon-f6m167",
        origin: raw!("intel-xeon-f6m167"),
        facts: x86(INTEL, (6, 167, Some(1)), XCR0_AMX, "Intel(R) Xeon(R) Processor", AVX512)
            .caches(48 * KIB, 2 * MIB, 480 * MIB, 2),
        seen: &[
            q(XEON167_DOC, "features       sse2 avx2 avx512f avx512bw erms fsrm clflush clflushopt clwb"),
            q(
                XEON167_DOC,
                "caches         line 64 B, L1d 48 KiB, L2 2 MiB, L3 480 MiB shared by 2 (cpuid 4)",
            ),
            q(
                XEON167_DOC,
                "tuning         CACHECOPY_TUNE=nt=2M,fill_nt=4M,rep_movsb=2K,fill_rep=2K,temporal=avx512,stream=avx512,edges=overlap,flush=clwb",
            ),
        ],
        expect: &[
            // The rule names model 207 only, so this CPU gets the stated default; its run
            // agrees (7b: the fastest of the four engines on frames; 7c: the engine check keeps
            // it), one run, not taken into the rule.
            e(
                "temporal=avx512,stream=avx512,edges=overlap",
                Why::Stated(&[
                    AVX512_DEFAULT,
                    NO_RUN,
                    q(
                        XEON167_DOC,
                        "decided        temporal avx512, stream avx512, edges overlap: the rule stays (decided)",
                    ),
                ]),
            ),
            e(
                "nt=2M",
                Why::Measured(&[
                    INTEL_NT,
                    q(XEON167_DOC, "crossover      cold destination 4 KiB, hot destination 2 MiB"),
                ]),
            ),
            // Section 5b: hot fills cross over above the rule's size; calibrate() undecided.
            e(
                "fill_nt=4M",
                Why::Disputed(&[
                    INTEL_NT,
                    q(XEON167_DOC, "crossover      cold destination 4 KiB, hot destination 8 MiB"),
                    q(
                        XEON167_DOC,
                        "recommended    CACHECOPY_FILL_NT_THRESHOLD=8388608",
                    ),
                ]),
            ),
            // Section 5 and class_probe: the string instructions lose hot below 8 KiB and come
            // level from it, where cold they gain a little.
            e(
                "rep_movsb=8K",
                Why::Measured(&[
                    q(
                        XEON167_DOC,
                        "hot dst      1 KiB 0.51x 0/1, 2 KiB 0.73x 0/2, 4 KiB 0.85x 0/2, 8 KiB \
                         0.95x 0/4, 16 KiB 0.96x 0/4",
                    ),
                    q(
                        XEON167_DOC,
                        "copy  hot src+0   : 1K 0.35x 2K 0.54x 3K 0.71x 4K 0.84x 8K 0.96x 16K 0.98x",
                    ),
                    INTEL_STRINGS,
                ]),
            ),
            e(
                "fill_rep=8K",
                Why::Measured(&[
                    q(XEON167_DOC, "hot dst      1 KiB 0.38x 0/1, 2 KiB 0.63x 0/1, 4 KiB 0.95x 0/1"),
                    q(
                        XEON167_DOC,
                        "fill  hot         : 1K 0.33x 2K 0.55x 3K 0.71x 4K 0.85x 8K 0.94x",
                    ),
                    INTEL_STRINGS,
                ]),
            ),
            FLUSH_CLWB,
            e(
                "small=masked-fills",
                Why::Measured(&[
                    q(SMALL_DOC, "| Intel family 6 model 167 | `masked-fills` | the runs above |"),
                    q(
                        XEON167_DOC,
                        "fill ws   256K uniform 0-64      Glibc   1.91ns  1.00x  T   1.90ns  1.01x",
                    ),
                ]),
            ),
            e(
                "pages=4",
                Why::Measured(&[
                    q(PERF, "| memory, 2-64 MiB | 1.27-1.49x | 1.64-1.89x |"),
                    q(
                        XEON167_DOC,
                        "64 MiB source memory NonTemporal pages=4 5.33 ms 12.59 GB/s glibc/this 1.89x",
                    ),
                ]),
            ),
            WIDE_NEVER,
        ],
    },
    // ---------------------------------------------------------------- parts no run covers
    // AMD EPYC 9005 "Turin" (Zen 5, family 26): full-width AVX-512; L2 1 MiB, 32 MiB L3 per
    // CCD of 8 cores (16 threads).
    public(
        "amd-epyc-zen5-f26m2",
        "AMD EPYC 9005 (Turin): family 0x1A model 0x02 (libcpuid's AMD table); Zen 5: 48 KiB \
         L1d, 1 MiB L2 per core, 32 MiB L3 per 8-core CCD",
        x86(AMD, (26, 2, None), XCR0_AVX512, "AMD EPYC 9755 128-Core Processor", AVX512)
            .caches(48 * KIB, MIB, 32 * MIB, 16),
        &[
            AVX512_ENGINE,
            e("nt=16M,fill_nt=16M", Why::Stated(&[HALF_L3, UNMEASURED])),
            AMD_NEVER_MOVSB,
            AMD_STOSB_32M,
            FLUSH_CLWB,
            PLAIN_UNRUN,
            PAGES_UNRUN,
            WIDE_NEVER,
        ],
    ),
    // AMD EPYC 7003X "Milan-X": Zen 3 with a stacked L3, 96 MiB per 8-core CCX.
    public(
        "amd-epyc-milan-x-f25m1",
        "AMD EPYC 7773X (Milan-X): family 0x19 model 0x01 as Milan; 3D V-Cache: 96 MiB L3 per \
         CCX of 8 cores, 512 KiB L2 per core",
        x86(AMD, (25, 1, None), XCR0_AVX, "AMD EPYC 7773X 64-Core Processor", AVX2)
            .caches(32 * KIB, 512 * KIB, 96 * MIB, 16),
        &[
            e(AVX2_ENGINE, Why::Stated(ENGINE_WIDEST)),
            e("nt=24M,fill_nt=24M", Why::Stated(&[QUARTER_L3, UNMEASURED])),
            AMD_NEVER_MOVSB,
            e("fill_rep=48M", Why::Stated(&[AMD_STOSB])),
            FLUSH_CLWB,
            PLAIN_NO_MASKS,
            PAGES_UNRUN,
            WIDE_NEVER,
        ],
    ),
    // AMD EPYC 9004X "Genoa-X": Zen 4 with a stacked L3, 96 MiB per CCD. The Zen 4 rule covers
    // it by family (the same core as the run's Genoa); its own frames were never measured.
    public(
        "amd-epyc-genoa-x-f25m17",
        "AMD EPYC 9684X (Genoa-X): family 0x19 model 0x11 as Genoa; 3D V-Cache: 96 MiB L3 per \
         CCD of 8 cores, 1 MiB L2 per core; AVX-512",
        x86(AMD, (25, 17, None), XCR0_AVX512, "AMD EPYC 9684X 96-Core Processor", AVX512)
            .caches(32 * KIB, MIB, 96 * MIB, 16),
        &[
            e(AVX2_ENGINE, Why::Stated(ENGINE_ZEN4)),
            e("nt=48M,fill_nt=48M", Why::Stated(&[HALF_L3, UNMEASURED])),
            AMD_NEVER_MOVSB,
            e("fill_rep=96M", Why::Stated(&[AMD_STOSB])),
            FLUSH_CLWB,
            e("small=masked-fills", Why::Stated(&[SMALL_ZEN4])),
            PAGES_UNRUN,
            e("wide_copy=1M", Why::Stated(&[WIDE_ZEN4])),
        ],
    ),
    // Intel Xeon 6 "Granite Rapids" (family 6 model 173).
    public(
        "intel-xeon-granite-rapids-f6m173",
        "Intel Xeon 6980P (Granite Rapids-AP): family 6 model 0xAD; 48 KiB L1d, 2 MiB L2 per \
         core, 504 MiB L3 (non-inclusive) for 128 cores, 256 threads",
        x86(INTEL, (6, 173, None), XCR0_AMX, "Intel(R) Xeon(R) 6980P", AVX512)
            .caches(48 * KIB, 2 * MIB, 504 * MIB, 256),
        INTEL_UNRUN,
    ),
    // Intel Xeon 4th generation "Sapphire Rapids" (family 6 model 143).
    public(
        "intel-xeon-sapphire-rapids-f6m143",
        "Intel Xeon Platinum 8480+ (Sapphire Rapids): family 6 model 0x8F; 48 KiB L1d, 2 MiB L2 \
         per core, 105 MiB L3 (non-inclusive) for 56 cores, 112 threads",
        x86(INTEL, (6, 143, None), XCR0_AMX, "Intel(R) Xeon(R) Platinum 8480+", AVX512)
            .caches(48 * KIB, 2 * MIB, 105 * MIB, 112),
        INTEL_UNRUN,
    ),
    // Arm Neoverse N1 as AWS Graviton2: 64 cores, 1 MiB L2 each, 32 MiB system-level cache,
    // FEAT_DPB, 64-byte `dc zva` blocks.
    public(
        "arm-neoverse-n1",
        "AWS Graviton2 (Neoverse N1 r3p1, MIDR 0x413fd0c1): 64 KiB L1d, 1 MiB L2 per core, 32 \
         MiB L3 for 64 cores (lscpu); FEAT_DPB (hwcap dcpop); DCZID_EL0.BS 4",
        arm(0x413f_d0c1, "ARM", "Neoverse N1 0xd0c r3p1", "neon dpb", 64)
            .caches(64 * KIB, MIB, 32 * MIB, 64),
        &[
            e(
                "temporal=neon,stream=neon,edges=overlap",
                Why::Stated(ENGINE_WIDEST),
            ),
            e("nt=16M,fill_nt=16M", Why::Stated(&[HALF_L3, UNMEASURED])),
            e("rep_movsb=never,fill_rep=never", Why::Stated(NO_STRING)),
            e("flush=dc cvap", Why::Stated(FLUSH_RULE)),
            PLAIN_NO_MASKS,
            PAGES_UNRUN,
            WIDE_NEVER,
        ],
    ),
];
