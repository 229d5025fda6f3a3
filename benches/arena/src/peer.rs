//! Another library's `memcpy`, `memset` and `memmove` as a peer to measure against: AMD's
//! AOCL-LibMem (BSD-3-Clause, <https://github.com/amd/aocl-libmem>), built by the user from its
//! public source and loaded here with `dlopen` (never vendored, never linked: a run without it
//! skips the peer and says so). The library is opened with `RTLD_LOCAL`, so it replaces no
//! symbol of the process: glibc stays glibc, and only the pointers taken here reach LibMem.
//!
//! Where to find it: a path given by the caller (the report's `--libmem PATH`) or the
//! environment variable [`ENV`]; either a `.so` file or a directory holding
//! `libaocl-libmem.so` (in it, or in its `lib/` or `src/`, where a CMake build directory keeps
//! it, or those of its `build/`). lab/findings/small-calls.md says
//! how to build it.

use std::ffi::c_void;
#[cfg(target_os = "linux")]
use std::ffi::CString;
use std::path::{Path, PathBuf};

/// The environment variable naming LibMem's shared library or build directory.
pub const ENV: &str = "CACHECOPY_LIBMEM";

/// `memcpy`'s and `memmove`'s C signature.
pub type MemcpyFn = unsafe extern "C" fn(*mut c_void, *const c_void, usize) -> *mut c_void;
/// `memset`'s C signature.
pub type MemsetFn = unsafe extern "C" fn(*mut c_void, i32, usize) -> *mut c_void;

/// A peer library's three functions.
#[derive(Clone, Copy, Debug)]
pub struct Peer {
    /// Its `memcpy`.
    pub memcpy: MemcpyFn,
    /// Its `memset`.
    pub memset: MemsetFn,
    /// Its `memmove`.
    pub memmove: MemcpyFn,
}

/// A peer and where it was loaded from.
#[derive(Clone, Debug)]
pub struct Loaded {
    /// The functions.
    pub peer: Peer,
    /// The shared library opened.
    pub path: PathBuf,
}

/// The shared library a path names: the file itself, or `libaocl-libmem.so` in the directory
/// or in its `lib/`.
fn library(path: &Path) -> Result<PathBuf, String> {
    if path.is_file() {
        return Ok(path.to_path_buf());
    }
    if path.is_dir() {
        for cand in [
            path.join("libaocl-libmem.so"),
            path.join("lib/libaocl-libmem.so"),
            path.join("src/libaocl-libmem.so"),
            path.join("build/lib/libaocl-libmem.so"),
            path.join("build/src/libaocl-libmem.so"),
        ] {
            if cand.is_file() {
                return Ok(cand);
            }
        }
        return Err(format!(
            "{}: no libaocl-libmem.so in it, its lib/, src/, build/lib/ or build/src/ \
             (build it first: lab/findings/small-calls.md)",
            path.display()
        ));
    }
    Err(format!("{}: no such file or directory", path.display()))
}

/// Loads LibMem from `path`, else from [`ENV`]; `Ok(None)` when neither names one, `Err` with
/// the reason when the one named cannot be loaded or lacks a function.
#[cfg(target_os = "linux")]
pub fn libmem(path: Option<&Path>) -> Result<Option<Loaded>, String> {
    let from_env = std::env::var_os(ENV)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from);
    let Some(given) = path.map(Path::to_path_buf).or(from_env) else {
        return Ok(None);
    };
    let lib = library(&given)?;
    let c = CString::new(lib.as_os_str().as_encoded_bytes())
        .map_err(|_| format!("{}: a NUL in the path", lib.display()))?;
    // SAFETY: `c` is a NUL-terminated path. Opening a library runs its constructors: the user
    // named this one as the peer to measure.
    let handle = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    if handle.is_null() {
        // SAFETY: dlerror returns a NUL-terminated message or null.
        let why = unsafe {
            let e = libc::dlerror();
            if e.is_null() {
                "dlopen failed".to_string()
            } else {
                std::ffi::CStr::from_ptr(e).to_string_lossy().into_owned()
            }
        };
        return Err(format!("{}: {why}", lib.display()));
    }
    let sym = |name: &str| -> Result<*mut c_void, String> {
        let n = CString::new(name).expect("no NUL");
        // SAFETY: `handle` is a live handle from dlopen (never closed: the pointers stay valid
        // for the process), `n` a NUL-terminated name. Looked up through the handle, the name
        // resolves to the library's own definition first.
        let p = unsafe { libc::dlsym(handle, n.as_ptr()) };
        if p.is_null() {
            Err(format!("{}: no symbol {name}", lib.display()))
        } else {
            Ok(p)
        }
    };
    let (cpy, set, mov) = (sym("memcpy")?, sym("memset")?, sym("memmove")?);
    // SAFETY: the library exports these names as the C functions of the same names (LibMem
    // defines them with the C signatures), so the pointers have these types.
    let peer = unsafe {
        Peer {
            memcpy: std::mem::transmute::<*mut c_void, MemcpyFn>(cpy),
            memset: std::mem::transmute::<*mut c_void, MemsetFn>(set),
            memmove: std::mem::transmute::<*mut c_void, MemcpyFn>(mov),
        }
    };
    // A library that only forwards to glibc's would measure glibc twice: the pointers must be
    // the library's own.
    let glibc = libc::memcpy as MemcpyFn as *mut c_void;
    if cpy == glibc {
        return Err(format!(
            "{}: its memcpy is glibc's (not a LibMem build?)",
            lib.display()
        ));
    }
    Ok(Some(Loaded { peer, path: lib }))
}

