//! `manage_asset`: assets in memory (through `ReflectAsset` and the `AssetServer`) and files in
//! the asset folder. Loads are long-running jobs that end when the asset is loaded or failed.

use std::path::Path;

use bevy::asset::{
    AssetServer, Assets, LoadState, LoadedUntypedAsset, ReflectAsset, UntypedAssetId,
};
use bevy::prelude::{Handle, World};
use bevy::reflect::{TypeRegistration, TypeRegistry};
use bevy_mcp_generated::params::*;
use mcp_native_transport::ProgressSink;
use serde_json::{Value, json};

use crate::error::BridgeError;
use crate::reflect::files::{MissingFolders, relative_path, resolve_inside};
use crate::reflect::handle_form::{self, asset_id_text};
use crate::reflect::handles::{self, HandleReader, MadeAsset, MadeAssets, Seen};
use crate::reflect::names;
use crate::reflect::names::resolve_type;
use crate::reflect::policy::WritePolicy;
use crate::reflect::values::{self, to_json};
use crate::runtime::action::{Action, Footprint};
use crate::runtime::job::{LongJob, Outcome};

pub use crate::reflect::handles::{AssetRoot, HeldAssets};

/// Why no asset action is undoable.
const ASSETS: &str =
    "assets are not part of the world's entities; load or release them again with manage_asset";

/// `manage_asset.list_loaded`.
pub(crate) const LIST_LOADED: Action<ManageAssetListLoadedParams> = Action::read(list_loaded);
/// `manage_asset.load`: waits over frames until the asset server has it.
pub(crate) const LOAD: Action<ManageAssetLoadParams> =
    Action::run_long(|world, params| Outcome::started(LoadAsset::start(world, params)))
        .touching(|_, _| Footprint::not_undoable(ASSETS));
/// `manage_asset.get_info`.
pub(crate) const GET_INFO: Action<ManageAssetGetInfoParams> = Action::read(get_info);
/// `manage_asset.list_files`.
pub(crate) const LIST_FILES: Action<ManageAssetListFilesParams> = Action::read(list_files);
/// `manage_asset.release`.
pub(crate) const RELEASE: Action<ManageAssetReleaseParams> =
    Action::run(release).touching(|_, _| Footprint::not_undoable(ASSETS));
/// `manage_asset.create_asset`.
pub(crate) const CREATE_ASSET: Action<ManageAssetCreateAssetParams> =
    Action::run(create_asset).touching(|_, _| Footprint::not_undoable(ASSETS));
/// `manage_asset.get`.
pub(crate) const GET: Action<ManageAssetGetParams> = Action::read(get);
/// `manage_asset.mutate`.
pub(crate) const MUTATE: Action<ManageAssetMutateParams> =
    Action::run(mutate).touching(|_, _| Footprint::not_undoable(ASSETS));

/// What `release` lets go of.
enum Releasing {
    /// The loads of one path.
    Path(String),
    /// The asset the bridge made with this id.
    Made(String),
    /// Every load and every made asset.
    All,
}

fn release(world: &mut World, params: ManageAssetReleaseParams) -> Result<Value, BridgeError> {
    let wanted = match (&params.path, &params.asset, params.all) {
        (Some(path), None, false) => Releasing::Path(relative_path(path)?),
        (None, Some(id), false) => Releasing::Made(id.trim().to_owned()),
        (None, None, true) => Releasing::All,
        _ => {
            return Err(BridgeError::InvalidParams(
                "give one of path, asset or all: true".to_owned(),
            ));
        }
    };
    let mut released = Vec::new();
    let mut held = world.get_resource_or_init::<HeldAssets>();
    held.0.retain(|(path, _)| {
        let matches = match &wanted {
            Releasing::Path(wanted) => wanted == path,
            Releasing::Made(_) => false,
            Releasing::All => true,
        };
        if matches {
            released.push(path.clone());
        }
        !matches
    });
    let still_held = held.0.len();
    let freeing: Vec<MadeAsset> = {
        let mut made = world.get_resource_or_init::<MadeAssets>();
        let (freeing, kept) =
            std::mem::take(&mut made.0)
                .into_iter()
                .partition(|asset| match &wanted {
                    Releasing::Made(id) => asset_id_text(asset.id) == *id,
                    Releasing::Path(_) => false,
                    Releasing::All => true,
                });
        made.0 = kept;
        freeing
    };
    for asset in freeing {
        free(world, asset.id);
        released.push(asset_id_text(asset.id));
    }
    let made = world
        .get_resource::<MadeAssets>()
        .map_or(0, |made| made.0.len());
    match wanted {
        Releasing::Path(path) | Releasing::Made(path) if released.is_empty() => {
            Err(BridgeError::AssetNotFound { path })
        }
        _ => Ok(json!({"released": released, "held": still_held, "made": made})),
    }
}

