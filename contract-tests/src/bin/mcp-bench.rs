//! `mcp-bench`: the whole benchmark in one command. Builds the sandbox and the reference servers
//! (rmcp, raw hyper, and the sandbox's game on the Bevy Remote Protocol) in release, runs every
//! measurement, prints a Markdown report and writes `target/bench/results.{json,md}`.
//!
//! ```text
//! cargo run --release -p bevy_mcp_contract_tests --bin mcp-bench
//! ```

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Duration;

use bevy_mcp_contract_tests::bench::{
    BenchConfig, render_markdown, render_search_only, render_whole_world, run, run_search_only,
    run_whole_world,
};
use clap::Parser;

/// Benchmark the bridge against rmcp and a raw hyper echo, on loopback.
#[derive(Debug, Parser)]
#[command(name = "mcp-bench")]
struct Args {
    /// Seconds of each measured run.
    #[arg(long, default_value_t = 3.0)]
    seconds: f64,
    /// Repeats of every run (medians are reported).
    #[arg(long, default_value_t = 3)]
    repeats: usize,
    /// Where results and server logs are written (default: `bench` next to the binaries'
    /// profile directory, i.e. `target/bench`).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Do not build the servers first (they must already be next to this binary).
    #[arg(long)]
    no_build: bool,
    /// Measure only P8's whole-world calls (a few minutes instead of the whole benchmark).
    #[arg(long)]
    whole_world_only: bool,
    /// With `--whole-world-only`: these world sizes (comma-separated; default 1000,10000,100000).
    #[arg(long, value_delimiter = ',', requires = "whole_world_only")]
    sizes: Vec<u32>,
    /// With `--whole-world-only`: only the calls whose label holds one of these words
    /// (comma-separated, e.g. `load,undo`); a call they need first still runs.
    #[arg(long, value_delimiter = ',', requires = "whole_world_only")]
    calls: Vec<String>,
    /// With `--whole-world-only`: after each call, two control windows as long with no call,
    /// to tell what the machine does to the game's updates from what the call does: one with
    /// the game idle, one with frames of fixed work on a thread of the benchmark.
    #[arg(long, requires = "whole_world_only")]
    controls: bool,
    /// Measure only P5: search speed and recall over both labelled sets (seconds).
    #[arg(long, conflicts_with = "whole_world_only")]
    search_only: bool,
}

/// Builds `reference-brp` (its own workspace, see its Cargo.toml) into the same target directory.
/// Without it P3 reports BRP as unavailable; the rest of the benchmark still runs.
fn build_reference_brp(cargo: &str, bin_dir: &Path, release: bool) {
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/reference-brp/Cargo.toml");
    let Some(target_dir) = bin_dir.parent() else {
        return;
    };
    eprintln!("building reference-brp (the first time builds Bevy with bevy_remote's features)...");
    let mut build = Command::new(cargo);
    build
        .args(["build", "--manifest-path", manifest, "--target-dir"])
        .arg(target_dir)
        // On the Bevy version this benchmark was built with.
        .args([
            "--ignore-rust-version",
            "--no-default-features",
            "--features",
        ])
        .arg(bevy::compat::VERSION_FEATURE);
    if release {
        build.arg("--release");
    }
    match build.status() {
        Ok(status) if status.success() => {}
        Ok(status) => eprintln!("warning: building reference-brp failed ({status})"),
        Err(error) => eprintln!("warning: cannot run cargo: {error}"),
    }
}

/// Builds the servers the benchmark starts, with the same profile and Bevy version as this
/// binary (`cargo run` sets CARGO).
fn build_servers(cargo: &str, release: bool) -> Result<(), String> {
    let mut build = Command::new(cargo);
    // The same packages as `cargo run -p bevy_mcp_contract_tests` selects (it depends on both),
    // so features unify the same way and nothing already built is built again.
    build.args([
        "build",
        "-p",
        "bevy_mcp_contract_tests",
        "-p",
        "bevy_mcp_sandbox",
        "-p",
        "bevy_mcp_reference_servers",
        "--bins",
        "--ignore-rust-version",
    ]);
    // On the Bevy version this benchmark was built with; with the default features as
    // `cargo run` had them, so nothing is built again.
    if !cfg!(feature = "default") {
        build
            .args(["--no-default-features", "--features"])
            .arg(format!(
                "bevy_mcp_contract_tests/{}",
                bevy::compat::VERSION_FEATURE
            ));
    }
    if release {
        build.arg("--release");
    }
    match build.status() {
        Ok(status) if status.success() => Ok(()),
        Ok(status) => Err(format!("building the servers failed ({status})")),
        Err(error) => Err(format!("cannot run cargo: {error}")),
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    let bin_dir = match std::env::current_exe() {
        Ok(exe) => exe.parent().map(PathBuf::from).unwrap_or_default(),
        Err(error) => {
            eprintln!("error: cannot find this binary: {error}");
            return ExitCode::FAILURE;
        }
    };
    let release = bin_dir.file_name().is_some_and(|name| name == "release");
    if !release {
        eprintln!(
            "warning: this is not a release build; run `cargo run --release -p bevy_mcp_contract_tests --bin mcp-bench`"
        );
    }
    if !args.no_build {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
        if let Err(error) = build_servers(&cargo, release) {
            eprintln!("error: {error}");
            return ExitCode::FAILURE;
        }
        if !args.whole_world_only && !args.search_only {
            build_reference_brp(&cargo, &bin_dir, release);
        }
    }
    let out = args.out.unwrap_or_else(|| {
        bin_dir
            .parent()
            .map_or_else(|| PathBuf::from("bench"), |target| target.join("bench"))
    });
    let config = BenchConfig {
        bin_dir,
        run: Duration::from_secs_f64(args.seconds.max(0.1)),
        repeats: args.repeats.max(1),
        log_dir: out.join("logs"),
        whole_world_sizes: args.sizes,
        whole_world_calls: args.calls,
        whole_world_controls: args.controls,
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::FAILURE;
        }
    };
    let measured = if args.whole_world_only {
        runtime.block_on(run_whole_world(&config))
    } else if args.search_only {
        runtime.block_on(run_search_only(&config))
    } else {
        runtime.block_on(run(&config))
    };
    let results = match measured {
        Ok(results) => results,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::FAILURE;
        }
    };
    let report = if args.whole_world_only {
        render_whole_world(&results)
    } else if args.search_only {
        render_search_only(&results)
    } else {
        render_markdown(&results)
    };
    println!("{report}");
    let written = std::fs::create_dir_all(&out)
        .and_then(|()| {
            std::fs::write(
                out.join("results.json"),
                serde_json::to_string_pretty(&results).unwrap_or_default(),
            )
        })
        .and_then(|()| std::fs::write(out.join("results.md"), &report));
    match written {
        Ok(()) => {
            eprintln!("wrote {}", out.join("results.{json,md}").display());
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("error: cannot write results to {}: {error}", out.display());
            ExitCode::FAILURE
        }
    }
}
