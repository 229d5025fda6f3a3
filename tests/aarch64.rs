//! The aarch64 backend: which clean instruction flush-cache copies select under each QEMU CPU
//! model, that NEON is offered exactly on aarch64, and byte-exact copies and fills in every mode
//! around the 16/32/64/128-byte boundaries the NEON kernel and `STREAM_LINE` (128) create.
//!
//! Under `test-aarch64.sh` the QEMU model is known from the runner command line cargo passes
//! on (`CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER=... -cpu <model>`), or from
//! `CACHECOPY_EXPECT_DPB=0|1`; on real hardware the test falls back to `AT_HWCAP`.

#[cfg(target_arch = "aarch64")]
mod common;

#[cfg(target_arch = "aarch64")]
mod aarch64 {
    use cachecopy::raw::{copy_with, copy_with_flush, fill_with, fill_with_flush};
    use cachecopy::tune::{cpu, Backend, FlushOp};
    use cachecopy::Mode;

    use crate::common::engine_in_force;

    /// Models that implement FEAT_DPB in QEMU 10 (`dc cvap` executes) and models that do not
    /// (`dc cvap` raises SIGILL). CI runs `max` and `cortex-a72` (`.ci/run`); the README of the
    /// shared cross-test scripts (`$SHARED/cross/README.md`, `SHARED=../shared` by default)
    /// explains the choice.
    const DPB_MODELS: &[&str] = &[
        "max",
        "neoverse-n1",
        "neoverse-v1",
        "neoverse-n2",
        "cortex-a76",
        "a64fx",
    ];
    const NO_DPB_MODELS: &[&str] = &["cortex-a53", "cortex-a57", "cortex-a72"];

    /// Whether this CPU should have `dc cvap`, and how that was decided.
    fn expected_dpb() -> (bool, String) {
        if let Ok(v) = std::env::var("CACHECOPY_EXPECT_DPB") {
            return (v.trim() == "1", format!("CACHECOPY_EXPECT_DPB={v}"));
        }
        if let Ok(runner) = std::env::var("CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER") {
            let mut words = runner.split_whitespace();
            if let Some(model) = words.by_ref().skip_while(|w| *w != "-cpu").nth(1) {
                let model = model.split(',').next().unwrap_or(model);
                if DPB_MODELS.contains(&model) {
                    return (true, format!("qemu -cpu {model}"));
                }
                if NO_DPB_MODELS.contains(&model) {
                    return (false, format!("qemu -cpu {model}"));
                }
                panic!("qemu -cpu {model}: add it to DPB_MODELS or NO_DPB_MODELS");
            }
        }
        // Real hardware: the kernel's own report, independent of cachecopy's detection path.
        // SAFETY: getauxval has no preconditions.
        let hwcap = unsafe { libc::getauxval(libc::AT_HWCAP) };
        (
            hwcap & libc::HWCAP_DCPOP != 0,
            format!("AT_HWCAP {hwcap:#x}"),
        )
    }

    #[test]
    fn flush_cache_selects_the_clean_instruction_of_this_cpu_model() {
        let (dpb, why) = expected_dpb();
        let c = cpu();
        eprintln!("{why}: {c:?} vendor {:?} brand {:?}", c.vendor(), c.brand());
        assert_eq!(c.arch, "aarch64");
        assert!(c.features.neon);
        assert_eq!(c.features.dpb, dpb, "{why}");
        let want = if dpb {
            FlushOp::DcCvap
        } else {
            FlushOp::DcCvac
        };
        assert_eq!(c.flush, want, "{why}");
        let ops: Vec<FlushOp> = c.flush_ops().collect();
        let mut expect = vec![];
        if dpb {
            expect.push(FlushOp::DcCvap);
        }
        expect.extend([FlushOp::DcCvac, FlushOp::Fence]);
        assert_eq!(ops, expect, "{why}");

        // The instruction that is not there is refused, not executed (it would be SIGILL).
        let src = vec![7u8; 4096];
        let mut dst = vec![0u8; 4096];
        let r = copy_with_flush(Backend::Neon, FlushOp::DcCvap, &mut dst, &src);
        assert_eq!(r.is_ok(), dpb, "{why}");
        assert_eq!(dst == src, dpb);
        for op in [FlushOp::Clwb, FlushOp::Clflushopt, FlushOp::Clflush] {
            assert!(copy_with_flush(Backend::Neon, op, &mut dst, &src).is_err());
        }
    }

    #[test]
    fn line_size_comes_from_ctr_el0() {
        let line = cpu().caches.line;
        assert!(
            line.is_power_of_two() && (16..=2048).contains(&line),
            "{line}"
        );
        let ctr: u64;
        // SAFETY: EL0 may read CTR_EL0 on Linux; no memory access.
        unsafe { std::arch::asm!("mrs {}, ctr_el0", out(reg) ctr, options(nomem, nostack)) };
        assert_eq!(line, 4 << ((ctr >> 16) & 0xf));
    }

