//! The seam between the run loop and a GPU: everything CUDA-specific sits behind
//! `Device`, so the run loop, error rows and resume are tested with a synthetic
//! device on machines without a GPU.
use anyhow::Result;
use std::time::Duration;

#[derive(Debug, Clone, Default)]
pub struct DeviceInfo {
    pub name: String,
    pub driver_version: String,
    pub cuda_version: String,
    pub sm_clock_mhz: Option<u32>,
    pub mem_clock_mhz: Option<u32>,
    /// SMs of the whole GPU.
    pub sm_count: u32,
    /// SMs kernels run on (a green-context partition), when restricted.
    pub partition_sms: Option<u32>,
    pub compute_capability: (u32, u32),
}

#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct KernelAttrs {
    pub regs_per_thread: u32,
    pub static_smem: u32,
}

/// Host-side buffer contents.
#[derive(Debug, Clone, PartialEq)]
pub enum HostBuf {
    F32(Vec<f32>),
    F64(Vec<f64>),
    I32(Vec<i32>),
    U32(Vec<u32>),
    /// fp16 / bf16 bit patterns.
    U16(Vec<u16>),
}

impl HostBuf {
    pub fn len(&self) -> usize {
        match self {
            HostBuf::F32(v) => v.len(),
            HostBuf::F64(v) => v.len(),
            HostBuf::I32(v) => v.len(),
            HostBuf::U32(v) => v.len(),
            HostBuf::U16(v) => v.len(),
        }
    }
    pub fn byte_len(&self) -> usize {
        match self {
            HostBuf::F64(v) => v.len() * 8,
            HostBuf::U16(v) => v.len() * 2,
            other => other.len() * 4,
        }
    }
    pub fn as_bytes(&self) -> &[u8] {
        fn b<T>(v: &[T]) -> &[u8] {
            // SAFETY: plain-old-data element types, no padding.
            unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) }
        }
        match self {
            HostBuf::F32(v) => b(v),
            HostBuf::F64(v) => b(v),
            HostBuf::I32(v) => b(v),
            HostBuf::U32(v) => b(v),
            HostBuf::U16(v) => b(v),
        }
    }
    pub fn as_bytes_mut(&mut self) -> &mut [u8] {
        fn b<T>(v: &mut [T]) -> &mut [u8] {
            // SAFETY: plain-old-data element types; every bit pattern is valid.
            unsafe {
                std::slice::from_raw_parts_mut(v.as_mut_ptr() as *mut u8, std::mem::size_of_val(v))
            }
        }
        match self {
            HostBuf::F32(v) => b(v),
            HostBuf::F64(v) => b(v),
            HostBuf::I32(v) => b(v),
            HostBuf::U32(v) => b(v),
            HostBuf::U16(v) => b(v),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scalar {
    I32(i32),
    U32(u32),
    F32(f32),
    F64(f64),
}

/// A kernel argument: an uploaded buffer (by index) or a by-value scalar.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Arg {
    Buffer(usize),
    Scalar(Scalar),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Launch {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub smem_dyn: u32,
}

pub trait Device {
    fn info(&self) -> &DeviceInfo;
    /// Compile and load a kernel (cached by name); its resources as compiled.
    fn load(&mut self, name: &str, source: &str, entry: &str) -> Result<KernelAttrs>;
    /// Allocate device buffers holding `bufs` (replacing any previous set).
    fn upload(&mut self, bufs: &[HostBuf]) -> Result<()>;
    /// Launch `reps` times back to back between two events; total elapsed ms.
    /// Gives up with an error after `timeout` (a hang).
    fn launch(
        &mut self,
        name: &str,
        args: &[Arg],
        launch: &Launch,
        reps: u32,
        timeout: Duration,
    ) -> Result<f64>;
    /// Copy buffer `idx` back (same type and length as uploaded).
    fn download(&mut self, idx: usize) -> Result<HostBuf>;
    /// Free the current buffers.
    fn free(&mut self);
    /// After a failure that may have poisoned the context: start a fresh one
    /// (kernels must be loaded again).
    fn recover(&mut self) -> Result<()>;
}
