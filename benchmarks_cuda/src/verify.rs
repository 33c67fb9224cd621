//! Buffer initialisation and CPU references: every kernel is re-implemented on
//! the CPU so its GPU output at a small size can be checked.
use crate::device::{Arg, HostBuf, Scalar};
use crate::manifest::{ElemType, Init, Instance, ResolvedArg};
use anyhow::{anyhow, bail, Result};

/// SplitMix64: a small deterministic generator (same data on every machine).
pub struct Rng(u64);
impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next_u64() % n
        }
    }
}

/// f32 -> IEEE half bits, round to nearest even (normals, subnormals, inf).
pub fn f32_to_f16_bits(x: f32) -> u16 {
    let b = x.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    let exp = ((b >> 23) & 0xff) as i32;
    let man = b & 0x7f_ffff;
    if exp == 0xff {
        return sign | 0x7c00 | if man != 0 { 0x200 } else { 0 };
    }
    let e = exp - 127 + 15;
    if e >= 0x1f {
        return sign | 0x7c00;
    }
    if e <= 0 {
        if e < -10 {
            return sign;
        }
        let m = man | 0x80_0000;
        let shift = (14 - e) as u32;
        let half = 1u32 << (shift - 1);
        let rest = m & ((1 << shift) - 1);
        let mut r = m >> shift;
        if rest > half || (rest == half && r & 1 == 1) {
            r += 1;
        }
        return sign | r as u16;
    }
    let mut r = ((e as u32) << 10) | (man >> 13);
    let rest = man & 0x1fff;
    if rest > 0x1000 || (rest == 0x1000 && r & 1 == 1) {
        r += 1;
    }
    sign | r as u16
}

pub fn f16_bits_to_f32(h: u16) -> f32 {
    let sign = ((h as u32) & 0x8000) << 16;
    let exp = ((h >> 10) & 0x1f) as u32;
    let man = (h & 0x3ff) as u32;
    let bits = if exp == 0 {
        if man == 0 {
            sign
        } else {
            // subnormal: normalise
            let mut e = 127 - 15 + 1;
            let mut m = man;
            while m & 0x400 == 0 {
                m <<= 1;
                e -= 1;
            }
            sign | ((e as u32) << 23) | ((m & 0x3ff) << 13)
        }
    } else if exp == 0x1f {
        sign | 0x7f80_0000 | (man << 13)
    } else {
        sign | ((exp + 127 - 15) << 23) | (man << 13)
    };
    f32::from_bits(bits)
}

pub fn f32_to_bf16_bits(x: f32) -> u16 {
    let b = x.to_bits();
    let round = 0x7fff + ((b >> 16) & 1);
    (b.wrapping_add(round) >> 16) as u16
}

pub fn bf16_bits_to_f32(h: u16) -> f32 {
    f32::from_bits((h as u32) << 16)
}

fn gen_f64(init: &Init, len: usize, rng: &mut Rng) -> Vec<f64> {
    (0..len)
        .map(|i| match init {
            Init::Zero => 0.0,
            Init::Ones => 1.0,
            Init::Random => rng.unit() * 2.0 - 1.0,
            Init::Unit => rng.unit(),
            Init::Small => (rng.below(9) as f64 - 4.0) / 4.0,
            Init::Iota => i as f64,
            Init::Const(v) => *v,
            Init::Bits | Init::Permutation | Init::RowPtr(_) | Init::RandIdx(_) => {
                rng.next_u64() as u32 as f64
            }
        })
        .collect()
}

fn gen_int(init: &Init, len: usize, rng: &mut Rng) -> Vec<u64> {
    match init {
        Init::Permutation => {
            let mut p: Vec<u64> = (0..len as u64).collect();
            for i in (1..len).rev() {
                let j = rng.below(i as u64 + 1) as usize;
                p.swap(i, j);
            }
            p
        }
        Init::RowPtr(k) => (0..len as u64).map(|i| i * k).collect(),
        Init::RandIdx(m) => (0..len).map(|_| rng.below(*m)).collect(),
        Init::Bits | Init::Random | Init::Unit => {
            (0..len).map(|_| rng.next_u64() & 0xffff_ffff).collect()
        }
        Init::Iota => (0..len as u64).collect(),
        Init::Zero => vec![0; len],
        Init::Ones => vec![1; len],
        Init::Small => (0..len).map(|_| rng.below(9)).collect(),
        Init::Const(v) => vec![*v as u64; len],
    }
}

