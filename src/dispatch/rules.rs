//! The built-in rules: what every per-CPU choice is when no variable overrides it, each rule
//! with the run that justifies it (`lab/machines/`). [`rule`] gathers them into the record
//! ([`Tuning`]) that the environment then refines (`super::tune`).

use super::engine::{Backend, Edges, Engine};
use super::table;
use super::tune::{EntryCopy, FrameBuild, Small, Tuning};
use crate::cpu::Cpu;

/// The CPUs a rule tells apart by identity: every one a run here measured, named once, here.
/// Every rule below asks [`Model::of`] and nothing else about who the CPU is (vendor strings and
/// CPUID family and model are read nowhere else), so a CPU's rules are found by its name, and a
/// CPU no run covers is [`Model::Other`] in every rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Model {
    /// AMD family 23 model 49: Zen 2 (EPYC Rome). Measured: lab/machines, the Zen 2 record.
    Zen2Rome,
    /// AMD family 25 without AVX-512: Zen 3 (Milan), measured on model 1; also Zen 4 with AVX-512
    /// hidden, which the rules treat alike.
    Family25,
    /// AMD family 25 with AVX-512: Zen 4 (Genoa), measured on model 17.
    Family25Avx512,
    /// Intel family 6 model 167.
    IntelF6M167,
    /// Intel family 6 model 207.
    IntelF6M207,
    /// Any other Intel CPU: the vendor's stated defaults, no run.
    OtherIntel,
    /// Anything else: no run.
    Other,
}

impl Model {
    /// Who `cpu` is, for the rules.
    pub(crate) fn of(cpu: &Cpu) -> Model {
        let avx512 = cpu.features.avx512f && cpu.features.avx512bw;
        match (cpu.arch, cpu.vendor(), cpu.family_model) {
            ("x86_64", "AuthenticAMD", Some((23, 49))) => Model::Zen2Rome,
            ("x86_64", "AuthenticAMD", Some((25, _))) if avx512 => Model::Family25Avx512,
            ("x86_64", "AuthenticAMD", Some((25, _))) => Model::Family25,
            ("x86_64", "GenuineIntel", Some((6, 167))) => Model::IntelF6M167,
            ("x86_64", "GenuineIntel", Some((6, 207))) => Model::IntelF6M207,
            ("x86_64", "GenuineIntel", _) => Model::OtherIntel,
            _ => Model::Other,
        }
    }

    /// Whether this is an Intel CPU.
    fn intel(self) -> bool {
        matches!(
            self,
            Model::IntelF6M167 | Model::IntelF6M207 | Model::OtherIntel
        )
    }
}

impl Engine {
    /// The built-in engine for `cpu` (what dispatch runs when no variable overrides it), and
    /// the rule that chose it, citing its evidence (`lab/findings/engine.md`).
    ///
    /// ```
    /// let cpu = cachecopy::tune::cpu();
    /// let (engine, why) = cachecopy::tune::Engine::rule(&cpu);
    /// assert!(cachecopy::tune::Engine::supported().contains(&engine));
    /// assert!(!why.is_empty());
    /// ```
    pub fn rule(cpu: &Cpu) -> (Engine, &'static str) {
        let n = table::runnable(&cpu.features);
        engine_rule(cpu, table::BACKENDS[n - 1].engine.stream)
    }
}

impl Tuning {
    /// Every built-in choice for `cpu`: what dispatch runs when no variable overrides it (the
    /// engine as [`Engine::rule`] picks it, the flush instruction the CPU prefers, the `Auto`
    /// and string-instruction thresholds), each rule with the run behind it (`lab/findings/engine.md`,
    /// `lab/findings/performance.md`, `lab/machines/`). [`Plan::current`](crate::tune::Plan::current)`().tuning()` is this record
    /// refined by the environment, the setters and an applied calibration.
    ///
    /// ```
    /// let cpu = cachecopy::tune::cpu();
    /// let rule = cachecopy::tune::Tuning::rule(&cpu);
    /// assert_eq!(rule.engine, cachecopy::tune::Engine::rule(&cpu).0);
    /// assert_eq!(rule.nt, cachecopy::tune::default_nt_threshold(&cpu));
    /// ```
    pub fn rule(cpu: &Cpu) -> Tuning {
        let n = table::runnable(&cpu.features);
        rule(cpu, table::BACKENDS[n - 1].engine.stream)
    }
}

