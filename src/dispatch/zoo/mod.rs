//! The CPU zoo: every CPU configuration the project has met, and the parts a rule names that
//! nobody here measured, as data ([`records::ZOO`]), with tests that run every per-CPU rule for
//! each record on any host and check each documented choice.
//!
//! An x86 record is CPUID leaves, replayed through the real decoding (`super::cpuid`, the one
//! x86_64 detection runs) by a [`CpuIdReader`] over the leaves, with the OS's XCR0 given by the
//! record: a raw dump where one was taken (`zoo/*.cpuid`: its non-zero leaves; the dump itself,
//! verbatim, in `lab/machines/`), else leaves rebuilt from the facts a reference run printed
//! (its section 1) or from a part's public identity ([`encode`]). An aarch64 record holds the
//! facts the aarch64 rules read (features, caches; `arch/aarch64/cpu.rs` reads them from
//! system registers and sysfs, which no other host has).
//!
//! A rule tuned on one CPU that changes another record's choice fails
//! `every_record_gets_its_documented_choices` until that record's expectation is changed with
//! the run that justifies it. Adding a CPU is one record and its expectations
//! (lab/machines/README.md, "Adding a machine").

mod records;

use std::rc::Rc;
use std::string::{String, ToString};
use std::vec::Vec;
use std::{format, vec};

use raw_cpuid::{CpuIdReader, CpuIdResult};

use crate::cpu::cpuid::{self, Os};
use crate::cpu::{Caches, Cpu, Features, Text};
use crate::dispatch::engine::Backend;
use records::ZOO;

/// One CPU of the zoo.
pub(super) struct Record {
    /// Short name, as its file in `lab/machines/` (`intel-xeon-f6m167`).
    pub name: &'static str,
    /// Where its data came from.
    pub origin: Origin,
    /// What detection finds on it.
    pub facts: Facts,
    /// Where a run printed those facts (section 1 of a report): each quote must be in its file.
    pub seen: &'static [Quote],
    /// What the rules decide for it, field by field of the tuning line, each with its evidence.
    pub expect: &'static [Expect],
}

