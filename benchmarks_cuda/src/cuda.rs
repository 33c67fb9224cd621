//! The real device: NVRTC for the GPU present, the CUDA driver API (cudarc's
//! dynamically loaded bindings), CUDA events, and green contexts for SM partitions.
//! Nothing here runs on machines without a GPU; see runner.rs for the tested logic.
use crate::device::{Arg, Device, DeviceInfo, HostBuf, KernelAttrs, Launch, Scalar};
use crate::nvrtc::{Nvrtc, Output};
use anyhow::{anyhow, bail, Context, Result};
use cudarc::driver::sys::{self, CUresult};
use std::collections::HashMap;
use std::ffi::{c_void, CStr};
use std::path::PathBuf;
use std::time::{Duration, Instant};

fn err_str(r: CUresult) -> String {
    let mut p: *const std::ffi::c_char = std::ptr::null();
    unsafe {
        if sys::cuGetErrorString(r, &mut p) == CUresult::CUDA_SUCCESS && !p.is_null() {
            return CStr::from_ptr(p).to_string_lossy().into_owned();
        }
    }
    format!("{r:?}")
}

fn ck(r: CUresult, what: &str) -> Result<()> {
    if r == CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(anyhow!("{what}: {} ({r:?})", err_str(r)))
    }
}

fn has_symbol(name: &str) -> bool {
    let mut n = name.as_bytes().to_vec();
    n.push(0);
    unsafe { sys::culib().get::<*const c_void>(n.as_slice()).is_ok() }
}

/// Load libcuda and initialise the driver, or explain why not.
pub fn init_driver() -> Result<()> {
    if !unsafe { sys::is_culib_present() } {
        bail!("the CUDA driver library (libcuda.so) was not found: this command needs an NVIDIA GPU and driver");
    }
    ck(unsafe { sys::cuInit(0) }, "cuInit")
}

/// One execution context: the primary context, or a green context over `sms` SMs.
struct Ctx {
    ctx: sys::CUcontext,
    green: Option<sys::CUgreenCtx>,
    stream: sys::CUstream,
    start: sys::CUevent,
    end: sys::CUevent,
}

unsafe fn make_events_stream() -> Result<(sys::CUstream, sys::CUevent, sys::CUevent)> {
    let mut stream = std::ptr::null_mut();
    ck(
        sys::cuStreamCreate(&mut stream, 1 /* non-blocking */),
        "cuStreamCreate",
    )?;
    let (mut a, mut b) = (std::ptr::null_mut(), std::ptr::null_mut());
    ck(sys::cuEventCreate(&mut a, 0), "cuEventCreate")?;
    ck(sys::cuEventCreate(&mut b, 0), "cuEventCreate")?;
    Ok((stream, a, b))
}

/// Split the device's SMs into groups of (at least) `sms` each: green contexts.
unsafe fn green_contexts(
    dev: sys::CUdevice,
    sms: u32,
    groups: u32,
) -> Result<Vec<(sys::CUgreenCtx, u32)>> {
    for s in [
        "cuDeviceGetDevResource",
        "cuDevSmResourceSplitByCount",
        "cuDevResourceGenerateDesc",
        "cuGreenCtxCreate",
        "cuCtxFromGreenCtx",
    ] {
        if !has_symbol(s) {
            bail!("this driver lacks {s}: SM partitions (green contexts) need a CUDA 12.4+ driver");
        }
    }
    let mut whole: sys::CUdevResource = std::mem::zeroed();
    ck(
        sys::cuDeviceGetDevResource(
            dev,
            &mut whole,
            sys::CUdevResourceType::CU_DEV_RESOURCE_TYPE_SM,
        ),
        "cuDeviceGetDevResource",
    )?;
    let mut parts: Vec<sys::CUdevResource> = vec![std::mem::zeroed(); groups as usize];
    let mut n = groups;
    let mut rest: sys::CUdevResource = std::mem::zeroed();
    ck(
        sys::cuDevSmResourceSplitByCount(parts.as_mut_ptr(), &mut n, &whole, &mut rest, 0, sms),
        "cuDevSmResourceSplitByCount",
    )?;
    if n < groups {
        bail!("the GPU has room for only {n} partition(s) of {sms} SMs, {groups} requested");
    }
    let mut out = Vec::new();
    for p in parts.iter_mut() {
        let got = p.__bindgen_anon_1.sm.smCount;
        let mut desc = std::mem::zeroed();
        ck(
            sys::cuDevResourceGenerateDesc(&mut desc, p, 1),
            "cuDevResourceGenerateDesc",
        )?;
        let mut g = std::ptr::null_mut();
        ck(
            sys::cuGreenCtxCreate(&mut g, desc, dev, 1 /* CU_GREEN_CTX_DEFAULT_STREAM */),
            "cuGreenCtxCreate",
        )?;
        out.push((g, got));
    }
    Ok(out)
}

