//! The README and the guide stay readable and whole: the README is short, and every link between
//! them and to the repository's files leads somewhere. (`cargo doc` with `-D warnings` in CI checks
//! the guide's links between chapters; `cargo test --doc` runs its examples.)

use std::path::{Path, PathBuf};

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

fn guide_chapters() -> Vec<PathBuf> {
    let folder = repository().join("bridge/docs");
    let mut chapters: Vec<PathBuf> = std::fs::read_dir(&folder)
        .unwrap_or_else(|error| panic!("{}: {error}", folder.display()))
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|extension| extension == "md"))
        .collect();
    chapters.sort();
    chapters
}

/// The targets of a Markdown text's inline links and images, outside code.
fn link_targets(text: &str) -> Vec<String> {
    let mut targets = Vec::new();
    let mut in_fence = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            targets.push(after[..end].to_owned());
            rest = &after[end..];
        }
    }
    targets
}

#[test]
fn the_readme_is_at_most_300_lines() {
    let readme = std::fs::read_to_string(repository().join("README.md")).unwrap_or_default();
    let lines = readme.lines().count();
    assert!(
        (50..=300).contains(&lines),
        "the README has {lines} lines; depth belongs in bridge/docs"
    );
}

#[test]
fn every_link_of_the_readme_and_the_guide_leads_to_a_file_or_a_chapter() {
    let chapters = guide_chapters();
    assert!(chapters.len() >= 10, "read {} chapters", chapters.len());
    let guide_rs =
        std::fs::read_to_string(repository().join("bridge/src/guide.rs")).unwrap_or_default();
    let mut broken = Vec::new();
    let mut documents = vec![repository().join("README.md")];
    documents.extend(chapters.iter().cloned());
    for document in &documents {
        let text = std::fs::read_to_string(document).unwrap_or_default();
        let base = document.parent().unwrap_or(Path::new("."));
        for target in link_targets(&text) {
            let path = target.split('#').next().unwrap_or_default();
            if target.starts_with("https://") || path.is_empty() {
                continue;
            }
            let whole = if let Some(chapter) = path.strip_prefix("crate::guide::") {
                // A link between chapters: the chapter must be a module of the guide.
                guide_rs.contains(&format!("pub mod {chapter} {{}}"))
            } else {
                base.join(path).exists()
            };
            if !whole {
                broken.push(format!("{}: {target}", document.display()));
            }
        }
    }
    assert!(
        broken.is_empty(),
        "links to nothing:\n{}",
        broken.join("\n")
    );
    for chapter in &chapters {
        let name = chapter
            .file_name()
            .and_then(|name| name.to_str())
            .unwrap_or_default();
        assert!(
            guide_rs.contains(&format!("include_str!(\"../docs/{name}\")")),
            "{name} is not a chapter of the guide module"
        );
    }
}
