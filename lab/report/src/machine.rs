//! Section 1: what the crate detected, and where the thresholds come from.

use cachecopy::tune::{Backend, Cpu};
use serde::Serialize;

use crate::text::{field, size};

/// What section 1 found: the CPU, its caches, the backends and where the thresholds lie.
#[derive(Clone, Debug, Serialize)]
pub struct Machine {
    pub arch: &'static str,
    pub vendor: String,
    pub brand: String,
    pub cpus: usize,
    pub kernel: Option<String>,
    pub features: Vec<&'static str>,
    pub line: usize,
    pub l1d: Option<usize>,
    pub l2: Option<usize>,
    pub l3: Option<usize>,
    pub l3_shared_by: Option<usize>,
    pub cache_source: &'static str,
    pub backends: Vec<&'static str>,
    pub active: &'static str,
    /// The active engine (`cachecopy::tune::Plan::current().tuning().engine`), e.g. "temporal avx2, stream avx2, edges overlap".
    pub engine: String,
    /// Where it came from: the CPU's rule and its reason, or the environment.
    pub engine_source: String,
    pub flush: &'static str,
    pub flush_ops: Vec<&'static str>,
    pub nt_threshold: usize,
    pub nt_threshold_source: String,
    pub fill_nt_threshold: usize,
    /// From here `Temporal` fills use `rep stosb`; `None` when never.
    pub fill_rep_threshold: Option<usize>,
    /// From here `Temporal` copies use `rep movsb`; `None` when never.
    pub rep_movsb_threshold: Option<usize>,
    /// aarch64 `dc zva` block, which `Temporal` zeroing uses.
    pub zero_block: Option<usize>,
    /// Every per-CPU choice in force, whole (`*cachecopy::tune::Plan::current().tuning()`), as the `CACHECOPY_TUNE`
    /// value that sets it again.
    pub tuning: String,
    pub glibc: Option<Glibc>,
}

/// glibc's own non-temporal threshold for `memcpy`.
#[derive(Clone, Debug, Serialize)]
pub struct Glibc {
    pub nt_threshold: usize,
    pub how: String,
}

/// The rule behind the active engine, or the variables that overrode it.
fn engine_source(cpu: &cachecopy::tune::Cpu) -> String {
    let (rule, why) = cachecopy::tune::Engine::rule(cpu);
    if cachecopy::tune::Plan::current().tuning().engine == rule {
        format!("rule: {why}")
    } else {
        let line = std::env::var("CACHECOPY_TUNE").unwrap_or_default();
        format!("set by CACHECOPY_TUNE={line}; the rule: {rule}")
    }
}

/// The engines worth running a test suite with on this CPU, as the `CACHECOPY_TUNE` fields
/// that force each (`temporal=sse2,stream=sse2,edges=overlap`): every backend it runs alone,
/// AVX-512 with either edge store, and, with two vector backends or more, the narrowest's
/// `Temporal` job beside the widest's streamed one (a table composed of two backends). Only
/// the rule's engine with `rule`.
pub fn engines_to_test(rule: bool) -> Vec<String> {
    use cachecopy::tune::{Edges, Engine};
    let line = |e: Engine| {
        format!(
            "temporal={},stream={},edges={}",
            e.temporal, e.stream, e.edges
        )
    };
    if rule {
        return vec![line(Engine::rule(&cachecopy::tune::cpu()).0)];
    }
    let s = Backend::supported();
    let mut v: Vec<Engine> = vec![];
    for &b in s {
        for edges in [Edges::Masked, Edges::Overlap] {
            let e = Engine::new(b, b, edges);
            if !v.contains(&e) {
                v.push(e);
            }
        }
    }
    let vector: Vec<Backend> = s
        .iter()
        .copied()
        .filter(|&b| b != Backend::Generic)
        .collect();
    if let [first, .., last] = vector[..] {
        v.push(Engine::new(first, last, Edges::Overlap));
    }
    v.into_iter().map(line).collect()
}

