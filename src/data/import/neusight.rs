//! Import of NeuSight's PyTorch-operator timings (sitar-lab/NeuSight, CSV, gzip'd or
//! not): one row per operator call with `OPName`, `Latency` (ms), `Device` (as the
//! driver reports it), the name, grid and block of the operator's main CUDA kernel and
//! the operator's shape. Detected by its header, which starts `OPName,Latency,Device`.
//!
//! Mapping:
//! - `gpu` = Device; `kernel` = OPName (the operator family: `bmm`, `linear`, `add`,
//!   `addu`, ...); `config` = the canonical key of the shape columns (see [`Op`]);
//!   `time_ms` = Latency; `precision` fp32 (every tensor is fp32); `category` by family
//!   ([`Op::category`]); `block_threads` = Block x·y·z, `grid_blocks` = Grid x·y·z;
//!   `working_set_bytes` = `dram_bytes` (each operand is distinct data).
//! - `flops` and `dram_bytes`: MODEL, from the shape, one function per family
//!   ([`bmm_work`], [`linear_work`], [`binary_work`], [`scalar_work`],
//!   [`activation_work`], [`softmax_work`], [`layernorm_work`], [`conv_work`]); bytes
//!   are the compulsory traffic: every input read once, every output written once.
//! - Pass-through: `Kernel Name` as `cuda_kernel`, `Kernels` (the kernels the operator
//!   launched, `;`-separated) as `cuda_kernels`, `Torch Version`, `CUDNN Version` and
//!   `CUDA Version` as `torch_version`, `cudnn_version`, `cuda_version`, and `Warps per
//!   SM` / `Blocks per SM` as `grid_warps_per_sm` / `grid_blocks_per_sm`: they are the
//!   grid's warps and blocks divided by the GPU's SMs, not resident occupancy, so they
//!   do not fill the canonical `warps_per_sm` / `blocks_per_sm`.
//!
//! Rows whose latency is missing, not a number, not finite, <= 0 or > 1e6 ms are
//! failed runs, counted per reason; an operator without a known shape is left out and
//! counted (`unknown_operator:<name>`), and so is a second row of a (GPU, operator,
//! shape) already read (`duplicate_config`: the files repeat a few shapes).

use super::common::{FileReport, Imported};
use crate::data::table_io::text_cells;
use crate::data::{Origin, Run};
use crate::error::{Error, Position, Result};
use polars::prelude::DataFrame;
use std::collections::HashSet;
use std::io::Read;
use std::path::Path;
use std::sync::Arc;

/// Format name used by reports and the CLI.
pub const FORMAT: &str = "neusight";
/// Default `source` of imported rows.
pub const DEFAULT_SOURCE: &str = "neusight";
/// The columns a NeuSight file starts with, in this order.
pub const HEADER: [&str; 3] = ["OPName", "Latency", "Device"];

/// One column's cells as text (None: empty).
type Cells = Vec<Option<String>>;

/// Bytes per element: every tensor of the corpus is fp32.
const FP32: f64 = 4.0;

/// The work of one operator call.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Work {
    pub flops: f64,
    pub dram_bytes: f64,
}

/// Batched matrix product of B pairs: (M x N) times (N x K) per pair, as NeuSight's
/// collection script shapes it (the shared README names the inner dimension K: the
/// counts are symmetric in M, N, K, so the naming changes nothing).
/// FLOPs 2·B·M·N·K (a multiply and an add per term); bytes 4·B·(M·N + N·K + M·K).
pub fn bmm_work(b: f64, m: f64, n: f64, k: f64) -> Work {
    Work {
        flops: 2.0 * b * m * n * k,
        dram_bytes: FP32 * b * (m * n + n * k + m * k),
    }
}

/// `torch.nn.Linear(N, K, bias=True)` on a B x M x N input: weight K x N, bias K,
/// output B x M x K. FLOPs 2·B·M·N·K + B·M·K (the product, then the bias added to
/// each output); bytes 4·(B·M·N + K·N + K + B·M·K).
pub fn linear_work(b: f64, m: f64, n: f64, k: f64) -> Work {
    Work {
        flops: 2.0 * b * m * n * k + b * m * k,
        dram_bytes: FP32 * (b * m * n + k * n + k + b * m * k),
    }
}