/// Where a record's data came from.
pub(super) enum Origin {
    /// A raw CPUID dump: its non-zero leaves (`leaves`, the text of `zoo/*.cpuid`) and the dump
    /// as taken (`dump`, in the repository).
    Raw {
        leaves: &'static str,
        dump: &'static str,
    },
    /// Leaves rebuilt from the facts a reference run printed (`Record::seen`).
    Reconstructed,
    /// A part nobody here measured, from its public identity (`sources`: what says so).
    Public { sources: &'static str },
}

/// What the architecture's detection reads beyond the common facts.
pub(super) enum Arch {
    /// x86_64: CPUID family, model and stepping as `lscpu` prints them (`None`: not recorded),
    /// and XCR0 (the register state the OS saves).
    X86 {
        family: u8,
        model: u8,
        stepping: Option<u8>,
        xcr0: u64,
    },
    /// aarch64: `MIDR_EL1` (implementer and part: the vendor and brand detection prints).
    Arm { midr: u64 },
}

/// What detection finds on a record's CPU, in the report's terms (section 1). The records build
/// it through `records.rs`'s constructors (`x86` or `arm`, then `Facts::caches`).
pub(super) struct Facts {
    pub arch: Arch,
    /// The vendor string (`GenuineIntel`, `AuthenticAMD`; arm64: the implementer's name).
    pub vendor: &'static str,
    /// The brand string.
    pub brand: &'static str,
    /// The features, as section 1's `features` line lists them.
    pub features: &'static str,
    /// The caches, as detection reports them (`l3_inclusive`: the "inclusive" bit of the L3's
    /// CPUID cache leaf, 4 or 0x8000001D; `source`: where detection took the figures).
    pub caches: Caches,
    /// The L3 the legacy AMD leaf 0x80000006 reports (what glibc reads), `None` where it reports
    /// none (Intel) or was not recorded. No rule reads it.
    pub legacy_l3: Option<usize>,
}

/// Text that must be found in a file of the repository (or of `../shared`, beside it in CI),
/// blanks and line breaks compared as one space.
#[derive(Clone, Copy)]
pub(super) struct Quote {
    pub file: &'static str,
    pub text: &'static str,
}

/// Fields of the tuning line (`nt=16M,fill_nt=16M`) and why the rules decide them so.
pub(super) struct Expect {
    pub line: &'static str,
    pub why: Why,
}

/// The evidence behind an expectation.
pub(super) enum Why {
    /// A run on this CPU measured the choice.
    Measured(&'static [Quote]),
    /// No run on this CPU measured it: the rule's stated default, quoted where it is stated.
    Stated(&'static [Quote]),
    /// A run on this CPU disagrees with the rule's choice: kept as the rule decides it today,
    /// with the run, until the rule or this record changes.
    Disputed(&'static [Quote]),
}

impl Why {
    fn quotes(&self) -> &'static [Quote] {
        match self {
            Why::Measured(q) | Why::Stated(q) | Why::Disputed(q) => q,
        }
    }
}

// ---------------------------------------------------------------- features by name

/// A feature's flag in [`Features`].
type Flag = fn(&mut Features) -> &mut bool;

/// Every feature, by the name section 1 prints, in its order.
const FEATURES: [(&str, Flag); 11] = [
    ("sse2", |f| &mut f.sse2),
    ("avx2", |f| &mut f.avx2),
    ("avx512f", |f| &mut f.avx512f),
    ("avx512bw", |f| &mut f.avx512bw),
    ("erms", |f| &mut f.erms),
    ("fsrm", |f| &mut f.fsrm),
    ("clflush", |f| &mut f.clflush),
    ("clflushopt", |f| &mut f.clflushopt),
    ("clwb", |f| &mut f.clwb),
    ("neon", |f| &mut f.neon),
    ("dpb", |f| &mut f.dpb),
];

/// The features named in `names` (blank-separated); panics on an unknown name.
fn features(names: &str) -> Features {
    let mut f = Features::default();
    for name in names.split_whitespace() {
        let (_, field) = FEATURES
            .iter()
            .find(|(n, _)| *n == name)
            .unwrap_or_else(|| panic!("unknown feature {name:?}"));
        *field(&mut f) = true;
    }
    f
}

/// `f`'s features by name, as section 1 lists them.
fn names(f: Features) -> String {
    let mut f = f;
    FEATURES
        .iter()
        .filter(|(_, field)| *field(&mut f))
        .map(|(n, _)| *n)
        .collect::<Vec<_>>()
        .join(" ")
}

// ---------------------------------------------------------------- CPUID leaves

/// One CPUID leaf and sub-leaf and what it returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Leaf {
    leaf: u32,
    sub: u32,
    regs: [u32; 4],
}

/// Leaves in `cpuid-dump.c`'s format (`leaf 0x00000007 sub 0: eax=0x... ebx=... ecx=... edx=...`);
/// other lines (comments, `/proc/cpuinfo`) are skipped.
fn parse(text: &str) -> Vec<Leaf> {
    let hex = |s: &str| u32::from_str_radix(s.trim_start_matches("0x"), 16).unwrap();
    text.lines()
        .filter(|l| l.starts_with("leaf "))
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            assert_eq!((w.len(), w[2]), (8, "sub"), "{l}");
            let reg = |i: usize, name: &str| hex(w[i].strip_prefix(name).expect(l));
            Leaf {
                leaf: hex(w[1]),
                sub: w[3].trim_end_matches(':').parse().expect(l),
                regs: [
                    reg(4, "eax="),
                    reg(5, "ebx="),
                    reg(6, "ecx="),
                    reg(7, "edx="),
                ],
            }
        })
        .collect()
}

/// A CPUID source over recorded leaves: a leaf or sub-leaf not recorded reads as zeros (as a
/// dump's zero leaves, which the records leave out).
#[derive(Clone)]
struct Dump(Rc<Vec<Leaf>>);

impl CpuIdReader for Dump {
    fn cpuid2(&self, eax: u32, ecx: u32) -> CpuIdResult {
        let r = self
            .0
            .iter()
            .find(|l| l.leaf == eax && l.sub == ecx)
            .map_or([0; 4], |l| l.regs);
        CpuIdResult {
            eax: r[0],
            ebx: r[1],
            ecx: r[2],
            edx: r[3],
        }
    }
}

