//! The small calls (0-130 bytes, the call site's classes and the table just past them) with the
//! masked fills forced on (`CACHECOPY_TUNE=small=masked-fills`; refused, so the plain classes,
//! on a CPU that does not run them): copies, fills and moves at arbitrary offsets around a page
//! boundary, with the mode a constant or a run-time value, against the reference, with
//! canaries on both sides.
#![no_main]

use arbitrary::Arbitrary;
use cachecopy::Mode;
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Case {
    /// 0: copy, 1: fill, 2: move (`copy_within`), by the value modulo 3.
    kind: u8,
    /// Offsets from one page below a page boundary of the buffer, modulo 2 * 4096 - 256.
    dst: u16,
    src: u16,
    len: u8,
    /// A mode index modulo 4, passed as a run-time value; or, when `None`, `Temporal` as a
    /// constant.
    mode: Option<u8>,
    byte: u8,
    bytes: Vec<u8>,
}

const CANARY: u8 = 0x3C;
const PAGE: usize = 4096;

fuzz_target!(
    init: {
        // Before the first call of this process detects the CPU.
        std::env::set_var("CACHECOPY_TUNE", "small=masked-fills");
    },
    |c: Case| {
        let len = c.len as usize % 131;
        let span = 2 * PAGE - 256;
        // Three pages, the middle boundary page-aligned: offsets run across it.
        let mut buf = vec![CANARY; 4 * PAGE];
        let base = buf.as_ptr().align_offset(PAGE) + PAGE / 2;
        let (d, s) = (base + c.dst as usize % span, base + c.src as usize % span);
        let src: Vec<u8> = if c.bytes.is_empty() {
            (0..len).map(|i| i as u8 ^ 0x5a).collect()
        } else {
            c.bytes.iter().copied().cycle().take(len).collect()
        };
        let mode = match c.mode {
            Some(m) => std::hint::black_box(Mode::ALL[m as usize % 4]),
            None => Mode::Temporal,
        };
        let mut want = buf.clone();
        match c.kind % 3 {
            0 => {
                // The source in a buffer of its own, at the same offset.
                let mut sbuf = vec![0u8; 4 * PAGE];
                let sb = sbuf.as_ptr().align_offset(PAGE) + PAGE / 2 + c.src as usize % span;
                sbuf[sb..sb + len].copy_from_slice(&src);
                cachecopy::copy(&mut buf[d..d + len], &sbuf[sb..sb + len], mode);
                want[d..d + len].copy_from_slice(&src);
            }
            1 => {
                cachecopy::fill(&mut buf[d..d + len], c.byte, mode);
                want[d..d + len].fill(c.byte);
            }
            _ => {
                buf[s..s + len].copy_from_slice(&src);
                want[s..s + len].copy_from_slice(&src);
                cachecopy::copy_within(&mut buf, s..s + len, d, mode);
                want.copy_within(s..s + len, d);
            }
        }
        assert!(buf == want, "kind {} len {len} dst {d} src {s}", c.kind % 3);
    }
);
