//! `CACHECOPY_PRELOAD`: which cache mode each function group runs, or `off` (glibc's own).
//!
//! The value is a comma-separated list of items, read left to right, a later item winning:
//! `MODE` or `all=MODE` sets every group, `GROUP=MODE` one group. `GROUP` is `memcpy`
//! (`memcpy`, `mempcpy`, `__memcpy_chk`, `__mempcpy_chk`), `memmove` (`memmove`,
//! `__memmove_chk`) or `memset` (`memset`, `bzero`, `__memset_chk`); `MODE` is `auto`,
//! `temporal`, `nontemporal`, `flushcache` (cachecopy's modes, any case) or `off`. Unset or
//! empty: `auto` everywhere. An item that does not parse is ignored (the group keeps what it had)
//! and reported once on stderr. Parsed in place: no allocation (the first call of a process may
//! come from its allocator).

use core::str::FromStr;

use cachecopy::Mode;

/// The function groups, in the order of their settings ([`COPY`], [`MOVE`], [`SET`]).
pub const GROUPS: [&str; 3] = ["memcpy", "memmove", "memset"];
/// `memcpy`, `mempcpy` and their fortified forms.
pub const COPY: usize = 0;
/// `memmove` and `__memmove_chk`.
pub const MOVE: usize = 1;
/// `memset`, `bzero` and `__memset_chk`.
pub const SET: usize = 2;

/// What one function group runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Choice {
    /// cachecopy in this mode.
    Mode(Mode),
    /// The next definition in the lookup order (glibc's), as if this library were not loaded.
    Off,
}

/// The settings of the three groups, and the first item that did not parse.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Parsed<'a> {
    /// Indexed by [`COPY`], [`MOVE`], [`SET`].
    pub choice: [Choice; 3],
    /// The first item ignored, as written (trimmed).
    pub bad: Option<&'a [u8]>,
}

/// The default: `Auto` for every group.
pub const DEFAULT: [Choice; 3] = [Choice::Mode(Mode::Auto); 3];

/// Reads a `CACHECOPY_PRELOAD` value (`None`: unset).
pub fn parse(value: Option<&[u8]>) -> Parsed<'_> {
    let mut out = Parsed {
        choice: DEFAULT,
        bad: None,
    };
    let Some(value) = value else {
        return out;
    };
    for item in value.split(|&b| b == b',') {
        let item = item.trim_ascii();
        if item.is_empty() {
            continue;
        }
        let (group, setting) = match item.iter().position(|&b| b == b'=') {
            Some(i) => (Some(item[..i].trim_ascii()), item[i + 1..].trim_ascii()),
            None => (None, item),
        };
        let Some(choice) = choice(setting) else {
            out.bad.get_or_insert(item);
            continue;
        };
        match group {
            None => out.choice = [choice; 3],
            Some(g) if g.eq_ignore_ascii_case(b"all") => out.choice = [choice; 3],
            Some(g) => match GROUPS
                .iter()
                .position(|name| name.as_bytes().eq_ignore_ascii_case(g))
            {
                Some(i) => out.choice[i] = choice,
                None => {
                    out.bad.get_or_insert(item);
                }
            },
        }
    }
    out
}

/// One setting: a mode's name or `off`.
fn choice(v: &[u8]) -> Option<Choice> {
    if v.eq_ignore_ascii_case(b"off") {
        return Some(Choice::Off);
    }
    let name = core::str::from_utf8(v).ok()?;
    Mode::from_str(name).ok().map(Choice::Mode)
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: Choice = Choice::Mode(Mode::Auto);
    const T: Choice = Choice::Mode(Mode::Temporal);
    const N: Choice = Choice::Mode(Mode::NonTemporal);
    const F: Choice = Choice::Mode(Mode::FlushCache);
    const O: Choice = Choice::Off;

    fn p(v: &str) -> ([Choice; 3], Option<&str>) {
        let r = parse(Some(v.as_bytes()));
        (r.choice, r.bad.map(|b| core::str::from_utf8(b).unwrap()))
    }

    #[test]
    fn unset_is_the_default() {
        assert_eq!(parse(None).choice, DEFAULT);
    }

    /// Each line, what it sets the three groups (`memcpy`, `memmove`, `memset`) to, and the
    /// item it reports as bad.
    const LINES: &[(&str, [Choice; 3], Option<&str>)] = &[
        // Empty: every group `Auto`.
        ("", [A, A, A], None),
        (" , ,", [A, A, A], None),
        // One mode sets every group.
        ("off", [O, O, O], None),
        ("Temporal", [T, T, T], None),
        ("all=nontemporal", [N, N, N], None),
        ("ALL = FlushCache", [F, F, F], None),
        // A group by its name; a later item wins.
        ("memcpy=nontemporal", [N, A, A], None),
        ("off,memcpy=auto", [A, O, O], None),
        (
            "memset=off, memmove=temporal ,memcpy=flushcache",
            [F, T, O],
            None,
        ),
        ("memcpy=off,all=temporal", [T, T, T], None),
        // A bad item is ignored, and the first one reported.
        ("memcpy=nontemproal", [A, A, A], Some("memcpy=nontemproal")),
        ("strcpy=off,memset=off,x", [A, A, O], Some("strcpy=off")),
        ("memcpy=", [A, A, A], Some("memcpy=")),
        ("=off", [A, A, A], Some("=off")),
        ("memcpy=off=off", [A, A, A], Some("memcpy=off=off")),
        ("\u{e9}", [A, A, A], Some("\u{e9}")),
    ];

    #[test]
    fn each_line_sets_the_groups_and_reports_the_first_bad_item() {
        for &(line, choice, bad) in LINES {
            assert_eq!(p(line), (choice, bad), "{line:?}");
        }
    }
}
