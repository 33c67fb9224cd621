//! The command line's choices (`--format`, `--protocol`, ...): clap's value enums,
//! each the mirror of a library type it converts into, so that the library does not
//! depend on clap. Their doc comments are the `--help` text of each value.

/// One command-line enum over a library enum of the same variants: `From` both ways.
macro_rules! value_enum {
    ($(#[$meta:meta])* $name:ident => $lib:ident { $($(#[$vmeta:meta])* $variant:ident,)* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
        pub enum $name {
            $($(#[$vmeta])* $variant,)*
        }
        impl From<$name> for $lib {
            fn from(v: $name) -> $lib {
                match v {
                    $($name::$variant => $lib::$variant,)*
                }
            }
        }
        impl From<$lib> for $name {
            fn from(v: $lib) -> $name {
                match v {
                    $($lib::$variant => $name::$variant,)*
                }
            }
        }
    };
}

use gpucast::bench::{Layout as LibLayout, Stage as LibStage};
use gpucast::evaluation::ProtocolKind as LibProtocolKind;
use gpucast::features::FiguresSource as LibFiguresSource;
use gpucast::models::LaunchFloors as LibLaunchFloors;
use gpucast::report::Format as LibFormat;

value_enum! {
    /// How a command prints a table.
    Format => LibFormat {
        /// Aligned text for a terminal
        Table,
        /// Comma-separated values with a header
        Csv,
        /// A JSON array of objects keyed by column
        Json,
    }
}

value_enum! {
    /// Where target figures come from (`--target-calibration`).
    FiguresSource => LibFiguresSource {
        /// Catalog peaks x documented sustained fractions
        Spec,
        /// Measured figures of the catalog (a calibration TOML passed with --gpus)
        Measured,
        /// The reference study's gpu_metrics.json (beside the data, or given)
        Study,
    }
}

value_enum! {
    /// Where a target's launch floor comes from (`--launch-floor`).
    LaunchFloors => LibLaunchFloors {
        /// Each source's floor: the fastest run its harness timed on its GPU, when that
        /// is 50 µs or less (the target timed as the sources were)
        Sources,
        /// The catalog's floor for the target (measured, or 1.5 µs): the target timed by
        /// a bare CUDA harness whatever timed the sources
        Catalog,
    }
}

value_enum! {
    /// The protocols by name (`--protocol`).
    ProtocolKind => LibProtocolKind {
        /// Leave one GPU out: each GPU in turn is the target
        Logo,
        /// Hold out the largest configuration of each (GPU, kernel)
        NewSize,
        /// Hold out whole kernels (projected from their runs on other GPUs)
        NewKernel,
        /// Hold out a kernel family (category) and the target GPU together
        NewFamily,
        /// Leave one corpus out: every fitted part has seen neither the target's corpus
        /// (the runs' `source`) nor the target GPU; the corpus's other GPUs are the sources
        Loco,
        /// Each GPU from the GPUs that launched before it (launch year, then compute
        /// capability), in every corpus with two or more such GPUs
        Newer,
        /// Leave one architecture out: every GPU of the target's architecture is removed
        /// from the sources and from every fitted part
        Loao,
    }
}

value_enum! {
    /// A stage `gpucast bench` times (`--stage`).
    Stage => LibStage {
        /// Loading and validating the whole --data table, as every command does first (rows
        /// per second; each repeat reads the files again)
        Load,
        /// Analytical predictions of every row's work on another GPU (rows per second)
        AnalyticalPredict,
        /// Leave-one-GPU-out evaluation of the analytical model (fit + predict per fold)
        LogoAnalytical,
        /// Leave-one-GPU-out evaluation of the hybrid (residual fitted per fold)
        LogoHybrid,
    }
}

value_enum! {
    /// Where a subset's rows lie in memory while a stage runs on them (`--layout`).
    Layout => LibLayout {
        /// In a table of their own, in the whole table's order: what loading a file of just
        /// those rows gives, and what `predict` and `evaluate` read
        Table,
        /// Where they lie in the whole --data table, scattered among the rows left out:
        /// each row a cache miss away from the last (the layout of measurements made
        /// before this option; 30 % fewer analytical predictions per second at 100k of
        /// the GEMM corpus's 980k rows)
        InPlace,
    }
}

/// A value's name as the command line spells it (`--format csv`).
pub fn value_name(v: &impl clap::ValueEnum) -> String {
    v.to_possible_value()
        .map(|p| p.get_name().to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The command line's names are the library's names (experiment files, reports).
    #[test]
    fn names_agree_with_the_library() {
        for v in [
            FiguresSource::Spec,
            FiguresSource::Measured,
            FiguresSource::Study,
        ] {
            assert_eq!(value_name(&v), LibFiguresSource::from(v).name());
        }
        for v in [
            Stage::Load,
            Stage::AnalyticalPredict,
            Stage::LogoAnalytical,
            Stage::LogoHybrid,
        ] {
            assert_eq!(value_name(&v), LibStage::from(v).name());
        }
        for v in [Layout::Table, Layout::InPlace] {
            assert_eq!(value_name(&v), LibLayout::from(v).name());
        }
        for v in [
            ProtocolKind::Logo,
            ProtocolKind::NewSize,
            ProtocolKind::NewKernel,
            ProtocolKind::NewFamily,
            ProtocolKind::Loco,
            ProtocolKind::Newer,
            ProtocolKind::Loao,
        ] {
            assert_eq!(
                value_name(&v),
                gpucast::evaluation::Protocol::new(v.into(), None).name()
            );
        }
    }
}