/// Removes an asset the bridge made from its collection.
fn free(world: &mut World, id: UntypedAssetId) {
    #[cfg(feature = "render")]
    if id.type_id() == std::any::TypeId::of::<bevy::mesh::Mesh>() {
        if let Some(mut meshes) = world.get_resource_mut::<Assets<bevy::mesh::Mesh>>()
            && let UntypedAssetId::Uuid { uuid, .. } = id
        {
            meshes.remove(bevy::asset::AssetId::<bevy::mesh::Mesh>::Uuid { uuid });
        }
        return;
    }
    let registry = names::registry(world);
    let registry = registry.read();
    if let Some(asset) = registry
        .get(id.type_id())
        .and_then(|registration| registration.data::<ReflectAsset>())
        && handles::asset_exists(world, &registry, id)
    {
        asset.remove(world, id);
    }
}

fn create_asset(
    world: &mut World,
    params: ManageAssetCreateAssetParams,
) -> Result<Value, BridgeError> {
    let registry = names::registry(world);
    let registry = registry.read();
    let registration = resolve_type(&registry, &params.r#type)?;
    let mut handles = HandleReader::new(world);
    let handle = handles.read_new(registration, &registry, &params.value)?;
    let new_assets = handles.into_new_assets();
    handles::make_new_assets(world, new_assets);
    let id = handle.id();
    if !handles::asset_exists(world, &registry, id) {
        return Err(BridgeError::InvalidValue {
            type_path: registration.type_info().type_path().to_owned(),
            reason: "the app holds no assets of this type".to_owned(),
        });
    }
    let made = world
        .get_resource::<MadeAssets>()
        .map_or(0, |made| made.0.len());
    Ok(json!({
        "handle": handle_form::handle_json(&handle, true, &registry),
        "type": registration.type_info().type_path(),
        "id": asset_id_text(id),
        "made": made,
    }))
}

/// The asset `given` names (an id or a path), of the type `type_name` names when given.
fn find_asset<'r>(
    world: &World,
    registry: &'r TypeRegistry,
    given: &str,
    type_name: Option<&str>,
) -> Result<(UntypedAssetId, &'r TypeRegistration), BridgeError> {
    let types: Vec<&TypeRegistration> = match type_name {
        Some(name) => vec![resolve_type(registry, name)?],
        None => registry
            .iter()
            .filter(|registration| registration.data::<ReflectAsset>().is_some())
            .collect(),
    };
    let given = given.trim();
    let mut found: Vec<(UntypedAssetId, &TypeRegistration)> = types
        .iter()
        .filter_map(|registration| {
            let id = handle_form::parse_asset_id(given, registration.type_id())?;
            handles::asset_exists(world, registry, id).then_some((id, *registration))
        })
        .collect();
    if found.is_empty()
        && handle_form::parse_asset_id(given, std::any::TypeId::of::<()>()).is_none()
        && let Ok(server) = server(world)
    {
        let path = relative_path(given)?;
        found = server
            .get_path_ids(path)
            .into_iter()
            .filter_map(|id| {
                let registration = types
                    .iter()
                    .find(|registration| registration.type_id() == id.type_id())?;
                Some((id, *registration))
            })
            .collect();
    }
    match found.len() {
        0 => Err(BridgeError::AssetNotFound {
            path: given.to_owned(),
        }),
        1 => Ok(found.remove(0)),
        _ => Err(BridgeError::AmbiguousType {
            given: given.to_owned(),
            candidates: found
                .iter()
                .map(|(_, registration)| registration.type_info().type_path().to_owned())
                .collect(),
        }),
    }
}

