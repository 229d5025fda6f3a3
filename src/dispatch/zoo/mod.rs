//! The CPU zoo: every CPU configuration the project has met, and the parts a rule names that
//! nobody here measured, as data: one record per CPU in `lab/machines/zoo/<name>.record` (and
//! its CPUID leaves in `<name>.cpuid` where a raw dump was taken), with tests that run every
//! per-CPU rule for each record on any host and check the plan it chooses, field by field,
//! against the record's.
//!
//! A record says what detection finds on its CPU (an x86 record's CPUID leaves are replayed
//! through the real decoding, `super::cpuid`, the one x86_64 detection runs, by a [`CpuIdReader`]
//! over the leaves: the raw dump's where one was taken, else leaves rebuilt from the facts a
//! run printed, or from a part's public identity, [`encode`]; an aarch64 record holds the facts
//! the aarch64 rules read), the plan its rules must choose (`plan`, the tuning line), and for
//! every field of that line the evidence behind the choice (`evidence FIELDS KIND COMMIT PATH
//! NOTE`): a run on this CPU (`measured`), the place a default no run covers is stated
//! (`stated`), or a run on this CPU that disagrees with the rule (`disputed`). The tests read the
//! data, never prose: a path must exist, a commit must be a hash (`.ci/stale-paths` checks that
//! the repository has it).
//!
//! A rule tuned on one CPU that changes another record's choice fails
//! `every_record_gets_its_plan` until that record's plan is changed with the run that justifies
//! it; a choice without evidence fails `every_choice_has_its_evidence`. Adding a CPU is one
//! record file and one line of [`FILES`] (lab/machines/README.md, "Adding a machine").

use std::rc::Rc;
use std::string::{String, ToString};
use std::vec::Vec;
use std::{format, vec};

use raw_cpuid::{CpuIdReader, CpuIdResult};

use crate::cpu::cpuid::{self, Os};
use crate::cpu::{Caches, Cpu, Features, Text};
use crate::dispatch::engine::Backend;

/// Every record, by name, and its text (`include_str!`, so the tests run the same with and
/// without a checkout, under Miri too); and the leaves of those with a raw dump.
macro_rules! zoo {
    (records: [$($name:literal),* $(,)?], raw: [$($raw:literal),* $(,)?] $(,)?) => {
        /// Every record's name and text.
        static FILES: &[(&str, &str)] = &[$(
            ($name, include_str!(concat!("../../../lab/machines/zoo/", $name, ".record"))),
        )*];
        /// The non-zero CPUID leaves of the records with a raw dump, by name.
        static RAW: &[(&str, &str)] = &[$(
            ($raw, include_str!(concat!("../../../lab/machines/zoo/", $raw, ".cpuid"))),
        )*];
    };
}

zoo! {
    records: [
        "amd-epyc-zen2-f23m49",
        "amd-epyc-zen3-f25m1",
        "amd-epyc-zen4-f25m17-avx512",
        "amd-epyc-zen4-f25m17-noavx512",
        "intel-xeon-f6m207",
        "intel-xeon-f6m167",
        "amd-epyc-zen5-f26m2",
        "amd-epyc-milan-x-f25m1",
        "amd-epyc-genoa-x-f25m17",
        "intel-xeon-granite-rapids-f6m173",
        "intel-xeon-sapphire-rapids-f6m143",
        "arm-neoverse-n1",
    ],
    raw: [
        "amd-epyc-zen2-f23m49",
        "amd-epyc-zen3-f25m1",
        "amd-epyc-zen4-f25m17-avx512",
        "intel-xeon-f6m167",
    ],
}

/// One CPU of the zoo, read from its record file.
pub(super) struct Record {
    /// Short name, as its file (`intel-xeon-f6m167`).
    pub name: &'static str,
    /// Where its data came from.
    pub origin: Origin,
    /// The machine records of its runs (`seen`), which must exist.
    pub seen: Vec<&'static str>,
    /// The JSON of the last report run on it (`last`), for `cachecopy compare`.
    pub last: Option<&'static str>,
    /// What detection finds on it.
    pub facts: Facts,
    /// The plan its rules must choose: the tuning line.
    pub plan: &'static str,
    /// The evidence of each choice.
    pub evidence: Vec<Evidence>,
}