pub fn make_buffer(ty: ElemType, len: usize, init: &Init, rng: &mut Rng) -> HostBuf {
    match ty {
        ElemType::F32 => HostBuf::F32(
            gen_f64(init, len, rng)
                .into_iter()
                .map(|x| x as f32)
                .collect(),
        ),
        ElemType::F64 => HostBuf::F64(gen_f64(init, len, rng)),
        ElemType::F16 => HostBuf::U16(
            gen_f64(init, len, rng)
                .into_iter()
                .map(|x| f32_to_f16_bits(x as f32))
                .collect(),
        ),
        ElemType::Bf16 => HostBuf::U16(
            gen_f64(init, len, rng)
                .into_iter()
                .map(|x| f32_to_bf16_bits(x as f32))
                .collect(),
        ),
        ElemType::I32 => HostBuf::I32(
            gen_int(init, len, rng)
                .into_iter()
                .map(|x| x as i32)
                .collect(),
        ),
        ElemType::U32 => HostBuf::U32(
            gen_int(init, len, rng)
                .into_iter()
                .map(|x| x as u32)
                .collect(),
        ),
    }
}

/// Buffers (in argument order), the launch arguments, and which buffers are outputs.
pub struct Prepared {
    pub bufs: Vec<HostBuf>,
    pub names: Vec<String>,
    pub args: Vec<Arg>,
    pub outputs: Vec<usize>,
}

pub fn prepare(inst: &Instance, seed: u64) -> Result<Prepared> {
    let mut rng = Rng::new(seed ^ 0x6770_7563_6173_7400);
    let mut p = Prepared {
        bufs: vec![],
        names: vec![],
        args: vec![],
        outputs: vec![],
    };
    for a in &inst.args {
        match a {
            ResolvedArg::Buffer {
                name,
                ty,
                len,
                init,
                output,
            } => {
                let idx = p.bufs.len();
                p.bufs.push(make_buffer(*ty, *len, init, &mut rng));
                p.names.push(name.clone());
                p.args.push(Arg::Buffer(idx));
                if *output {
                    p.outputs.push(idx);
                }
            }
            ResolvedArg::Scalar { ty, value, name } => p.args.push(Arg::Scalar(match ty {
                ElemType::I32 => {
                    if *value > i32::MAX as f64 || *value < i32::MIN as f64 {
                        bail!("scalar {name} = {value} does not fit in i32");
                    }
                    Scalar::I32(*value as i32)
                }
                ElemType::U32 => Scalar::U32(*value as u32),
                ElemType::F32 => Scalar::F32(*value as f32),
                ElemType::F64 => Scalar::F64(*value),
                _ => bail!("scalar {name}: unsupported type"),
            })),
        }
    }
    Ok(p)
}

/// Access to buffers by argument name inside a CPU reference.
struct B<'a> {
    bufs: &'a mut [HostBuf],
    names: &'a [String],
}
impl B<'_> {
    fn idx(&self, n: &str) -> Result<usize> {
        self.names
            .iter()
            .position(|x| x == n)
            .ok_or_else(|| anyhow!("no buffer named {n}"))
    }
    fn f32(&self, n: &str) -> Result<Vec<f32>> {
        match &self.bufs[self.idx(n)?] {
            HostBuf::F32(v) => Ok(v.clone()),
            _ => bail!("buffer {n} is not f32"),
        }
    }
    fn f64(&self, n: &str) -> Result<Vec<f64>> {
        match &self.bufs[self.idx(n)?] {
            HostBuf::F64(v) => Ok(v.clone()),
            _ => bail!("buffer {n} is not f64"),
        }
    }
    fn i32(&self, n: &str) -> Result<Vec<i32>> {
        match &self.bufs[self.idx(n)?] {
            HostBuf::I32(v) => Ok(v.clone()),
            _ => bail!("buffer {n} is not i32"),
        }
    }
    fn u32(&self, n: &str) -> Result<Vec<u32>> {
        match &self.bufs[self.idx(n)?] {
            HostBuf::U32(v) => Ok(v.clone()),
            _ => bail!("buffer {n} is not u32"),
        }
    }
    fn u16(&self, n: &str) -> Result<Vec<u16>> {
        match &self.bufs[self.idx(n)?] {
            HostBuf::U16(v) => Ok(v.clone()),
            _ => bail!("buffer {n} is not 16-bit"),
        }
    }
    fn set(&mut self, n: &str, v: HostBuf) -> Result<()> {
        let i = self.idx(n)?;
        if self.bufs[i].len() != v.len() {
            bail!(
                "buffer {n}: reference produced {} elements, buffer has {}",
                v.len(),
                self.bufs[i].len()
            );
        }
        self.bufs[i] = v;
        Ok(())
    }
}

fn var(inst: &Instance, k: &str) -> Result<usize> {
    inst.vars
        .get(k)
        .map(|v| *v as usize)
        .ok_or_else(|| anyhow!("size variable {k} missing"))
}

