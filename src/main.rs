//! `gpucast`: the command-line front of the gpucast library (a thin layer: parsing
//! arguments, calling the library, printing).

mod cli;

use clap::Parser;

fn main() {
    let args = cli::Cli::parse();
    if let Err(e) = cli::run(args) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}