/// Two B x H tensors in, one out (add, mul, div, pow). FLOPs B·H (one operation per
/// element: a convention for div and pow, which take several instructions); bytes
/// 4·3·B·H.
pub fn binary_work(b: f64, h: f64) -> Work {
    Work {
        flops: b * h,
        dram_bytes: FP32 * 3.0 * b * h,
    }
}

/// One B x H tensor and a scalar in, one tensor out (addu, mulu, divu, powu). FLOPs
/// B·H (one operation per element, the same convention as [`binary_work`]); bytes
/// 4·2·B·H.
pub fn scalar_work(b: f64, h: f64) -> Work {
    Work {
        flops: b * h,
        dram_bytes: FP32 * 2.0 * b * h,
    }
}

/// An activation on a B x H tensor (relu, tanh, gelu): FLOPs `per_element`·B·H
/// ([`Op::Activation`] gives the convention's count), bytes 4·2·B·H.
pub fn activation_work(per_element: f64, b: f64, h: f64) -> Work {
    Work {
        flops: per_element * b * h,
        dram_bytes: FP32 * 2.0 * b * h,
    }
}

/// Softmax over each row of a B x H tensor. FLOPs 5·B·H: per element a comparison
/// for the row's maximum, a subtraction, an exponential, an add to the row's sum and
/// a division (a transcendental counts as one operation, a convention); bytes
/// 4·2·B·H (the row is read once, the output written once).
pub fn softmax_work(b: f64, h: f64) -> Work {
    Work {
        flops: 5.0 * b * h,
        dram_bytes: FP32 * 2.0 * b * h,
    }
}

/// `torch.nn.LayerNorm(H)` over each row of a B x H tensor. FLOPs 8·B·H: per element
/// 4 for the statistics (add to the sum, subtract the mean, square, add to the sum of
/// squares) and 4 for the output (subtract the mean, scale by 1/σ, multiply by γ, add
/// β), a convention; bytes 4·(2·B·H + 2·H + 2·B): the input read and the output
/// written once, γ and β read once, and the per-row mean and 1/σ the kernel writes.
pub fn layernorm_work(b: f64, h: f64) -> Work {
    Work {
        flops: 8.0 * b * h,
        dram_bytes: FP32 * (2.0 * b * h + 2.0 * h + 2.0 * b),
    }
}

/// `torch.nn.Conv2d(C, K, R, stride, padding, bias=False)` on an N x C x H x H input:
/// output N x K x P x P with P = (H + 2·padding − R) / stride + 1 (rounded down).
/// FLOPs 2·N·K·C·R·R·P·P; bytes 4·(N·C·H·H + K·C·R·R + N·K·P·P): input, filter and
/// output once (the workspace of cuDNN's algorithms is not counted). None when the
/// filter does not fit the padded input (no output).
pub fn conv_work(
    n: f64,
    c: f64,
    k: f64,
    r: f64,
    h: f64,
    stride: f64,
    padding: f64,
) -> Option<Work> {
    let span = h + 2.0 * padding - r;
    if span < 0.0 || stride <= 0.0 {
        return None;
    }
    let p = (span / stride).floor() + 1.0;
    Some(Work {
        flops: 2.0 * n * k * c * r * r * p * p,
        dram_bytes: FP32 * (n * c * h * h + k * c * r * r + n * k * p * p),
    })
}

/// The operator families of the corpus.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Op {
    Bmm,
    Linear,
    /// add, mul, div, pow.
    Binary,
    /// addu, mulu, divu, powu: a tensor and a scalar.
    Scalar,
    /// relu, tanh, gelu, with the FLOPs per element the convention counts.
    Activation(f64),
    Softmax,
    LayerNorm,
    Conv,
}

