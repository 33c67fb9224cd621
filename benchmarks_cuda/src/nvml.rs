//! NVML loaded at run time (libnvidia-ml.so.1), for the driver version and clocks.
//! Absent NVML is fine: the fields stay empty.
use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};

pub struct NvmlInfo {
    pub driver_version: Option<String>,
    pub max_sm_clock_mhz: Option<u32>,
    pub max_mem_clock_mhz: Option<u32>,
}

/// Query NVML for the GPU at `pci_bus_id` ("0000:01:00.0").
pub fn query(pci_bus_id: &str) -> NvmlInfo {
    let mut out = NvmlInfo {
        driver_version: None,
        max_sm_clock_mhz: None,
        max_mem_clock_mhz: None,
    };
    let lib = ["libnvidia-ml.so.1", "libnvidia-ml.so", "nvml.dll"]
        .iter()
        .find_map(|n| unsafe { libloading::Library::new(*n).ok() });
    let Some(lib) = lib else { return out };
    unsafe {
        let init: Result<libloading::Symbol<unsafe extern "C" fn() -> c_int>, _> =
            lib.get(b"nvmlInit_v2\0");
        let Ok(init) = init else { return out };
        if init() != 0 {
            return out;
        }
        if let Ok(f) = lib.get::<unsafe extern "C" fn(*mut c_char, c_uint) -> c_int>(
            b"nvmlSystemGetDriverVersion\0",
        ) {
            let mut buf = [0 as c_char; 96];
            if f(buf.as_mut_ptr(), buf.len() as c_uint) == 0 {
                out.driver_version =
                    Some(CStr::from_ptr(buf.as_ptr()).to_string_lossy().into_owned());
            }
        }
        let mut dev: *mut c_void = std::ptr::null_mut();
        if let (Ok(get), Ok(bus)) = (
            lib.get::<unsafe extern "C" fn(*const c_char, *mut *mut c_void) -> c_int>(
                b"nvmlDeviceGetHandleByPciBusId_v2\0",
            ),
            CString::new(pci_bus_id),
        ) {
            if get(bus.as_ptr(), &mut dev) == 0 {
                if let Ok(clk) = lib
                    .get::<unsafe extern "C" fn(*mut c_void, c_int, *mut c_uint) -> c_int>(
                        b"nvmlDeviceGetMaxClockInfo\0",
                    )
                {
                    let mut mhz: c_uint = 0;
                    if clk(dev, 1, &mut mhz) == 0 {
                        out.max_sm_clock_mhz = Some(mhz);
                    }
                    if clk(dev, 2, &mut mhz) == 0 {
                        out.max_mem_clock_mhz = Some(mhz);
                    }
                }
            }
        }
        if let Ok(shutdown) = lib.get::<unsafe extern "C" fn() -> c_int>(b"nvmlShutdown\0") {
            shutdown();
        }
    }
    out
}