/// The leaves an x86 CPU with `facts` reports, for a record without a dump: vendor, identity,
/// brand, the feature bits detection reads (leaves 1 and 7), the deterministic cache leaf of its
/// vendor (4 or 0x8000001D: 16 ways and the line size, as many sets as the size needs) and the
/// legacy 0x80000006. `encodes_like_the_raw_dumps` checks that this reproduces what the raw
/// dumps decode to.
fn encode(facts: &Facts) -> Vec<Leaf> {
    let Arch::X86 {
        family,
        model,
        stepping,
        xcr0,
    } = facts.arch
    else {
        panic!("only x86 records have CPUID leaves");
    };
    let amd = facts.vendor == "AuthenticAMD";
    let f = features(facts.features);
    let c = &facts.caches;
    let bit = |on: bool, n: u32| u32::from(on) << n;
    let word = |b: &[u8]| u32::from_le_bytes(b.try_into().unwrap());
    let v = facts.vendor.as_bytes();
    assert_eq!(v.len(), 12, "a vendor string has 12 bytes");
    let mut out = vec![];
    let mut put = |leaf, sub, regs| out.push(Leaf { leaf, sub, regs });
    put(0, 0, [0xd, word(&v[0..4]), word(&v[8..12]), word(&v[4..8])]);
    let (base, ext) = if family < 15 {
        (family, 0)
    } else {
        (15, family - 15)
    };
    let eax1 = u32::from(stepping.unwrap_or(0))
        | u32::from(model & 0xf) << 4
        | u32::from(base) << 8
        | u32::from(model >> 4) << 16
        | u32::from(ext) << 20;
    let ecx1 = 1 | bit(xcr0 != 0, 27) | bit(f.avx2 || f.avx512f, 28);
    let edx1 = bit(f.clflush, 19) | 1 << 25 | 1 << 26;
    put(1, 0, [eax1, (c.line as u32 / 8) << 8, ecx1, edx1]);
    let ebx7 = bit(f.avx2, 5)
        | bit(f.erms, 9)
        | bit(f.avx512f, 16)
        | bit(f.clflushopt, 23)
        | bit(f.clwb, 24)
        | bit(f.avx512bw, 30);
    put(7, 0, [0, ebx7, 0, bit(f.fsrm, 4)]);
    let cache_leaf = if amd { 0x8000_001d } else { 4 };
    let caches = [
        (1, 1, c.l1d, 1, false),
        (2, 3, c.l2, 1, false),
        (
            3,
            3,
            c.l3,
            c.l3_shared_by.unwrap_or(1),
            c.l3_inclusive == Some(true),
        ),
    ];
    let mut sub = 0;
    for (level, kind, size, shared, inclusive) in caches {
        let Some(size) = size else { continue };
        let (ways, line) = (16, c.line);
        assert_eq!(size % (ways * line), 0, "{}: L{level} size", facts.brand);
        let sets = (size / (ways * line)) as u32;
        let eax = kind | level << 5 | 1 << 8 | (shared as u32 - 1) << 14;
        let ebx = (line as u32 - 1) | (ways as u32 - 1) << 22;
        put(cache_leaf, sub, [eax, ebx, sets - 1, bit(inclusive, 1)]);
        sub += 1;
    }
    let ext_max = if amd { 0x8000_001d } else { 0x8000_0008 };
    put(0x8000_0000, 0, [ext_max, 0, 0, 0]);
    // AMD: TopologyExtensions, which announces leaf 0x8000001D.
    put(0x8000_0001, 0, [0, 0, bit(amd, 22), 0]);
    let mut brand = [0u8; 48];
    brand[..facts.brand.len()].copy_from_slice(facts.brand.as_bytes());
    for (i, chunk) in brand.chunks(16).enumerate() {
        let r = [0, 4, 8, 12].map(|o| word(&chunk[o..o + 4]));
        put(0x8000_0002 + i as u32, 0, r);
    }
    // 0x80000006: ECX the L2 in KiB (8-way, 64 B lines); EDX (AMD) the L3 in 512 KiB units.
    let l2_kib = c.l2.map_or(0, |l2| l2 >> 10) as u32;
    let l3_units = facts.legacy_l3.map_or(0, |l3| l3 / (512 << 10)) as u32;
    let edx6 = if l3_units > 0 {
        l3_units << 18 | 0x9140
    } else {
        0
    };
    put(0x8000_0006, 0, [0, 0, l2_kib << 16 | 0x6040, edx6]);
    out
}

/// The leaves of an x86 record: its dump's, or rebuilt from its facts.
fn leaves(r: &Record) -> Vec<Leaf> {
    match r.origin {
        Origin::Raw { leaves, .. } => parse(leaves),
        Origin::Reconstructed | Origin::Public { .. } => encode(&r.facts),
    }
}

