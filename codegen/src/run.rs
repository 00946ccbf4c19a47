//! Running codegen: read and validate the records, emit, compare with or write the generated crate.

use std::fs;
use std::path::{Path, PathBuf};

use crate::emit::{self, Outputs};
use crate::problem::Problems;
use crate::{LABELLED_DIR, PHRASEBOOK_DIR, PROMPTS_DIR, RECORDS_DIR, records, usage, validate};

/// Everything that can stop a codegen run.
#[derive(Debug, thiserror::Error)]
pub enum CodegenError {
    /// The records are wrong; every problem names its file and JSON pointer.
    #[error("the records have problems:\n{0}")]
    Records(Problems),
    /// Valid records that the generator cannot turn into code.
    #[error(transparent)]
    Emit(#[from] emit::EmitError),
    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        source: std::io::Error,
    },
}

/// How a generated file differs from what the records produce.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Drift {
    /// The file exists with other content.
    Stale(String),
    /// The file does not exist.
    Missing(String),
    /// The file sits where only generated files belong but codegen does not produce it.
    Stray(String),
}

impl std::fmt::Display for Drift {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Drift::Stale(path) => write!(
                f,
                "{path} is stale (edited by hand, or a record changed without regenerating)"
            ),
            Drift::Missing(path) => write!(f, "{path} is missing"),
            Drift::Stray(path) => write!(
                f,
                "{path} is not produced by codegen; delete it or add a record"
            ),
        }
    }
}

/// Reads and validates the records under `root`, then produces every generated file.
pub fn generate(root: &Path) -> Result<Outputs, CodegenError> {
    generate_leaving_out(root, &[])
}

/// [`generate`], with the labelled sets named in `left_out` (file names such as
/// `search-phrasings-dev13.json`) not counted: what search would know had it never learnt from
/// them, to measure them honestly. `--check` reports the result as stale.
pub fn generate_leaving_out(root: &Path, left_out: &[String]) -> Result<Outputs, CodegenError> {
    let mut records = records::load(&root.join(RECORDS_DIR)).map_err(CodegenError::Records)?;
    records.prompts =
        records::load_prompts(&root.join(PROMPTS_DIR)).map_err(CodegenError::Records)?;
    records.phrasebook =
        records::load_phrasebook(&root.join(PHRASEBOOK_DIR)).map_err(CodegenError::Records)?;
    records.labelled =
        usage::load_labelled(&root.join(LABELLED_DIR), left_out).map_err(CodegenError::Records)?;
    records.world_things =
        usage::load_world_things(&root.join(LABELLED_DIR)).map_err(CodegenError::Records)?;
    validate::validate(&records).map_err(CodegenError::Records)?;
    Ok(emit::emit(&records)?)
}

/// Compares `outputs` with the files under `root`; an empty list means no drift.
pub fn check(root: &Path, outputs: &Outputs) -> Vec<Drift> {
    let mut drift = Vec::new();
    for (path, expected) in outputs {
        match fs::read_to_string(root.join(path)) {
            // Compare with line endings normalized: a checkout with CRLF is not drift.
            Ok(actual) if actual.replace("\r\n", "\n") == *expected => {}
            Ok(_) => drift.push(Drift::Stale(path.clone())),
            Err(_) => drift.push(Drift::Missing(path.clone())),
        }
    }
    if let Ok(entries) = fs::read_dir(root.join("generated/src")) {
        let mut stray: Vec<String> = entries
            .filter_map(Result::ok)
            .map(|entry| format!("generated/src/{}", entry.file_name().to_string_lossy()))
            .filter(|path| !outputs.contains_key(path))
            .collect();
        stray.sort();
        drift.extend(stray.into_iter().map(Drift::Stray));
    }
    drift
}

/// Writes every output whose content differs, each through a temporary file and a rename so a
/// reader never sees half a file. Returns the paths written.
pub fn write(root: &Path, outputs: &Outputs) -> Result<Vec<String>, CodegenError> {
    let mut written = Vec::new();
    for (path, content) in outputs {
        let target = root.join(path);
        if fs::read_to_string(&target).is_ok_and(|current| current == *content) {
            continue;
        }
        let io = |source| CodegenError::Io {
            path: target.clone(),
            source,
        };
        if let Some(parent) = target.parent() {
            fs::create_dir_all(parent).map_err(io)?;
        }
        let temporary = target.with_extension("codegen-tmp");
        fs::write(&temporary, content).map_err(io)?;
        fs::rename(&temporary, &target).map_err(io)?;
        written.push(path.clone());
    }
    Ok(written)
}