/// The shape columns of bmm and linear.
const MATMUL_SHAPE: [&str; 4] = ["B", "M", "N", "K"];
/// The shape columns of the operators on a B x H tensor.
const ROWS_SHAPE: [&str; 2] = ["B", "H"];
/// The shape columns of conv, as NeuSight spells them.
const CONV_SHAPE: [&str; 7] = [
    "B",
    "Input_Channel",
    "Output_Channel",
    "Kernel_Szie",
    "Input_Size",
    "Stride",
    "Padding",
];
/// The names conv's shape takes in the configuration key (the file's `Kernel_Szie`
/// is spelled right there).
const CONV_KEY: [&str; 7] = [
    "B",
    "C_in",
    "C_out",
    "kernel_size",
    "input_size",
    "stride",
    "padding",
];

impl Op {
    /// The family of an `OPName`; None for one the corpus does not describe.
    pub fn of(name: &str) -> Option<Op> {
        Some(match name {
            "bmm" => Op::Bmm,
            "linear" => Op::Linear,
            "add" | "mul" | "div" | "pow" => Op::Binary,
            "addu" | "mulu" | "divu" | "powu" => Op::Scalar,
            // relu is one comparison; tanh one transcendental; gelu (exact, with erf)
            // 0.5·x·(1 + erf(x/√2)): a division, the erf, an add and two multiplies.
            "relu" | "tanh" => Op::Activation(1.0),
            "gelu" => Op::Activation(5.0),
            "softmax" => Op::Softmax,
            "ln" => Op::LayerNorm,
            "conv" => Op::Conv,
            _ => return None,
        })
    }

    /// The shape columns the file must have for this family.
    pub fn shape_columns(self) -> &'static [&'static str] {
        match self {
            Op::Bmm | Op::Linear => &MATMUL_SHAPE,
            Op::Conv => &CONV_SHAPE,
            _ => &ROWS_SHAPE,
        }
    }

    /// The names of the shape in the configuration key, in [`Op::shape_columns`] order.
    fn key_names(self) -> &'static [&'static str] {
        match self {
            Op::Conv => &CONV_KEY,
            other => other.shape_columns(),
        }
    }

    /// The `category` label: `matmul_library` as for the other library GEMMs (cuBLAS
    /// runs bmm and linear), `conv_library` (cuDNN), `elementwise`, `reduction`
    /// (softmax) and `normalization` (layer norm).
    pub fn category(self) -> &'static str {
        match self {
            Op::Bmm | Op::Linear => "matmul_library",
            Op::Conv => "conv_library",
            Op::Binary | Op::Scalar | Op::Activation(_) => "elementwise",
            Op::Softmax => "reduction",
            Op::LayerNorm => "normalization",
        }
    }

    /// The work of a call with `shape` (values in [`Op::shape_columns`] order); None
    /// when the shape has no output (a conv filter larger than its padded input).
    pub fn work(self, shape: &[f64]) -> Option<Work> {
        let s = |i: usize| shape[i];
        Some(match self {
            Op::Bmm => bmm_work(s(0), s(1), s(2), s(3)),
            Op::Linear => linear_work(s(0), s(1), s(2), s(3)),
            Op::Binary => binary_work(s(0), s(1)),
            Op::Scalar => scalar_work(s(0), s(1)),
            Op::Activation(per_element) => activation_work(per_element, s(0), s(1)),
            Op::Softmax => softmax_work(s(0), s(1)),
            Op::LayerNorm => layernorm_work(s(0), s(1)),
            Op::Conv => return conv_work(s(0), s(1), s(2), s(3), s(4), s(5), s(6)),
        })
    }
}

/// Whether a header line is NeuSight's: it starts `OPName,Latency,Device`.
pub fn is_header(line: &str) -> bool {
    let line = line.trim_start_matches('\u{feff}');
    let mut cells = line.split(',').map(|c| c.trim().trim_matches('"'));
    HEADER.iter().all(|h| cells.next() == Some(*h))
}

