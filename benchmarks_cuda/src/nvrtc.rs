//! NVRTC loaded at run time (libnvrtc.so.12 / .so / nvrtc64_*.dll) with libloading.
use anyhow::{anyhow, bail, Context, Result};
use std::ffi::{c_char, c_int, CStr, CString};
use std::path::PathBuf;

type Prog = *mut std::ffi::c_void;

pub struct Nvrtc {
    _lib: libloading::Library,
    pub path: PathBuf,
    create: unsafe extern "C" fn(
        *mut Prog,
        *const c_char,
        *const c_char,
        c_int,
        *const *const c_char,
        *const *const c_char,
    ) -> c_int,
    compile: unsafe extern "C" fn(Prog, c_int, *const *const c_char) -> c_int,
    ptx_size: unsafe extern "C" fn(Prog, *mut usize) -> c_int,
    ptx: unsafe extern "C" fn(Prog, *mut c_char) -> c_int,
    cubin_size: Option<unsafe extern "C" fn(Prog, *mut usize) -> c_int>,
    cubin: Option<unsafe extern "C" fn(Prog, *mut c_char) -> c_int>,
    log_size: unsafe extern "C" fn(Prog, *mut usize) -> c_int,
    log: unsafe extern "C" fn(Prog, *mut c_char) -> c_int,
    destroy: unsafe extern "C" fn(*mut Prog) -> c_int,
    version: unsafe extern "C" fn(*mut c_int, *mut c_int) -> c_int,
    num_archs: Option<unsafe extern "C" fn(*mut c_int) -> c_int>,
    archs: Option<unsafe extern "C" fn(*mut c_int) -> c_int>,
}

pub enum Output {
    Ptx,
    Cubin,
}

impl Nvrtc {
    /// Load from an explicit file, or search: the given directories (recursively
    /// one level of `nvidia/*/lib`), then the system loader path.
    pub fn load(dirs: &[PathBuf]) -> Result<Nvrtc> {
        let mut tried = Vec::new();
        for cand in crate::tools::nvrtc_candidates(dirs) {
            // SAFETY: loading a shared library runs its initialisers; NVRTC's are benign.
            match unsafe { libloading::Library::new(&cand) } {
                Ok(lib) => return Self::from_lib(lib, cand),
                Err(e) => tried.push(format!("{}: {e}", cand.display())),
            }
        }
        bail!(
            "NVRTC not found (tried {}); install it with benchmarks_cuda/scripts/install-cuda-tools.sh or pass --cuda-tools DIR",
            if tried.is_empty() { "nothing".into() } else { tried.join("; ") }
        )
    }

    fn from_lib(lib: libloading::Library, path: PathBuf) -> Result<Nvrtc> {
        unsafe {
            macro_rules! sym {
                ($n:literal) => {
                    *lib.get($n).with_context(|| {
                        format!(
                            "{}: missing {}",
                            path.display(),
                            String::from_utf8_lossy(&$n[..$n.len() - 1])
                        )
                    })?
                };
            }
            macro_rules! opt {
                ($n:literal) => {
                    lib.get($n).ok().map(|s| *s)
                };
            }
            Ok(Nvrtc {
                create: sym!(b"nvrtcCreateProgram\0"),
                compile: sym!(b"nvrtcCompileProgram\0"),
                ptx_size: sym!(b"nvrtcGetPTXSize\0"),
                ptx: sym!(b"nvrtcGetPTX\0"),
                cubin_size: opt!(b"nvrtcGetCUBINSize\0"),
                cubin: opt!(b"nvrtcGetCUBIN\0"),
                log_size: sym!(b"nvrtcGetProgramLogSize\0"),
                log: sym!(b"nvrtcGetProgramLog\0"),
                destroy: sym!(b"nvrtcDestroyProgram\0"),
                version: sym!(b"nvrtcVersion\0"),
                num_archs: opt!(b"nvrtcGetNumSupportedArchs\0"),
                archs: opt!(b"nvrtcGetSupportedArchs\0"),
                _lib: lib,
                path,
            })
        }
    }

    pub fn version(&self) -> (i32, i32) {
        let (mut a, mut b) = (0, 0);
        unsafe { (self.version)(&mut a, &mut b) };
        (a, b)
    }

    /// Real architectures this NVRTC can compile for (e.g. [50, 52, ..., 90]).
    pub fn supported_archs(&self) -> Vec<i32> {
        let (Some(n), Some(a)) = (self.num_archs, self.archs) else {
            return vec![];
        };
        let mut k = 0;
        unsafe {
            if n(&mut k) != 0 || k <= 0 {
                return vec![];
            }
            let mut v = vec![0; k as usize];
            if a(v.as_mut_ptr()) != 0 {
                return vec![];
            }
            v
        }
    }

    /// Compile `source` with `opts`; PTX or CUBIN bytes (PTX NUL-terminated) and the log.
    pub fn compile(
        &self,
        source: &str,
        name: &str,
        opts: &[String],
        out: Output,
    ) -> Result<(Vec<u8>, String)> {
        let src = CString::new(source)?;
        let nm = CString::new(name)?;
        let copts: Vec<CString> = opts
            .iter()
            .map(|o| CString::new(o.as_str()))
            .collect::<Result<_, _>>()?;
        let ptrs: Vec<*const c_char> = copts.iter().map(|c| c.as_ptr()).collect();
        unsafe {
            let mut prog: Prog = std::ptr::null_mut();
            let r = (self.create)(
                &mut prog,
                src.as_ptr(),
                nm.as_ptr(),
                0,
                std::ptr::null(),
                std::ptr::null(),
            );
            if r != 0 {
                bail!("nvrtcCreateProgram failed ({r})");
            }
            let r = (self.compile)(prog, ptrs.len() as c_int, ptrs.as_ptr());
            let mut n = 0usize;
            (self.log_size)(prog, &mut n);
            let mut log = vec![0u8; n.max(1)];
            (self.log)(prog, log.as_mut_ptr() as *mut c_char);
            let log = CStr::from_bytes_until_nul(&log)
                .map(|c| c.to_string_lossy().into_owned())
                .unwrap_or_default();
            if r != 0 {
                (self.destroy)(&mut prog);
                let first = log
                    .lines()
                    .find(|l| l.contains("error"))
                    .unwrap_or(log.lines().next().unwrap_or(""))
                    .trim()
                    .to_string();
                bail!("NVRTC compile of {name} failed ({opts:?}): {first}");
            }
            let bytes = match out {
                Output::Ptx => {
                    (self.ptx_size)(prog, &mut n);
                    let mut b = vec![0u8; n];
                    (self.ptx)(prog, b.as_mut_ptr() as *mut c_char);
                    b
                }
                Output::Cubin => {
                    let (Some(sz), Some(get)) = (self.cubin_size, self.cubin) else {
                        (self.destroy)(&mut prog);
                        return Err(anyhow!("this NVRTC cannot produce CUBIN"));
                    };
                    sz(prog, &mut n);
                    let mut b = vec![0u8; n];
                    get(prog, b.as_mut_ptr() as *mut c_char);
                    b
                }
            };
            (self.destroy)(&mut prog);
            Ok((bytes, log))
        }
    }
}