/// Every per-CPU choice by the built-in rules, for `cpu`, whose widest runnable backend is
/// `widest`: the engine ([`engine_rule`]), the flush instruction the CPU prefers, and the
/// thresholds below.
pub(crate) fn rule(cpu: &Cpu, widest: Backend) -> Tuning {
    let (nt, fill_nt) = default_thresholds(cpu);
    Tuning {
        engine: engine_rule(cpu, widest).0,
        flush: cpu.flush,
        nt,
        fill_nt,
        rep_movsb: default_rep_movsb(cpu),
        fill_rep: default_fill_rep(cpu, widest),
        small: default_small(cpu),
        pages: default_pages(cpu),
        wide_copy: default_wide_copy(cpu, widest),
        entry_copy: default_entry_copy(cpu),
        frame: default_frame(cpu),
    }
}

/// How the C entries (`raw::c_entries`: the preload library's `memcpy` and `memmove`) copy 0 to
/// 64 bytes, by CPU, each rule as wide as its runs (lab/findings/small-calls.md, "Masked copies
/// on Zen 4"):
///
/// - **AMD family 25 with AVX-512 (Zen 4; run: family 25 model 17,
///   lab/machines/amd-epyc-zen4-f25m17.md)**: [`EntryCopy::Masked`]. One masked load and store
///   ran copies of 0-64 B of changing size well ahead of glibc's `memcpy` there, and a copy out
///   of a header just written on the stack at glibc's speed (the masked load does not wait for
///   the earlier stores into its page there, as it does on the Intel model 167).
/// - **Every other CPU**: [`EntryCopy::Plain`]. On the Intel model 167 a masked load waits for
///   earlier stores into its page; the other AVX-512 parts have no run; the rest have no masks.
///   `CACHECOPY_TUNE=entry_copy=masked` tries it on any CPU that runs it.
fn default_entry_copy(cpu: &Cpu) -> EntryCopy {
    if masked_small(cpu) && Model::of(cpu) == Model::Family25Avx512 {
        EntryCopy::Masked
    } else {
        EntryCopy::Plain
    }
}

/// In which order a transmit frame's header lines are fetched, by CPU, each rule as wide as
/// its runs (lab/findings/checksums.md, "Zen 2: where the frame's time goes"):
///
/// - **AMD family 23 model 49 (Zen 2)**: [`FrameBuild::HeaderDown`], measured: with a header
///   of two lines fetched first to last, the frames whose 42-byte header crosses a line (the
///   payload 65 to 105 bytes past one, 66 among them) ran far slower than the others, on the
///   hot ring too; fetched last line first they ran as the others did, which did not move.
/// - **Every other CPU**: [`FrameBuild::Plain`]. No other CPU has a run of the other order.
///   `CACHECOPY_TUNE=frame=header-down` tries it on any CPU.
fn default_frame(cpu: &Cpu) -> FrameBuild {
    if Model::of(cpu) == Model::Zen2Rome {
        FrameBuild::HeaderDown
    } else {
        FrameBuild::Plain
    }
}

/// From how many bytes `Temporal` copies on a 256-bit backend run their loop on AVX-512
/// registers, by CPU, each rule as wide as its runs (lab/findings/performance.md, "Large copies on
/// 512-bit registers"):
///
/// - **AMD family 25 with AVX-512 (Zen 4; run: family 25 model 17,
///   lab/machines/amd-epyc-zen4-f25m17.md)**: 1 MiB, the L2's size there. The engine keeps
///   256-bit registers (`engine::rule`); from about the L2's size the 256-bit loop's copies into
///   destinations not in cache fell behind glibc's 512-bit `memcpy` (one store per line where
///   it makes two), while 512-bit registers matched it there and lost at some shorter sizes.
/// - **Every other CPU**: never. The Intel models measured run AVX-512 for the whole job, Zen 3
///   has no AVX-512, and the others have no run. `CACHECOPY_TUNE=wide_copy=` sets it on any
///   CPU that runs AVX-512.
fn default_wide_copy(cpu: &Cpu, widest: Backend) -> usize {
    if Model::of(cpu) == Model::Family25Avx512 && widest == Backend::Avx512 {
        1 << 20
    } else {
        usize::MAX
    }
}