/// Where a record's data came from.
pub(super) enum Origin {
    /// A raw CPUID dump: its non-zero leaves (the text of `<name>.cpuid`).
    Raw { leaves: &'static str },
    /// Leaves rebuilt from the facts its runs printed (`seen`).
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

/// What detection finds on a record's CPU, in the report's terms (the machine's first lines).
pub(super) struct Facts {
    pub arch: Arch,
    /// The vendor string (`GenuineIntel`, `AuthenticAMD`; arm64: the implementer's name).
    pub vendor: &'static str,
    /// The brand string.
    pub brand: &'static str,
    /// The features, as the report lists them.
    pub features: &'static str,
    /// The caches, as detection reports them (`l3_inclusive`: the "inclusive" bit of the L3's
    /// CPUID cache leaf, 4 or 0x8000001D; `source`: where detection took the figures).
    pub caches: Caches,
    /// The L3 the legacy AMD leaf 0x80000006 reports (what glibc reads), `None` where it reports
    /// none (Intel) or was not recorded. No rule reads it.
    pub legacy_l3: Option<usize>,
}

/// Why a field of a record's plan is what it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// A run on this CPU measured the choice.
    Measured,
    /// No run on this CPU measured it: the rule's stated default.
    Stated,
    /// A run on this CPU disagrees with the rule's choice: kept as the rule decides it today,
    /// with the run, until the rule or this record changes.
    Disputed,
}

/// One `evidence` line: the fields it covers, its kind, the commit measured (`None` for a stated
/// rule), the file that holds the run or the rule, and a note.
pub(super) struct Evidence {
    pub fields: Vec<&'static str>,
    pub kind: Kind,
    pub commit: Option<&'static str>,
    pub path: &'static str,
    pub note: &'static str,
}

/// A size as the records write it: digits with an optional `K`, `M` or `G`.
fn size(v: &str) -> usize {
    crate::dispatch::tune::parse_size(v.as_bytes()).unwrap_or_else(|| panic!("a size: {v:?}"))
}

/// The `key=value` pairs of a line's words.
fn pairs(words: &'static str) -> impl Iterator<Item = (&'static str, &'static str)> {
    words.split_whitespace().map(|w| {
        w.split_once('=')
            .unwrap_or_else(|| panic!("key=value: {w:?}"))
    })
}

/// A number in decimal or, with `0x`, hexadecimal.
fn number(v: &str) -> u64 {
    match v.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16),
        None => v.parse(),
    }
    .unwrap_or_else(|_| panic!("a number: {v:?}"))
}

/// Reads one record file.
fn read(name: &'static str, text: &'static str) -> Record {
    let mut get: std::collections::BTreeMap<&str, Vec<&'static str>> = Default::default();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (key, value) = line.split_once(' ').unwrap_or((line, ""));
        get.entry(key).or_default().push(value.trim());
    }
    let one = |k: &str| -> &'static str {
        match get.get(k).map(Vec::as_slice) {
            Some([v]) => v,
            other => panic!("{name}: one `{k}` line expected, found {other:?}"),
        }
    };
    let opt = |k: &str| get.get(k).and_then(|v| v.first().copied());
    assert_eq!(one("name"), name, "the record's name is its file's");
    let origin = match one("origin").split_once(' ') {
        Some(("raw", file)) => {
            assert_eq!(
                file,
                format!("{name}.cpuid"),
                "{name}: a raw origin names its leaves"
            );
            let leaves = RAW
                .iter()
                .find(|(n, _)| *n == name)
                .unwrap_or_else(|| panic!("{name}: its leaves are not in `zoo!`'s raw list"))
                .1;
            Origin::Raw { leaves }
        }
        Some(("public", sources)) => Origin::Public { sources },
        _ if one("origin") == "reconstructed" => Origin::Reconstructed,
        o => panic!("{name}: origin {o:?}"),
    };
    let mut arch_words = one("arch").splitn(2, ' ');
    let kind = arch_words.next().unwrap();
    let mut a: std::collections::BTreeMap<&str, &str> =
        pairs(arch_words.next().unwrap_or("")).collect();
    let arch = match kind {
        "x86" => Arch::X86 {
            family: number(a.remove("family").expect("family")) as u8,
            model: number(a.remove("model").expect("model")) as u8,
            stepping: a.remove("stepping").map(|s| number(s) as u8),
            xcr0: number(a.remove("xcr0").expect("xcr0")),
        },
        "arm" => Arch::Arm {
            midr: number(a.remove("midr").expect("midr")),
        },
        k => panic!("{name}: arch {k:?}"),
    };
    let zero_block = a.remove("zero_block").map(|z| number(z) as usize);
    assert!(a.is_empty(), "{name}: unknown arch words {a:?}");
    // `caches line=64 l1d=32K ... source=cpuid 0x8000001d`: the source is the rest of the line.
    let (sizes, source) = one("caches")
        .split_once(" source=")
        .unwrap_or_else(|| panic!("{name}: caches without a source"));
    let mut c: std::collections::BTreeMap<&str, &str> = pairs(sizes).collect();
    let caches = Caches {
        line: c.remove("line").map_or(64, |v| number(v) as usize),
        l1d: c.remove("l1d").map(size),
        l2: c.remove("l2").map(size),
        l3: c.remove("l3").map(size),
        l3_shared_by: c.remove("shared").map(|v| number(v) as usize),
        l3_inclusive: c.remove("inclusive").map(|v| v == "yes"),
        zero_block,
        source,
    };
    assert!(c.is_empty(), "{name}: unknown cache words {c:?}");
    let facts = Facts {
        arch,
        vendor: one("vendor"),
        brand: one("brand"),
        features: one("features"),
        caches,
        legacy_l3: opt("legacy_l3").map(size),
    };
    let evidence = get
        .get("evidence")
        .map(Vec::as_slice)
        .unwrap_or(&[])
        .iter()
        .map(|line| {
            let mut w = line.splitn(5, ' ');
            let mut next = |what: &str| {
                w.next()
                    .unwrap_or_else(|| panic!("{name}: evidence without {what}: {line:?}"))
            };
            let fields = next("fields").split(',').collect();
            let kind = match next("a kind") {
                "measured" => Kind::Measured,
                "stated" => Kind::Stated,
                "disputed" => Kind::Disputed,
                k => panic!("{name}: evidence kind {k:?}"),
            };
            let commit = Some(next("a commit")).filter(|c| *c != "-");
            let path = next("a path");
            let note = w.next().unwrap_or("").trim();
            Evidence {
                fields,
                kind,
                commit,
                path,
                note,
            }
        })
        .collect();
    Record {
        name,
        origin,
        seen: get.get("seen").cloned().unwrap_or_default(),
        last: opt("last"),
        facts,
        plan: one("plan"),
        evidence,
    }
}

