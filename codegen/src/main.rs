//! `cargo run -p bevy_mcp_codegen [-- --check] [--root DIR] [--leave-out SET ...]`

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

/// Generate the `generated` crate from `codegen/records`, or check that it is up to date.
#[derive(Debug, Parser)]
#[command(name = "bevy_mcp_codegen")]
struct Args {
    /// Write nothing; exit non-zero and name every file that differs from what the records produce.
    #[arg(long)]
    check: bool,
    /// The workspace root (default: the workspace this binary was built from).
    #[arg(long)]
    root: Option<PathBuf>,
    /// A labelled set not to count (a file of `contract-tests/`, such as
    /// `search-phrasings-dev13.json`; repeatable): search then ranks it as if it had never
    /// learnt from it. Run codegen again without it before committing.
    #[arg(long, value_name = "SET", conflicts_with = "check")]
    leave_out: Vec<String>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let root = args
        .root
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".."));
    let outputs = match bevy_mcp_codegen::generate_leaving_out(&root, &args.leave_out) {
        Ok(outputs) => outputs,
        Err(error) => {
            eprintln!("codegen: {error}");
            return ExitCode::FAILURE;
        }
    };
    if args.check {
        let drift = bevy_mcp_codegen::check(&root, &outputs);
        if drift.is_empty() {
            println!(
                "codegen --check: {} generated files are up to date",
                outputs.len()
            );
            return ExitCode::SUCCESS;
        }
        for item in &drift {
            eprintln!("codegen --check: {item}");
        }
        eprintln!("run `cargo run -p bevy_mcp_codegen` and commit the result");
        return ExitCode::FAILURE;
    }
    match bevy_mcp_codegen::write(&root, &outputs) {
        Ok(written) if written.is_empty() => {
            println!(
                "codegen: {} generated files already up to date",
                outputs.len()
            );
            ExitCode::SUCCESS
        }
        Ok(written) => {
            for path in &written {
                println!("codegen: wrote {path}");
            }
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("codegen: {error}");
            ExitCode::FAILURE
        }
    }
}