/// How many 4 KiB pages of the source a streamed copy reads at once, by CPU, each rule as wide
/// as its runs (lab/findings/performance.md, "Reading pages at once"):
///
/// - **Intel family 6 model 167 (run: lab/machines/intel-xeon-f6m167.md)**: 4. Four pages at
///   once led one page in order from 2 MiB to 1 GiB, with the source in memory and cached
///   alike, and turned the largest copies from behind glibc's `memcpy` (which reads four,
///   `large_memcpy_4x`) to level or ahead.
/// - **Every other CPU**: 1 (in order). On AMD Zen 4 (run: family 25 model 17,
///   lab/machines/amd-epyc-zen4-f25m17.md) one page led four at every size; the other CPUs
///   met have no run. `CACHECOPY_TUNE=pages=4` tries four on any CPU.
fn default_pages(cpu: &Cpu) -> usize {
    if Model::of(cpu) == Model::IntelF6M167 {
        4
    } else {
        1
    }
}

/// Whether `cpu`'s record has what the masked small class needs (`arch/x86_64/masked.rs`):
/// AVX-512 F and BW with the OS saving their state. Detection also asks that the build can run
/// it (x86_64 with vector registers, not Miri) and the CPU for BMI2, which the record does not
/// list; where either fails, dispatch publishes the plain classes whatever the rule says.
pub(crate) fn masked_small(cpu: &Cpu) -> bool {
    let f = &cpu.features;
    cpu.arch == "x86_64" && f.avx512f && f.avx512bw
}

/// How fills of 0 to 64 bytes are made at the call site, by CPU, each rule as wide as its runs
/// (lab/findings/small-calls.md, "Sizes that change every call" and "Masked fills on AMD Zen 4"):
///
/// - **Intel family 6 model 167 (run: family 6 model 167, lab/machines/intel-xeon-f6m167.md)**:
///   [`Small::MaskedFills`]. With sizes that change every call the plain classes mispredict
///   their compares and one masked store has none to mispredict: masked fills led the plain
///   classes and matched or led glibc's `memset` (itself one masked store there) on every size
///   mix run. Masked copies led too where the source was not written just before, but a masked
///   load waits for the earlier stores into its page there, so a copy out of a header just
///   built on the stack ran slower than glibc's `memcpy`: copies keep the plain classes, with
///   no test for masks on their path.
/// - **AMD family 25 with AVX-512 (Zen 4; run: family 25 model 17,
///   lab/machines/amd-epyc-zen4-f25m17.md)**: [`Small::MaskedFills`]. The plain classes ran
///   fills of 0-64 B of changing size at half glibc's speed there, the masked store at twice
///   it, and at fixed sizes as fast as the plain classes or faster. Zen 3, the other family-25
///   part, has no AVX-512 and so never gets here.
/// - **AMD family 23 model 49 (Zen 2; run: lab/findings/plan.md, "Zen 2: avx-pairs")**:
///   [`Small::Plain`], measured: the AVX pairs ([`Small::AvxPairs`]) lost to the plain classes
///   on every fill of 33-64 B, fixed and changing sizes.
/// - **Every other CPU**: [`Small::Plain`]. The other AVX-512 CPUs met (Intel model 207) and
///   the parts nobody measured (Zen 5) have no run of the masked class, and no CPU but Zen 2
///   has a run of the AVX pairs. `CACHECOPY_TUNE=small=masked-fills` or `small=avx-pairs` tries
///   a variant on any CPU that runs it.
fn default_small(cpu: &Cpu) -> Small {
    let measured = matches!(Model::of(cpu), Model::IntelF6M167 | Model::Family25Avx512);
    if masked_small(cpu) && measured {
        Small::MaskedFills
    } else {
        Small::Plain
    }
}

