//! The kernel's side: an AF_XDP socket in copy mode with its UMEM, completion and TX rings
//! (`include/uapi/linux/if_xdp.h`), set up with raw `libc` calls.

use std::ffi::CString;
use std::io;
use std::mem::size_of;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::AtomicU32;
use std::sync::Arc;

use super::ring::{Consumer, Desc, Producer, RingMem};
use super::tx::{Kick, TxPath, Umem};

/// An mmapped region, unmapped on drop.
pub struct Mmap {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: a mapping is plain memory; who may touch which bytes is the rings' and the chunk
// pool's business, not the mapping's.
unsafe impl Send for Mmap {}
// SAFETY: as above.
unsafe impl Sync for Mmap {}

impl Mmap {
    /// Maps `len` bytes: anonymous when `fd` is `None`, else the AF_XDP ring at `offset`.
    fn new(len: usize, fd: Option<&OwnedFd>, offset: i64) -> io::Result<Self> {
        let (flags, raw) = match fd {
            Some(fd) => (libc::MAP_SHARED | libc::MAP_POPULATE, fd.as_raw_fd()),
            None => (
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_POPULATE,
                -1,
            ),
        };
        // SAFETY: a fresh mapping chosen by the kernel (addr NULL); no existing memory is
        // affected. The result is checked.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                flags,
                raw,
                offset,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Mmap {
            ptr: ptr.cast(),
            len,
        })
    }
}