impl Ctx {
    unsafe fn primary(dev: sys::CUdevice) -> Result<Ctx> {
        let mut ctx = std::ptr::null_mut();
        ck(
            sys::cuDevicePrimaryCtxRetain(&mut ctx, dev),
            "cuDevicePrimaryCtxRetain",
        )?;
        ck(sys::cuCtxSetCurrent(ctx), "cuCtxSetCurrent")?;
        let (stream, start, end) = make_events_stream()?;
        Ok(Ctx {
            ctx,
            green: None,
            stream,
            start,
            end,
        })
    }
    unsafe fn from_green(g: sys::CUgreenCtx, _sms: u32) -> Result<Ctx> {
        let mut ctx = std::ptr::null_mut();
        ck(sys::cuCtxFromGreenCtx(&mut ctx, g), "cuCtxFromGreenCtx")?;
        ck(sys::cuCtxSetCurrent(ctx), "cuCtxSetCurrent")?;
        let (stream, start, end) = make_events_stream()?;
        Ok(Ctx {
            ctx,
            green: Some(g),
            stream,
            start,
            end,
        })
    }
    unsafe fn destroy(&mut self, dev: sys::CUdevice) {
        sys::cuCtxSetCurrent(self.ctx);
        sys::cuEventDestroy_v2(self.start);
        sys::cuEventDestroy_v2(self.end);
        sys::cuStreamDestroy_v2(self.stream);
        match self.green {
            Some(g) => {
                sys::cuGreenCtxDestroy(g);
            }
            None => {
                sys::cuDevicePrimaryCtxReset_v2(dev);
            }
        }
    }
}

/// The `kernelParams` array of `cuLaunchKernel`: one pointer per argument cell.
fn param_pointers(storage: &mut [[u8; 8]]) -> Vec<*mut c_void> {
    storage
        .iter_mut()
        .map(|s| s.as_mut_ptr() as *mut c_void)
        .collect()
}

/// One launch of `f` on `stream` (the stream's context must be current).
unsafe fn launch(
    f: sys::CUfunction,
    l: &Launch,
    stream: sys::CUstream,
    params: &mut [*mut c_void],
) -> Result<()> {
    ck(
        sys::cuLaunchKernel(
            f,
            l.grid[0],
            l.grid[1],
            l.grid[2],
            l.block[0],
            l.block[1],
            l.block[2],
            l.smem_dyn,
            stream,
            params.as_mut_ptr(),
            std::ptr::null_mut(),
        ),
        "cuLaunchKernel",
    )
}

pub struct CudaDevice {
    info: DeviceInfo,
    dev: sys::CUdevice,
    ctx: Ctx,
    nvrtc: Nvrtc,
    modules: HashMap<String, (sys::CUmodule, sys::CUfunction)>,
    bufs: Vec<(sys::CUdeviceptr, HostBuf)>,
    sm_request: Option<u32>,
}

