//! `manage_world`: world files with `bevy_world_serialization` (RON), confined to the scenes
//! directory. Saves are atomic (temporary file, then rename); loads are checked completely before
//! anything is spawned.

use std::any::TypeId;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use bevy::asset::{AssetPath, AssetServer, LoadFromPath, UntypedHandle};
use bevy::ecs::entity::EntityHashMap;
use bevy::ecs::reflect::{ReflectComponent, ReflectResource};
use bevy::prelude::{Entity, Name, Resource, World};
use bevy::reflect::serde::TypedReflectSerializer;
use bevy::reflect::{PartialReflect, ReflectFromReflect, TypeRegistry};
use bevy::world_serialization::serde::WorldDeserializer;
use bevy::world_serialization::{DynamicWorld, DynamicWorldBuilder};
use bevy_mcp_generated::call::ManageWorldCall;
use bevy_mcp_generated::params::*;
use serde::de::DeserializeSeed;
use serde_json::{Value, json};

use crate::error::BridgeError;
use crate::reflection::{
    self, component_id, entity_info, plain_entities, resolve_component, resolve_entity,
};

/// The extension of world files.
pub const EXTENSION: &str = ".scn.ron";
/// Largest world file read.
const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;
/// Names listed by `describe_file` at most.
const MAX_NAMES: usize = 50;

/// Where world files live.
#[derive(Resource, Debug, Clone)]
pub struct ScenesDir(pub PathBuf);

/// Runs a `manage_world` action.
pub fn run(world: &mut World, call: ManageWorldCall) -> Result<Value, BridgeError> {
    let dir = world
        .get_resource::<ScenesDir>()
        .map_or_else(|| PathBuf::from("scenes"), |dir| dir.0.clone());
    match call {
        ManageWorldCall::Save(params) => save(world, &dir, params),
        ManageWorldCall::Load(params) => load(world, &dir, params),
        ManageWorldCall::ListFiles(_) => list_files(&dir),
        ManageWorldCall::DescribeFile(params) => describe_file(world, &dir, params),
        ManageWorldCall::Clear(_) => Ok(clear(world)),
    }
}

/// Checks a caller's file name and returns it relative to the scenes directory, with the
/// extension: plain relative segments only, never absolute, never `.` or `..`.
pub fn file_name(given: &str) -> Result<String, BridgeError> {
    let name = crate::paths::relative_path(given)?;
    Ok(if name.ends_with(EXTENSION) {
        name
    } else {
        format!("{name}{EXTENSION}")
    })
}

/// The canonical scenes directory, created when missing.
fn canonical_dir(dir: &Path) -> Result<PathBuf, BridgeError> {
    std::fs::create_dir_all(dir).map_err(|error| io(dir, &error))?;
    dir.canonicalize().map_err(|error| io(dir, &error))
}

fn io(path: &Path, error: &std::io::Error) -> BridgeError {
    BridgeError::Io {
        file: path.display().to_string(),
        reason: error.to_string(),
    }
}

/// Resolves an existing file, refusing links that lead outside the scenes directory.
fn existing_file(dir: &Path, given: &str) -> Result<(String, PathBuf), BridgeError> {
    let relative = file_name(given)?;
    let root = canonical_dir(dir)?;
    let path = root.join(&relative);
    if !path.exists() {
        return Err(BridgeError::FileNotFound { file: relative });
    }
    let real = path.canonicalize().map_err(|error| io(&path, &error))?;
    if !real.starts_with(&root) {
        return Err(BridgeError::PathNotPermitted {
            given: given.to_owned(),
            reason: "it is a link that leads outside the scenes directory".to_owned(),
        });
    }
    Ok((relative, real))
}