/// The NT thresholds `Auto` uses when nothing overrides them: `(copy, fill)`, by CPU family,
/// from the detected caches. lab/findings/performance.md ("The `Auto` threshold") has the runs behind
/// each rule.
///
/// - **Intel with a non-inclusive L3** (server parts since Skylake-SP): copy from the L2 size,
///   fill from twice it. A line a copy evicts from the L2 is written to the L3 as a victim, so
///   temporal copies pay L3 write bandwidth from about the L2 size on, however large the L3.
/// - **Everything else** (AMD, Intel with an inclusive L3, other vendors): a fraction of one
///   last-level cache instance, at least twice the L2. A copy of `len` bytes brings `2 * len`
///   into the caches; from `L3 / 4` that is half the L3, from `L3 / 2` all of it. No single
///   fraction fits the AMD parts measured, whose L3 per CCX is the same size and whose
///   crossovers are a factor of two apart, so the rule follows the core generation, told apart
///   by its L2 size:
///   - L2 below 1 MiB (Zen 3 and earlier): `L3 / 4`;
///   - L2 of 1 MiB and more (Zen 4 and Zen 5): `L3 / 2`.
///
///
///   One CPU of the first kind has a variant of its own:
///   - **AMD family 23 model 49 (Zen 2, Rome; runs: lab/machines/amd-epyc-zen2-f23m49.md)**:
///     copies from `L3 / 2`, fills from the whole L3. Into a hot destination streaming copies
///     lost at 4 MiB (0.60x) and won from 8 MiB in every run; streaming fills lost up to 8 MiB
///     (0.40x) and came level at 16 MiB, where the 4 MiB rule cost hot fills 2.5x.
///
///   Parts with a stacked L3 (Milan-X, Genoa-X) were not measured; there `calibrate()` decides
///   (lab/findings/performance.md, "Calibration"). The cache figures come from CPUID leaf 4 or
///   0x8000001D, never the legacy 0x80000006, which glibc reads and which overstates the L3 on
///   the VMs measured.
/// - An implausible report (an L3 smaller than the L2, or none at all) gets the safe floor
///   instead: 4 MiB without figures, never below 1 MiB.
fn default_thresholds(cpu: &Cpu) -> (usize, usize) {
    const FLOOR: usize = 1 << 20;
    const FALLBACK: usize = 4 << 20;
    let c = &cpu.caches;
    let l3 = c.l3.filter(|&l3| l3 >= c.l2.unwrap_or(0));
    if let (true, Some(false), Some(l2)) = (Model::of(cpu).intel(), c.l3_inclusive, c.l2) {
        return (l2.max(FLOOR), (2 * l2).max(FLOOR));
    }
    if let (Model::Zen2Rome, Some(l3)) = (Model::of(cpu), l3) {
        let copy = (l3 / 2).max(2 * c.l2.unwrap_or(0)).max(FLOOR);
        return (copy, l3.max(copy));
    }
    let copy = match (c.l2, l3) {
        (Some(l2), Some(l3)) if l2 >= 1 << 20 => (l3 / 2).max(2 * l2),
        (l2, Some(l3)) => (l3 / 4).max(2 * l2.unwrap_or(0)),
        (Some(l2), None) => 2 * l2,
        _ => FALLBACK,
    }
    .max(FLOOR);
    (copy, copy)
}

/// The copy threshold the crate derives from `cpu` when nothing overrides it (see the rules
/// on `default_thresholds` in `src/dispatch/rules.rs`): the L2 size on Intel parts with a non-inclusive
/// L3; else a quarter of one last-level cache instance (half of it with an L2 of 1 MiB or more,
/// as on AMD Zen 4), at least twice the L2; never below 1 MiB, 4 MiB without cache figures.
///
/// ```
/// let cpu = cachecopy::tune::cpu();
/// assert!(cachecopy::tune::default_nt_threshold(&cpu) >= 1 << 20);
/// ```
pub fn default_nt_threshold(cpu: &Cpu) -> usize {
    default_thresholds(cpu).0
}