fn scalar_f32(inst: &Instance, name: &str) -> Result<f32> {
    for a in &inst.args {
        if let ResolvedArg::Scalar { name: n, value, .. } = a {
            if n == name {
                return Ok(*value as f32);
            }
        }
    }
    bail!("scalar {name} missing")
}

fn transpose(inp: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    let mut out = vec![0.0; rows * cols];
    for r in 0..rows {
        for c in 0..cols {
            out[c * rows + r] = inp[r * cols + c];
        }
    }
    out
}

fn matmul(a: &[f32], b: &[f32], n: usize) -> Vec<f32> {
    let mut c = vec![0.0f32; n * n];
    for i in 0..n {
        for k in 0..n {
            let aik = a[i * n + k];
            for j in 0..n {
                c[i * n + j] += aik * b[k * n + j];
            }
        }
    }
    c
}

fn conv(inp: &[f32], filt: &[f32], rows: usize, cols: usize, k: usize, out: &mut [f32]) {
    for y in 0..rows.saturating_sub(k - 1) {
        for x in 0..cols.saturating_sub(k - 1) {
            let mut s = 0.0f32;
            for i in 0..k {
                for j in 0..k {
                    s += inp[(y + i) * cols + x + j] * filt[i * k + j];
                }
            }
            out[y * cols + x] = s;
        }
    }
}

fn block_sums(v: &[f32], per_block: usize, blocks: usize) -> Vec<f32> {
    (0..blocks)
        .map(|b| {
            v.iter()
                .skip(b * per_block)
                .take(per_block)
                .map(|x| *x as f64)
                .sum::<f64>() as f32
        })
        .collect()
}

/// Run the CPU reference of `inst.kernel` on `bufs` (the inputs as uploaded),
/// writing the expected outputs in place.
pub fn cpu_reference(inst: &Instance, bufs: &mut [HostBuf], names: &[String]) -> Result<()> {
    let mut b = B { bufs, names };
    let name = inst.kernel.as_str();
    let found = elementwise_reference(name, inst, &mut b)?
        || linear_algebra_reference(name, inst, &mut b)?
        || reduction_reference(name, inst, &mut b)?
        || stencil_reference(name, inst, &mut b)?
        || memory_probe_reference(name, inst, &mut b)?
        || compute_probe_reference(name, inst, &mut b)?;
    if !found {
        bail!("no CPU reference for kernel '{name}'");
    }
    Ok(())
}