/// The entities a save selects: the listed ones, the named ones, filtered by components.
fn selection(
    world: &mut World,
    params: &ManageWorldSaveParams,
) -> Result<Vec<Entity>, BridgeError> {
    let mut chosen: Vec<Entity> = Vec::new();
    if let Some(entities) = &params.entities {
        for reference in entities {
            let entity = resolve_entity(world, reference)?;
            reflection::require_plain_entity(world, entity)?;
            chosen.push(entity);
        }
    }
    if let Some(names) = &params.names {
        for entity in plain_entities(world) {
            if world
                .get::<Name>(entity)
                .is_some_and(|name| names.iter().any(|wanted| wanted == name.as_str()))
            {
                chosen.push(entity);
            }
        }
    }
    if params.entities.is_none() && params.names.is_none() {
        chosen = plain_entities(world);
    }
    if let Some(components) = &params.with_components {
        let registry = reflection::registry(world);
        let registry = registry.read();
        let ids = components
            .iter()
            .map(|name| {
                resolve_component(&registry, name)
                    .map(|(registration, _)| component_id(world, registration.type_id()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        chosen.retain(|entity| {
            world.get_entity(*entity).is_ok_and(|entity_ref| {
                ids.iter()
                    .all(|id| id.is_some_and(|id| entity_ref.contains_id(id)))
            })
        });
    }
    chosen.sort();
    chosen.dedup();
    Ok(chosen)
}

fn save(
    world: &mut World,
    dir: &Path,
    params: ManageWorldSaveParams,
) -> Result<Value, BridgeError> {
    let relative = file_name(&params.name)?;
    let entities = selection(world, &params)?;
    let root = canonical_dir(dir)?;
    let path = root.join(&relative);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|error| io(parent, &error))?;
        let real_parent = parent.canonicalize().map_err(|error| io(parent, &error))?;
        if !real_parent.starts_with(&root) {
            return Err(BridgeError::PathNotPermitted {
                given: params.name.clone(),
                reason: "a folder on the way is a link that leads outside the scenes directory"
                    .to_owned(),
            });
        }
    }
    if path.exists() || path.is_symlink() {
        let real = path.canonicalize().unwrap_or_else(|_| path.clone());
        if !real.starts_with(&root) {
            return Err(BridgeError::PathNotPermitted {
                given: params.name.clone(),
                reason: "it is a link that leads outside the scenes directory".to_owned(),
            });
        }
        if !params.overwrite {
            return Err(BridgeError::FileExists { file: relative });
        }
    }
    let registry = reflection::registry(world);
    let registry = registry.read();
    let mut builder = DynamicWorldBuilder::from_world(world, &registry)
        .extract_entities(entities.iter().copied());
    if params.include_resources {
        builder = builder.extract_resources();
    }
    let mut snapshot = builder.build();
    let skipped = keep_serializable(&mut snapshot, &registry);
    let text = snapshot
        .serialize(&registry)
        .map_err(|error| BridgeError::Io {
            file: relative.clone(),
            reason: format!("could not serialize: {error}"),
        })?;
    // Write beside the target and rename over it: a reader never sees half a file.
    let temporary = path.with_file_name(format!(
        ".{}.tmp-{}",
        path.file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default(),
        std::process::id()
    ));
    std::fs::write(&temporary, text.as_bytes()).map_err(|error| io(&temporary, &error))?;
    if let Err(error) = std::fs::rename(&temporary, &path) {
        let _ = std::fs::remove_file(&temporary);
        return Err(io(&path, &error));
    }
    Ok(json!({
        "file": relative,
        "entityCount": snapshot.entities.len(),
        "resourceCount": snapshot.resources.len(),
        "bytes": text.len(),
        "skipped": skipped,
    }))
}

/// Engine clocks and counters are never saved: restoring them would make time run backwards.
const UNSAVED_RESOURCE_PREFIXES: [&str; 2] = ["bevy_time::", "bevy_diagnostic::"];

fn type_path_of(value: &dyn PartialReflect) -> String {
    value.get_represented_type_info().map_or_else(
        || value.reflect_type_path().to_owned(),
        |info| info.type_path().to_owned(),
    )
}

/// Drops values that cannot be written to a file (no serialization registered) and engine
/// clocks; returns `{type, reason}` for each type dropped, so the reply says what was not saved.
fn keep_serializable(snapshot: &mut DynamicWorld, registry: &TypeRegistry) -> Vec<Value> {
    let mut skipped: BTreeMap<String, String> = BTreeMap::new();
    let mut keep = |value: &dyn PartialReflect, resource: bool| -> bool {
        let type_path = type_path_of(value);
        if resource
            && UNSAVED_RESOURCE_PREFIXES
                .iter()
                .any(|prefix| type_path.starts_with(prefix))
        {
            skipped.insert(
                type_path,
                "engine clocks and counters are not saved".to_owned(),
            );
            return false;
        }
        match serde_json::to_value(TypedReflectSerializer::new(value, registry)) {
            Ok(_) => true,
            Err(error) => {
                skipped.insert(type_path, error.to_string());
                false
            }
        }
    };
    snapshot
        .resources
        .retain(|resource| keep(resource.as_ref(), true));
    for entity in &mut snapshot.entities {
        entity
            .components
            .retain(|component| keep(component.as_ref(), false));
    }
    skipped
        .into_iter()
        .map(|(type_path, reason)| json!({"type": type_path, "reason": reason}))
        .collect()
}

/// Asset handles in a file are loaded through the app's asset server when it has one; without
/// one they become placeholder handles (the sandbox has no assets in its files).
struct Assets(Option<AssetServer>);

impl LoadFromPath for Assets {
    fn load_from_path_erased(
        &mut self,
        type_id: TypeId,
        path: AssetPath<'static>,
    ) -> UntypedHandle {
        match &mut self.0 {
            Some(server) => server.load_from_path_erased(type_id, path),
            None => UntypedHandle::Uuid {
                type_id,
                uuid: uuid::Uuid::nil(),
            },
        }
    }
}

/// Reads and parses a world file.
fn read_world(
    world: &World,
    file: &str,
    path: &Path,
    registry: &TypeRegistry,
) -> Result<DynamicWorld, BridgeError> {
    let size = std::fs::metadata(path)
        .map_err(|error| io(path, &error))?
        .len();
    if size > MAX_FILE_BYTES {
        return Err(BridgeError::InvalidFile {
            file: file.to_owned(),
            reason: format!("it is {size} bytes; the limit is {MAX_FILE_BYTES}"),
        });
    }
    let text = std::fs::read_to_string(path).map_err(|error| io(path, &error))?;
    let mut assets = Assets(world.get_resource::<AssetServer>().cloned());
    let mut deserializer =
        ron::de::Deserializer::from_str(&text).map_err(|error| BridgeError::InvalidFile {
            file: file.to_owned(),
            reason: error.to_string(),
        })?;
    WorldDeserializer {
        type_registry: registry,
        load_from_path: &mut assets,
    }
    .deserialize(&mut deserializer)
    .map_err(|error| BridgeError::InvalidFile {
        file: file.to_owned(),
        reason: error.to_string(),
    })
}

/// Every value of the file must be a registered component or resource that can be built from its
/// reflected form, or nothing is spawned (Bevy's own loader would panic half-way).
fn check_loadable(
    file: &str,
    snapshot: &DynamicWorld,
    registry: &TypeRegistry,
) -> Result<(), BridgeError> {
    let invalid = |reason: String| BridgeError::InvalidFile {
        file: file.to_owned(),
        reason,
    };
    let check = |value: &dyn PartialReflect, resource: bool| -> Result<(), BridgeError> {
        let info = value.get_represented_type_info().ok_or_else(|| {
            invalid(format!(
                "{} has no type information",
                value.reflect_type_path()
            ))
        })?;
        let registration = registry.get(info.type_id()).ok_or_else(|| {
            invalid(format!(
                "{} is not registered in this app",
                info.type_path()
            ))
        })?;
        if registration.data::<ReflectComponent>().is_none()
            || (resource && registration.data::<ReflectResource>().is_none())
        {
            return Err(invalid(format!(
                "{} is not a reflected {}",
                info.type_path(),
                if resource { "resource" } else { "component" }
            )));
        }
        let from_reflect = registration.data::<ReflectFromReflect>().ok_or_else(|| {
            invalid(format!(
                "{} cannot be built through reflection",
                info.type_path()
            ))
        })?;
        if from_reflect.from_reflect(value).is_none() {
            return Err(invalid(format!(
                "a value of {} does not have the type's shape",
                info.type_path()
            )));
        }
        Ok(())
    };
    for entity in &snapshot.entities {
        for component in &entity.components {
            check(component.as_ref(), false)?;
        }
    }
    for resource in &snapshot.resources {
        check(resource.as_ref(), true)?;
    }
    Ok(())
}

fn load(
    world: &mut World,
    dir: &Path,
    params: ManageWorldLoadParams,
) -> Result<Value, BridgeError> {
    let (file, path) = existing_file(dir, &params.name)?;
    let registry = reflection::registry(world);
    let registry = registry.read();
    let snapshot = read_world(world, &file, &path, &registry)?;
    check_loadable(&file, &snapshot, &registry)?;
    let mut mapping = EntityHashMap::default();
    snapshot
        .write_to_world_with(world, &mut mapping, &registry)
        .map_err(|error| BridgeError::InvalidFile {
            file: file.clone(),
            reason: error.to_string(),
        })?;
    let mut rows: Vec<(Entity, Value)> = mapping
        .iter()
        .map(|(saved, new)| {
            (
                *saved,
                json!({"saved": saved.to_string(), "entity": entity_info(world, *new)}),
            )
        })
        .collect();
    rows.sort_by_key(|(saved, _)| *saved);
    Ok(json!({
        "file": file,
        "spawned": snapshot.entities.len(),
        "resources": snapshot.resources.len(),
        "mapping": rows.into_iter().map(|(_, row)| row).collect::<Vec<_>>(),
    }))
}

fn list_files(dir: &Path) -> Result<Value, BridgeError> {
    let root = canonical_dir(dir)?;
    let mut files = Vec::new();
    let mut pending = vec![root.clone()];
    while let Some(folder) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            // Links are not followed: listing never leaves the directory.
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                pending.push(path);
            } else if kind.is_file() && path.to_string_lossy().ends_with(EXTENSION) {
                let relative = path
                    .strip_prefix(&root)
                    .map(|relative| relative.to_string_lossy().into_owned())
                    .unwrap_or_default();
                if relative.split('/').any(|segment| segment.starts_with('.')) {
                    continue;
                }
                let bytes = entry.metadata().map(|metadata| metadata.len()).unwrap_or(0);
                files.push((relative, bytes));
            }
        }
    }
    files.sort();
    Ok(json!({
        "files": files.into_iter().map(|(name, bytes)| json!({"name": name, "bytes": bytes})).collect::<Vec<_>>(),
        "directory": dir.display().to_string(),
    }))
}

fn describe_file(
    world: &mut World,
    dir: &Path,
    params: ManageWorldDescribeFileParams,
) -> Result<Value, BridgeError> {
    let (file, path) = existing_file(dir, &params.name)?;
    let registry = reflection::registry(world);
    let registry = registry.read();
    let snapshot = read_world(world, &file, &path, &registry)?;
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

fn clear(world: &mut World) -> Value {
    let before = plain_entities(world).len();
    for entity in plain_entities(world) {
        // Despawning a parent takes its children with it; they are then already gone.
        if let Ok(entity_mut) = world.get_entity_mut(entity) {
            entity_mut.despawn();
        }
    }
    let after = plain_entities(world).len();
    json!({"despawned": before - after})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_get_the_extension_and_the_path_rules() {
        assert_eq!(
            file_name("checkpoint").ok().as_deref(),
            Some("checkpoint.scn.ron")
        );
        assert_eq!(
            file_name("levels/one.scn.ron").ok().as_deref(),
            Some("levels/one.scn.ron")
        );
        // The rules themselves are tested with `paths::relative_path`.
        assert!(matches!(
            file_name("../outside"),
            Err(BridgeError::PathNotPermitted { .. })
        ));
    }
}