/// Whether a frame has NeuSight's leading columns.
pub fn is_neusight(df: &DataFrame) -> bool {
    HEADER.iter().all(|c| df.column(c).is_ok())
}

/// Import one NeuSight file (CSV, gzip'd or not).
pub fn import(path: &Path, source: &str) -> Result<Imported> {
    let name = path.display().to_string();
    let bytes = crate::files::read(path).map_err(|e| Error::io_error(&name, "", e))?;
    let bytes = if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(bytes.as_slice())
            .read_to_end(&mut out)
            .map_err(|e| Error::file(&name, format!("cannot decompress gzip: {e}")))?;
        out
    } else {
        bytes
    };
    if !bytes.starts_with(b"PAR1") {
        let start = bytes.iter().position(|b| !b.is_ascii_whitespace());
        if start.is_some_and(|i| matches!(bytes[i], b'{' | b'[')) {
            return Err(Error::parse_file(
                &name,
                format!(
                    "is JSON (a Kernel Tuner cache?), not a NeuSight table: NeuSight's tables are CSV with columns {}",
                    HEADER.join(", ")
                ),
            ));
        }
        crate::data::table_io::check_csv_layout(&bytes, &name)?;
    }
    let (df, is_text) = super::common::frame_from_bytes(bytes, &name)?;
    import_frame(&df, &name, source, is_text)
}

/// Import a NeuSight table already read into a frame; `file` names it in messages, by
/// line when it `is_text` (CSV: data row r is line r + 1), else by row (Parquet).
pub fn import_frame(df: &DataFrame, file: &str, source: &str, is_text: bool) -> Result<Imported> {
    if !is_neusight(df) {
        let cols = super::common::column_list(df, 12);
        return Err(Error::file(
            file,
            format!(
                "not a NeuSight table: needs columns OPName, Latency, Device and the operator's shape (found {})",
                cols
            ),
        ));
    }
    let pass = passthrough_columns(df);
    let mut frame = Frame::new(df, file, is_text);
    let mut report = FileReport {
        file: file.to_string(),
        format: FORMAT.to_string(),
        ..FileReport::default()
    };
    let mut runs = Vec::new();
    let mut kept_rows = Vec::new();
    let mut seen: HashSet<(String, String, String)> = HashSet::new();
    let mut names = crate::data::SharedNames::default();
    for i in 0..df.height() {
        match frame.run(i, source, &mut seen, &mut names)? {
            Ok(run) => {
                runs.push(run);
                kept_rows.push(i);
            }
            Err(Skip::Failed(reason)) => *report.failed.entry(reason).or_default() += 1,
            Err(Skip::LeftOut(reason)) => *report.left_out.entry(reason).or_default() += 1,
        }
    }

    const GRID_ONLY: &str = "the files record the main kernel's grid and block only";
    super::common::one_table_import(
        runs,
        pass,
        &kept_rows,
        file,
        "Device",
        report,
        &[
            ("smem_per_block", GRID_ONLY),
            ("regs_per_thread", GRID_ONLY),
            ("time_std_ms", "the files record one latency per shape"),
        ],
    )
}

/// The columns passed through to the canonical table, under their canonical names.
fn passthrough_columns(df: &DataFrame) -> Vec<(&'static str, Cells)> {
    [
        ("Kernel Name", "cuda_kernel"),
        ("Kernels", "cuda_kernels"),
        ("Torch Version", "torch_version"),
        ("CUDNN Version", "cudnn_version"),
        ("CUDA Version", "cuda_version"),
        ("Warps per SM", "grid_warps_per_sm"),
        ("Blocks per SM", "grid_blocks_per_sm"),
    ]
    .iter()
    .filter_map(|(src, dst)| {
        let mut v = text_cells(df, src)?;
        if *src == "Kernels" {
            // (the list starts with its separator)
            for c in v.iter_mut().flatten() {
                *c = c.trim_start_matches(';').to_string();
            }
        }
        Some((*dst, v))
    })
    .collect()
}