/// Largest asset value `get` shows, in bytes of JSON.
const MAX_VALUE_BYTES: usize = 64 * 1024;

fn get(world: &World, params: ManageAssetGetParams) -> Result<Value, BridgeError> {
    let registry = names::registry(world);
    let registry = registry.read();
    let (id, registration) = find_asset(world, &registry, &params.asset, params.r#type.as_deref())?;
    let made = world
        .get_resource::<MadeAssets>()
        .is_some_and(|made| made.0.iter().any(|asset| asset.id == id));
    let mut answer = json!({
        "type": registration.type_info().type_path(),
        "id": asset_id_text(id),
        "madeByBridge": made,
    });
    if let Some(path) = server(world)
        .ok()
        .and_then(|server| server.get_path(id).map(|path| path.to_string()))
    {
        answer["path"] = json!(path);
    }
    let value = registration
        .data::<ReflectAsset>()
        .and_then(|asset| asset.get(world, id))
        .ok_or_else(|| "the asset type has no reflected value".to_owned())
        .and_then(|value| {
            to_json(value.as_partial_reflect(), &registry).map_err(|error| error.to_string())
        })
        .and_then(|value| {
            let bytes = value.to_string().len();
            if bytes > MAX_VALUE_BYTES {
                return Err(format!(
                    "its value is {bytes} bytes of JSON, over the {MAX_VALUE_BYTES} shown"
                ));
            }
            Ok(value)
        });
    match value {
        Ok(value) => answer["value"] = value,
        Err(reason) => answer["valueUnavailable"] = json!(reason),
    }
    let mut used_by = Vec::new();
    let mut count = 0usize;
    handles::for_each_held_handle(world, &registry, &mut |entity, component, handle| {
        if handle.id() == id {
            count += 1;
            if used_by.len() < params.limit as usize {
                let mut row = names::entity_info(world, entity);
                row["component"] = json!(component);
                used_by.push(row);
            }
        }
        Seen::More
    });
    answer["usedBy"] = json!(used_by);
    answer["usedByCount"] = json!(count);
    Ok(answer)
}

fn mutate(world: &mut World, params: ManageAssetMutateParams) -> Result<Value, BridgeError> {
    let registry = names::registry(world);
    let registry = registry.read();
    let (id, registration) = find_asset(world, &registry, &params.asset, params.r#type.as_deref())?;
    let owner = registration.type_info().type_path();
    let no_value = |reason: &str| BridgeError::InvalidValue {
        type_path: owner.to_owned(),
        reason: reason.to_owned(),
    };
    if handle_form::is_mesh(id.type_id()) {
        return Err(no_value(
            "a mesh's vertices are not reflected: make a new one from a shape with manage_asset.create_asset and give it to the entity",
        ));
    }
    let asset = registration
        .data::<ReflectAsset>()
        .ok_or_else(|| no_value("the asset type has no reflected value (#[reflect(Asset)])"))?;
    let policy = WritePolicy::of(world);
    policy.require_unprotected(world, registration)?;
    policy.check_path(registration, &params.path)?;
    let (new_value, new_assets) = {
        let current = asset
            .get(world, id)
            .ok_or_else(|| BridgeError::AssetNotFound {
                path: params.asset.clone(),
            })?;
        let mut handles = HandleReader::new(world);
        let new_value = values::value_at_path(
            current.as_partial_reflect(),
            &params.path,
            &params.value,
            &registry,
            owner,
            &mut handles,
        )?;
        // The bounds are on the whole value: checked as it would be.
        let mut whole = current
            .reflect_clone()
            .map_err(|error| {
                no_value(&format!(
                    "its value cannot be copied to check the write ({error})"
                ))
            })?
            .into_partial_reflect();
        values::apply_at_path(
            whole.as_mut(),
            &params.path,
            new_value.as_ref(),
            &registry,
            owner,
        )?;
        policy.check_asset_write(
            world,
            &registry,
            registration,
            whole.as_ref(),
            Some(current.as_partial_reflect()),
        )?;
        (new_value, handles.into_new_assets())
    };
    let target = asset
        .get_mut(world, id)
        .ok_or_else(|| BridgeError::AssetNotFound {
            path: params.asset.clone(),
        })?;
    let (before, after) = values::apply_at_path(
        target.as_partial_reflect_mut(),
        &params.path,
        new_value.as_ref(),
        &registry,
        owner,
    )?;
    handles::make_new_assets(world, new_assets);
    Ok(json!({
        "type": owner,
        "id": asset_id_text(id),
        "path": params.path,
        "before": before,
        "after": after,
    }))
}

fn server(world: &World) -> Result<AssetServer, BridgeError> {
    world.get_resource::<AssetServer>().cloned().ok_or_else(|| {
        BridgeError::InvalidParams("this app has no AssetServer (add AssetPlugin)".to_owned())
    })
}

fn state_name(state: Option<&LoadState>) -> String {
    match state {
        None | Some(LoadState::NotLoaded) => "not loaded".to_owned(),
        Some(LoadState::Loading) => "loading".to_owned(),
        Some(LoadState::Loaded) => "loaded".to_owned(),
        Some(LoadState::Failed(error)) => format!("failed: {error}"),
    }
}

fn type_name(world: &World, id: UntypedAssetId) -> String {
    let registry = names::registry(world);
    let registry = registry.read();
    registry.get(id.type_id()).map_or_else(
        || format!("{:?}", id.type_id()),
        |registration| registration.type_info().type_path().to_owned(),
    )
}

fn list_loaded(world: &World, params: ManageAssetListLoadedParams) -> Result<Value, BridgeError> {
    let server = server(world)?;
    let registry = names::registry(world);
    let registry = registry.read();
    let filter = params.r#type.as_ref().map(|filter| filter.to_lowercase());
    let mut rows = Vec::new();
    for registration in registry.iter() {
        let Some(reflect_asset) = registration.data::<ReflectAsset>() else {
            continue;
        };
        let type_path = registration.type_info().type_path();
        if filter
            .as_ref()
            .is_some_and(|filter| !type_path.to_lowercase().contains(filter.as_str()))
        {
            continue;
        }
        for id in reflect_asset.ids(world) {
            let mut row = json!({"type": type_path, "id": asset_id_text(id), "state": state_name(server.get_load_state(id).as_ref())});
            if let Some(path) = server.get_path(id) {
                row["path"] = json!(path.to_string());
            }
            rows.push(row);
        }
    }
    let total = rows.len();
    rows.truncate(params.limit as usize);
    Ok(json!({"assets": rows, "total": total}))
}

/// Waits for a load to end.
struct LoadAsset {
    path: String,
    handle: Handle<LoadedUntypedAsset>,
    frames: u64,
}

impl LoadAsset {
    fn start(world: &mut World, params: ManageAssetLoadParams) -> Result<LoadAsset, BridgeError> {
        let path = relative_path(&params.path)?;
        // The asset server follows links; check the path first, as list_files does.
        if let Some(root) = world.get_resource::<AssetRoot>() {
            let root = root
                .0
                .canonicalize()
                .map_err(|_| BridgeError::FileNotFound {
                    file: root.0.display().to_string(),
                })?;
            resolve_inside(&root, &params.path, &path, MissingFolders::Refuse)?;
        }
        let server = server(world)?;
        let handle = server.load_builder().load_untyped(path.clone());
        Ok(LoadAsset {
            path,
            handle,
            frames: 0,
        })
    }
}

impl LongJob for LoadAsset {
    type Output = Value;
    type Error = BridgeError;

    fn poll(
        &mut self,
        world: &mut World,
        progress: &ProgressSink,
    ) -> Option<Result<Value, BridgeError>> {
        self.frames += 1;
        let server = match server(world) {
            Ok(server) => server,
            Err(error) => return Some(Err(error)),
        };
        match server.get_load_state(&self.handle) {
            Some(LoadState::Loaded) => {
                let loaded = world
                    .get_resource::<Assets<LoadedUntypedAsset>>()
                    .and_then(|assets| assets.get(&self.handle))
                    .map(|loaded| loaded.handle.clone());
                let Some(handle) = loaded else {
                    return Some(Err(BridgeError::AssetLoadFailed {
                        path: self.path.clone(),
                        reason: "the loader reported success but the asset is gone".to_owned(),
                    }));
                };
                // A path something else already asked for gives its handle back at once,
                // while that first load may still be running: wait for the asset itself.
                match server.get_load_state(handle.id()) {
                    Some(LoadState::Loaded) => {}
                    Some(LoadState::Failed(error)) => {
                        return Some(Err(BridgeError::AssetLoadFailed {
                            path: self.path.clone(),
                            reason: error.to_string(),
                        }));
                    }
                    _ => {
                        progress.report(self.frames as f64, None, Some("loading"));
                        return None;
                    }
                }
                let id = handle.id();
                let max = WritePolicy::of(world).limits().max_held_assets;
                world
                    .get_resource_or_init::<HeldAssets>()
                    .hold(self.path.clone(), handle, max);
                Some(Ok(
                    json!({"path": self.path, "type": type_name(world, id), "id": asset_id_text(id), "state": "loaded"}),
                ))
            }
            Some(LoadState::Failed(error)) => Some(Err(BridgeError::AssetLoadFailed {
                path: self.path.clone(),
                reason: error.to_string(),
            })),
            _ => {
                progress.report(self.frames as f64, None, Some("loading"));
                None
            }
        }
    }
}

fn get_info(world: &World, params: ManageAssetGetInfoParams) -> Result<Value, BridgeError> {
    let path = relative_path(&params.path)?;
    let server = server(world)?;
    let ids = server.get_path_ids(path.clone());
    if ids.is_empty() {
        return Err(BridgeError::AssetNotFound { path });
    }
    let assets: Vec<Value> = ids
        .into_iter()
        .map(|id| {
            json!({
                "type": type_name(world, id),
                "id": asset_id_text(id),
                "state": state_name(server.get_load_state(id).as_ref()),
                "dependencies": format!("{:?}", server.get_recursive_dependency_load_state(id)),
            })
        })
        .collect();
    Ok(json!({"path": path, "assets": assets}))
}

fn list_files(world: &World, params: ManageAssetListFilesParams) -> Result<Value, BridgeError> {
    let root = world
        .get_resource::<AssetRoot>()
        .map(|root| root.0.clone())
        .ok_or_else(|| {
            BridgeError::InvalidParams("this app has no asset folder (add AssetPlugin)".to_owned())
        })?;
    let real_root = root.canonicalize().map_err(|_| BridgeError::FileNotFound {
        file: root.display().to_string(),
    })?;
    let start = match &params.folder {
        Some(folder) => {
            let relative = relative_path(folder)?;
            let path = real_root.join(&relative);
            let real = path.canonicalize().map_err(|_| BridgeError::FileNotFound {
                file: relative.clone(),
            })?;
            if !real.starts_with(&real_root) {
                return Err(BridgeError::PathNotPermitted {
                    given: folder.clone(),
                    reason: "it is a link that leads outside the asset folder".to_owned(),
                });
            }
            real
        }
        None => real_root.clone(),
    };
    let mut files = Vec::new();
    walk(&real_root, &start, &mut files);
    files.sort();
    let total = files.len();
    let rows: Vec<Value> = files
        .into_iter()
        .take(params.limit as usize)
        .map(|(path, bytes)| json!({"path": path, "bytes": bytes}))
        .collect();
    Ok(json!({"files": rows, "total": total, "root": root.display().to_string()}))
}

/// Files under `folder`, relative to `root`; links are not followed and hidden entries skipped.
fn walk(root: &Path, folder: &Path, out: &mut Vec<(String, u64)>) {
    let mut pending = vec![folder.to_owned()];
    while let Some(next) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&next) else {
            continue;
        };
        for entry in entries.filter_map(Result::ok) {
            if entry.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if kind.is_dir() {
                pending.push(path);
            } else if kind.is_file() {
                let relative = path
                    .strip_prefix(root)
                    .map(|relative| relative.to_string_lossy().into_owned())
                    .unwrap_or_default();
                out.push((
                    relative,
                    entry.metadata().map(|metadata| metadata.len()).unwrap_or(0),
                ));
            }
        }
    }
}