/// CPU references of the element-wise and streaming kernels.
/// Writes the expected outputs into `b` and returns `Ok(false)` when `name` is not one of them.
fn elementwise_reference(name: &str, inst: &Instance, b: &mut B) -> Result<bool> {
    match name {
        "vector_add" => {
            let (a, bb) = (b.f32("a")?, b.f32("b")?);
            b.set(
                "c",
                HostBuf::F32(a.iter().zip(&bb).map(|(x, y)| x + y).collect()),
            )?;
        }
        "saxpy" => {
            let alpha = scalar_f32(inst, "alpha")?;
            let (a, bb) = (b.f32("a")?, b.f32("b")?);
            b.set(
                "c",
                HostBuf::F32(a.iter().zip(&bb).map(|(x, y)| alpha * x + y).collect()),
            )?;
        }
        "strided_copy_8" => {
            let a = b.f32("a")?;
            let mut c = b.f32("c")?;
            let n = a.len();
            for i in 0..n.div_ceil(8) {
                c[8 * i] = a[8 * i];
            }
            b.set("c", HostBuf::F32(c))?;
        }
        "random_access" | "random_gather" => {
            let a = b.f32("a")?;
            let idx = b.i32(if name == "random_access" {
                "idx"
            } else {
                "perm"
            })?;
            b.set(
                "b",
                HostBuf::F32(idx.iter().map(|&j| a[j as usize]).collect()),
            )?;
        }
        "vector_add_divergent" => {
            let (a, bb) = (b.f32("a")?, b.f32("b")?);
            let c = (0..a.len())
                .map(|i| {
                    if i % 2 == 0 {
                        let mut s = 0.0f32;
                        for _ in 0..128 {
                            s = s * 0.5 + a[i];
                        }
                        a[i] + bb[i] + s
                    } else {
                        a[i] + bb[i]
                    }
                })
                .collect();
            b.set("c", HostBuf::F32(c))?;
        }
        "stream_copy" => {
            let a = b.f32("a")?;
            b.set("b", HostBuf::F32(a))?;
        }
        "stream_read" => {}
        "stream_write" => {
            let n = var(inst, "N")?;
            b.set(
                "out",
                HostBuf::F32((0..n).map(|i| (i & 1023) as f32 * 0.5).collect()),
            )?;
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// CPU references of the transpose, matrix-product, convolution and sparse kernels.
/// Writes the expected outputs into `b` and returns `Ok(false)` when `name` is not one of them.
fn linear_algebra_reference(name: &str, inst: &Instance, b: &mut B) -> Result<bool> {
    match name {
        "naive_transpose" | "shared_transpose" => {
            let (rows, cols) = (var(inst, "rows")?, var(inst, "cols")?);
            let t = transpose(&b.f32("in")?, rows, cols);
            b.set("out", HostBuf::F32(t))?;
        }
        "matmul_naive" | "matmul_tiled" => {
            let n = var(inst, "n")?;
            let c = matmul(&b.f32("A")?, &b.f32("B")?, n);
            b.set("C", HostBuf::F32(c))?;
        }
        "conv2d_3x3" | "conv2d_7x7" => {
            let k = if name == "conv2d_3x3" { 3 } else { 7 };
            let (rows, cols) = (var(inst, "rows")?, var(inst, "cols")?);
            let mut out = b.f32("out")?;
            conv(&b.f32("in")?, &b.f32("filt")?, rows, cols, k, &mut out);
            b.set("out", HostBuf::F32(out))?;
        }
        "tensor_gemm_f16" | "tensor_gemm_bf16" => {
            let n = var(inst, "n")?;
            let dec = |v: Vec<u16>| -> Vec<f32> {
                v.into_iter()
                    .map(|h| {
                        if name == "tensor_gemm_f16" {
                            f16_bits_to_f32(h)
                        } else {
                            bf16_bits_to_f32(h)
                        }
                    })
                    .collect()
            };
            let c = matmul(&dec(b.u16("A")?), &dec(b.u16("B")?), n);
            b.set("C", HostBuf::F32(c))?;
        }
        "spmv_csr" => {
            let (rp, cols, vals, x) = (
                b.i32("row_ptr")?,
                b.i32("cols")?,
                b.f32("vals")?,
                b.f32("x")?,
            );
            let rows = rp.len() - 1;
            let y = (0..rows)
                .map(|r| {
                    (rp[r] as usize..rp[r + 1] as usize)
                        .map(|j| vals[j] * x[cols[j] as usize])
                        .sum::<f32>()
                })
                .collect();
            b.set("y", HostBuf::F32(y))?;
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// CPU references of the reduction, scan, histogram and atomic kernels.
/// Writes the expected outputs into `b` and returns `Ok(false)` when `name` is not one of them.
fn reduction_reference(name: &str, inst: &Instance, b: &mut B) -> Result<bool> {
    match name {
        "reduce_sum" => {
            let a = b.f32("in")?;
            let blocks = inst.grid_blocks() as usize;
            b.set("partial", HostBuf::F32(block_sums(&a, 512, blocks)))?;
        }
        "dot_product" => {
            let (a, bb) = (b.f32("a")?, b.f32("b")?);
            let p: Vec<f32> = a.iter().zip(&bb).map(|(x, y)| x * y).collect();
            b.set(
                "partial",
                HostBuf::F32(block_sums(&p, 512, inst.grid_blocks() as usize)),
            )?;
        }
        "warp_shuffle_reduce" => {
            let a = b.f32("in")?;
            b.set(
                "partial",
                HostBuf::F32(block_sums(&a, 256, inst.grid_blocks() as usize)),
            )?;
        }
        "histogram" => {
            let d = b.u32("data")?;
            let mut h = b.u32("bins")?;
            for v in d {
                h[(v & 255) as usize] += 1;
            }
            b.set("bins", HostBuf::U32(h))?;
        }
        "atomic_hotspot" => {
            let c = b.u32("counter")?;
            let v = c[0].wrapping_add((var(inst, "N")? * var(inst, "iters")?) as u32);
            b.set("counter", HostBuf::U32(vec![v]))?;
        }
        "atomic_distinct" => {
            let iters = var(inst, "iters")? as f32;
            let out = b.f32("out")?.into_iter().map(|v| v + iters).collect();
            b.set("out", HostBuf::F32(out))?;
        }
        "block_scan" => {
            let a = b.f32("in")?;
            let mut out = vec![0.0f32; a.len()];
            for (blk, chunk) in a.chunks(256).enumerate() {
                let mut s = 0.0f32;
                for (j, v) in chunk.iter().enumerate() {
                    s += v;
                    out[blk * 256 + j] = s;
                }
            }
            b.set("out", HostBuf::F32(out))?;
        }
        "low_parallelism" => {
            let a = b.f32("a")?;
            let threads = inst.grid_blocks() as usize * inst.block_threads() as usize;
            let mut out = vec![0.0f32; threads];
            for (j, v) in a.iter().enumerate() {
                out[j % threads] += v;
            }
            b.set("out", HostBuf::F32(out))?;
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// CPU references of the stencil kernels.
/// Writes the expected outputs into `b` and returns `Ok(false)` when `name` is not one of them.
fn stencil_reference(name: &str, inst: &Instance, b: &mut B) -> Result<bool> {
    match name {
        "stencil_5pt" => {
            let (rows, cols) = (var(inst, "rows")?, var(inst, "cols")?);
            let a = b.f32("in")?;
            let mut out = b.f32("out")?;
            for y in 1..rows - 1 {
                for x in 1..cols - 1 {
                    let c = y * cols + x;
                    out[c] = 0.2 * (a[c] + a[c - 1] + a[c + 1] + a[c - cols] + a[c + cols]);
                }
            }
            b.set("out", HostBuf::F32(out))?;
        }
        "stencil_3d_7pt" => {
            let d = var(inst, "D")?;
            let a = b.f32("in")?;
            let mut out = b.f32("out")?;
            let p = d * d;
            for z in 1..d - 1 {
                for y in 1..d - 1 {
                    for x in 1..d - 1 {
                        let c = z * p + y * d + x;
                        let s = a[c - 1] + a[c + 1] + a[c - d] + a[c + d] + a[c - p] + a[c + p];
                        out[c] = 0.5 * a[c] + (1.0 / 12.0) * s;
                    }
                }
            }
            b.set("out", HostBuf::F32(out))?;
        }
        "stencil_1d_smem" => {
            let a = b.f32("in")?;
            let mut out = b.f32("out")?;
            let n = a.len();
            for i in 8..n.saturating_sub(8) {
                out[i] = a[i - 8..=i + 8].iter().sum::<f32>() * (1.0 / 17.0);
            }
            b.set("out", HostBuf::F32(out))?;
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// CPU references of the cache and shared-memory probes.
/// Writes the expected outputs into `b` and returns `Ok(false)` when `name` is not one of them.
fn memory_probe_reference(name: &str, inst: &Instance, b: &mut B) -> Result<bool> {
    match name {
        "shared_bank_conflict" | "shared_bank_conflict_32way" => {
            let out = (0..1024usize)
                .map(|t| {
                    let mut acc = 0.0f32;
                    for it in 0..1024usize {
                        let j = if name == "shared_bank_conflict" {
                            (it * 33) & 1023
                        } else {
                            (t * 32 + it) & 1023
                        };
                        acc += j as f32;
                    }
                    acc
                })
                .collect();
            b.set("out", HostBuf::F32(out))?;
        }
        "l2_stream" => {
            let a = b.f32("a")?;
            let (n, m, iters) = (var(inst, "N")?, var(inst, "M")?, var(inst, "iters")?);
            let out = (0..n)
                .map(|i| {
                    let mut acc = 0.0f32;
                    for it in 0..iters {
                        acc += a[(i + it * 4096) & (m - 1)];
                    }
                    acc
                })
                .collect();
            b.set("out", HostBuf::F32(out))?;
        }
        "l1_read" => {
            let a = b.f32("a")?;
            let (n, iters) = (var(inst, "N")?, var(inst, "iters")?);
            let out = (0..n)
                .map(|i| {
                    let (blk, t) = (i / 256, i % 256);
                    let mut acc = 0.0f32;
                    for it in 0..iters {
                        acc += a[blk * 2048 + ((t + it * 256) & 2047)];
                    }
                    acc
                })
                .collect();
            b.set("out", HostBuf::F32(out))?;
        }
        "smem_bandwidth" => {
            let (n, iters) = (var(inst, "N")?, var(inst, "iters")?);
            let out = (0..n)
                .map(|i| {
                    let t = i % 256;
                    let mut acc = 0.0f32;
                    for it in 0..iters {
                        acc += (((t + it * 32) & 2047) & 7) as f32;
                    }
                    acc
                })
                .collect();
            b.set("out", HostBuf::F32(out))?;
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// CPU references of the arithmetic and register probes.
/// Writes the expected outputs into `b` and returns `Ok(false)` when `name` is not one of them.
fn compute_probe_reference(name: &str, inst: &Instance, b: &mut B) -> Result<bool> {
    match name {
        "fp32_fma_peak" => {
            let a = b.f32("a")?;
            let iters = var(inst, "iters")?;
            let out = a
                .iter()
                .map(|&x| {
                    let mut c = [
                        x,
                        x + 0.1,
                        x + 0.2,
                        x + 0.3,
                        x + 0.4,
                        x + 0.5,
                        x + 0.6,
                        x + 0.7,
                    ];
                    for _ in 0..iters {
                        for v in c.iter_mut() {
                            *v = v.mul_add(0.999, 0.001);
                        }
                    }
                    ((c[0] + c[1]) + (c[2] + c[3])) + ((c[4] + c[5]) + (c[6] + c[7]))
                })
                .collect();
            b.set("out", HostBuf::F32(out))?;
        }
        "fp64_fma_loop" => {
            let a = b.f64("a")?;
            let iters = var(inst, "iters")?;
            let out = a
                .iter()
                .map(|&x| {
                    let mut c = [x, x + 0.1, x + 0.2, x + 0.3];
                    for _ in 0..iters {
                        for v in c.iter_mut() {
                            *v = v.mul_add(0.999, 0.001);
                        }
                    }
                    (c[0] + c[1]) + (c[2] + c[3])
                })
                .collect();
            b.set("out", HostBuf::F64(out))?;
        }
        "register_heavy" => {
            let iters = var(inst, "iters")?;
            let out = b
                .f32("a")?
                .into_iter()
                .map(|a| {
                    let x = a * 0.25;
                    let mut r = [0.0f32; 64];
                    for (j, v) in r.iter_mut().enumerate() {
                        *v = x + j as f32 * (1.0 / 256.0);
                    }
                    for _ in 0..iters {
                        for j in 0..64 {
                            r[j] = r[j].mul_add(r[(j + 1) & 63], 0.25) - 0.5;
                        }
                    }
                    r.iter().sum::<f32>()
                })
                .collect();
            b.set("out", HostBuf::F32(out))?;
        }
        "empty_kernel" => {}
        _ => return Ok(false),
    }
    Ok(true)
}

/// Tolerance for comparing a kernel's output with its CPU reference.
pub fn tolerance(kernel: &str) -> (f64, f64) {
    match kernel {
        "matmul_naive"
        | "matmul_tiled"
        | "reduce_sum"
        | "dot_product"
        | "warp_shuffle_reduce"
        | "block_scan"
        | "spmv_csr"
        | "low_parallelism"
        | "conv2d_3x3"
        | "conv2d_7x7"
        | "l2_stream"
        | "l1_read"
        | "register_heavy"
        | "fp32_fma_peak"
        | "stencil_1d_smem"
        | "tensor_gemm_f16"
        | "tensor_gemm_bf16" => (1e-3, 1e-3),
        _ => (1e-5, 1e-6),
    }
}

/// Compare a GPU buffer with the expected one: |got - want| <= atol + rtol*|want|.
pub fn compare(
    name: &str,
    want: &HostBuf,
    got: &HostBuf,
    rtol: f64,
    atol: f64,
) -> Result<(), String> {
    if want.len() != got.len() {
        return Err(format!(
            "{name}: length {} != expected {}",
            got.len(),
            want.len()
        ));
    }
    let as_f64 = |b: &HostBuf| -> Vec<f64> {
        match b {
            HostBuf::F32(v) => v.iter().map(|x| *x as f64).collect(),
            HostBuf::F64(v) => v.clone(),
            HostBuf::I32(v) => v.iter().map(|x| *x as f64).collect(),
            HostBuf::U32(v) => v.iter().map(|x| *x as f64).collect(),
            HostBuf::U16(v) => v.iter().map(|x| *x as f64).collect(),
        }
    };
    let exact = !matches!(want, HostBuf::F32(_) | HostBuf::F64(_));
    let (w, g) = (as_f64(want), as_f64(got));
    let mut bad = 0usize;
    let mut first = None;
    for (i, (x, y)) in w.iter().zip(&g).enumerate() {
        let ok = if exact {
            x == y
        } else {
            (x - y).abs() <= atol + rtol * x.abs()
        };
        if !ok {
            bad += 1;
            first.get_or_insert((i, *x, *y));
        }
    }
    match first {
        None => Ok(()),
        Some((i, x, y)) => Err(format!(
            "{name}: {bad} of {} elements differ; first at [{i}]: got {y}, expected {x}",
            w.len()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::Env;
    use crate::manifest::{resolve, verify_instance, Suite};

    fn instance(kernel: &str, vars: &[(&str, f64)]) -> Instance {
        let s = Suite::embedded().unwrap();
        let env: Env = vars.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        resolve(s.get(kernel).unwrap(), env).unwrap()
    }

    fn run(inst: &Instance, inputs: Vec<(&str, HostBuf)>) -> Vec<HostBuf> {
        let p = prepare(inst, 1).unwrap();
        let mut bufs = p.bufs.clone();
        for (n, v) in inputs {
            let i = p.names.iter().position(|x| x == n).unwrap();
            bufs[i] = v;
        }
        cpu_reference(inst, &mut bufs, &p.names).unwrap();
        bufs
    }

    #[test]
    fn half_conversions() {
        for x in [0.0f32, 1.0, -0.25, 0.75, 65504.0, 1.0 / 1024.0, 3.140625] {
            assert_eq!(f16_bits_to_f32(f32_to_f16_bits(x)), x);
        }
        assert_eq!(f32_to_f16_bits(1.0), 0x3c00);
        assert_eq!(f32_to_f16_bits(-2.0), 0xc000);
        assert_eq!(f32_to_f16_bits(1e6), 0x7c00);
        assert_eq!(f16_bits_to_f32(0x0001), 2f32.powi(-24));
        assert_eq!(f32_to_bf16_bits(1.0), 0x3f80);
        assert_eq!(bf16_bits_to_f32(0xbf40), -0.75);
    }

    #[test]
    fn rng_and_inits() {
        let mut r = Rng::new(7);
        let p = gen_int(&Init::Permutation, 100, &mut r);
        let mut s = p.clone();
        s.sort();
        assert_eq!(s, (0..100).collect::<Vec<u64>>());
        assert_ne!(p, s);
        assert_eq!(gen_int(&Init::RowPtr(16), 4, &mut r), vec![0, 16, 32, 48]);
        assert!(gen_int(&Init::RandIdx(10), 1000, &mut r)
            .iter()
            .all(|&x| x < 10));
        let v = gen_f64(&Init::Random, 1000, &mut r);
        assert!(v.iter().all(|x| (-1.0..1.0).contains(x)));
        assert!(gen_f64(&Init::Small, 100, &mut r)
            .iter()
            .all(|x| (x * 4.0).fract() == 0.0 && x.abs() <= 1.0));
        // deterministic
        assert_eq!(Rng::new(3).next_u64(), Rng::new(3).next_u64());
    }

    #[test]
    fn saxpy_and_vector_add() {
        let i = instance("saxpy", &[("N", 3.0)]);
        let out = run(
            &i,
            vec![
                ("a", HostBuf::F32(vec![1.0, 2.0, -1.0])),
                ("b", HostBuf::F32(vec![0.5, 0.0, 1.0])),
            ],
        );
        assert_eq!(out[2], HostBuf::F32(vec![3.0, 5.0, -1.5])); // alpha = 2.5
        let i = instance("vector_add", &[("N", 2.0)]);
        let out = run(
            &i,
            vec![
                ("a", HostBuf::F32(vec![1.0, 2.0])),
                ("b", HostBuf::F32(vec![10.0, 20.0])),
            ],
        );
        assert_eq!(out[2], HostBuf::F32(vec![11.0, 22.0]));
    }

    #[test]
    fn transpose_3x2() {
        let i = instance("naive_transpose", &[("H", 16.0)]);
        let mut i = i;
        i.vars.insert("rows".into(), 3.0);
        i.vars.insert("cols".into(), 2.0);
        for a in i.args.iter_mut() {
            if let ResolvedArg::Buffer { len, .. } = a {
                *len = 6;
            }
        }
        // in = [[1,2],[3,4],[5,6]] -> out = [[1,3,5],[2,4,6]]
        let out = run(
            &i,
            vec![("in", HostBuf::F32(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]))],
        );
        assert_eq!(out[1], HostBuf::F32(vec![1.0, 3.0, 5.0, 2.0, 4.0, 6.0]));
    }

    #[test]
    fn matmul_2x2_and_tensor_decode() {
        assert_eq!(
            matmul(&[1.0, 2.0, 3.0, 4.0], &[5.0, 6.0, 7.0, 8.0], 2),
            vec![19.0, 22.0, 43.0, 50.0]
        );
        let mut i = instance("tensor_gemm_f16", &[("n", 256.0)]);
        i.vars.insert("n".into(), 2.0);
        for a in i.args.iter_mut() {
            if let ResolvedArg::Buffer { len, .. } = a {
                *len = 4;
            }
        }
        let h = |v: [f32; 4]| HostBuf::U16(v.iter().map(|x| f32_to_f16_bits(*x)).collect());
        let out = run(
            &i,
            vec![
                ("A", h([1.0, 0.5, -1.0, 0.25])),
                ("B", h([2.0, 0.0, 4.0, -1.0])),
            ],
        );
        assert_eq!(out[2], HostBuf::F32(vec![4.0, -0.5, -1.0, -0.25]));
    }

    #[test]
    fn conv_reduce_histogram_scan_stencil() {
        // 3x3 conv of a 4x4 ramp with an all-ones filter: out[y*4+x] = sum of the 3x3 window
        let mut out = vec![0.0f32; 16];
        let inp: Vec<f32> = (0..16).map(|x| x as f32).collect();
        conv(&inp, &[1.0; 9], 4, 4, 3, &mut out);
        assert_eq!(&out[..2], &[45.0, 54.0]);
        assert_eq!(&out[4..6], &[81.0, 90.0]);
        assert_eq!(out[3], 0.0);
        assert_eq!(
            block_sums(&[1.0, 2.0, 3.0, 4.0, 5.0], 2, 3),
            vec![3.0, 7.0, 5.0]
        );

        let i = instance("histogram", &[("N", 4.0)]);
        let out = run(
            &i,
            vec![("data", HostBuf::U32(vec![1, 257, 2, 0xffff_ff01]))],
        );
        let HostBuf::U32(h) = &out[1] else { panic!() };
        assert_eq!((h[1], h[2], h[0]), (3, 1, 0));

        let i = instance("block_scan", &[("N", 4.0)]);
        let out = run(&i, vec![("in", HostBuf::F32(vec![1.0, 2.0, 3.0, 4.0]))]);
        assert_eq!(out[1], HostBuf::F32(vec![1.0, 3.0, 6.0, 10.0]));

        let i = instance("atomic_hotspot", &[("N", 1000.0), ("iters", 50.0)]);
        assert_eq!(run(&i, vec![])[0], HostBuf::U32(vec![50_000]));

        let i = instance("spmv_csr", &[("N", 2.0)]);
        let mut i = i;
        i.vars.insert("K".into(), 2.0);
        let out = run(
            &i,
            vec![
                ("row_ptr", HostBuf::I32(vec![0, 2, 4])),
                (
                    "cols",
                    HostBuf::I32(vec![
                        0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                        0, 0, 0, 0, 0, 0, 0,
                    ]),
                ),
                (
                    "vals",
                    HostBuf::F32([vec![1.0, 2.0, 3.0, 4.0], vec![0.0; 28]].concat()),
                ),
                ("x", HostBuf::F32(vec![10.0, 100.0])),
            ],
        );
        assert_eq!(out[4], HostBuf::F32(vec![210.0, 700.0]));
    }

    #[test]
    fn shared_bank_conflict_sum() {
        let i = instance("shared_bank_conflict", &[]);
        let HostBuf::F32(o) = &run(&i, vec![])[0] else {
            panic!()
        };
        assert!(o.iter().all(|&x| x == 523776.0));
    }

    #[test]
    fn compare_tolerances() {
        assert!(compare(
            "x",
            &HostBuf::F32(vec![1.0, 2.0]),
            &HostBuf::F32(vec![1.0, 2.0000001]),
            1e-5,
            0.0
        )
        .is_ok());
        let e = compare(
            "x",
            &HostBuf::F32(vec![1.0, 2.0]),
            &HostBuf::F32(vec![1.0, 2.1]),
            1e-5,
            0.0,
        )
        .unwrap_err();
        assert!(e.contains("1 of 2") && e.contains("[1]"), "{e}");
        assert!(compare(
            "x",
            &HostBuf::U32(vec![1]),
            &HostBuf::U32(vec![2]),
            1.0,
            1.0
        )
        .is_err());
        assert!(compare(
            "x",
            &HostBuf::U32(vec![1]),
            &HostBuf::U32(vec![1, 2]),
            1.0,
            1.0
        )
        .is_err());
    }

    #[test]
    fn every_kernel_has_a_cpu_reference() {
        // runs each reference at a shrunken size (fast in debug builds)
        let s = Suite::embedded().unwrap();
        for k in &s.kernels {
            let inst = verify_instance(k).unwrap();
            if inst.alloc_bytes() > 64 << 20 {
                panic!(
                    "{}: verify size allocates {} bytes",
                    k.name,
                    inst.alloc_bytes()
                );
            }
            let p = prepare(&inst, 1).unwrap();
            let mut bufs = p.bufs.clone();
            // the heavy references are exercised at their real verify size in release runs
            if [
                "matmul_naive",
                "matmul_tiled",
                "tensor_gemm_f16",
                "tensor_gemm_bf16",
                "register_heavy",
                "fp32_fma_peak",
                "fp64_fma_loop",
                "l1_read",
                "smem_bandwidth",
                "l2_stream",
                "stencil_3d_7pt",
            ]
            .contains(&k.name.as_str())
            {
                continue;
            }
            cpu_reference(&inst, &mut bufs, &p.names).unwrap_or_else(|e| panic!("{}: {e}", k.name));
            for o in &p.outputs {
                assert_eq!(bufs[*o].len(), p.bufs[*o].len());
            }
        }
    }
}