/// Why a row gives no run: a failed measurement, or a row left out.
enum Skip {
    Failed(String),
    LeftOut(String),
}

/// The columns of a NeuSight frame that runs are read from.
struct Frame<'a> {
    df: &'a DataFrame,
    file: &'a str,
    file_arc: Arc<str>,
    is_text: bool,
    op_names: Cells,
    latency: Cells,
    device: Cells,
    /// "Grid x/y/z" and "Block x/y/z", when all three are there.
    grid: Option<Vec<Cells>>,
    block: Option<Vec<Cells>>,
    /// The shape columns of each operator family met, read once.
    shapes: Vec<(&'static [&'static str], Vec<Cells>)>,
}

impl<'a> Frame<'a> {
    fn new(df: &'a DataFrame, file: &'a str, is_text: bool) -> Self {
        let all = |name: &str| text_cells(df, name).unwrap_or_else(|| vec![None; df.height()]);
        // Grid and block sizes multiply out to the canonical counts when all three are there.
        let dims = |prefix: &str| -> Option<Vec<Cells>> {
            ["x", "y", "z"]
                .iter()
                .map(|d| text_cells(df, &format!("{prefix} {d}")))
                .collect()
        };
        Frame {
            df,
            file,
            file_arc: Arc::from(file),
            is_text,
            op_names: all("OPName"),
            latency: all("Latency"),
            device: all("Device"),
            grid: dims("Grid"),
            block: dims("Block"),
            shapes: Vec::new(),
        }
    }

    fn at(&self, row: usize) -> Position {
        Position::of_row(row, self.is_text)
    }

    /// The text of a cell, an error when it is missing.
    fn text(&self, v: &Option<String>, name: &str, row: usize) -> Result<String> {
        v.clone()
            .ok_or_else(|| Error::parse(self.file, self.at(row), Some(name), "missing value"))
    }

    /// A cell holding a whole number of at least `min`.
    fn whole(&self, cell: &str, name: &str, row: usize, min: f64) -> Result<f64> {
        match cell.parse::<f64>() {
            Ok(v) if v >= min && v.fract() == 0.0 && v < 9.0e15 => Ok(v),
            _ => Err(Error::parse(
                self.file,
                self.at(row),
                Some(name),
                format!(
                    "expected a {} whole number, found '{cell}'",
                    if min > 0.0 {
                        "positive"
                    } else {
                        "non-negative"
                    }
                ),
            )),
        }
    }

    /// The run of row `i`, or why it gives none; an error when the row is malformed.
    fn run(
        &mut self,
        i: usize,
        source: &str,
        seen: &mut HashSet<(String, String, String)>,
        names: &mut crate::data::SharedNames,
    ) -> Result<std::result::Result<Run, Skip>> {
        let row = i + 1;
        let op_name = self.text(&self.op_names[i], "OPName", row)?;
        let time_ms = match super::common::latency_ms(self.latency[i].as_deref()) {
            Ok(t) => t,
            Err(reason) => return Ok(Err(Skip::Failed(reason.to_string()))),
        };
        let Some(op) = Op::of(&op_name) else {
            return Ok(Err(Skip::LeftOut(format!("unknown_operator:{op_name}"))));
        };
        let gpu = self.text(&self.device[i], "Device", row)?;
        let shape = self.shape(op, &op_name, i)?;
        let Some(work) = op.work(&shape) else {
            return Err(Error::parse(
                self.file,
                self.at(row),
                Some("Kernel_Szie"),
                "the filter is larger than the padded input: the convolution has no output",
            ));
        };
        let config = gpucast_runs::config_key(op.key_names().iter().copied().zip(shape));
        if !seen.insert((gpu.clone(), op_name.clone(), config.clone())) {
            return Ok(Err(Skip::LeftOut("duplicate_config".into())));
        }
        Ok(Ok(Run {
            gpu: names.get(&gpu),
            kernel: names.get(&op_name),
            config: names.get(&config),
            time_ms,
            flops: work.flops,
            dram_bytes: work.dram_bytes,
            working_set_bytes: Some(work.dram_bytes),
            block_threads: self.product(self.block.as_deref(), "Block", i)?,
            grid_blocks: self.product(self.grid.as_deref(), "Grid", i)?,
            precision: Some(names.get("fp32")),
            suite: Some(names.get("pytorch-operators")),
            category: Some(names.get(op.category())),
            source: Some(names.get(source)),
            origin: Origin {
                file: self.file_arc.clone(),
                row,
                line: self.is_text.then_some(row + 1),
            },
            ..Run::default()
        }))
    }