impl Drop for Mmap {
    fn drop(&mut self) {
        // SAFETY: our own mapping of exactly this range; every user holds an `Arc` to us, so
        // nothing uses it any more.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

/// `sendto(fd, NULL, 0, MSG_DONTWAIT)`: in copy mode, runs the kernel's `xsk_generic_xmit`.
pub struct XskKick {
    fd: OwnedFd,
}

impl Kick for XskKick {
    fn kick(&mut self) -> io::Result<()> {
        // SAFETY: a zero-length send with no buffer and no address on our own socket.
        let r = unsafe {
            libc::sendto(
                self.fd.as_raw_fd(),
                std::ptr::null(),
                0,
                libc::MSG_DONTWAIT,
                std::ptr::null(),
                0,
            )
        };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

impl XskKick {
    /// `XDP_STATISTICS`: the kernel's own counters for this socket.
    pub fn statistics(&self) -> io::Result<libc::xdp_statistics> {
        // SAFETY: `xdp_statistics` is plain integers.
        let (st, _) = unsafe { getsockopt(&self.fd, libc::SOL_XDP, libc::XDP_STATISTICS)? };
        Ok(st)
    }
}

/// Sizes of one socket's UMEM and rings.
#[derive(Clone, Copy, Debug)]
pub struct XskConfig {
    pub chunks: u32,
    pub chunk_size: u32,
    pub tx_ring: u32,
    pub comp_ring: u32,
    /// The fill ring is required for bind; TX never uses it.
    pub fill_ring: u32,
}

impl Default for XskConfig {
    fn default() -> Self {
        XskConfig {
            chunks: 1024,
            chunk_size: 2048,
            tx_ring: 512,
            // At least `chunks`: every chunk in flight has a completion slot, so the kernel
            // never stops on a full completion ring for want of our reaping.
            comp_ring: 1024,
            fill_ring: 64,
        }
    }
}

/// Why the socket could not be opened.
#[derive(Debug)]
pub enum OpenError {
    /// This kernel has no AF_XDP (or we may not open one).
    Unsupported(io::Error),
    Failed(&'static str, io::Error),
}

fn check(r: libc::c_int, what: &'static str) -> Result<(), OpenError> {
    if r < 0 {
        return Err(OpenError::Failed(what, io::Error::last_os_error()));
    }
    Ok(())
}

/// `setsockopt(fd, level, opt)` to `v`, passed with its size.
///
/// # Safety
/// `v` is what the option expects (whatever memory it names stays valid as long as the option
/// says).
unsafe fn setsockopt<T>(
    fd: &impl AsRawFd,
    level: libc::c_int,
    opt: libc::c_int,
    v: &T,
) -> io::Result<()> {
    let len = size_of::<T>() as libc::socklen_t;
    // SAFETY: `v` is readable for `len` bytes; what the option does with it is the caller's.
    let r = unsafe { libc::setsockopt(fd.as_raw_fd(), level, opt, (v as *const T).cast(), len) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// `getsockopt(fd, level, opt)` into a zeroed `T`: the value and how many bytes the kernel
/// wrote.
///
/// # Safety
/// `T` is plain integers (all-zero, and whatever bytes the kernel writes, are a valid `T`).
unsafe fn getsockopt<T>(
    fd: &impl AsRawFd,
    level: libc::c_int,
    opt: libc::c_int,
) -> io::Result<(T, usize)> {
    // SAFETY: all-zero is a valid `T` (caller).
    let mut v: T = unsafe { std::mem::zeroed() };
    let mut len = size_of::<T>() as libc::socklen_t;
    // SAFETY: `v` is writable for `len` bytes; the kernel writes at most that, a valid `T`
    // whatever it writes (caller).
    let r = unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            level,
            opt,
            (&mut v as *mut T).cast(),
            &mut len,
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((v, len as usize))
}

fn set_u32(fd: &OwnedFd, opt: libc::c_int, v: u32, what: &'static str) -> Result<(), OpenError> {
    // SAFETY: a `u32` option value.
    unsafe { setsockopt(fd, libc::SOL_XDP, opt, &v) }.map_err(|e| OpenError::Failed(what, e))
}

/// The ring of `size` slots of `T` in `map` at the kernel's offsets `off` for it.
///
/// # Safety
/// `off` are the offsets the kernel gave for `map`, which is long enough for the index words
/// and `size` slots; nothing but the ring protocol touches them.
unsafe fn ring_mem<T: Copy>(map: &Arc<Mmap>, off: &libc::xdp_ring_offset, size: u32) -> RingMem<T> {
    let at = |o: u64| map.ptr.wrapping_add(o as usize);
    // SAFETY: the caller's contract; `Arc` keeps the mapping alive for the ring.
    unsafe {
        RingMem::new(
            at(off.producer).cast::<AtomicU32>(),
            at(off.consumer).cast::<AtomicU32>(),
            at(off.desc).cast::<T>(),
            size,
            map.clone(),
        )
    }
}

/// Opens an AF_XDP socket on `ifname` queue 0 in copy mode (`XDP_COPY`: the generic, skb
/// path; no XDP program is needed for TX) in the calling thread's network namespace.
pub fn open(ifname: &str, cfg: XskConfig) -> Result<TxPath<XskKick>, OpenError> {
    // SAFETY: plain socket creation; the result is checked.
    let raw = unsafe { libc::socket(libc::AF_XDP, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) };
    if raw < 0 {
        let e = io::Error::last_os_error();
        return Err(match e.raw_os_error() {
            Some(libc::EAFNOSUPPORT | libc::EPERM | libc::EACCES) => OpenError::Unsupported(e),
            _ => OpenError::Failed("socket(AF_XDP)", e),
        });
    }
    // SAFETY: a fresh descriptor nobody else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };

    let len = cfg.chunks as usize * cfg.chunk_size as usize;
    let umem_map =
        Arc::new(Mmap::new(len, None, 0).map_err(|e| OpenError::Failed("mmap UMEM", e))?);
    let reg = libc::xdp_umem_reg {
        addr: umem_map.ptr as u64,
        len: len as u64,
        chunk_size: cfg.chunk_size,
        headroom: 0,
        flags: 0,
        tx_metadata_len: 0,
    };
    // SAFETY: `reg` is a complete `xdp_umem_reg`; the UMEM it names stays mapped while the
    // socket lives (the `TxPath` drops the socket before the UMEM).
    if let Err(e) = unsafe { setsockopt(&fd, libc::SOL_XDP, libc::XDP_UMEM_REG, &reg) } {
        // The first SOL_XDP option: ENOPROTOOPT means nothing below us knows AF_XDP's options
        // (a user-mode emulator such as qemu-user passes the socket through but not them).
        return Err(match e.raw_os_error() {
            Some(libc::ENOPROTOOPT) => OpenError::Unsupported(e),
            _ => OpenError::Failed("XDP_UMEM_REG", e),
        });
    }
    set_u32(
        &fd,
        libc::XDP_UMEM_FILL_RING,
        cfg.fill_ring,
        "XDP_UMEM_FILL_RING",
    )?;
    set_u32(
        &fd,
        libc::XDP_UMEM_COMPLETION_RING,
        cfg.comp_ring,
        "XDP_UMEM_COMPLETION_RING",
    )?;
    set_u32(&fd, libc::XDP_TX_RING, cfg.tx_ring, "XDP_TX_RING")?;

    // SAFETY: `xdp_mmap_offsets` is plain integers.
    let (off, optlen): (libc::xdp_mmap_offsets, _) =
        unsafe { getsockopt(&fd, libc::SOL_XDP, libc::XDP_MMAP_OFFSETS) }
            .map_err(|e| OpenError::Failed("XDP_MMAP_OFFSETS", e))?;
    if optlen != size_of::<libc::xdp_mmap_offsets>() {
        return Err(OpenError::Failed(
            "XDP_MMAP_OFFSETS",
            io::Error::other("kernel without ring flags (pre-5.4 layout)"),
        ));
    }

    let tx_len = off.tx.desc as usize + cfg.tx_ring as usize * size_of::<Desc>();
    let tx_map = Arc::new(
        Mmap::new(tx_len, Some(&fd), libc::XDP_PGOFF_TX_RING)
            .map_err(|e| OpenError::Failed("mmap TX ring", e))?,
    );
    let cq_len = off.cr.desc as usize + cfg.comp_ring as usize * size_of::<u64>();
    let cq_map = Arc::new(
        Mmap::new(
            cq_len,
            Some(&fd),
            libc::XDP_UMEM_PGOFF_COMPLETION_RING as i64,
        )
        .map_err(|e| OpenError::Failed("mmap completion ring", e))?,
    );
    // SAFETY: the offsets come from the kernel for these very mappings, which are long enough
    // for the index words and `size` descriptors; we are the TX ring's only producer and the
    // completion ring's only consumer; the `Arc`s keep the mappings alive.
    let (tx, comp) = unsafe {
        (
            Producer::new(ring_mem::<Desc>(&tx_map, &off.tx, cfg.tx_ring)),
            Consumer::new(ring_mem::<u64>(&cq_map, &off.cr, cfg.comp_ring)),
        )
    };

    let name = CString::new(ifname).map_err(|e| OpenError::Failed("interface name", e.into()))?;
    // SAFETY: a NUL-terminated name.
    let ifindex = unsafe { libc::if_nametoindex(name.as_ptr()) };
    if ifindex == 0 {
        return Err(OpenError::Failed(
            "if_nametoindex",
            io::Error::last_os_error(),
        ));
    }
    let sa = libc::sockaddr_xdp {
        sxdp_family: libc::AF_XDP as u16,
        sxdp_flags: libc::XDP_COPY,
        sxdp_ifindex: ifindex,
        sxdp_queue_id: 0,
        sxdp_shared_umem_fd: 0,
    };
    // SAFETY: a complete `sockaddr_xdp` of the size passed.
    let r = unsafe {
        libc::bind(
            fd.as_raw_fd(),
            (&sa as *const libc::sockaddr_xdp).cast(),
            size_of::<libc::sockaddr_xdp>() as libc::socklen_t,
        )
    };
    check(r, "bind(XDP_COPY)")?;

    // SAFETY: the mapping is `len` bytes, kept alive by the `Arc`; only the TX path writes it
    // and the kernel reads chunks named by TX descriptors.
    let umem = unsafe { Umem::from_raw(umem_map.ptr, len, umem_map.clone()) };
    Ok(TxPath::new(XskKick { fd }, tx, comp, umem, cfg.chunk_size))
}

/// `SO_RCVBUFFORCE` (not in the `libc` crate for Linux): a receive buffer above `rmem_max`.
const SO_RCVBUFFORCE: libc::c_int = 33;

/// Sets the socket's receive buffer to `bytes`, past `rmem_max` if we may.
pub fn set_rcvbuf(fd: &impl AsRawFd, bytes: u32) -> io::Result<()> {
    let v = bytes as libc::c_int;
    // SAFETY: an `int` option value.
    let set = |opt| unsafe { setsockopt(fd, libc::SOL_SOCKET, opt, &v) };
    set(SO_RCVBUFFORCE).or_else(|_| set(libc::SO_RCVBUF))
}

/// The socket's receive buffer as the kernel set it (`SO_RCVBUF`, doubled for its overhead).
pub fn rcvbuf(fd: &impl AsRawFd) -> io::Result<usize> {
    // SAFETY: an `int`.
    let (v, _): (libc::c_int, _) = unsafe { getsockopt(fd, libc::SOL_SOCKET, libc::SO_RCVBUF)? };
    Ok(v.max(0) as usize)
}