/// What `cachecopy` detected, and what glibc would do.
pub fn detect() -> Machine {
    let cpu = cachecopy::tune::cpu();
    let c = cpu.caches;
    Machine {
        arch: cpu.arch,
        vendor: cpu.vendor().to_owned(),
        brand: cpu.brand().to_owned(),
        cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
        kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .ok()
            .map(|s| s.trim().to_owned()),
        features: features(&cpu),
        line: c.line,
        l1d: c.l1d,
        l2: c.l2,
        l3: c.l3,
        l3_shared_by: c.l3_shared_by,
        cache_source: c.source,
        backends: Backend::supported().iter().map(|b| b.name()).collect(),
        active: cachecopy::tune::Plan::current()
            .tuning()
            .engine
            .stream
            .name(),
        engine: cachecopy::tune::Plan::current().tuning().engine.to_string(),
        engine_source: engine_source(&cpu),
        flush: cpu.flush.name(),
        flush_ops: cpu.flush_ops().map(|op| op.name()).collect(),
        nt_threshold: cachecopy::tune::Plan::current().tuning().nt,
        nt_threshold_source: threshold_source(&cpu, cachecopy::tune::Plan::current().tuning().nt),
        fill_nt_threshold: cachecopy::tune::Plan::current().tuning().fill_nt,
        fill_rep_threshold: Some(cachecopy::tune::Plan::current().tuning().fill_rep)
            .filter(|&t| t != usize::MAX),
        rep_movsb_threshold: Some(cachecopy::tune::Plan::current().tuning().rep_movsb)
            .filter(|&t| t != usize::MAX),
        zero_block: c.zero_block,
        tuning: cachecopy::tune::Plan::current().tuning().to_string(),
        glibc: glibc(),
    }
}

fn features(cpu: &Cpu) -> Vec<&'static str> {
    let f = cpu.features;
    [
        ("sse2", f.sse2),
        ("avx2", f.avx2),
        ("avx512f", f.avx512f),
        ("avx512bw", f.avx512bw),
        ("erms", f.erms),
        ("fsrm", f.fsrm),
        ("clflush", f.clflush),
        ("clflushopt", f.clflushopt),
        ("clwb", f.clwb),
        ("neon", f.neon),
        ("dpb", f.dpb),
    ]
    .into_iter()
    .filter_map(|(name, on)| on.then_some(name))
    .collect()
}

/// Where the plan's `nt` came from: the crate's cache rule (`cachecopy::tune::default_nt_threshold`)
/// or something else (`CACHECOPY_TUNE`, a published plan).
fn threshold_source(cpu: &Cpu, value: usize) -> String {
    if value != cachecopy::tune::default_nt_threshold(cpu) {
        return match std::env::var("CACHECOPY_TUNE") {
            Ok(line) => format!("set by CACHECOPY_TUNE={line}"),
            Err(_) => "set by the program (a published plan)".into(),
        };
    }
    let c = cpu.caches;
    if cpu.vendor() == "GenuineIntel" && c.l3_inclusive == Some(false) {
        if let Some(l2) = c.l2 {
            return format!(
                "L2 = {} (Intel, non-inclusive L3: streaming pays from the L2 size), caches from {}",
                size(l2),
                c.source
            );
        }
    }
    // The rule's fraction of the L3 differs by core generation (and for Zen 2 by model): name
    // the one that gave this value rather than re-deriving the rule here.
    match (c.l2, c.l3) {
        (_, Some(l3)) if value == l3 / 2 => format!(
            "L3 / 2 = {} / 2 (the rule for this CPU's generation or model), caches from {}",
            size(l3),
            c.source
        ),
        (_, Some(l3)) if value == l3 / 4 => format!(
            "L3 / 4 = {} / 4 (the rule for this CPU's generation), caches from {}",
            size(l3),
            c.source
        ),
        (Some(l2), _) if value == 2 * l2 => format!("2 x L2 = 2 x {} (at least 1 MiB)", size(l2)),
        (_, Some(_)) => format!(
            "{} (the floor of 1 MiB), caches from {}",
            size(value),
            c.source
        ),
        _ => "no cache figures: 4 MiB fallback".into(),
    }
}