/// What detection finds on the record's CPU: x86 through the CPUID decoding, arm64 from the
/// facts (as `arch/aarch64/cpu.rs` assembles them).
fn detect(r: &Record) -> Cpu {
    match r.facts.arch {
        Arch::X86 { xcr0, .. } => cpuid::decode(Dump(Rc::new(leaves(r))), Os::Xcr0(xcr0)),
        Arch::Arm { .. } => {
            let f = &r.facts;
            let features = features(f.features);
            Cpu {
                arch: "aarch64",
                features,
                caches: f.caches,
                flush: features.preferred_flush("aarch64"),
                vendor: Text::new(f.vendor.as_bytes()),
                brand: Text::new(f.brand.as_bytes()),
                family_model: None,
            }
        }
    }
}

/// The widest backend a build with every vector backend of the CPU's architecture runs there
/// (what dispatch computes from the backends it compiled; the zoo's records do not depend on
/// which ones this test build has).
fn widest(cpu: &Cpu) -> Backend {
    let order: &[Backend] = match cpu.arch {
        "x86_64" => &[
            Backend::Generic,
            Backend::Sse2,
            Backend::Avx2,
            Backend::Avx512,
        ],
        "aarch64" => &[Backend::Generic, Backend::Neon],
        _ => &[Backend::Generic],
    };
    order
        .iter()
        .copied()
        .take_while(|b| b.runs_on(&cpu.features))
        .last()
        .unwrap_or(Backend::Generic)
}

/// The records a test runs: all of them, or under Miri one raw dump. The zoo is safe code over
/// plain data, in which Miri finds nothing the native run does not, at seconds of
/// interpretation per record and test; one record keeps its paths running there, and the tests
/// that repeat them for every record are left to the native run.
fn records() -> impl Iterator<Item = &'static Record> {
    ZOO.iter()
        .filter(|r| matches!(r.origin, Origin::Raw { .. }) || !cfg!(miri))
        .take(if cfg!(miri) { 1 } else { ZOO.len() })
}

/// `name=value` pairs of a tuning line.
fn fields(line: &str) -> Vec<(String, String)> {
    line.split(',')
        .filter(|f| !f.trim().is_empty())
        .map(|f| {
            let (n, v) = f.split_once('=').unwrap_or_else(|| panic!("{f:?}: no ="));
            (n.trim().to_string(), v.trim().to_string())
        })
        .collect()
}

/// The repository's root, when the tests run in a checkout (not from a published crate, not
/// under Miri, whose isolation reads no file).
fn repo() -> Option<std::path::PathBuf> {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    (!cfg!(miri) && root.join("lab/machines").is_dir()).then_some(root)
}

#[test]
fn names_are_unique_and_each_origin_is_filled() {
    for (i, r) in ZOO.iter().enumerate() {
        assert!(
            ZOO[..i].iter().all(|o| o.name != r.name),
            "{}: twice",
            r.name
        );
        match (&r.origin, &r.facts.arch) {
            (Origin::Raw { .. } | Origin::Reconstructed, _) => {
                assert!(!r.seen.is_empty(), "{}: no run printed its facts", r.name);
                // The features as a run printed them, in a quote of that run.
                assert!(
                    r.seen
                        .iter()
                        .any(|q| q.text.ends_with(r.facts.features)
                            && q.text.starts_with("features")),
                    "{}: no `features` line of a run lists {:?}",
                    r.name,
                    r.facts.features
                );
            }
            (Origin::Public { sources }, _) => assert!(!sources.is_empty(), "{}", r.name),
        }
        if let Origin::Raw { .. } = r.origin {
            assert!(matches!(r.facts.arch, Arch::X86 { .. }), "{}", r.name);
        }
    }
}

