//! Two network namespaces of our own joined by a veth pair, removed when the guard drops (on
//! return, on error and during a panic's unwinding), and a way for one thread to enter one.
//!
//! Set up with iproute2's `ip`: `ip netns add` twice, then one `ip link add` that creates each
//! veth end directly inside its namespace, so no link ever exists in the namespace the program
//! started in. Deleting a namespace destroys the veth end inside it, and with it the pair.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

/// Where `ip netns` keeps its namespaces.
const NETNS_DIR: &str = "/var/run/netns";
/// Prefix of every namespace we create: `ccxdp-<pid>-<n>-{tx,rx}`.
pub const PREFIX: &str = "ccxdp-";

/// One end of the pair.
#[derive(Clone, Debug)]
pub struct End {
    pub netns: String,
    pub ifname: &'static str,
    pub mac: [u8; 6],
    pub ip: [u8; 4],
}

/// The namespaces and the veth pair; dropping it deletes both namespaces.
pub struct NetnsPair {
    pub tx: End,
    pub rx: End,
    pub mtu: usize,
    /// Namespaces created so far (deleted in reverse order on drop).
    created: Vec<String>,
}

/// Why the pair could not be set up.
#[derive(Debug)]
pub enum SetupError {
    /// `ip` is not installed, or network namespaces cannot be created here.
    Unavailable(String),
    Failed(String),
}

fn ip(args: &[&str]) -> Result<(), SetupError> {
    let out = Command::new("ip").args(args).output().map_err(|e| {
        if e.kind() == io::ErrorKind::NotFound {
            SetupError::Unavailable("iproute2's `ip` is not installed".into())
        } else {
            SetupError::Failed(format!("ip {}: {e}", args.join(" ")))
        }
    })?;
    if !out.status.success() {
        return Err(SetupError::Failed(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(())
}

fn mac_str(m: [u8; 6]) -> String {
    m.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// Deletes namespaces `ccxdp-<pid>-*` left by a process that no longer exists (killed with
/// SIGKILL, where no destructor runs). Never touches a live process's namespaces.
pub fn remove_stale() {
    let Ok(dir) = std::fs::read_dir(NETNS_DIR) else {
        return;
    };
    for entry in dir.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix(PREFIX)
            .and_then(|r| r.split('-').next())
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = ip(&["netns", "del", &name]);
        }
    }
}

/// Whether a namespace of that name exists.
pub fn exists(netns: &str) -> bool {
    Path::new(NETNS_DIR).join(netns).exists()
}

impl NetnsPair {
    /// Creates `ccxdp-<pid>-<n>-tx` and `-rx`, a veth pair `xdp0` (tx) / `xdp1` (rx) with
    /// fixed locally administered MACs and link-local addresses 169.254.77.1/24 and .2/24,
    /// both ends and loopback up, MTU `mtu`.
    pub fn create(mtu: usize) -> Result<Self, SetupError> {
        static SERIAL: AtomicU32 = AtomicU32::new(0);
        let base = format!(
            "{PREFIX}{}-{}",
            std::process::id(),
            SERIAL.fetch_add(1, Ordering::Relaxed)
        );
        let mut pair = NetnsPair {
            tx: End {
                netns: format!("{base}-tx"),
                ifname: "xdp0",
                mac: [0x02, 0xcc, 0, 0, 0, 1],
                ip: [169, 254, 77, 1],
            },
            rx: End {
                netns: format!("{base}-rx"),
                ifname: "xdp1",
                mac: [0x02, 0xcc, 0, 0, 0, 2],
                ip: [169, 254, 77, 2],
            },
            mtu,
            created: Vec::new(),
        };
        // From here on, an early return drops `pair`, which deletes what was created.
        for ns in [pair.tx.netns.clone(), pair.rx.netns.clone()] {
            ip(&["netns", "add", &ns]).map_err(|e| match e {
                SetupError::Failed(m) => {
                    SetupError::Unavailable(format!("cannot create a network namespace: {m}"))
                }
                e => e,
            })?;
            pair.created.push(ns);
        }
        let mtu_s = mtu.to_string();
        let (tx_mac, rx_mac) = (mac_str(pair.tx.mac), mac_str(pair.rx.mac));
        ip(&[
            "link",
            "add",
            "name",
            pair.tx.ifname,
            "netns",
            &pair.tx.netns,
            "address",
            &tx_mac,
            "mtu",
            &mtu_s,
            "type",
            "veth",
            "peer",
            "name",
            pair.rx.ifname,
            "netns",
            &pair.rx.netns,
            "address",
            &rx_mac,
            "mtu",
            &mtu_s,
        ])?;
        for end in [&pair.tx, &pair.rx] {
            let addr = format!("{}.{}.{}.{}/24", end.ip[0], end.ip[1], end.ip[2], end.ip[3]);
            ip(&["-n", &end.netns, "addr", "add", &addr, "dev", end.ifname])?;
            ip(&["-n", &end.netns, "link", "set", "lo", "up"])?;
            ip(&["-n", &end.netns, "link", "set", end.ifname, "up"])?;
        }
        Ok(pair)
    }

    /// Both namespace names.
    pub fn names(&self) -> [String; 2] {
        [self.tx.netns.clone(), self.rx.netns.clone()]
    }
}

impl Drop for NetnsPair {
    fn drop(&mut self) {
        // Every socket in them is closed by now (the threads that opened them were joined
        // first); deleting a namespace removes its veth end, and the pair with it.
        for ns in self.created.drain(..).rev() {
            if let Err(e) = ip(&["netns", "del", &ns]) {
                eprintln!("xdp_tx: cleanup: {e:?}");
            }
        }
    }
}

/// Moves the calling thread (only it) into the named namespace: sockets it opens from now on
/// live there.
pub fn enter(netns: &str) -> io::Result<()> {
    let f = File::open(Path::new(NETNS_DIR).join(netns))?;
    // SAFETY: `f` is an open namespace file; `setns` changes only this thread's namespace.
    if unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