    /// The shape of operator `op` (named `op_name`) in row `i`, reading its
    /// family's shape columns on first use.
    fn shape(&mut self, op: Op, op_name: &str, i: usize) -> Result<Vec<f64>> {
        let row = i + 1;
        let columns = op.shape_columns();
        if !self.shapes.iter().any(|(c, _)| std::ptr::eq(*c, columns)) {
            let read: Vec<Cells> = columns
                .iter()
                .map(|c| {
                    text_cells(self.df, c).ok_or_else(|| {
                        Error::parse(
                            self.file,
                            Position::File,
                            Some(c),
                            format!(
                                "missing: the shape of '{op_name}' needs columns {}",
                                columns.join(", ")
                            ),
                        )
                    })
                })
                .collect::<Result<_>>()?;
            self.shapes.push((columns, read));
        }
        let shape_cells = self
            .shapes
            .iter()
            .find(|(c, _)| std::ptr::eq(*c, columns))
            .map(|(_, cells)| cells)
            .expect("the shape columns were just read");
        let mut shape = Vec::with_capacity(columns.len());
        for (name, col) in columns.iter().zip(shape_cells) {
            let cell = self.text(&col[i], name, row)?;
            // (a conv may have no padding; every size is at least 1)
            let min = if *name == "Padding" { 0.0 } else { 1.0 };
            shape.push(self.whole(&cell, name, row, min)?);
        }
        Ok(shape)
    }

    /// The product of row `i`'s x, y and z cells of `dims` (named `prefix`); none
    /// when the columns or a cell are missing.
    fn product(&self, dims: Option<&[Cells]>, prefix: &str, i: usize) -> Result<Option<f64>> {
        let row = i + 1;
        let Some(dims) = dims else { return Ok(None) };
        let mut p = 1.0;
        for (d, col) in ["x", "y", "z"].iter().zip(dims) {
            let name = format!("{prefix} {d}");
            let Some(cell) = &col[i] else { return Ok(None) };
            p *= self.whole(cell, &name, row, 1.0)?;
        }
        Ok(Some(p))
    }
}

/// NeuSight's operator timings (`--from neusight`).
pub struct NeuSight;