    /// `dc zva`: the block comes from `DCZID_EL0`, and zeroing around and across block
    /// boundaries (the ordinary head and tail, the `dc zva` body) is exact on both backends,
    /// next to canaries.
    #[test]
    fn zeroing_uses_the_dczid_block() {
        let dczid: u64;
        // SAFETY: DCZID_EL0 is readable at EL0 by definition; no memory access.
        unsafe { std::arch::asm!("mrs {}, dczid_el0", out(reg) dczid, options(nomem, nostack)) };
        let want = (dczid & 0x10 == 0).then(|| 4usize << (dczid & 0xf));
        let block = cpu().caches.zero_block;
        eprintln!("DCZID_EL0 {dczid:#x}: zero block {block:?}");
        assert_eq!(block, want);
        let Some(block) = block else { return };
        assert!(
            block.is_power_of_two() && (16..=2048).contains(&block),
            "{block}"
        );
        let mut lens: Vec<usize> = (0..=4 * block).step_by(7).collect();
        for k in [2, 3, 4, 8] {
            lens.extend([k * block - 1, k * block, k * block + 1, 256, 255, 257]);
        }
        let mut buf = vec![CANARY; 8 * block + 2 * block + 2 * PAD];
        for &backend in Backend::supported() {
            for &len in &lens {
                for d in [0, 1, 15, 16, block / 2, block - 1, block, block + 3] {
                    let d = d + PAD;
                    buf[d..d + len].fill(0xee);
                    fill_with(backend, &mut buf[d..d + len], 0, Mode::Temporal).unwrap();
                    assert!(
                        buf[d..d + len].iter().all(|&b| b == 0),
                        "{backend} zero len {len} at +{d}"
                    );
                    assert!(
                        buf[..d].iter().chain(&buf[d + len..]).all(|&b| b == CANARY),
                        "{backend} zero len {len} at +{d}: byte outside changed"
                    );
                    buf[d..d + len].fill(CANARY);
                }
            }
        }
    }

    #[test]
    fn neon_is_supported_and_chosen() {
        assert_eq!(Backend::supported(), &[Backend::Generic, Backend::Neon]);
        assert_eq!(Backend::from_name("neon"), Some(Backend::Neon));
        // NEON by the rule, unless the environment forces another engine.
        assert_eq!(
            cachecopy::tune::Plan::current().tuning().engine,
            engine_in_force()
        );
        if std::env::var_os("CACHECOPY_TUNE").is_none() {
            assert_eq!(
                cachecopy::tune::Plan::current().tuning().engine.stream,
                Backend::Neon
            );
        }
        for b in [Backend::Sse2, Backend::Avx2, Backend::Avx512] {
            let mut d = [0u8; 4];
            assert!(copy_with(b, &mut d, &[1; 4], Mode::Temporal).is_err());
        }
    }

    /// Every length 0..=300 (all register cascades and the 128-byte body), then lengths around
    /// `STREAM_MIN` (1 KiB, where non-temporal starts streaming) and the 128-byte stream line.
    /// Thinned (`thinned()`): every length to 140 (the cascades, one body and its tails), every
    /// ninth to 300, and each base with the lengths one and sixteen or seventeen either side.
    fn lengths() -> Vec<usize> {
        let thin = thinned();
        let mut v: Vec<usize> = (0..=300)
            .filter(|&l| !thin || l <= 140 || l % 9 == 0)
            .collect();
        for base in [1024usize, 1024 + 128, 2048, 4096, 3 * 4096 + 128] {
            v.extend(
                (base - 17..=base + 17)
                    .filter(|&l| !thin || [0, 1, 16, 17].contains(&l.abs_diff(base))),
            );
        }
        v.extend([4096 * 4 + 65, 65536 + 127]);
        v
    }

    /// Whether this run thins the byte-exact tables: `CACHECOPY_TEST_SCALE=thin`, which `.ci/run`
    /// sets for the runs that repeat the `-cpu max` run's tables on another CPU model or
    /// configuration (cortex-a72, no_std), whose own subject (the clean instruction, the `dc zva`
    /// block, detection) does not depend on the length. Every operation, backend and size
    /// class is still met, at fewer lengths and offsets; the `max` run has the full table.
    fn thinned() -> bool {
        std::env::var_os("CACHECOPY_TEST_SCALE").is_some_and(|v| v == "thin")
    }

    /// The offsets a length meets: every pair at the short lengths (the lengths a multiple of 7
    /// only, when thinned) and at the multiples of 7, the first few otherwise.
    fn offsets(len: usize) -> (&'static [usize], &'static [usize]) {
        let all = if thinned() {
            len.is_multiple_of(7)
        } else {
            len <= 300 || len.is_multiple_of(7)
        };
        if all {
            (DST_OFFSETS, SRC_OFFSETS)
        } else {
            (&DST_OFFSETS[..6], &SRC_OFFSETS[..2])
        }
    }