/// glibc's threshold: what its loader reports (`ld.so --list-tunables`, glibc ≥ 2.33), else
/// glibc 2.26-2.36's rule of 3/4 of the shared cache, which on AMD it takes from the legacy CPUID
/// leaf 0x80000006 (a 256 MiB "L3" on this project's VM, hence 192 MiB).
fn glibc() -> Option<Glibc> {
    const LOADERS: [&str; 3] = [
        "/lib64/ld-linux-x86-64.so.2",
        "/lib/ld-linux-aarch64.so.1",
        "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
    ];
    for ld in LOADERS {
        let Ok(out) = std::process::Command::new(ld)
            .arg("--list-tunables")
            .output()
        else {
            continue;
        };
        let text = String::from_utf8_lossy(&out.stdout);
        let get = |key: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(key)?.strip_prefix(": "))
                .and_then(|v| v.split_whitespace().next())
                .and_then(|h| usize::from_str_radix(h.trim_start_matches("0x"), 16).ok())
        };
        if let Some(nt) = get("glibc.cpu.x86_non_temporal_threshold") {
            let shared = get("glibc.cpu.x86_shared_cache_size").unwrap_or(0);
            return Some(Glibc {
                nt_threshold: nt,
                how: format!(
                    "`{ld} --list-tunables`: x86_non_temporal_threshold; x86_shared_cache_size = {}{}",
                    size(shared),
                    legacy_l3()
                        .map(|l3| format!(", legacy CPUID 0x80000006 L3 = {}", size(l3)))
                        .unwrap_or_default()
                ),
            });
        }
    }
    legacy_l3().map(|l3| Glibc {
        nt_threshold: l3 / 4 * 3,
        how: format!(
            "computed: 3/4 x the legacy CPUID 0x80000006 L3 ({}), glibc 2.26-2.36's rule on AMD",
            size(l3)
        ),
    })
}

/// The L3 size the legacy AMD leaf reports (what glibc reads), in bytes.
fn legacy_l3() -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    {
        let info = raw_cpuid::CpuId::new().get_l2_l3_cache_and_tlb_info()?;
        let units = info.l3cache_size() as usize; // 512 KiB units
        (units > 0).then_some(units * 512 * 1024)
    }
    #[cfg(not(target_arch = "x86_64"))]
    None
}

/// Section 1's text.
pub fn print(m: &Machine) -> String {
    let mut s = String::from("1. Machine\n");
    let opt = |v: Option<usize>| v.map_or("?".to_string(), size);
    let kernel = m.kernel.as_ref().map(|k| format!(", Linux {k}"));
    let (brand, cpus) = (&m.brand, m.cpus);
    let cpu = format!(
        "{} {brand} ({}, {cpus} CPUs{})",
        m.vendor,
        m.arch,
        kernel.unwrap_or_default()
    );
    field(&mut s, "CPU", cpu);
    field(&mut s, "features", m.features.join(" "));
    let shared = m.l3_shared_by.map(|n| format!(" shared by {n}"));
    let caches = format!(
        "line {} B, L1d {}, L2 {}, L3 {}{} ({})",
        m.line,
        opt(m.l1d),
        opt(m.l2),
        opt(m.l3),
        shared.unwrap_or_default(),
        m.cache_source
    );
    field(&mut s, "caches", caches);
    let backends = format!("{} (active: {})", m.backends.join(", "), m.active);
    field(&mut s, "backends", backends);
    field(
        &mut s,
        "engine",
        format!("{} ({})", m.engine, m.engine_source),
    );
    let flush = format!("{} (can run: {})", m.flush, m.flush_ops.join(", "));
    field(&mut s, "flush", flush);
    let nt = format!(
        "{} ({}); fills {}",
        size(m.nt_threshold),
        m.nt_threshold_source,
        size(m.fill_nt_threshold)
    );
    field(&mut s, "NT threshold", nt);
    if let Some(t) = m.rep_movsb_threshold {
        field(
            &mut s,
            "rep movsb",
            format!("Temporal copies from {}", size(t)),
        );
    }
    if let Some(t) = m.fill_rep_threshold {
        field(
            &mut s,
            "rep stosb",
            format!("Temporal fills from {}", size(t)),
        );
    }
    if let Some(b) = m.zero_block {
        field(
            &mut s,
            "dc zva",
            format!("Temporal zeroing in {b}-byte blocks"),
        );
    }
    field(&mut s, "tuning", format!("CACHECOPY_TUNE={}", m.tuning));
    let glibc = match &m.glibc {
        Some(g) => format!("streams from {} ({})", size(g.nt_threshold), g.how),
        None => "threshold unknown (no glibc loader to ask)".to_string(),
    };
    field(&mut s, "glibc memcpy", glibc);
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn section_one_lists_the_machine() {
        let t = print(&detect());
        assert!(t.starts_with("1. Machine\n   CPU            "), "{t}");
        for label in [
            "features",
            "caches",
            "backends",
            "NT threshold",
            "glibc memcpy",
        ] {
            assert!(t.contains(&format!("\n   {label:<15}")), "{label} in {t}");
        }
    }

    #[test]
    fn detection_is_consistent() {
        let m = detect();
        assert!(m.backends.contains(&m.active));
        assert!(m.line.is_power_of_two());
        assert_eq!(m.nt_threshold, cachecopy::tune::Plan::current().tuning().nt);
        assert!(m.flush_ops.first() == Some(&m.flush));
    }
}
