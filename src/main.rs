//! `gpucast`: the command-line front of the gpucast library (a thin layer: parsing
//! arguments, calling the library, printing).

mod cli;

use clap::Parser;

fn main() {
    let args = match cli::Cli::try_parse() {
        Ok(args) => args,
        Err(e) => clap_exit(e),
    };
    let run = gpucast::files::remove_temporaries_on_signals().and_then(|()| cli::run(args));
    // (a stopping signal's cleanup under way ends the process itself, with its code)
    gpucast::files::wait_for_cleanup();
    if let Err(e) = run {
        // A closed stdout (`gpucast ... | head`) means the reader has what it wanted.
        if e.is_broken_pipe() {
            std::process::exit(0);
        }
        eprintln!("error: {}", gpucast::error::one_line_text(&e.to_string()));
        std::process::exit(e.exit_code());
    }
}

/// Help and version print as clap prints them; a command-line mistake is one line
/// (`error: ...`, exit code 2) like every other error.
fn clap_exit(e: clap::Error) -> ! {
    use clap::error::ErrorKind;
    if !e.use_stderr() || e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
        e.exit();
    }
    eprintln!("error: {}", one_line(&e.render().to_string()));
    std::process::exit(2);
}

/// clap's report on one line: the message, its details and tips, without the usage
/// and the "For more information" lines.
fn one_line(report: &str) -> String {
    let mut parts: Vec<String> = Vec::new();
    for line in report.lines().map(str::trim) {
        if line.starts_with("Usage:") || line.starts_with("For more information") {
            break;
        }
        let line = line.strip_prefix("error:").map_or(line, str::trim);
        if line.is_empty() {
            continue;
        }
        parts.push(match line.strip_prefix("tip:") {
            Some(tip) => format!("(tip: {})", tip.trim()),
            None => line.to_string(),
        });
    }
    parts.join(" ")
}

#[cfg(test)]
mod tests {
    #[test]
    fn clap_reports_fold_into_one_line() {
        let report = "error: invalid value 'lolo' for '--protocol <PROTOCOL>'\n  [possible values: logo, new-size]\n\n  tip: a similar value exists: 'logo'\n\nFor more information, try '--help'.\n";
        assert_eq!(
            super::one_line(report),
            "invalid value 'lolo' for '--protocol <PROTOCOL>' [possible values: logo, new-size] (tip: a similar value exists: 'logo')"
        );
        let report = "error: the following required arguments were not provided:\n  --target <TARGET>\n\nUsage: gpucast predict --runs <RUNS> --target <TARGET>\n\nFor more information, try '--help'.\n";
        assert_eq!(
            super::one_line(report),
            "the following required arguments were not provided: --target <TARGET>"
        );
    }
}