impl CudaDevice {
    /// Open GPU `ordinal`; restrict kernels to `sm_count` SMs with a green context.
    pub fn open(ordinal: i32, sm_count: Option<u32>, tools: Option<PathBuf>) -> Result<CudaDevice> {
        init_driver()?;
        let nvrtc = Nvrtc::load(&crate::tools::search_dirs(tools.as_deref()))?;
        unsafe {
            let mut dev = 0;
            ck(sys::cuDeviceGet(&mut dev, ordinal), "cuDeviceGet")?;
            let mut name = [0 as std::ffi::c_char; 256];
            ck(
                sys::cuDeviceGetName(name.as_mut_ptr(), 256, dev),
                "cuDeviceGetName",
            )?;
            let name = CStr::from_ptr(name.as_ptr()).to_string_lossy().into_owned();
            let attr = |a: sys::CUdevice_attribute| -> Option<i32> {
                let mut v = 0;
                (sys::cuDeviceGetAttribute(&mut v, a, dev) == CUresult::CUDA_SUCCESS).then_some(v)
            };
            use sys::CUdevice_attribute as A;
            let major = attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR).unwrap_or(0) as u32;
            let minor = attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR).unwrap_or(0) as u32;
            let sms = attr(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT).unwrap_or(0) as u32;
            let mut drv = 0;
            sys::cuDriverGetVersion(&mut drv);
            let mut bus = [0 as std::ffi::c_char; 64];
            let bus_id =
                if sys::cuDeviceGetPCIBusId(bus.as_mut_ptr(), 64, dev) == CUresult::CUDA_SUCCESS {
                    CStr::from_ptr(bus.as_ptr()).to_string_lossy().into_owned()
                } else {
                    String::new()
                };
            let nv = crate::nvml::query(&bus_id);
            let clk = attr(A::CU_DEVICE_ATTRIBUTE_CLOCK_RATE)
                .filter(|v| *v > 0)
                .map(|k| (k / 1000) as u32);
            let mclk = attr(A::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)
                .filter(|v| *v > 0)
                .map(|k| (k / 1000) as u32);
            let info = DeviceInfo {
                name,
                driver_version: nv.driver_version.unwrap_or_default(),
                cuda_version: format!("{}.{}", drv / 1000, (drv % 1000) / 10),
                sm_clock_mhz: nv.max_sm_clock_mhz.or(clk),
                mem_clock_mhz: nv.max_mem_clock_mhz.or(mclk),
                sm_count: sms,
                partition_sms: None,
                compute_capability: (major, minor),
            };
            let mut d = CudaDevice {
                info,
                dev,
                ctx: Ctx::primary(dev)?,
                nvrtc,
                modules: HashMap::new(),
                bufs: vec![],
                sm_request: sm_count,
            };
            if let Some(n) = sm_count {
                d.enter_partition(n)?;
            }
            Ok(d)
        }
    }

    unsafe fn enter_partition(&mut self, n: u32) -> Result<()> {
        if n == 0 || n > self.info.sm_count {
            bail!("--sm-count {n}: the GPU has {} SMs", self.info.sm_count);
        }
        let g = green_contexts(self.dev, n, 1)?;
        let (g, got) = g[0];
        self.ctx = Ctx::from_green(g, got)?;
        self.info.partition_sms = Some(got);
        Ok(())
    }

    pub fn nvrtc_version(&self) -> (i32, i32) {
        self.nvrtc.version()
    }

    /// Compile for this GPU: a cubin for sm_XY, or PTX for the newest virtual
    /// architecture NVRTC knows when it does not know this GPU yet.
    fn compile(&self, source: &str, name: &str) -> Result<Vec<u8>> {
        let (ma, mi) = self.info.compute_capability;
        let cc = (ma * 10 + mi) as i32;
        let cubin = self.nvrtc.compile(
            source,
            name,
            &[
                format!("--gpu-architecture=sm_{cc}"),
                "-default-device".into(),
            ],
            Output::Cubin,
        );
        match cubin {
            Ok((b, _)) => Ok(b),
            Err(e) => {
                let best = self
                    .nvrtc
                    .supported_archs()
                    .into_iter()
                    .filter(|a| *a <= cc)
                    .max()
                    .ok_or(e)?;
                let (mut ptx, _) = self.nvrtc.compile(
                    source,
                    name,
                    &[
                        format!("--gpu-architecture=compute_{best}"),
                        "-default-device".into(),
                    ],
                    Output::Ptx,
                )?;
                if ptx.last() != Some(&0) {
                    ptx.push(0);
                }
                Ok(ptx)
            }
        }
    }

    /// The kernel's arguments as 8-byte cells (buffers as this device's pointers),
    /// which must outlive the pointers [`param_pointers`] takes to them.
    fn param_storage(&self, args: &[Arg]) -> Result<Vec<[u8; 8]>> {
        args.iter()
            .map(|a| {
                let mut s = [0u8; 8];
                match a {
                    Arg::Buffer(i) => {
                        let p = self
                            .bufs
                            .get(*i)
                            .ok_or_else(|| anyhow!("no buffer {i} uploaded"))?
                            .0;
                        s.copy_from_slice(&p.to_ne_bytes());
                    }
                    Arg::Scalar(Scalar::I32(v)) => s[..4].copy_from_slice(&v.to_ne_bytes()),
                    Arg::Scalar(Scalar::U32(v)) => s[..4].copy_from_slice(&v.to_ne_bytes()),
                    Arg::Scalar(Scalar::F32(v)) => s[..4].copy_from_slice(&v.to_ne_bytes()),
                    Arg::Scalar(Scalar::F64(v)) => s.copy_from_slice(&v.to_ne_bytes()),
                }
                Ok(s)
            })
            .collect()
    }

    /// Raw launch of `reps` back-to-back launches between the context's events.
    unsafe fn timed(
        &mut self,
        f: sys::CUfunction,
        args: &[Arg],
        l: &Launch,
        reps: u32,
        timeout: Duration,
    ) -> Result<f64> {
        let mut storage = self.param_storage(args)?;
        let mut params = param_pointers(&mut storage);
        let c = &self.ctx;
        ck(sys::cuCtxSetCurrent(c.ctx), "cuCtxSetCurrent")?;
        ck(sys::cuEventRecord(c.start, c.stream), "cuEventRecord")?;
        let t0 = Instant::now();
        for _ in 0..reps {
            launch(f, l, c.stream, &mut params)?;
            if t0.elapsed() > timeout {
                bail!(
                    "timed out after {:.1} s while launching (kernel hang?)",
                    timeout.as_secs_f64()
                );
            }
        }
        ck(sys::cuEventRecord(c.end, c.stream), "cuEventRecord")?;
        loop {
            let r = sys::cuEventQuery(c.end);
            if r == CUresult::CUDA_SUCCESS {
                break;
            }
            if r != CUresult::CUDA_ERROR_NOT_READY {
                ck(r, "kernel execution")?;
            }
            if t0.elapsed() > timeout {
                bail!(
                    "timed out after {:.1} s (kernel hang?)",
                    timeout.as_secs_f64()
                );
            }
            if t0.elapsed() < Duration::from_millis(2) {
                std::thread::yield_now();
            } else {
                std::thread::sleep(Duration::from_micros(100));
            }
        }
        let mut ms = 0f32;
        ck(
            sys::cuEventElapsedTime(&mut ms, c.start, c.end),
            "cuEventElapsedTime",
        )?;
        Ok(ms as f64)
    }
}