/// Elsewhere than Linux no peer is loaded.
#[cfg(not(target_os = "linux"))]
pub fn libmem(path: Option<&Path>) -> Result<Option<Loaded>, String> {
    let from_env = std::env::var_os(ENV).filter(|v| !v.is_empty());
    match (path, from_env) {
        (None, None) => Ok(None),
        _ => Err("loading LibMem is implemented for Linux only".into()),
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_missing_library_is_an_error_with_its_path() {
        let e = libmem(Some(Path::new("/nonexistent/libaocl-libmem.so"))).unwrap_err();
        assert!(e.contains("/nonexistent"), "{e}");
        let dir = std::env::temp_dir();
        let e = libmem(Some(&dir)).unwrap_err();
        assert!(e.contains("no libaocl-libmem.so"), "{e}");
    }

    /// The C math library this process runs with, as the dynamic loader found it: a library
    /// of the process's own architecture (under QEMU, the emulated one's), where a path of one
    /// distribution's layout may name another architecture's build. `None` where the C library
    /// has no separate `libm.so.6` (musl keeps its math in libc itself). The file is returned
    /// too when the path is one of its open descriptor's (below): keep it open while it is used.
    fn own_libm() -> Option<(PathBuf, Option<std::fs::File>)> {
        use std::os::fd::AsRawFd;
        use std::os::unix::ffi::OsStrExt;
        // SAFETY: a NUL-terminated soname; opening libm runs no constructor of consequence
        // (glibc's libm has none that touches this process's state). Never closed.
        let handle =
            unsafe { libc::dlopen(c"libm.so.6".as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if handle.is_null() {
            return None;
        }
        // SAFETY: a live handle and a NUL-terminated name.
        let cos = unsafe { libc::dlsym(handle, c"cos".as_ptr()) };
        assert!(!cos.is_null(), "libm.so.6 without cos");
        // SAFETY: `Dl_info` is plain data, all-zero valid; dladdr fills it for an address
        // inside a loaded object, and `cos` is one.
        let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
        // SAFETY: as above; `dli_fname` is then a NUL-terminated path owned by the loader.
        let name = unsafe {
            assert!(libc::dladdr(cos, &mut info) != 0 && !info.dli_fname.is_null());
            std::ffi::CStr::from_ptr(info.dli_fname)
        };
        let path = PathBuf::from(std::ffi::OsStr::from_bytes(name.to_bytes()));
        if path.is_file() {
            return Some((path, None));
        }
        // QEMU's user mode shows the emulated process its libraries through the `-L` prefix,
        // which `open` honours and `stat` does not, so the loader's path is not a file to
        // `is_file`: name the same file by an open descriptor, which both see.
        let file = std::fs::File::open(&path).expect("the loader's path of a loaded library");
        let fd_path = PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()));
        Some((fd_path, Some(file)))
    }

    #[test]
    fn a_library_without_the_functions_is_refused() {
        // libm is a shared library with neither function of its own: `dlsym` through its
        // handle finds glibc's `memcpy` among its dependencies, or nothing.
        let Some((libm, _open)) = own_libm() else {
            println!("SKIPPED: this C library has no separate libm.so.6 to try");
            return;
        };
        let e = libmem(Some(&libm)).unwrap_err();
        assert!(
            e.contains("memcpy") || e.contains("glibc's"),
            "{}: {e}",
            libm.display()
        );
    }
}