    /// Destination offsets: every offset within 32 bytes, and the line boundaries beyond it.
    const DST_OFFSETS: &[usize] = &[
        0, 1, 2, 3, 7, 8, 15, 16, 17, 31, 32, 33, 47, 63, 64, 65, 95, 127, 128, 129,
    ];
    const SRC_OFFSETS: &[usize] = &[0, 1, 16, 31];
    const CANARY: u8 = 0xe5;
    const PAD: usize = 160;

    /// A write operation under test: a mode, or a flush instruction this CPU has, each through
    /// its `copy`/`fill` entry point.
    #[derive(Clone, Copy)]
    enum Write {
        Mode(Mode),
        Flush(FlushOp),
    }

    impl Write {
        /// Every mode, and each flush instruction this CPU has.
        fn all() -> Vec<Write> {
            let modes = Mode::ALL.into_iter().map(Write::Mode);
            modes.chain(cpu().flush_ops().map(Write::Flush)).collect()
        }

        fn copy(self, backend: Backend, dst: &mut [u8], src: &[u8]) {
            match self {
                Write::Mode(m) => copy_with(backend, dst, src, m),
                Write::Flush(op) => copy_with_flush(backend, op, dst, src),
            }
            .unwrap();
        }

        fn fill(self, backend: Backend, dst: &mut [u8], byte: u8) {
            match self {
                Write::Mode(m) => fill_with(backend, dst, byte, m),
                Write::Flush(op) => fill_with_flush(backend, op, dst, byte),
            }
            .unwrap();
        }
    }

    impl std::fmt::Display for Write {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            match self {
                Write::Mode(m) => write!(f, "{m:?}"),
                Write::Flush(op) => write!(f, "flush {op}"),
            }
        }
    }

    /// Asserts `buf[off..off + len] == want` and every other byte still `CANARY`.
    fn check(buf: &[u8], off: usize, want: &[u8], what: &dyn Fn() -> String) {
        let len = want.len();
        if let Some(i) = buf[..off]
            .iter()
            .chain(&buf[off + len..])
            .position(|&b| b != CANARY)
        {
            panic!(
                "{}: byte outside the destination changed (index {i})",
                what()
            );
        }
        if let Some(i) = (0..len).find(|&i| buf[off + i] != want[i]) {
            panic!(
                "{}: byte {i} is {:#x}, want {:#x}",
                what(),
                buf[off + i],
                want[i]
            );
        }
    }

    #[test]
    fn copies_are_byte_exact_in_every_mode() {
        let lens = lengths();
        let max = *lens.iter().max().unwrap();
        let src_buf: Vec<u8> = (0..max + 64).map(|i| (i * 131 + i / 251) as u8).collect();
        let mut dst_buf = vec![CANARY; max + 2 * PAD];
        for &backend in Backend::supported() {
            for write in Write::all() {
                for &len in &lens {
                    let (dsts, srcs) = offsets(len);
                    for &d in dsts {
                        for &s in srcs {
                            let src = &src_buf[s..s + len];
                            write.copy(backend, &mut dst_buf[d..d + len], src);
                            check(&dst_buf[..d + len + PAD], d, src, &|| {
                                format!("copy {backend} {write} len {len} dst+{d} src+{s}")
                            });
                            dst_buf[d..d + len].fill(CANARY);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn fills_are_byte_exact_in_every_mode() {
        let lens = lengths();
        let max = *lens.iter().max().unwrap();
        let mut dst_buf = vec![CANARY; max + 2 * PAD];
        for &backend in Backend::supported() {
            for write in Write::all() {
                for &len in &lens {
                    let dsts = if thinned() {
                        offsets(len).0
                    } else {
                        DST_OFFSETS
                    };
                    for &d in dsts {
                        let byte = (len as u8) ^ 0x5a ^ (d as u8);
                        let byte = if byte == CANARY { 0 } else { byte };
                        write.fill(backend, &mut dst_buf[d..d + len], byte);
                        let want = vec![byte; len];
                        check(&dst_buf[..d + len + PAD], d, &want, &|| {
                            format!("fill {backend} {write} len {len} dst+{d} byte {byte:#x}")
                        });
                        dst_buf[d..d + len].fill(CANARY);
                    }
                }
            }
        }
    }
}

#[cfg(not(target_arch = "aarch64"))]
#[test]
fn neon_is_never_offered_off_aarch64() {
    assert!(!cachecopy::tune::Backend::supported().contains(&cachecopy::tune::Backend::Neon));
    let mut d = [0u8; 64];
    assert!(cachecopy::raw::copy_with(
        cachecopy::tune::Backend::Neon,
        &mut d,
        &[1; 64],
        cachecopy::Mode::Temporal
    )
    .is_err());
    assert!(cachecopy::raw::fill_with(
        cachecopy::tune::Backend::Neon,
        &mut d,
        1,
        cachecopy::Mode::Temporal
    )
    .is_err());
    assert_eq!(d, [0; 64], "a refused backend wrote");
    let c = cachecopy::tune::cpu();
    assert!(!c.features.neon && !c.features.dpb);
    assert!(!c.flush_ops().any(|op| matches!(
        op,
        cachecopy::tune::FlushOp::DcCvap | cachecopy::tune::FlushOp::DcCvac
    )));
}