impl Device for CudaDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn load(&mut self, name: &str, source: &str, entry: &str) -> Result<KernelAttrs> {
        let image = self.compile(source, name)?;
        unsafe {
            ck(sys::cuCtxSetCurrent(self.ctx.ctx), "cuCtxSetCurrent")?;
            let mut m = std::ptr::null_mut();
            ck(
                sys::cuModuleLoadData(&mut m, image.as_ptr() as *const c_void),
                "cuModuleLoadData",
            )?;
            let mut f = std::ptr::null_mut();
            let e = std::ffi::CString::new(entry)?;
            ck(
                sys::cuModuleGetFunction(&mut f, m, e.as_ptr()),
                "cuModuleGetFunction",
            )?;
            let fa = |a: sys::CUfunction_attribute| -> u32 {
                let mut v = 0;
                sys::cuFuncGetAttribute(&mut v, a, f);
                v.max(0) as u32
            };
            use sys::CUfunction_attribute as F;
            let attrs = KernelAttrs {
                regs_per_thread: fa(F::CU_FUNC_ATTRIBUTE_NUM_REGS),
                static_smem: fa(F::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES),
            };
            if let Some((old, _)) = self.modules.insert(name.to_string(), (m, f)) {
                sys::cuModuleUnload(old);
            }
            Ok(attrs)
        }
    }

    fn upload(&mut self, bufs: &[HostBuf]) -> Result<()> {
        self.free();
        unsafe {
            ck(sys::cuCtxSetCurrent(self.ctx.ctx), "cuCtxSetCurrent")?;
            for b in bufs {
                let mut p = 0;
                ck(
                    sys::cuMemAlloc_v2(&mut p, b.byte_len().max(4)),
                    "cuMemAlloc",
                )
                .with_context(|| format!("allocating {} bytes", b.byte_len()))?;
                self.bufs.push((p, b.clone()));
                ck(
                    sys::cuMemcpyHtoD_v2(p, b.as_bytes().as_ptr() as *const c_void, b.byte_len()),
                    "cuMemcpyHtoD",
                )?;
            }
        }
        Ok(())
    }

    fn launch(
        &mut self,
        name: &str,
        args: &[Arg],
        l: &Launch,
        reps: u32,
        timeout: Duration,
    ) -> Result<f64> {
        let f = self
            .modules
            .get(name)
            .ok_or_else(|| anyhow!("kernel {name} is not loaded"))?
            .1;
        unsafe { self.timed(f, args, l, reps, timeout) }
    }

    fn download(&mut self, idx: usize) -> Result<HostBuf> {
        let (p, tmpl) = self
            .bufs
            .get(idx)
            .ok_or_else(|| anyhow!("no buffer {idx}"))?;
        let mut out = tmpl.clone();
        unsafe {
            ck(sys::cuCtxSetCurrent(self.ctx.ctx), "cuCtxSetCurrent")?;
            ck(
                sys::cuMemcpyDtoH_v2(
                    out.as_bytes_mut().as_mut_ptr() as *mut c_void,
                    *p,
                    out.byte_len(),
                ),
                "cuMemcpyDtoH",
            )?;
        }
        Ok(out)
    }

    fn free(&mut self) {
        unsafe {
            sys::cuCtxSetCurrent(self.ctx.ctx);
            for (p, _) in self.bufs.drain(..) {
                sys::cuMemFree_v2(p);
            }
        }
    }

    fn recover(&mut self) -> Result<()> {
        unsafe {
            self.bufs.clear();
            self.modules.clear();
            self.ctx.destroy(self.dev);
            self.ctx = Ctx::primary(self.dev)?;
            if let Some(n) = self.sm_request {
                self.enter_partition(n)?;
            }
        }
        Ok(())
    }
}