/// Every record decodes to the facts it states: the raw dumps through the same decoding as the
/// CPU at hand, the rebuilt leaves likewise (a check of the encoder, with
/// `encodes_like_the_raw_dumps`).
#[test]
fn every_record_decodes_to_its_facts() {
    for r in records() {
        let cpu = detect(r);
        let f = &r.facts;
        let n = r.name;
        assert_eq!(cpu.vendor(), f.vendor, "{n}");
        assert_eq!(cpu.brand(), f.brand, "{n}");
        assert_eq!(names(cpu.features), f.features, "{n}: features");
        assert_eq!(cpu.caches, f.caches, "{n}: caches");
        assert_eq!(cpu.flush, cpu.flush_ops().next().unwrap(), "{n}: flush");
        if let Arch::X86 {
            family,
            model,
            stepping,
            ..
        } = f.arch
        {
            assert_eq!(cpu.family_model, Some((family, model)), "{n}");
            let id = raw_cpuid::CpuId::with_cpuid_reader(Dump(Rc::new(leaves(r))));
            let basic = id.get_feature_info().unwrap();
            if let Some(s) = stepping {
                assert_eq!(basic.stepping_id(), s, "{n}: stepping");
            }
            let legacy = id
                .get_l2_l3_cache_and_tlb_info()
                .map(|i| usize::from(i.l3cache_size()) * (512 << 10))
                .filter(|&l3| l3 > 0);
            assert_eq!(legacy, f.legacy_l3, "{n}: legacy 0x80000006 L3");
        }
        if let Arch::Arm { midr } = f.arch {
            // The brand arm64 detection writes: the part and its revision, from MIDR_EL1.
            let tail = format!(
                " 0x{:03x} r{}p{}",
                (midr >> 4) & 0xfff,
                (midr >> 20) & 0xf,
                midr & 0xf
            );
            assert!(
                f.brand.ends_with(&tail),
                "{n}: MIDR {midr:#x}, brand {:?}",
                f.brand
            );
        }
    }
}

/// The encoder of the rebuilt records against the raw dumps: a dump's facts, rebuilt as leaves,
/// decode to what the dump decodes to.
#[test]
#[cfg_attr(
    miri,
    ignore = "the decoding and the rules of every record again: records() says why"
)]
fn encodes_like_the_raw_dumps() {
    let mut raw = 0;
    for r in records().filter(|r| matches!(r.origin, Origin::Raw { .. })) {
        let Arch::X86 { xcr0, .. } = r.facts.arch else {
            unreachable!()
        };
        let rebuilt = cpuid::decode(Dump(Rc::new(encode(&r.facts))), Os::Xcr0(xcr0));
        assert_eq!(rebuilt, detect(r), "{}", r.name);
        raw += 1;
    }
    assert!(raw >= 2, "the zoo lost its raw dumps");
}

/// The rules for every record, field by field against its expectations; a field without one
/// (a new tunable) fails too. The engine's reason says "no run here backs it" only where the
/// record's engine expectation says so.
#[test]
fn every_record_gets_its_documented_choices() {
    let mut wrong = vec![];
    for r in records() {
        let cpu = detect(r);
        let widest = widest(&cpu);
        let tuning = crate::dispatch::rules::rule(&cpu, widest);
        let (_, reason) = crate::dispatch::rules::engine_rule(&cpu, widest);
        let got = fields(&tuning.to_string());
        let mut want: Vec<(String, String, &Expect)> = vec![];
        for e in r.expect {
            for (n, v) in fields(e.line) {
                assert!(
                    want.iter().all(|(m, ..)| *m != n),
                    "{}: two expectations for {n}",
                    r.name
                );
                want.push((n, v, e));
            }
        }
        for (n, v) in &got {
            match want.iter().find(|(m, ..)| m == n) {
                None => wrong.push(format!(
                    "{}: the rules decide {n}={v}, and the record has no expectation for {n}",
                    r.name
                )),
                Some((_, w, e)) if w != v => wrong.push(format!(
                    "{}: the rules decide {n}={v}, the record expects {n}={w} ({}: {})",
                    r.name,
                    match e.why {
                        Why::Measured(_) => "measured",
                        Why::Stated(_) => "the stated default",
                        Why::Disputed(_) => "disputed",
                    },
                    e.why.quotes().first().map_or("", |q| q.file)
                )),
                Some(_) => {}
            }
        }
        for (n, ..) in &want {
            assert!(
                got.iter().any(|(m, _)| m == n),
                "{}: an expectation for {n}, which the tuning line does not have",
                r.name
            );
        }
        let (_, _, engine) = want
            .iter()
            .find(|(n, ..)| n == "temporal")
            .expect("an engine expectation");
        assert!(
            !(reason.contains("no run here backs it") && matches!(engine.why, Why::Measured(_))),
            "{}: the rule says no run backs its engine ({reason}), the record says measured",
            r.name
        );
    }
    assert!(
        wrong.is_empty(),
        "a rule changed the choice of recorded CPUs: change the rule, or each record's \
         expectation (src/dispatch/zoo/records.rs) with the run that justifies it:\n{}",
        wrong.join("\n")
    );
}

