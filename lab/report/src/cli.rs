//! Flag parsing (lexopt): `cachecopy [report] [--quick] [--json FILE] [--svg FILE] [--html FILE] [--sizes LIST]
//! [--iterations N] [--dst-offset N] [--only LIST] [--libmem PATH]` and
//! `cachecopy compare A.json B.json` and `cachecopy engines [--rule]`.

use std::ffi::OsString;
use std::path::PathBuf;

pub const USAGE: &str = "\
cachecopy: what each copy mode is worth on this machine

Usage: cachecopy [report] [OPTIONS]
       cachecopy compare A.json B.json
       cachecopy engines [--rule]

Commands:
  report              print the whole report (the default): first a screen of what to use
                      here and what it is worth, then every section it rests on
  compare A B         list every figure of sections 2, 6 and 8 that moved more than 3 %
                      from run A to run B (both written by --json), e.g. without and with
                      the CACHECOPY_TUNE line a report prints
  engines             print the engines this CPU runs whose code differs, one per line as
                      CACHECOPY_TUNE fields (each backend alone, AVX-512 with either edge
                      store, and one pair of two backends), for running a test suite once per
                      engine (.ci/run does); --rule: the one the CPU's rule picks

Options:
  --quick             a shorter run: fewer sizes and samples (under 30 s)
  --json FILE         also write every figure as JSON to FILE
  --svg FILE          also plot copy bandwidth versus size (log axes, one line per mode) to FILE
  --html FILE         also write one self-contained page to FILE: the first screen, plots of
                      every section's speed against size, and the slower-here list as a table
  --sizes LIST        sizes for the copy and fill tables, comma-separated, with optional
                      K/M/G suffixes (KiB/MiB/GiB), e.g. 64,4K,1M,256M
  --iterations N      samples per figure (default 11, 5 with --quick)
  --dst-offset N      put every destination of the copy and fill tables N bytes (0-4095) past
                      its slot's start, as a buffer behind a header is (e.g. 24)
  --only LIST         run only these sections (comma-separated, of: 7, 8, 8f, 9), after section 1
                      and before the closing section 10; --json then writes those sections'
                      figures (enough for compare), e.g. --only 8f --quick
  --libmem PATH       also measure AMD's AOCL-LibMem in section 8f: its libaocl-libmem.so or a
                      build directory holding it (default: $CACHECOPY_LIBMEM; skipped if unset)
  -h, --help          print this help

Environment: CACHECOPY_TUNE=nt=16M,fill_nt=32M,body=avx2,... sets any field of the plan (the
report's section 1 prints the whole line in force); the report shows what it set.";

/// How big a run is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    Full,
    Quick,
    /// Hidden (`--tiny`): the smallest run that still exercises every section, for the tests.
    Tiny,
}