/// The size from which `Temporal` fills use `rep stosb` when nothing overrides it.
///
/// - Intel family 6 models 167 and 207 (runs on both, [`intel_strings_measured`]): 8 KiB.
/// - Other Intel with ERMS: 2 KiB, glibc's `x86_rep_stosb_threshold`. A string store writes
///   whole lines without reading them for ownership, which the vector loop cannot.
/// - AMD and other x86_64 CPUs with ERMS: twice the copy threshold: below it the vector loop is
///   ahead, the string store's start-up costing most at a few KiB.
/// - Builds with the word backend only (soft-float targets, `cachecopy_integer_only`: the widest
///   backend is `Generic`), with ERMS: from [`WORD_FILL_REP`] bytes, since the loop there stores
///   8 bytes at a time.
/// - No ERMS, other architectures: never (`usize::MAX`).
///
/// lab/findings/performance.md ("Fill and zero") and lab/findings/bare-metal.md have the runs. Every rule
/// reads the CPU's record (its `arch` among them), not the target the crate was built for, so
/// the zoo's tests run every recorded CPU's rules on any host.
fn default_fill_rep(cpu: &Cpu, widest: Backend) -> usize {
    if !(cpu.arch == "x86_64" && cpu.features.erms) {
        usize::MAX
    } else if widest == Backend::Generic {
        WORD_FILL_REP
    } else if Model::of(cpu).intel() {
        if intel_strings_measured(cpu) {
            8 << 10
        } else {
            2 << 10
        }
    } else {
        default_thresholds(cpu).1.saturating_mul(2)
    }
}

/// The size from which `Temporal` copies use `rep movsb` when nothing overrides it.
///
/// - Intel family 6 models 167 and 207 (runs on both, [`intel_strings_measured`]): 8 KiB.
/// - Other Intel with ERMS: 2 KiB, about glibc's: fast-string stores skip the
///   read-for-ownership of lines they overwrite whole, which the vector loop cannot.
/// - AMD: never. There the vector loop beats glibc, and `rep movsb` slows down for some source
///   and destination alignments (glibc BZ 30994; glibc 2.40 stopped using it on Zen 3 and
///   later).
/// - No ERMS, unknown vendors, other architectures: never (`usize::MAX`).
///
/// lab/findings/performance.md ("Fill and zero") and lab/machines/README.md have the runs.
fn default_rep_movsb(cpu: &Cpu) -> usize {
    if cpu.arch == "x86_64" && cpu.features.erms && Model::of(cpu).intel() {
        if intel_strings_measured(cpu) {
            8 << 10
        } else {
            2 << 10
        }
    } else {
        usize::MAX
    }
}

/// The Intel models whose runs put the string instructions (`rep movsb`, `rep stosb`) against
/// the vector loop at 1-32 KiB, hot and cold: on both the string instruction lost at 2 KiB
/// (model 207's calibrations, cold; model 167, hot and cold), and on model 167 it lost hot up
/// to 4 KiB and came level at 8 KiB, where cold it gained a little (lab/findings/performance.md,
/// "String instructions on the Intel models met"). Other Intel CPUs keep glibc's 2 KiB: no
/// run there.
fn intel_strings_measured(cpu: &Cpu) -> bool {
    matches!(Model::of(cpu), Model::IntelF6M167 | Model::IntelF6M207)
}

/// From this many bytes a word-backend `Temporal` fill uses `rep stosb` (with ERMS): where the
/// string store overtakes a loop that stores 8 bytes at a time (lab/findings/bare-metal.md has the run).
const WORD_FILL_REP: usize = 1024;

/// Why [`engine_rule`] chose what it chose: one line per CPU family, with the run that justifies it.
pub(crate) type Reason = &'static str;

