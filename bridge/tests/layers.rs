//! The bridge's layers hold: a module imports only from its own folder or from a layer below
//! its own, so no import circle can run between folders (`lib.rs` gives the same table).
//!
//! It reads `bridge/src` as text: every `crate::<module>` a file names outside comments is an
//! import of that module.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The layer of a top-level module, bottom first.
fn layer(module: &str) -> Option<u8> {
    Some(match module {
        "error" => 1,
        "reflect" => 2,
        "runtime" => 3,
        "history" | "playtest" | "observe" | "game" => 4,
        "actions" => 5,
        "config" => 6,
        "plugin" => 7,
        "test_support" | "lib" | "guide" => 8,
        _ => return None,
    })
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|extension| extension == "rs") {
            out.push(path);
        }
    }
}

/// The top-level modules a file names as `crate::<module>`, outside comments.
fn imported_modules(source: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for line in source.lines() {
        let code = line.split("//").next().unwrap_or_default();
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            let after = &rest[at + "crate::".len()..];
            let name: String = after
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                found.insert(name);
            }
            rest = after;
        }
    }
    found
}

#[test]
fn every_module_imports_only_its_own_folder_and_the_layers_below() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    assert!(
        files.len() > 50,
        "read {} files of {}",
        files.len(),
        src.display()
    );
    let mut broken = Vec::new();
    for file in &files {
        let relative = file.strip_prefix(&src).unwrap_or(file);
        let own = relative
            .components()
            .next()
            .and_then(|first| first.as_os_str().to_str())
            .map(|first| first.trim_end_matches(".rs").to_owned())
            .unwrap_or_default();
        let own_layer = layer(&own)
            .unwrap_or_else(|| panic!("{} is in no layer: add it to layer()", relative.display()));
        let source = std::fs::read_to_string(file).unwrap_or_else(|error| panic!("{error}"));
        for module in imported_modules(&source) {
            let Some(their_layer) = layer(&module) else {
                // A root re-export (`crate::CATALOG`) or a name of the root: the top layer.
                broken.push(format!("{} names crate::{module}", relative.display()));
                continue;
            };
            if module != own && their_layer >= own_layer {
                broken.push(format!(
                    "{} (layer {own_layer}) imports crate::{module} (layer {their_layer})",
                    relative.display()
                ));
            }
        }
    }
    assert!(
        broken.is_empty(),
        "imports against the layers:\n{}",
        broken.join("\n")
    );
}

#[test]
fn the_check_reads_imports_and_skips_comments() {
    let source = "use crate::reflect::names;\n// crate::plugin in a comment\nlet x = crate::runtime::job::Outcome::Done; // crate::actions\n";
    let found: Vec<String> = imported_modules(source).into_iter().collect();
    assert_eq!(found, ["reflect", "runtime"]);
}