impl Scale {
    /// `full`, `quick` or `tiny`: the JSON's `scale` and, but for `full`, the flag's name.
    pub fn name(self) -> &'static str {
        match self {
            Scale::Full => "full",
            Scale::Quick => "quick",
            Scale::Tiny => "tiny",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    pub scale: Scale,
    pub json: Option<PathBuf>,
    pub svg: Option<PathBuf>,
    /// `--html`: the page.
    pub html: Option<PathBuf>,
    pub sizes: Option<Vec<usize>>,
    pub iterations: Option<usize>,
    /// `--dst-offset`: bytes every copy and fill destination of sections 2 and 6 is shifted by.
    pub dst_offset: usize,
    /// `--only`: the sections to run (of [`ONLY`]), in the order given; `None`: all.
    pub only: Option<Vec<String>>,
    /// `--libmem`: AOCL-LibMem's shared library or build directory.
    pub libmem: Option<PathBuf>,
}

/// The sections `--only` can run alone: those that need nothing but the session (section 7
/// calibrates once for 7c).
pub const ONLY: [&str; 4] = ["7", "8", "8f", "9"];

impl Default for Options {
    /// A full report, nothing written but stdout.
    fn default() -> Options {
        Options {
            scale: Scale::Full,
            json: None,
            svg: None,
            html: None,
            sizes: None,
            iterations: None,
            dst_offset: 0,
            only: None,
            libmem: None,
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
pub enum Command {
    Report(Options),
    /// `compare A B`: two reports' JSON.
    Compare(PathBuf, PathBuf),
    /// `engines [--rule]`: the engines to test on this CPU (`--rule`: the rule's alone).
    Engines {
        rule: bool,
    },
    Help,
}

/// Parses the arguments after the program name. `Err` is the message for stderr (exit 2).
pub fn parse<I>(args: I) -> Result<Command, String>
where
    I: IntoIterator,
    I::Item: Into<OsString>,
{
    use lexopt::prelude::*;
    let mut opts = Options::default();
    let mut seen_command = false;
    let mut compare: Option<Vec<PathBuf>> = None;
    let mut engines: Option<bool> = None;
    let mut p = lexopt::Parser::from_args(args);
    while let Some(arg) = p.next().map_err(|e| e.to_string())? {
        match arg {
            Short('h') | Long("help") => return Ok(Command::Help),
            Long("rule") if engines.is_some() => engines = Some(true),
            Long("quick") => opts.scale = Scale::Quick,
            Long("tiny") => opts.scale = Scale::Tiny,
            Long("json") => opts.json = Some(p.value().map_err(|e| e.to_string())?.into()),
            Long("svg") => opts.svg = Some(p.value().map_err(|e| e.to_string())?.into()),
            Long("html") => opts.html = Some(p.value().map_err(|e| e.to_string())?.into()),
            Long("sizes") => {
                let v = p.value().map_err(|e| e.to_string())?;
                let v = v.to_str().ok_or("--sizes: not valid UTF-8")?;
                opts.sizes = Some(parse_sizes(v)?);
            }
            Long("iterations") => {
                let v = p.value().map_err(|e| e.to_string())?;
                let n: usize = v
                    .to_str()
                    .and_then(|s| s.trim().parse().ok())
                    .filter(|&n| n >= 1)
                    .ok_or_else(|| format!("--iterations: expected a positive count, got {v:?}"))?;
                opts.iterations = Some(n);
            }
            Long("dst-offset") => {
                let v = p.value().map_err(|e| e.to_string())?;
                opts.dst_offset = v
                    .to_str()
                    .and_then(|s| s.trim().parse().ok())
                    .filter(|&n| n < 4096)
                    .ok_or_else(|| format!("--dst-offset: expected 0 to 4095 bytes, got {v:?}"))?;
            }
            Long("only") => {
                let v = p.value().map_err(|e| e.to_string())?;
                let v = v.to_str().ok_or("--only: not valid UTF-8")?;
                let mut list = Vec::new();
                for name in v.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                    if !ONLY.contains(&name) {
                        return Err(format!(
                            "--only: {name:?} is not a section that runs alone (one of {})",
                            ONLY.join(", ")
                        ));
                    }
                    if !list.iter().any(|n| n == name) {
                        list.push(name.to_string());
                    }
                }
                if list.is_empty() {
                    return Err("--only: expected at least one section".into());
                }
                opts.only = Some(list);
            }
            Long("libmem") => opts.libmem = Some(p.value().map_err(|e| e.to_string())?.into()),
            Value(v) if !seen_command && v == "report" => seen_command = true,
            Value(v) if !seen_command && v == "engines" => {
                seen_command = true;
                engines = Some(false);
            }
            Value(v) if !seen_command && v == "compare" => {
                seen_command = true;
                compare = Some(Vec::new());
            }
            Value(v) if compare.as_ref().is_some_and(|c| c.len() < 2) => {
                compare.as_mut().expect("checked").push(v.into());
            }
            Value(v) => return Err(format!("unexpected argument {v:?}")),
            _ => return Err(arg.unexpected().to_string()),
        }
    }
    if let Some(rule) = engines {
        if opts != Options::default() {
            return Err("engines takes no report options".into());
        }
        return Ok(Command::Engines { rule });
    }
    if let Some(files) = compare {
        let [a, b]: [PathBuf; 2] = files
            .try_into()
            .map_err(|_| "compare: expected two JSON files, A and B".to_string())?;
        if opts != Options::default() {
            return Err("compare takes two JSON files and no report options".into());
        }
        return Ok(Command::Compare(a, b));
    }
    Ok(Command::Report(opts))
}

/// `64,4K,1M` → bytes. K, M and G are binary (KiB, MiB, GiB); an optional trailing `B`/`iB`.
pub fn parse_sizes(list: &str) -> Result<Vec<usize>, String> {
    let mut out = Vec::new();
    for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        out.push(parse_size(item).ok_or_else(|| {
            format!("--sizes: {item:?} is not a size (examples: 64, 4K, 1M, 256M)")
        })?);
    }
    if out.is_empty() {
        return Err("--sizes: expected at least one size".into());
    }
    out.sort_unstable();
    out.dedup();
    if let Some(&big) = out.iter().find(|&&s| s > 1 << 30) {
        return Err(format!(
            "--sizes: {big} is larger than the 1 GiB this report allows"
        ));
    }
    Ok(out)
}

fn parse_size(s: &str) -> Option<usize> {
    let upper = s.to_ascii_uppercase();
    let t = upper
        .strip_suffix("IB")
        .or_else(|| upper.strip_suffix('B'))
        .unwrap_or(&upper);
    let (digits, shift) = match t.as_bytes().last()? {
        b'K' => (&t[..t.len() - 1], 10),
        b'M' => (&t[..t.len() - 1], 20),
        b'G' => (&t[..t.len() - 1], 30),
        _ => (t, 0),
    };
    let n: usize = digits.trim().parse().ok()?;
    (n > 0).then_some(n)?.checked_mul(1 << shift)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(args: &[&str]) -> Result<Options, String> {
        match parse(args.iter().copied())? {
            Command::Report(o) => Ok(o),
            Command::Help => Err("help".into()),
            Command::Compare(..) => Err("compare".into()),
            Command::Engines { .. } => Err("engines".into()),
        }
    }

    #[test]
    fn engines_takes_only_rule() {
        assert_eq!(parse(["engines"]), Ok(Command::Engines { rule: false }));
        assert_eq!(
            parse(["engines", "--rule"]),
            Ok(Command::Engines { rule: true })
        );
        assert!(parse(["engines", "--quick"]).is_err());
        assert!(parse(["--rule"]).is_err());
        assert!(parse(["engines", "x"]).is_err());
    }

    #[test]
    fn defaults_and_subcommand() {
        let o = opts(&[]).unwrap();
        assert_eq!(o.scale, Scale::Full);
        assert_eq!(
            (o.json, o.svg, o.sizes, o.iterations),
            (None, None, None, None)
        );
        assert_eq!(opts(&["report"]).unwrap().scale, Scale::Full);
        assert_eq!(opts(&["report", "--quick"]).unwrap().scale, Scale::Quick);
        assert_eq!(opts(&["--quick", "report"]).unwrap().scale, Scale::Quick);
    }

    #[test]
    fn values() {
        let o = opts(&[
            "--json",
            "a.json",
            "--svg=b.svg",
            "--sizes",
            "1M,64, 4k",
            "--iterations",
            "7",
            "--html",
            "c.html",
        ])
        .unwrap();
        assert_eq!(o.html, Some("c.html".into()));
        assert_eq!(o.json, Some("a.json".into()));
        assert_eq!(o.svg, Some("b.svg".into()));
        assert_eq!(o.sizes, Some(vec![64, 4096, 1 << 20]));
        assert_eq!(o.iterations, Some(7));
    }

    #[test]
    fn compare_takes_two_files() {
        assert_eq!(
            parse(["compare", "a.json", "b.json"]),
            Ok(Command::Compare("a.json".into(), "b.json".into()))
        );
        assert!(parse(["compare", "a.json"])
            .unwrap_err()
            .contains("two JSON"));
        assert!(parse(["compare", "a", "b", "c"])
            .unwrap_err()
            .contains("\"c\""));
        assert!(parse(["compare", "a", "b", "--quick"])
            .unwrap_err()
            .contains("no report options"));
        assert!(parse(["report", "compare"]).is_err());
    }

    #[test]
    fn help() {
        assert_eq!(parse(["--help"]), Ok(Command::Help));
        assert_eq!(parse(["report", "-h"]), Ok(Command::Help));
    }

    #[test]
    fn bad_flags_are_refused_with_a_message() {
        let e = opts(&["--frobnicate"]).unwrap_err();
        assert!(e.contains("--frobnicate"), "{e}");
        let e = opts(&["bench"]).unwrap_err();
        assert!(e.contains("bench"), "{e}");
        let e = opts(&["report", "report"]).unwrap_err();
        assert!(e.contains("report"), "{e}");
        assert!(opts(&["--json"]).unwrap_err().contains("--json"));
        assert!(opts(&["--iterations", "0"])
            .unwrap_err()
            .contains("--iterations"));
        assert!(opts(&["--iterations", "x"])
            .unwrap_err()
            .contains("--iterations"));
        assert!(opts(&["--sizes", "4Q"]).unwrap_err().contains("4Q"));
        assert_eq!(opts(&["--dst-offset", "24"]).unwrap().dst_offset, 24);
        assert_eq!(opts(&["report"]).unwrap().dst_offset, 0);
        assert!(opts(&["--dst-offset", "4096"])
            .unwrap_err()
            .contains("0 to 4095"));
        assert!(opts(&["--sizes", ","]).is_err());
        assert!(opts(&["--sizes", "2G"]).unwrap_err().contains("1 GiB"));
        assert!(opts(&["--quick=yes"]).is_err());
        assert_eq!(
            opts(&["--only", "8f,9,8f"]).unwrap().only,
            Some(vec!["8f".to_string(), "9".to_string()])
        );
        assert!(opts(&["--only", "5"]).unwrap_err().contains("7, 8, 8f, 9"));
        assert_eq!(
            opts(&["--only", "7"]).unwrap().only,
            Some(vec!["7".to_string()])
        );
        assert!(opts(&["--only", ","]).is_err());
        assert_eq!(
            opts(&["--libmem", "/x/lib.so"]).unwrap().libmem,
            Some("/x/lib.so".into())
        );
    }

    #[test]
    fn sizes() {
        assert_eq!(
            parse_sizes("64B,1KiB,2mb,1G"),
            Ok(vec![64, 1024, 2 << 20, 1 << 30])
        );
        assert_eq!(parse_sizes("8,8,1"), Ok(vec![1, 8]));
        assert!(parse_sizes("0").is_err());
        assert!(parse_sizes("-1").is_err());
        assert!(parse_sizes("99999999999999999999K").is_err());
    }
}
