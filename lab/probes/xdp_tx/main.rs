//! AF_XDP transmit: Ethernet + IPv4 + UDP frames built by cachecopy (payload gathered from
//! scattered pieces with a fused checksum-and-copy, in every cache mode) into the UMEM of an
//! AF_XDP socket in copy mode on one end of a veth pair, received and checked byte for byte by
//! an ordinary UDP socket behind the other end. Each end is in a network namespace the program
//! creates and removes; nothing is sent anywhere else.
//!
//! `cargo run --release -p cachecopy-probes --example xdp_tx [-- --frames N --rounds R --seconds S --batch B --panic-after N]`
//!
//! Needs root, network namespaces, veth and AF_XDP; prints `SKIPPED: <reason>` and exits 0 when
//! one of them is missing. Exits 1 when any datagram is lost or corrupt. See `lab/findings/af_xdp.md`.

#[cfg(not(target_os = "linux"))]
fn main() {
    println!("SKIPPED: AF_XDP and network namespaces are Linux-only");
}

#[cfg(target_os = "linux")]
fn main() -> std::process::ExitCode {
    linux::main()
}

// The module is shared with lab/probes/tests/xdp.rs, which uses parts this binary does not.
#[cfg(target_os = "linux")]
#[allow(dead_code)]
mod xdp;

#[cfg(target_os = "linux")]
mod linux {
    use std::process::ExitCode;
    use std::sync::atomic::{AtomicBool, Ordering};

    use super::xdp::{self, Config, Error};

    static STOP: AtomicBool = AtomicBool::new(false);

    extern "C" fn on_signal(_: libc::c_int) {
        STOP.store(true, Ordering::Relaxed);
    }

    const USAGE: &str =
        "usage: xdp_tx [--frames N] [--rounds R] [--seconds S] [--batch B] [--panic-after N]";

    /// The value `v` of the argument `a`, or the usage error that names both.
    fn parsed<T: std::str::FromStr>(a: &str, v: String) -> Result<T, String> {
        v.parse()
            .map_err(|_| format!("bad value {v:?} for {a}\n{USAGE}"))
    }

    fn parse() -> Result<Config, String> {
        let mut cfg = Config {
            stop: Some(&STOP),
            ..Config::default()
        };
        let mut args = std::env::args().skip(1);
        while let Some(a) = args.next() {
            let mut val = |name: &str| {
                args.next()
                    .ok_or_else(|| format!("{name} needs a value\n{USAGE}"))
            };
            match a.as_str() {
                "--frames" => cfg.frames = parsed(&a, val(&a)?)?,
                "--rounds" => cfg.rounds = parsed(&a, val(&a)?)?,
                "--seconds" => cfg.seconds = parsed(&a, val(&a)?)?,
                "--batch" => cfg.batch = parsed(&a, val(&a)?)?,
                "--panic-after" => cfg.panic_after = Some(parsed(&a, val(&a)?)?),
                "-h" | "--help" => return Err(USAGE.into()),
                _ => return Err(format!("unknown argument {a:?}\n{USAGE}")),
            }
        }
        if cfg.frames == 0
            || cfg.rounds == 0
            || cfg.batch == 0
            || cfg.seconds.is_nan()
            || cfg.seconds <= 0.0
        {
            return Err(format!(
                "frames, rounds, batch and seconds must be positive\n{USAGE}"
            ));
        }
        Ok(cfg)
    }

    pub fn main() -> ExitCode {
        let cfg = match parse() {
            Ok(c) => c,
            Err(m) => {
                eprintln!("{m}");
                return ExitCode::from(2);
            }
        };
        // Ctrl-C or SIGTERM stops sending; the run then reports and removes its namespaces.
        for sig in [libc::SIGINT, libc::SIGTERM] {
            // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
            unsafe {
                libc::signal(
                    sig,
                    on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t,
                )
            };
        }
        println!(
            "AF_XDP copy mode (XDP_COPY, generic skb path) on a veth pair between two namespaces; \
         {} rounds of {} frames per mode (modes interleaved), {} per batch/kick, UDP payload \
         {}..={} B gathered from 4 pieces; frames/s is the median of the rounds",
            cfg.rounds,
            cfg.frames,
            cfg.batch,
            cfg.max_payload - cfg.payload_spread + 1,
            cfg.max_payload
        );
        let report = match xdp::run(&cfg) {
            Ok(r) => r,
            Err(Error::Skip(reason)) => {
                println!("SKIPPED: {reason}");
                return ExitCode::SUCCESS;
            }
            Err(e) => {
                eprintln!("xdp_tx: {e}");
                return ExitCode::FAILURE;
            }
        };
        println!(
            "namespaces {} and {} (removed)",
            report.netns[0], report.netns[1]
        );
        println!(
            "{:<19} {:>10} {:>9} {:>9} {:>6} {:>8} {:>12} {:>12} {:>7} {:>10}",
            "mode",
            "frames/s",
            "sent",
            "intact",
            "lost",
            "corrupt",
            "build ns/fr",
            "sendto ns/fr",
            "kicks",
            "backpress"
        );
        let mut ok = true;
        for m in &report.modes {
            println!(
                "{:<19} {:>10.0} {:>9} {:>9} {:>6} {:>8} {:>12.0} {:>12.0} {:>7} {:>10}",
                m.mode.name(),
                m.frames_per_sec(),
                m.sent,
                m.intact,
                m.lost(),
                m.corrupt,
                m.tx.build.as_nanos() as f64 / m.sent.max(1) as f64,
                m.tx.kick.as_nanos() as f64 / m.sent.max(1) as f64,
                m.tx.kicks,
                m.tx.backpressure
            );
            if !m.missing.is_empty() {
                let shown: Vec<String> = m.missing.iter().take(20).map(u64::to_string).collect();
                println!(
                    "  LOST {} datagrams (dropped by the receiving stack or never sent; numbered \
                 across rounds): {}{}",
                    m.missing.len(),
                    shown.join(", "),
                    if m.missing.len() > 20 { ", ..." } else { "" }
                );
            }
            for e in &m.corrupt_examples {
                println!("  CORRUPT: {e}");
            }
            if m.duplicates > 0 {
                println!("  {} duplicates", m.duplicates);
            }
            if let Some(e) = &m.receiver_error {
                println!("  receiver: {e}");
            }
            if m.stalled {
                println!("  sending stopped: the receiver made no progress for 1 s");
            }
            if m.cut_short {
                println!("  sending stopped early (time bound or signal)");
            }
            ok &= m.ok() && !m.stalled;
        }
        println!(
            "kernel XDP_STATISTICS: {} invalid TX descriptors",
            report.tx_invalid_descs
        );
        ok &= report.tx_invalid_descs == 0;
        if ok {
            println!("every frame sent arrived intact in every mode");
            ExitCode::SUCCESS
        } else {
            println!("FAILED: frames lost or corrupt (see above)");
            ExitCode::FAILURE
        }
    }
}
