//! The runs-table columns, declared once: the column specs, the name lists, the
//! [`Run`] record's fields and its name-based accessors all come from the single
//! `contract!` invocation below.

use crate::run::{Exclusion, Origin, Warning};

/// What a column holds and who must provide it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnKind {
    /// Every row must have a value.
    Required,
    /// A number a row may leave empty; a field of [`Run`].
    OptionalNumeric,
    /// A text a row may leave empty; a field of [`Run`], shared ([`crate::Name`])
    /// between the rows with the same label: a table repeats a few precisions, suites,
    /// categories and sources, and a string per row made `predict` on the 980k-row
    /// GEMM corpus peak at 1,040 MiB instead of 870.
    OptionalText,
    /// Written by a benchmark runner for provenance; gpucast passes it through
    /// untouched (except `status`: rows whose status is not `ok` are skipped).
    Runner,
    /// Written by validation (`flags`): the serialized warnings of a row.
    Flags,
}

/// One column of the contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ColumnSpec {
    pub name: &'static str,
    pub kind: ColumnKind,
    /// True when cells are numbers (parsed, finite, >= 0), false for text.
    pub numeric: bool,
    /// One line: meaning and unit.
    pub description: &'static str,
}

macro_rules! contract {
    (
        required_text: [$($rt:ident = $rtd:literal),* $(,)?],
        required_numeric: [$($rn:ident = $rnd:literal),* $(,)?],
        numeric: [$($num:ident = $numd:literal),* $(,)?],
        details: [$($det:ident = $detd:literal),* $(,)?],
        text: [$($txt:ident = $txtd:literal),* $(,)?],
        runner_numeric: [$($un:ident = $und:literal),* $(,)?],
        runner_text: [$($ut:ident = $utd:literal),* $(,)?],
        flags: $fd:literal $(,)?
    ) => {
        /// Every column of the contract, in the order files are written.
        pub const COLUMNS: &[ColumnSpec] = &[
            $(ColumnSpec { name: stringify!($rt), kind: ColumnKind::Required, numeric: false, description: $rtd },)*
            $(ColumnSpec { name: stringify!($rn), kind: ColumnKind::Required, numeric: true, description: $rnd },)*
            $(ColumnSpec { name: stringify!($num), kind: ColumnKind::OptionalNumeric, numeric: true, description: $numd },)*
            $(ColumnSpec { name: stringify!($det), kind: ColumnKind::OptionalNumeric, numeric: true, description: $detd },)*
            $(ColumnSpec { name: stringify!($txt), kind: ColumnKind::OptionalText, numeric: false, description: $txtd },)*
            $(ColumnSpec { name: stringify!($un), kind: ColumnKind::Runner, numeric: true, description: $und },)*
            $(ColumnSpec { name: stringify!($ut), kind: ColumnKind::Runner, numeric: false, description: $utd },)*
            ColumnSpec { name: "flags", kind: ColumnKind::Flags, numeric: false, description: $fd },
        ];

        /// Required columns, in the contract's order.
        pub const REQUIRED: &[&str] = &[$(stringify!($rt),)* $(stringify!($rn),)*];
        /// Optional numeric columns (fields of [`Run`] or of its [`RunDetails`]).
        pub const OPTIONAL_NUMERIC: &[&str] = &[$(stringify!($num),)* $(stringify!($det),)*];
        /// Optional text columns (fields of [`Run`]).
        pub const OPTIONAL_TEXT: &[&str] = &[$(stringify!($txt)),*];
        /// Provenance columns a runner writes (passed through by gpucast).
        pub const RUNNER: &[&str] = &[$(stringify!($un),)* $(stringify!($ut),)*];
        /// The header a benchmark runner writes: every column except `flags`,
        /// which only validation writes.
        pub const RUNNER_HEADER: &[&str] = &[
            $(stringify!($rt),)* $(stringify!($rn),)* $(stringify!($num),)*
            $(stringify!($det),)* $(stringify!($txt),)* $(stringify!($un),)* $(stringify!($ut),)*
        ];

        /// One kernel configuration measured on one GPU.
        #[derive(Debug, Default)]
        pub struct Run {
            $(#[doc = $rtd] pub $rt: crate::Name,)*
            $(#[doc = $rnd] pub $rn: f64,)*
            $(#[doc = $numd] pub $num: Option<f64>,)*
            /// The optional numbers few producers write (see [`RunDetails`]); None
            /// when the row has none of them.
            pub details: Option<Box<RunDetails>>,
            $(#[doc = $txtd] pub $txt: Option<crate::Name>,)*
            /// The `flags` column: after validation, the serialized [`Run::warnings`]
            /// and [`Run::exclusion`] plus any flags of other tools read from the file.
            pub flags: Vec<String>,
            /// Set by validation: why the row is left out of fitting and scoring.
            pub exclusion: Option<Exclusion>,
            /// Set by validation: what is unusual about a kept row.
            pub warnings: Vec<Warning>,
            pub origin: Origin,
        }

        /// Written out so that `clone_from` reuses what the target holds (its details'
        /// box, its flags' buffers; names are shared): a loop that makes one query per
        /// row into one buffer allocates nothing per row. A field
        /// added to `Run` must be added to both: `clone` fails to compile without it,
        /// `clone_from` would not (the crate's test compares the two).
        impl Clone for Run {
            fn clone(&self) -> Run {
                Run {
                    $($rt: self.$rt.clone(),)*
                    $($rn: self.$rn,)*
                    $($num: self.$num,)*
                    details: self.details.clone(),
                    $($txt: self.$txt.clone(),)*
                    flags: self.flags.clone(),
                    exclusion: self.exclusion.clone(),
                    warnings: self.warnings.clone(),
                    origin: self.origin.clone(),
                }
            }
            fn clone_from(&mut self, other: &Run) {
                $(self.$rt.clone_from(&other.$rt);)*
                $(self.$rn = other.$rn;)*
                $(self.$num = other.$num;)*
                self.details.clone_from(&other.details);
                $(self.$txt.clone_from(&other.$txt);)*
                self.flags.clone_from(&other.flags);
                self.exclusion.clone_from(&other.exclusion);
                self.warnings.clone_from(&other.warnings);
                self.origin.clone_from(&other.origin);
            }
        }

        /// The optional numbers of a run that only some producers write: a runner's
        /// trial statistics, a profiler's instruction counters and the SMs a kernel
        /// was confined to. Boxed apart from [`Run`] so that a row without them costs
        /// one pointer, not 20 optional numbers. No public corpus has them: a run went
        /// from 704 to 536 bytes, and `predict` on the 980k-row GEMM corpus from a
        /// 1,220 to a 1,041 MiB peak (`data validate` of every corpus 1,446 -> 1,236).
        #[derive(Debug, Default, Clone, PartialEq)]
        pub struct RunDetails {
            $(#[doc = $detd] pub $det: Option<f64>,)*
        }

        impl RunDetails {
            /// No number set: the details of a run that has none.
            pub const NONE: RunDetails = RunDetails { $($det: None,)* };
            /// These details as a run holds them ([`Run::details`]): none when no
            /// number is set.
            pub fn boxed(self) -> Option<Box<RunDetails>> {
                (self != RunDetails::NONE).then(|| Box::new(self))
            }
        }

        /// Field by field, a run's details by value: details made and then emptied
        /// equal none at all.
        impl PartialEq for Run {
            fn eq(&self, other: &Run) -> bool {
                $(self.$rt == other.$rt &&)*
                $(self.$rn == other.$rn &&)*
                $(self.$num == other.$num &&)*
                self.details() == other.details() &&
                $(self.$txt == other.$txt &&)*
                self.flags == other.flags
                    && self.exclusion == other.exclusion
                    && self.warnings == other.warnings
                    && self.origin == other.origin
            }
        }

        impl Run {
            /// The value of a numeric column (required or optional) by name.
            pub fn numeric(&self, column: &str) -> Option<f64> {
                match column {
                    $(stringify!($rn) => Some(self.$rn),)*
                    $(stringify!($num) => self.$num,)*
                    $(stringify!($det) => self.details().$det,)*
                    _ => None,
                }
            }
            /// The slot of an optional numeric column by name (for loaders). A slot
            /// of the run's details makes them, empty, when the run has none: a
            /// loader asks only for the slot of a value it has.
            pub fn numeric_mut(&mut self, column: &str) -> Option<&mut Option<f64>> {
                match column {
                    $(stringify!($num) => Some(&mut self.$num),)*
                    $(stringify!($det) => Some(&mut self.details_mut().$det),)*
                    _ => None,
                }
            }
            /// The slot of a required numeric column by name (for loaders).
            pub fn required_numeric_mut(&mut self, column: &str) -> Option<&mut f64> {
                match column {
                    $(stringify!($rn) => Some(&mut self.$rn),)*
                    _ => None,
                }
            }
            /// The value of a text column (required or optional) by name.
            pub fn text(&self, column: &str) -> Option<&str> {
                match column {
                    $(stringify!($rt) => Some(&self.$rt),)*
                    $(stringify!($txt) => self.$txt.as_deref(),)*
                    _ => None,
                }
            }
            /// The slot of an optional text column by name (for loaders).
            pub fn text_mut(&mut self, column: &str) -> Option<&mut Option<crate::Name>> {
                match column {
                    $(stringify!($txt) => Some(&mut self.$txt),)*
                    _ => None,
                }
            }
            /// The slot of a required text column by name (for loaders).
            pub fn required_text_mut(&mut self, column: &str) -> Option<&mut crate::Name> {
                match column {
                    $(stringify!($rt) => Some(&mut self.$rt),)*
                    _ => None,
                }
            }
        }
    };
}

contract! {
    required_text: [
        gpu = "GPU name as measured; after validation, the catalog's canonical name",
        kernel = "kernel identifier",
        config = "problem configuration key (canonical `name=value,...`); same (kernel, config) on two GPUs = same work",
    ],
    required_numeric: [
        time_ms = "mean kernel time, milliseconds (> 0)",
        flops = "floating-point operations executed",
        dram_bytes = "bytes moved between the SMs and device memory (or the best estimate)",
    ],
    numeric: [
        time_std_ms = "standard deviation of the timing trials, milliseconds",
        trials = "number of timing trials",
        block_threads = "threads per block",
        grid_blocks = "blocks in the grid",
        regs_per_thread = "registers per thread",
        smem_per_block = "shared memory per block, bytes (static + dynamic)",
        blocks_per_sm = "resident blocks per SM as measured or reported by a profiler",
        warps_per_sm = "resident warps per SM as measured or reported by a profiler",
        achieved_occupancy = "achieved occupancy from a profiler, fraction of the SM's warp slots (0..1)",
        working_set_bytes = "distinct bytes touched",
        l2_bytes = "traffic between L1 and L2, bytes (e.g. from Nsight Compute)",
        l1_bytes = "traffic at L1, bytes (e.g. from Nsight Compute)",
        shared_bytes = "shared-memory traffic, bytes (e.g. from Nsight Compute)",
    ],
    details: [
        inst_warp = "warp-level instructions executed",
        inst_thread = "thread-level instructions executed",
        inst_thread_fp32 = "thread-level FP32 instructions executed, predicate on (instruction mix)",
        inst_thread_fp64 = "thread-level FP64 instructions executed, predicate on (instruction mix)",
        inst_thread_int = "thread-level integer instructions executed, predicate on (instruction mix)",
        inst_thread_ldst = "thread-level load/store (memory) instructions executed, predicate on (instruction mix)",
        inst_warp_tensor = "warp-level tensor-pipe instructions executed (instruction mix)",
        l1_sectors = "32-byte sectors of global loads and stores at L1 (instruction roofline)",
        shared_wavefronts = "shared-memory wavefronts of loads and stores (instruction roofline)",
        l2_sectors = "32-byte sectors at L2 (instruction roofline)",
        l2_slice_imbalance = "L2 bytes of the busiest L2 slice over the mean slice's (1 = even; co-run model)",
        dram_sectors = "32-byte sectors read from and written to DRAM (instruction roofline)",
        flops_fma = "FMA floating-point instructions executed",
        flops_add = "add floating-point instructions executed",
        flops_mul = "multiply floating-point instructions executed",
        flops_special = "special-function (transcendental) instructions executed",
        time_min_ms = "fastest timing trial, milliseconds",
        time_median_ms = "median timing trial, milliseconds",
        time_cv = "coefficient of variation of the timing trials (std / mean)",
        dram_bytes_model = "DRAM bytes by the runner's sector model (whole 32-byte sectors)",
        sm_count = "SMs the kernel ran on (the whole GPU unless restricted)",
    ],
    text: [
        precision = "fp32 (default), fp16, bf16, fp64, int, tf32",
        suite = "free label of the benchmark suite (e.g. reference-16)",
        category = "free label of the kernel's character (e.g. memory-bound, coalesced)",
        source = "provenance (tool, date, driver); two sources may measure the same work",
    ],
    runner_numeric: [
        reps = "kernel launches per timing trial",
        sm_clock_mhz = "SM clock during the measurement, MHz",
        mem_clock_mhz = "memory clock during the measurement, MHz",
    ],
    runner_text: [
        status = "ok, or error (the row has no time and is skipped on load)",
        error = "the runner's one-line error for a failed row",
        verified = "true / false: the kernel's output was checked, empty when not checked",
        driver_version = "GPU driver version",
        cuda_version = "CUDA version",
        date = "measurement date (ISO 8601)",
        commit = "git commit of the runner",
    ],
    flags: "validation warnings, ';'-separated (e.g. flat_time:64x;single_gpu)",
}

/// The spec of a column by name.
pub fn column(name: &str) -> Option<&'static ColumnSpec> {
    COLUMNS.iter().find(|c| c.name == name)
}

/// Largest plausible value of a numeric column; a larger one is a typo, not data.
/// Times: 1e7 ms (about 3 hours). Counts of FLOPs, bytes or instructions: 1e21
/// (a zettaop: beyond any kernel launch), and of sectors or wavefronts alike.
/// Fractions: 1. Resident blocks or warps per SM: 64 (no GPU holds more). Timing
/// trials: 1e9. A coefficient of variation: 100 (a standard deviation 100 times the
/// mean is no timing).
pub fn upper_bound(name: &str) -> Option<f64> {
    let spec = column(name)?;
    if !spec.numeric {
        return None;
    }
    if name == "achieved_occupancy" {
        Some(1.0)
    } else if name == "blocks_per_sm" || name == "warps_per_sm" {
        Some(64.0)
    } else if name == "trials" {
        Some(1e9)
    } else if name == "time_cv" {
        Some(100.0)
    } else if name.ends_with("_ms") {
        Some(1e7)
    } else if name.starts_with("flops")
        || name.ends_with("_bytes")
        || name.starts_with("inst_")
        || name.ends_with("_sectors")
        || name.ends_with("_wavefronts")
    {
        Some(1e21)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_lists_partition_the_specs() {
        let mut names: Vec<&str> = COLUMNS.iter().map(|c| c.name).collect();
        let n = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), n, "a column is declared twice");
        assert_eq!(
            REQUIRED.len() + OPTIONAL_NUMERIC.len() + OPTIONAL_TEXT.len() + RUNNER.len() + 1,
            n
        );
        assert_eq!(RUNNER_HEADER.len(), n - 1);
        assert!(!RUNNER_HEADER.contains(&"flags"));
        assert_eq!(
            REQUIRED,
            ["gpu", "kernel", "config", "time_ms", "flops", "dram_bytes"]
        );
        assert!(OPTIONAL_NUMERIC.contains(&"achieved_occupancy"));
        for c in COLUMNS {
            assert!(!c.description.is_empty() && !c.description.contains('\n'));
        }
    }

    /// Set every column through its slot: optional numeric column i to i + `offset`,
    /// required numeric ones to `required`, text to "`tag`-column".
    fn set_every_column(r: &mut Run, offset: f64, required: f64, tag: &str) {
        for (i, name) in OPTIONAL_NUMERIC.iter().enumerate() {
            *r.numeric_mut(name).unwrap() = Some(i as f64 + offset);
        }
        for name in OPTIONAL_TEXT {
            *r.text_mut(name).unwrap() = Some(format!("{tag}-{name}").into());
        }
        for c in COLUMNS.iter().filter(|c| c.kind == ColumnKind::Required) {
            if c.numeric {
                *r.required_numeric_mut(c.name).unwrap() = required;
            } else {
                *r.required_text_mut(c.name).unwrap() = format!("{tag}-{}", c.name).into();
            }
        }
    }

    #[test]
    fn details_are_made_only_for_a_value_and_compare_by_value() {
        // SYNTHETIC values.
        let mut r = Run::default();
        assert!(r.details.is_none() && r.numeric("inst_warp").is_none());
        assert!(r.numeric_mut("time_std_ms").is_some() && r.details.is_none());
        *r.numeric_mut("sm_count").unwrap() = Some(66.0);
        assert_eq!(r.details().sm_count, Some(66.0));
        assert_eq!(r.numeric("sm_count"), Some(66.0));
        // emptied details equal none at all, a set number does not
        let mut emptied = r.clone();
        emptied.details_mut().sm_count = None;
        assert!(emptied.details.is_some());
        assert_eq!(emptied, Run::default());
        assert_ne!(r, Run::default());
        assert_eq!(RunDetails::default().boxed(), None);
    }

    /// The point of boxed details and shared names: a run stays at most 480 bytes (it
    /// was 704 with its details inline and a String per name).
    #[test]
    #[cfg(target_pointer_width = "64")]
    fn a_run_stays_small() {
        assert!(
            std::mem::size_of::<Run>() <= 480,
            "{}",
            std::mem::size_of::<Run>()
        );
    }

    #[test]
    fn clone_and_clone_from_copy_every_field() {
        // SYNTHETIC values: every column set (a field clone_from forgot would keep the
        // buffer's value, which differs from the source's everywhere).
        let filled = |tag: f64| {
            let mut r = Run::default();
            set_every_column(&mut r, tag, tag, &tag.to_string());
            r.flags = vec![format!("flag-{tag}")];
            r.exclusion = Some(crate::run::Exclusion::SmPartition {
                sm_count: tag as u32,
                gpu_sms: 132,
            });
            r.warnings = vec![crate::run::Warning::FlatTime {
                work_ratio: tag,
                time_ratio: 1.0,
                disagreeing: 1,
                comparable: 2,
            }];
            r.origin = crate::run::Origin {
                file: format!("f{tag}.csv").into(),
                row: tag as usize,
                line: Some(tag as usize + 1),
            };
            r
        };
        let (source, mut buffer) = (filled(1.0), filled(2.0));
        assert_ne!(buffer, source);
        assert_eq!(source.clone(), source);
        buffer.clone_from(&source);
        assert_eq!(buffer, source);
        // and back to a row with nothing optional
        buffer.clone_from(&Run::default());
        assert_eq!(buffer, Run::default());
    }

    #[test]
    fn every_record_column_has_an_accessor() {
        // SYNTHETIC values: set every field through its slot and read it back.
        let mut r = Run::default();
        set_every_column(&mut r, 0.5, 7.0, "v");
        for (i, name) in OPTIONAL_NUMERIC.iter().enumerate() {
            assert_eq!(r.numeric(name), Some(i as f64 + 0.5), "{name}");
            assert!(r.text(name).is_none());
        }
        for name in OPTIONAL_TEXT {
            assert_eq!(r.text(name), Some(format!("v-{name}").as_str()));
        }
        assert_eq!(r.time_ms, 7.0);
        assert_eq!(r.gpu, "v-gpu");
        for name in RUNNER {
            assert!(r.numeric(name).is_none() && r.text(name).is_none());
        }
    }

    #[test]
    fn bounds() {
        assert_eq!(upper_bound("time_ms"), Some(1e7));
        assert_eq!(upper_bound("time_std_ms"), Some(1e7));
        assert_eq!(upper_bound("warps_per_sm"), Some(64.0));
        assert_eq!(upper_bound("time_cv"), Some(100.0));
        assert_eq!(upper_bound("flops"), Some(1e21));
        assert_eq!(upper_bound("flops_fma"), Some(1e21));
        assert_eq!(upper_bound("dram_bytes"), Some(1e21));
        assert_eq!(upper_bound("l2_bytes"), Some(1e21));
        assert_eq!(upper_bound("l2_sectors"), Some(1e21));
        assert_eq!(upper_bound("shared_wavefronts"), Some(1e21));
        assert_eq!(upper_bound("inst_warp_tensor"), Some(1e21));
        assert_eq!(upper_bound("achieved_occupancy"), Some(1.0));
        assert_eq!(upper_bound("block_threads"), None);
        assert_eq!(upper_bound("gpu"), None);
        assert_eq!(upper_bound("nonsense"), None);
    }
}