/// Every record, read once per test.
fn all() -> Vec<Record> {
    FILES.iter().map(|&(n, t)| read(n, t)).collect()
}

// ---------------------------------------------------------------- features by name

/// A feature's flag in [`Features`].
type Flag = fn(&mut Features) -> &mut bool;

/// Every feature, by the name the report prints, in its order.
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

/// `f`'s features by name, as the report lists them.
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
        Origin::Raw { leaves } => parse(leaves),
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
fn records() -> Vec<Record> {
    let mut v = all();
    if cfg!(miri) {
        v.retain(|r| matches!(r.origin, Origin::Raw { .. }));
        v.truncate(1);
    }
    v
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
    let zoo = all();
    for (i, r) in zoo.iter().enumerate() {
        assert!(
            zoo[..i].iter().all(|o| o.name != r.name),
            "{}: twice",
            r.name
        );
        match &r.origin {
            Origin::Raw { .. } | Origin::Reconstructed => {
                assert!(!r.seen.is_empty(), "{}: no run printed its facts", r.name);
            }
            Origin::Public { sources } => {
                assert!(!sources.is_empty(), "{}", r.name);
                assert!(r.seen.is_empty(), "{}: a public part has no run", r.name);
            }
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
    for r in &records() {
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
    for r in records()
        .iter()
        .filter(|r| matches!(r.origin, Origin::Raw { .. }))
    {
        let Arch::X86 { xcr0, .. } = r.facts.arch else {
            unreachable!()
        };
        let rebuilt = cpuid::decode(Dump(Rc::new(encode(&r.facts))), Os::Xcr0(xcr0));
        assert_eq!(rebuilt, detect(r), "{}", r.name);
        raw += 1;
    }
    assert!(raw >= 2, "the zoo lost its raw dumps");
}

/// The rules for every record, field by field against its plan; a field the record's line does
/// not name (a new tunable) fails too. The engine's reason says "no run here backs it" only
/// where the record's engine evidence is stated.
#[test]
fn every_record_gets_its_plan() {
    let mut wrong = vec![];
    for r in &records() {
        let cpu = detect(r);
        let widest = widest(&cpu);
        let tuning = crate::dispatch::rules::rule(&cpu, widest);
        let (_, reason) = crate::dispatch::rules::engine_rule(&cpu, widest);
        let got = fields(&tuning.to_string());
        let want = fields(r.plan);
        for (n, v) in &got {
            match want.iter().find(|(m, _)| m == n) {
                None => wrong.push(format!(
                    "{}: the rules decide {n}={v}, and the record's plan has no {n}",
                    r.name
                )),
                Some((_, w)) if w != v => wrong.push(format!(
                    "{}: the rules decide {n}={v}, the record's plan says {n}={w}",
                    r.name
                )),
                Some(_) => {}
            }
        }
        for (n, _) in &want {
            assert!(
                got.iter().any(|(m, _)| m == n),
                "{}: the record's plan names {n}, which the tuning line does not have",
                r.name
            );
        }
        let engine = evidence_of(r, "temporal").expect("engine evidence");
        assert!(
            !(reason.contains("no run here backs it") && engine.kind == Kind::Measured),
            "{}: the rule says no run backs its engine ({reason}), the record says measured",
            r.name
        );
    }
    assert!(
        wrong.is_empty(),
        "a rule changed the choice of recorded CPUs: change the rule, or the record's plan \
         (lab/machines/zoo/) with the run that justifies it:\n{}",
        wrong.join("\n")
    );
}

/// The evidence line of `field` in record `r`.
fn evidence_of<'a>(r: &'a Record, field: &str) -> Option<&'a Evidence> {
    r.evidence.iter().find(|e| e.fields.contains(&field))
}

/// Every field of every record's plan has exactly one evidence line, of a known kind, with a
/// commit where it was measured (or disputed by a run), and no evidence names a field the plan
/// does not have.
#[test]
fn every_choice_has_its_evidence() {
    for r in &all() {
        let plan = fields(r.plan);
        for (n, _) in &plan {
            let lines: Vec<_> = r
                .evidence
                .iter()
                .filter(|e| e.fields.contains(&n.as_str()))
                .collect();
            assert_eq!(
                lines.len(),
                1,
                "{}: {n}: one evidence line expected",
                r.name
            );
            let e = lines[0];
            match (e.kind, e.commit) {
                (Kind::Measured | Kind::Disputed, None) => {
                    panic!("{}: {n}: a run without its commit", r.name)
                }
                (_, Some(c)) => assert!(
                    (7..=40).contains(&c.len()) && c.bytes().all(|b| b.is_ascii_hexdigit()),
                    "{}: {n}: commit {c:?}",
                    r.name
                ),
                _ => {}
            }
            if e.kind != Kind::Stated {
                assert!(
                    e.path.starts_with("lab/"),
                    "{}: {n}: a run's evidence is in the lab, not {}",
                    r.name,
                    e.path
                );
            }
            assert!(
                !e.note.is_empty(),
                "{}: {n}: evidence without a note",
                r.name
            );
        }
        for e in &r.evidence {
            for f in &e.fields {
                assert!(
                    plan.iter().any(|(n, _)| n == f),
                    "{}: evidence for {f}, which the plan does not name",
                    r.name
                );
            }
        }
        // A CPU measured here has its runs; a part no run covers has only stated choices.
        if let Origin::Public { .. } = r.origin {
            assert!(
                r.evidence.iter().all(|e| e.kind == Kind::Stated),
                "{}: a public part with a run",
                r.name
            );
        }
    }
}

/// The legacy leaf 0x80000006 (the 256-320 MiB "L3" these VMs report, which glibc reads) never
/// changes a choice: every x86 record decides the same with it rewritten.
#[test]
#[cfg_attr(
    miri,
    ignore = "the decoding and the rules of every record again: records() says why"
)]
fn the_rules_never_read_the_legacy_leaf() {
    for r in &records() {
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
    for r in &records() {
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

/// Every path a record names exists (in a checkout), and every raw record's leaves are its
/// dump's non-zero leaves.
#[test]
fn every_path_exists_and_the_leaves_are_the_dumps() {
    let Some(root) = repo() else {
        std::println!("no checkout here (a published crate, or Miri): the paths are not checked");
        return;
    };
    for r in &all() {
        let paths = r
            .seen
            .iter()
            .chain(&r.last)
            .chain(r.evidence.iter().map(|e| &e.path));
        for p in paths {
            assert!(root.join(p).exists(), "{}: {p} does not exist", r.name);
        }
        if let Origin::Raw { leaves } = r.origin {
            let dump = format!("lab/machines/{}-cpuid.txt", r.name);
            let dump = std::fs::read_to_string(root.join(&dump))
                .unwrap_or_else(|e| panic!("{}: {dump}: {e}", r.name));
            let nonzero: Vec<Leaf> = parse(&dump)
                .into_iter()
                .filter(|l| l.regs != [0; 4])
                .collect();
            assert_eq!(parse(leaves), nonzero, "{}: leaves and dump differ", r.name);
        }
    }
}

/// The CPU at hand through the decoding the records take (XCR0 read here) against detection
/// (std_detect): the records' path and the native one agree.
#[cfg(all(target_arch = "x86_64", not(miri)))]
#[test]
fn the_host_decodes_alike_both_ways() {
    let via_xcr0 = cpuid::decode(raw_cpuid::CpuIdReaderNative, Os::Xcr0(crate::arch::xcr0()));
    assert_eq!(via_xcr0, crate::arch::detect());
}
