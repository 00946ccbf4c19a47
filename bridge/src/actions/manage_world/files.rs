//! `list_files` and `describe_file`: what the scenes folder holds.

use super::*;

pub(super) fn list_files(dir: &Path) -> Result<Value, BridgeError> {
    let root = canonical_dir(dir)?;
    let files = crate::reflect::files::files_ending_with(&root, EXTENSION);
    Ok(json!({
        "files": files.into_iter().map(|(name, bytes)| json!({"name": name, "bytes": bytes})).collect::<Vec<_>>(),
        "directory": dir.display().to_string(),
    }))
}

pub(super) fn describe_file(
    world: &mut World,
    dir: &Path,
    params: ManageWorldDescribeFileParams,
) -> Result<Value, BridgeError> {
    let (file, path) = existing_file(dir, &params.name)?;
    let registry = names::registry(world);
    let registry = registry.read();
    let asset_server = world.get_resource::<AssetServer>().cloned();
    let snapshot = read_world(asset_server, &file, &path, &registry)?;
    let type_path = type_path_of;
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    let mut names = Vec::new();
    for entity in &snapshot.entities {
        for component in &entity.components {
            *counts.entry(type_path(component.as_ref())).or_default() += 1;
            if names.len() < MAX_NAMES
                && let Some(name) = component.try_downcast_ref::<Name>()
            {
                names.push(name.as_str().to_owned());
            }
        }
    }
    let mut types: Vec<(String, u64)> = counts.into_iter().collect();
    types.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    Ok(json!({
        "file": file,
        "entityCount": snapshot.entities.len(),
        "componentTypes": types.into_iter().map(|(name, count)| json!({"type": name, "count": count})).collect::<Vec<_>>(),
        "resources": snapshot.resources.iter().map(|resource| type_path(resource.as_ref())).collect::<Vec<_>>(),
        "names": names,
    }))
}