/// One kernel of a co-run: launches per stream, mean launch time alone and together.
pub struct CorunTimes {
    pub reps: u32,
    pub alone_ms: f64,
    pub together_ms: f64,
}

/// Device, SMs per partition granted, the times of each kernel.
pub type CorunResult = (DeviceInfo, u32, Vec<CorunTimes>);

/// Co-run: each kernel in its own green context over `sms` SMs; time each alone,
/// then all launched together. Each kernel gets as many back-to-back launches as
/// fill `target_ms` (or the slowest kernel's single launch, if longer), so that the
/// streams overlap for nearly their whole length: with equal launch counts a short
/// kernel would finish long before a long one and its partner would run mostly alone.
pub fn corun(
    ordinal: i32,
    tools: Option<PathBuf>,
    sms: u32,
    jobs: &[(String, String, String, crate::verify::Prepared, Launch)],
    target_ms: f64,
    timeout: Duration,
) -> Result<CorunResult> {
    let mut base = CudaDevice::open(ordinal, None, tools)?;
    unsafe {
        let groups = green_contexts(base.dev, sms, jobs.len() as u32)?;
        let mut devs = Vec::new();
        for (g, got) in &groups {
            let ctx = Ctx::from_green(*g, *got)?;
            let nvrtc = Nvrtc::load(&[base.nvrtc.path.clone()])?;
            let mut info = base.info.clone();
            info.partition_sms = Some(*got);
            devs.push(CudaDevice {
                info,
                dev: base.dev,
                ctx,
                nvrtc,
                modules: HashMap::new(),
                bufs: vec![],
                sm_request: None,
            });
        }
        let got = groups.first().map(|g| g.1).unwrap_or(sms);
        for (d, (name, src, entry, p, _)) in devs.iter_mut().zip(jobs) {
            d.load(name, src, entry)?;
            d.upload(&p.bufs)?;
        }
        let mut single = Vec::new();
        for (d, (name, _, _, p, l)) in devs.iter_mut().zip(jobs) {
            d.launch(name, &p.args, l, 1, timeout)?; // warm-up
            single.push(d.launch(name, &p.args, l, 1, timeout)?);
        }
        let window_ms = single.iter().cloned().fold(target_ms, f64::max);
        let reps: Vec<u32> = single
            .iter()
            .map(|&s| crate::stats::choose_reps(s, window_ms, 1_000_000))
            .collect();
        let mut alone = Vec::new();
        for (i, (d, (name, _, _, p, l))) in devs.iter_mut().zip(jobs).enumerate() {
            alone.push(d.launch(name, &p.args, l, reps[i], timeout)? / reps[i] as f64);
        }
        // Together. Launches are interleaved across the streams in the order of their
        // expected start times: the driver blocks once a stream's launch queue is full,
        // so enqueueing one stream's launches after another's would start the second
        // only when the first is nearly done.
        let mut fns = Vec::new();
        let mut storages: Vec<Vec<[u8; 8]>> = Vec::new();
        for (d, (name, _, _, p, _)) in devs.iter().zip(jobs) {
            fns.push(d.modules[name].1);
            storages.push(d.param_storage(&p.args)?);
        }
        let mut params: Vec<Vec<*mut c_void>> =
            storages.iter_mut().map(|st| param_pointers(st)).collect();
        let mut order: Vec<(f64, usize)> = Vec::new();
        for (i, &n) in reps.iter().enumerate() {
            order.extend((0..n).map(|r| (r as f64 * alone[i], i)));
        }
        order.sort_by(|a, b| a.0.total_cmp(&b.0));
        let t0 = Instant::now();
        for d in devs.iter() {
            ck(sys::cuCtxSetCurrent(d.ctx.ctx), "cuCtxSetCurrent")?;
            ck(
                sys::cuEventRecord(d.ctx.start, d.ctx.stream),
                "cuEventRecord",
            )?;
        }
        for &(_, i) in &order {
            let c = &devs[i].ctx;
            ck(sys::cuCtxSetCurrent(c.ctx), "cuCtxSetCurrent")?;
            launch(fns[i], &jobs[i].4, c.stream, &mut params[i])?;
        }
        for d in devs.iter() {
            ck(sys::cuCtxSetCurrent(d.ctx.ctx), "cuCtxSetCurrent")?;
            ck(sys::cuEventRecord(d.ctx.end, d.ctx.stream), "cuEventRecord")?;
        }
        let mut together = Vec::new();
        for (i, d) in devs.iter().enumerate() {
            loop {
                let r = sys::cuEventQuery(d.ctx.end);
                if r == CUresult::CUDA_SUCCESS {
                    break;
                }
                if r != CUresult::CUDA_ERROR_NOT_READY {
                    ck(r, "kernel execution")?;
                }
                if t0.elapsed() > timeout {
                    bail!("co-run timed out after {:.1} s", timeout.as_secs_f64());
                }
                std::thread::sleep(Duration::from_micros(100));
            }
            let mut ms = 0f32;
            ck(
                sys::cuEventElapsedTime(&mut ms, d.ctx.start, d.ctx.end),
                "cuEventElapsedTime",
            )?;
            together.push(ms as f64 / reps[i] as f64);
        }
        for d in devs.iter_mut() {
            d.free();
            d.ctx.destroy(d.dev);
        }
        let info = base.info.clone();
        base.free();
        let times = reps
            .into_iter()
            .zip(alone)
            .zip(together)
            .map(|((reps, alone_ms), together_ms)| CorunTimes {
                reps,
                alone_ms,
                together_ms,
            })
            .collect();
        Ok((info, got, times))
    }
}
