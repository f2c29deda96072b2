use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args = vmafx::cli::Args::parse();
    match vmafx::cli::run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("vmafx: {e}");
            ExitCode::FAILURE
        }
    }
}