impl super::common::Importer for NeuSight {
    fn name(&self) -> &'static str {
        FORMAT
    }
    fn describe(&self) -> &'static str {
        "NeuSight's PyTorch-operator timings: CSV or .csv.gz starting OPName, Latency, Device"
    }
    fn detect(&self, probe: &super::common::Probe) -> bool {
        probe.text().lines().next().is_some_and(is_header)
    }
    fn takes_file_name(&self, name: &str) -> bool {
        name.ends_with(".csv") || name.ends_with(".csv.gz")
    }
    fn read(&self, path: &Path, opts: &super::common::ImportOptions) -> Result<Imported> {
        import(path, opts.source.as_deref().unwrap_or(DEFAULT_SOURCE))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use polars::prelude::*;

    #[test]
    fn work_per_family() {
        // B = 2 pairs of (3 x 4) times (4 x 5).
        assert_eq!(
            bmm_work(2.0, 3.0, 4.0, 5.0),
            Work {
                flops: 240.0,
                dram_bytes: 4.0 * 2.0 * (12.0 + 20.0 + 15.0)
            }
        );
        // 3 x 4 input, 5 x 4 weight, bias 5.
        assert_eq!(linear_work(1.0, 3.0, 4.0, 5.0).flops, 120.0 + 15.0);
        assert_eq!(
            linear_work(1.0, 3.0, 4.0, 5.0).dram_bytes,
            4.0 * (12.0 + 20.0 + 5.0 + 15.0)
        );
        assert_eq!(binary_work(2.0, 8.0).dram_bytes, 4.0 * 48.0);
        assert_eq!(scalar_work(2.0, 8.0).dram_bytes, 4.0 * 32.0);
        assert_eq!(
            Op::of("gelu").unwrap().work(&[2.0, 8.0]).unwrap().flops,
            80.0
        );
        assert_eq!(softmax_work(2.0, 8.0).flops, 80.0);
        assert_eq!(
            layernorm_work(2.0, 8.0).dram_bytes,
            4.0 * (32.0 + 16.0 + 4.0)
        );
        // 3x3 filter, padding 1, stride 1 keeps 5 x 5; stride 2 gives 3 x 3.
        let c = conv_work(1.0, 2.0, 3.0, 3.0, 5.0, 1.0, 1.0).unwrap();
        assert_eq!(c.flops, 2.0 * 3.0 * 2.0 * 9.0 * 25.0);
        assert_eq!(c.dram_bytes, 4.0 * (50.0 + 54.0 + 75.0));
        let c = conv_work(1.0, 2.0, 3.0, 3.0, 5.0, 2.0, 1.0).unwrap();
        assert_eq!(c.flops, 2.0 * 3.0 * 2.0 * 9.0 * 9.0);
        assert!(conv_work(1.0, 1.0, 1.0, 7.0, 2.0, 1.0, 1.0).is_none());
        assert!(Op::of("dropout").is_none());
    }

    #[test]
    fn header_detection() {
        assert!(is_header("OPName,Latency,Device,Torch Version,B,H"));
        assert!(is_header("\u{feff}\"OPName\",Latency,Device"));
        assert!(!is_header("Latency,OPName,Device"));
        assert!(!is_header("gpu,kernel,config,time_ms"));
    }

    /// SYNTHETIC rows (made-up values): failures counted, a repeated shape left out, a
    /// missing shape column and a bad shape cell reported by file, line and column.
    #[test]
    fn rows_are_counted_left_out_or_rejected() {
        let df = df! {
            "OPName" => ["add", "add", "add", "add", "dropout", "add"],
            "Latency" => ["0.01", "-1", "nan", "x", "0.02", "0.03"],
            "Device" => ["G", "G", "G", "G", "G", "G"],
            "B" => ["2", "2", "2", "2", "2", "2"],
            "H" => ["8", "8", "8", "8", "8", "8"],
        }
        .unwrap();
        let imp = import_frame(&df, "t.csv", "test", true).unwrap();
        let r = &imp.report.files[0];
        assert_eq!(r.rows, 1);
        assert_eq!(r.failed.get("absurd_time"), Some(&2));
        assert_eq!(r.failed.get("non_number_time"), Some(&1));
        assert_eq!(r.left_out.get("unknown_operator:dropout"), Some(&1));
        assert_eq!(r.left_out.get("duplicate_config"), Some(&1));
        let run = &imp.table.runs[0];
        assert_eq!(run.config, "B=2,H=8");
        assert_eq!(run.block_threads, None);
        assert_eq!(run.origin.line, Some(2));

        let no_k = df! {
            "OPName" => ["bmm"], "Latency" => ["1"], "Device" => ["G"],
            "B" => ["1"], "M" => ["2"], "N" => ["3"],
        }
        .unwrap();
        let e = import_frame(&no_k, "t.csv", "test", true)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "t.csv: column 'K': missing: the shape of 'bmm' needs columns B, M, N, K"
        );
        let bad = df! {
            "OPName" => ["softmax"], "Latency" => ["1"], "Device" => ["G"], "B" => ["0"], "H" => ["3"],
        }
        .unwrap();
        let e = import_frame(&bad, "t.parquet", "test", false)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "t.parquet: row 1: column 'B': expected a positive whole number, found '0'"
        );
    }
}
