//! `gpucast`: the command-line front of the gpucast library (a thin layer: parsing
//! arguments, calling the library, printing).

mod cli;

use clap::Parser;

fn main() {
    let args = cli::Cli::parse();
    if let Err(e) = cli::run(args) {
        // A closed stdout (`gpucast ... | head`) means the reader has what it wanted.
        if e.is_broken_pipe() {
            std::process::exit(0);
        }
        eprintln!("error: {e}");
        std::process::exit(e.exit_code());
    }
}
