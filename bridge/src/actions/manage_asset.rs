//! `manage_asset`: assets in memory (through `ReflectAsset` and the `AssetServer`) and files in
//! the asset folder. Loads are long-running jobs that end when the asset is loaded or failed.

use std::path::{Path, PathBuf};

use bevy::asset::{
    AssetServer, Assets, LoadState, LoadedUntypedAsset, ReflectAsset, UntypedAssetId, UntypedHandle,
};
use bevy::prelude::{Handle, Resource, World};
use bevy_mcp_generated::params::*;
use mcp_native_transport::ProgressSink;
use serde_json::{Value, json};

use crate::error::BridgeError;
use crate::reflect::files::{MissingFolders, relative_path, resolve_inside};
use crate::reflect::names;
use crate::reflect::policy::WritePolicy;
use crate::runtime::action::{Action, Footprint};
use crate::runtime::job::{LongJob, Outcome};

/// The asset folder, as the app's `AssetPlugin` resolves it.
#[derive(Resource, Debug, Clone)]
pub struct AssetRoot(pub PathBuf);

/// Assets loaded through the bridge, kept alive so they are not dropped as soon as they load;
/// oldest first, at most [`crate::WriteLimits::max_held_assets`] (the oldest is let go beyond it).
#[derive(Resource, Debug, Default)]
pub struct HeldAssets(pub Vec<(String, UntypedHandle)>);

impl HeldAssets {
    /// Holds `handle`, loaded from `path`, letting go of the oldest beyond `max`.
    fn hold(&mut self, path: String, handle: UntypedHandle, max: usize) {
        self.0.retain(|(_, held)| held.id() != handle.id());
        self.0.push((path, handle));
        let excess = self.0.len().saturating_sub(max);
        self.0.drain(..excess);
    }
}

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

fn release(world: &mut World, params: ManageAssetReleaseParams) -> Result<Value, BridgeError> {
    let wanted = match (&params.path, params.all) {
        (Some(_), true) | (None, false) => {
            return Err(BridgeError::InvalidParams(
                "give a path, or all: true (not both)".to_owned(),
            ));
        }
        (Some(path), false) => Some(relative_path(path)?),
        (None, true) => None,
    };
    let mut held = world.get_resource_or_init::<HeldAssets>();
    let mut released = Vec::new();
    held.0.retain(|(path, _)| {
        let matches = wanted.as_ref().is_none_or(|wanted| wanted == path);
        if matches {
            released.push(path.clone());
        }
        !matches
    });
    let remaining = held.0.len();
    if let Some(path) = wanted.filter(|_| released.is_empty()) {
        return Err(BridgeError::AssetNotFound { path });
    }
    Ok(json!({"released": released, "held": remaining}))
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
            let mut row = json!({"type": type_path, "id": format!("{id:?}"), "state": state_name(server.get_load_state(id).as_ref())});
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
                let id = handle.id();
                let max = WritePolicy::of(world).limits().max_held_assets;
                world
                    .get_resource_or_init::<HeldAssets>()
                    .hold(self.path.clone(), handle, max);
                Some(Ok(
                    json!({"path": self.path, "type": type_name(world, id), "id": format!("{id:?}"), "state": "loaded"}),
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
                "id": format!("{id:?}"),
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