/// The legacy leaf 0x80000006 (the 256-320 MiB "L3" these VMs report, which glibc reads) never
/// changes a choice: every x86 record decides the same with it rewritten.
#[test]
#[cfg_attr(
    miri,
    ignore = "the decoding and the rules of every record again: records() says why"
)]
fn the_rules_never_read_the_legacy_leaf() {
    for r in records() {
        let Arch::X86 { xcr0, .. } = r.facts.arch else {
            continue;
        };
        let mut l = leaves(r);
        l.retain(|x| x.leaf != 0x8000_0006);
        l.push(Leaf {
            leaf: 0x8000_0006,
            sub: 0,
            regs: [0, 0, 0x0400_6140, 4096 << 18 | 0x9140],
        });
        let cpu = detect(r);
        let other = cpuid::decode(Dump(Rc::new(l)), Os::Xcr0(xcr0));
        assert_eq!(other, cpu, "{}", r.name);
        assert_eq!(
            crate::dispatch::rules::rule(&other, widest(&other)),
            crate::dispatch::rules::rule(&cpu, widest(&cpu)),
            "{}",
            r.name
        );
    }
}

/// A build with the word backend alone (soft-float targets, `cachecopy_integer_only`): the
/// widest backend is the word one, and `rep stosb` fills start at 1 KiB where the CPU has ERMS,
/// on every record (tests/bare_metal.rs asserts it of the build itself).
#[test]
#[cfg_attr(
    miri,
    ignore = "the decoding and the rules of every record again: records() says why"
)]
fn word_builds_decide_by_the_word_backend() {
    for r in records() {
        let cpu = detect(r);
        let t = crate::dispatch::rules::rule(&cpu, Backend::Generic);
        assert_eq!(
            t.engine,
            crate::dispatch::engine::Engine::uniform(Backend::Generic),
            "{}",
            r.name
        );
        let want = if cpu.arch == "x86_64" && cpu.features.erms {
            1024
        } else {
            usize::MAX
        };
        assert_eq!(t.fill_rep, want, "{}", r.name);
    }
}

/// Every quote is where it says (in a checkout; a quote from `../shared` where that directory
/// is beside it, as in CI), and every raw record's leaves are its dump's non-zero leaves.
#[test]
fn evidence_is_where_it_says() {
    let Some(root) = repo() else {
        std::println!("no checkout here (a published crate, or Miri): the quotes are not checked");
        return;
    };
    let squash = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut checked = 0;
    for r in records() {
        let quotes = r
            .seen
            .iter()
            .chain(r.expect.iter().flat_map(|e| e.why.quotes()));
        for q in quotes {
            let path = root.join(q.file);
            let text = match std::fs::read_to_string(&path) {
                Ok(t) => t,
                Err(_) if q.file.starts_with("../shared/") => continue,
                Err(e) => panic!("{}: {}: {e}", r.name, q.file),
            };
            assert!(
                squash(&text).contains(&squash(q.text)),
                "{}: {} does not say {:?}",
                r.name,
                q.file,
                q.text
            );
            checked += 1;
        }
        if let Origin::Raw { leaves, dump } = r.origin {
            let dump = std::fs::read_to_string(root.join(dump))
                .unwrap_or_else(|e| panic!("{}: {dump}: {e}", r.name));
            let nonzero: Vec<Leaf> = parse(&dump)
                .into_iter()
                .filter(|l| l.regs != [0; 4])
                .collect();
            assert_eq!(parse(leaves), nonzero, "{}: leaves and dump differ", r.name);
        }
    }
    assert!(checked > 0);
}

/// The CPU at hand through the decoding the records take (XCR0 read here) against detection
/// (std_detect): the records' path and the native one agree.
#[cfg(all(target_arch = "x86_64", not(miri)))]
#[test]
fn the_host_decodes_alike_both_ways() {
    let via_xcr0 = cpuid::decode(raw_cpuid::CpuIdReaderNative, Os::Xcr0(crate::arch::xcr0()));
    assert_eq!(via_xcr0, crate::arch::detect());
}
