//! Problems found in the records, each naming the file and the JSON pointer inside it.

use std::fmt;

/// One thing wrong with the records.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Problem {
    /// File name inside the records directory.
    pub file: String,
    /// JSON pointer to the offending value inside the file (`""` for the whole file).
    pub pointer: String,
    /// What is wrong and, where it helps, what to do.
    pub message: String,
}

impl Problem {
    /// A problem at `pointer` in `file`.
    pub fn new(
        file: impl Into<String>,
        pointer: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Problem {
            file: file.into(),
            pointer: pointer.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Prompt and phrasebook files are named `prompts/<file>` and `phrasebook/<file>` (they
        // live in `codegen/prompts/` and `native-transport/search/phrasebook/`).
        let folder = if self.file.starts_with("prompts/") || self.file.starts_with("phrasebook/") {
            "codegen"
        } else {
            "codegen/records"
        };
        write!(
            f,
            "{folder}/{}#{}: {}",
            self.file, self.pointer, self.message
        )
    }
}

/// Every problem found in one run, in file and pointer order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Problems(Vec<Problem>);

impl Problems {
    /// Records a problem.
    pub fn push(&mut self, problem: Problem) {
        self.0.push(problem);
    }

    /// Whether nothing was found.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The problems, sorted.
    pub fn sorted(mut self) -> Vec<Problem> {
        self.0.sort();
        self.0.dedup();
        self.0
    }

    /// `Ok(value)` when no problem was found, else the problems.
    pub fn into_result<T>(self, value: T) -> Result<T, Problems> {
        if self.is_empty() {
            Ok(value)
        } else {
            Err(self)
        }
    }

    /// Moves every problem of `other` into `self`.
    pub fn extend(&mut self, other: Problems) {
        self.0.extend(other.0);
    }
}

impl fmt::Display for Problems {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for problem in self.clone().sorted() {
            writeln!(f, "{problem}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Problems {}