/// The built-in engine for `cpu`, whose widest runnable backend is `widest`, and the reason.
/// Each AVX-512 rule covers the CPUs its runs measured, by CPUID family and model, and no more;
/// lab/findings/engine.md ("The rules and the runs behind them") has the runs:
///
/// - **AMD family 25 with AVX-512 (Zen 4)**: AVX2 for both jobs, overlapping edges. Transmit
///   frames ran slower on the AVX-512 backend than on AVX2 there, and 256-bit registers are
///   Zen 4's native width (512-bit operations are split in two), so AVX2 gives up nothing.
/// - **Intel family 6 model 207**: AVX-512 for both jobs, overlapping edges: a masked store into
///   a line not in cache cost more than the overlapping unmasked pair, and the 512-bit bodies
///   were no slower than 256-bit ones.
/// - **Any other CPU with AVX-512**: a stated default that no run here backs, the widest backend
///   with overlapping edges (every AVX-512 CPU measured lost with masked ones); the reason says
///   so, and `calibrate()`, whose engine check compares every register set on frames, decides.
/// - **Everything else**: the widest backend, overlapping edges (no other register set has
///   byte masks).
pub(crate) fn engine_rule(cpu: &Cpu, widest: Backend) -> (Engine, Reason) {
    let overlap = |b| Engine::new(b, b, Edges::Overlap);
    if widest != Backend::Avx512 {
        return (
            overlap(widest),
            "the widest backend, overlapping edges (lab/findings/engine.md)",
        );
    }
    match Model::of(cpu) {
        Model::Family25Avx512 => (
            overlap(Backend::Avx2),
            "AMD family 25 with AVX-512 (Zen 4; run: family 25 model 17): 256-bit bodies, \
             overlapping edges (lab/findings/engine.md)",
        ),
        Model::IntelF6M207 => (
            overlap(Backend::Avx512),
            "Intel family 6 model 207 (run: family 6 model 207): 512-bit bodies, overlapping \
             edges (lab/findings/engine.md)",
        ),
        _ => (
            overlap(Backend::Avx512),
            "AVX-512 on a CPU no run here covers: 512-bit bodies, overlapping edges by default; \
             no run here backs it, calibrate() decides (lab/findings/engine.md)",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::Text;

    #[test]
    fn each_avx512_rule_covers_only_the_cpus_its_runs_measured() {
        let host = crate::arch::detect();
        // An x86_64 CPU with AVX-512 F and BW (what the rules test for), whatever the host has.
        let cpu = |vendor: &[u8], family_model| Cpu {
            arch: "x86_64",
            vendor: Text::new(vendor),
            family_model,
            features: crate::cpu::Features {
                avx512f: true,
                avx512bw: true,
                ..host.features
            },
            ..host
        };
        let avx512 = Engine::new(Backend::Avx512, Backend::Avx512, Edges::Overlap);
        let avx2 = Engine::new(Backend::Avx2, Backend::Avx2, Edges::Overlap);
        for (vendor, fm, want, backed) in [
            (&b"AuthenticAMD"[..], Some((25, 17)), avx2, true),
            (b"AuthenticAMD", Some((25, 97)), avx2, true),
            (b"AuthenticAMD", Some((26, 2)), avx512, false),
            (b"GenuineIntel", Some((6, 207)), avx512, true),
            (b"GenuineIntel", Some((6, 143)), avx512, false),
            (b"HygonGenuine", Some((24, 0)), avx512, false),
        ] {
            let (e, why) = engine_rule(&cpu(vendor, fm), Backend::Avx512);
            assert_eq!(e, want, "{fm:?}: {why}");
            assert_eq!(
                !why.contains("no run here backs it"),
                backed,
                "{fm:?}: {why}"
            );
        }
        // Without AVX-512 the family does not matter: the widest backend.
        let (e, _) = engine_rule(&cpu(b"AuthenticAMD", Some((25, 1))), Backend::Avx2);
        assert_eq!(e, avx2);
    }
}
