use clap::error::ErrorKind;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args = match vmafx::cli::Args::try_from_command_line(std::env::args_os()) {
        Ok(args) => args,
        Err(e) if e.kind() == ErrorKind::DisplayVersion => {
            // As `vmaf -v`: libvmaf's version alone, on stderr.
            eprintln!("{}", vmafx::cli::VMAF_VERSION);
            return ExitCode::SUCCESS;
        }
        Err(e) => e.exit(),
    };
    match vmafx::cli::run_then_exit(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("vmafx: {e}");
            ExitCode::FAILURE
        }
    }
}
