//! `manage_world`: world files with `bevy_world_serialization` (RON), confined to the scenes
//! directory. Saves are atomic (temporary file, then rename); loads are checked completely before
//! anything is spawned.

use std::any::TypeId;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use bevy::asset::{
    AssetPath, AssetServer, EphemeralHandleBehavior, HandleSerializeProcessor, LoadFromPath,
    UntypedHandle,
};
use bevy::ecs::component::ComponentId;
use bevy::ecs::entity::{EntityHashMap, EntityHashSet};
use bevy::ecs::reflect::{ReflectComponent, ReflectResource};
use bevy::ecs::relationship::{RelationshipAccessor, RelationshipHookMode};
use bevy::ecs::storage::{Table, TableId};
use bevy::prelude::{Entity, Name, Resource, World};
use bevy::reflect::serde::TypedReflectSerializer;
use bevy::reflect::{FromReflect, PartialReflect, ReflectFromReflect, TypeRegistry};
use bevy::world_serialization::serde::WorldDeserializer;
use bevy::world_serialization::{DynamicEntity, DynamicWorld, DynamicWorldBuilder};
use bevy_mcp_generated::params::*;
use serde::de::DeserializeSeed;
use serde_json::{Value, json};

use crate::actions::world_file_assets::WorldFileAssets;
use crate::error::BridgeError;
use crate::history::holding;
use crate::history::journal::{journal_bytes, report_change};
use crate::history::snapshot::EntityReader;
use crate::history::world_delta::{CHILD_OF, Change, Delta, EntityChange, Tally};
use crate::reflect::files::{
    FileTarget, MissingFolders, Resolved, canonical_dir, file_in, io, write_atomically,
};
use crate::reflect::hierarchy;
use crate::reflect::models;
use crate::reflect::names;
use crate::reflect::names::{component_id, entity_info, resolve_component, resolve_entity};
use crate::reflect::policy::{self, WritePolicy};
use crate::reflect::world;
use crate::reflect::world::{PlainIndex, plain_entity_count};
use crate::reflect::writable;
use crate::runtime::action::{Action, Footprint};
use crate::runtime::background::spawn_background;
use crate::runtime::job::{LongJob, Outcome};
use crate::runtime::retire::{FreedOverFrames, retire};
use crate::runtime::slices::{SPAWNED_NEAR_GROWTH, Slice, entity_table_room};
use mcp_native_transport::ProgressSink;

/// The extension of world files.
pub(crate) const EXTENSION: &str = ".scn.ron";
/// Largest world file read.
const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;
/// Names listed by `describe_file` at most.
const MAX_NAMES: usize = 50;

/// Where world files live.
#[derive(Resource, Debug, Clone)]
pub struct ScenesDir(pub PathBuf);

/// `manage_world.save`: writes a file and leaves the world as it was. The selection is read a
/// slice per frame (calls that change the world wait meanwhile); the file is written off the
/// game thread.
pub(crate) const SAVE: Action<ManageWorldSaveParams> = Action::run_long(
    |world, params| match save(world, &scenes_dir(world), params) {
        Ok(saving) => Outcome::first_frame(world, saving),
        Err(error) => Outcome::Done(Err(error)),
    },
)
.touching(|_, _| Footprint::not_undoable("it writes a file and leaves the world as it was"))
.over_whole_world();
/// `manage_world.load`: may add anything, so the journal holds the world whole.
pub(crate) const LOAD: Action<ManageWorldLoadParams> = Action::run_long(
    |world, params| match load(world, &scenes_dir(world), params) {
        Ok(loading) => Outcome::first_frame(world, loading),
        Err(error) => Outcome::Done(Err(error)),
    },
)
.touching(|_, _| Footprint::World)
.over_whole_world();
/// `manage_world.list_files`.
pub(crate) const LIST_FILES: Action<ManageWorldListFilesParams> =
    Action::read(|world, _| list_files(&scenes_dir(world)));
/// `manage_world.describe_file`.
pub(crate) const DESCRIBE_FILE: Action<ManageWorldDescribeFileParams> =
    Action::run(|world, params| describe_file(world, &scenes_dir(world), params));
/// `manage_world.clear`: a slice of the world per frame; it reports what it removed to the
/// journal itself.
pub(crate) const CLEAR: Action<ManageWorldClearParams> =
    Action::run_long(|world, _| Outcome::first_frame(world, Clearing::new(world)))
        .touching(|_, _| Footprint::Reported)
        .over_whole_world();

/// Where world files live (from [`crate::BridgeConfig::scenes_dir`]).
fn scenes_dir(world: &World) -> PathBuf {
    world
        .get_resource::<ScenesDir>()
        .map_or_else(|| PathBuf::from("scenes"), |dir| dir.0.clone())
}

/// Checks a caller's file name and returns it relative to the scenes directory, with the
/// extension: plain relative segments only, never absolute, never `.` or `..`.
pub(crate) fn file_name(given: &str) -> Result<String, BridgeError> {
    let name = crate::reflect::files::relative_path(given)?;
    Ok(if name.ends_with(EXTENSION) {
        name
    } else {
        format!("{name}{EXTENSION}")
    })
}

/// Resolves an existing file inside the scenes directory; links are never followed.
fn existing_file(dir: &Path, given: &str) -> Result<(String, PathBuf), BridgeError> {
    let (relative, resolved) = file_in(dir, given, EXTENSION, MissingFolders::Refuse)?;
    if !resolved.exists {
        return Err(BridgeError::FileNotFound { file: relative });
    }
    Ok((relative, resolved.path))
}

/// What a save selects: the listed entities and the named ones (every plain entity when neither
/// is given), then only those with every `withComponents` type. Decided for each entity as its
/// slice reads it: collecting and sorting 100,000 entities first held the call's first frame.
#[derive(Debug)]
struct Selection {
    listed: HashSet<Entity>,
    names: Option<Vec<String>>,
    /// `None` for a type the world has never stored (then nothing has it).
    with: Vec<Option<ComponentId>>,
    /// Entities Bevy spawned for a model: never saved, as the model's root brings them back.
    model_parts: EntityHashSet,
}

impl Selection {
    fn of(world: &mut World, params: &ManageWorldSaveParams) -> Result<Selection, BridgeError> {
        let mut listed = HashSet::new();
        for reference in params.entities.iter().flatten() {
            let entity = resolve_entity(world, reference)?;
            world::require_plain_entity(world, entity)?;
            listed.insert(entity);
        }
        let mut with = Vec::new();
        if let Some(components) = &params.with_components {
            let registry = names::registry(world);
            let registry = registry.read();
            for name in components {
                let (registration, _) = resolve_component(&registry, name)?;
                with.push(component_id(world, registration.type_id()));
            }
        }
        Ok(Selection {
            listed,
            names: params.names.clone(),
            with,
            model_parts: models::model_parts(world),
        })
    }

    /// Whether neither entities nor names narrow it.
    fn everything(&self, params: &ManageWorldSaveParams) -> bool {
        params.entities.is_none() && self.names.is_none()
    }

    /// Whether the save takes this plain entity.
    fn takes(&self, world: &World, entity: Entity, everything: bool) -> bool {
        let chosen = everything
            || self.listed.contains(&entity)
            || self.names.as_ref().is_some_and(|names| {
                world
                    .get::<Name>(entity)
                    .is_some_and(|name| names.iter().any(|wanted| wanted == name.as_str()))
            });
        chosen
            && world.get_entity(entity).is_ok_and(|entity_ref| {
                self.with
                    .iter()
                    .all(|id| id.is_some_and(|id| entity_ref.contains_id(id)))
            })
    }
}

/// Entities read per unit of a save's slice.
const SAVED_PER_UNIT: u32 = 8;

fn save(
    world: &mut World,
    dir: &Path,
    params: ManageWorldSaveParams,
) -> Result<Saving, BridgeError> {
    // The name is checked before anything else; folders are made only once the selection holds.
    file_name(&params.name)?;
    let selection = Selection::of(world, &params)?;
    let everything = selection.everything(&params);
    // Every folder on the way is checked (and made) one at a time; links are never followed.
    let (relative, Resolved { exists, target, .. }) =
        file_in(dir, &params.name, EXTENSION, MissingFolders::Create)?;
    if exists && !params.overwrite {
        return Err(BridgeError::FileExists { file: relative });
    }
    // Sized once: growing a list of 100,000 entities copies it in one frame.
    let expected = if everything {
        plain_entity_count(world)
    } else {
        selection.listed.len()
    };
    let snapshot = DynamicWorld {
        entities: Vec::with_capacity(expected),
        resources: Vec::new(),
    };
    Ok(Saving {
        relative,
        target: Some(target),
        include_resources: params.include_resources,
        selection,
        everything,
        next_index: 0,
        snapshot,
        skipped: BTreeMap::new(),
        model_parts_left_out: 0,
        saved: (0, 0),
        writing: None,
    })
}

/// What the thread writing a save sends back: the bytes written, and the snapshot it wrote,
/// to be freed on the game thread where it was made (see [`free_over_frames`]).
struct Written {
    bytes: Result<usize, BridgeError>,
    snapshot: DynamicWorld,
}

/// A save in progress: the selection is read a slice per frame (an entity despawned before its
/// turn is left out), then the file is serialized and written off the game thread.
struct Saving {
    relative: String,
    /// Taken by the writing thread.
    target: Option<FileTarget>,
    include_resources: bool,
    selection: Selection,
    everything: bool,
    /// The next entity index to look at.
    next_index: u32,
    snapshot: DynamicWorld,
    /// Types left out, with why.
    skipped: BTreeMap<String, String>,
    /// Selected entities left out as parts of a model.
    model_parts_left_out: usize,
    /// Entities and resources the file holds.
    saved: (usize, usize),
    /// The thread writing the file, once started.
    writing: Option<Writing>,
}

/// Where the file's writing stands.
enum Writing {
    Thread(std::thread::JoinHandle<Written>),
    /// No thread could be started (or it ended without a result).
    Failed(String),
}

impl Saving {
    /// Reads entities while the slice lasts; `true` once every one is read.
    fn read(&mut self, world: &World, slice: &mut Slice) -> bool {
        let registry = names::registry(world);
        let registry = registry.read();
        let plain = PlainIndex::of(world);
        let indices = PlainIndex::len(world);
        while self.next_index < indices {
            if !slice.more() {
                return false;
            }
            let end = indices.min(self.next_index.saturating_add(SAVED_PER_UNIT));
            // Only entities there now and plain (Bevy's builder panics on a gone one).
            let taken: Vec<Entity> = (self.next_index..end)
                .filter_map(|index| plain.at(world, index))
                .filter(|entity| self.selection.takes(world, *entity, self.everything))
                .filter(|entity| {
                    let part = self.selection.model_parts.contains(entity);
                    self.model_parts_left_out += usize::from(part);
                    !part
                })
                .collect();
            self.next_index = end;
            if taken.is_empty() {
                continue;
            }
            let mut part = DynamicWorldBuilder::from_world(world, &registry)
                .extract_entities(taken.into_iter())
                .build();
            keep_saveable(world, &mut part, &registry, &mut self.skipped);
            self.snapshot.entities.append(&mut part.entities);
        }
        true
    }

    /// Reads the resources (a few, in one go) and starts writing the file off the game thread.
    fn start_writing(&mut self, world: &World) {
        let registry = names::registry(world);
        if self.include_resources {
            let registry = registry.read();
            let mut part = DynamicWorldBuilder::from_world(world, &registry)
                .extract_resources()
                .build();
            keep_saveable(world, &mut part, &registry, &mut self.skipped);
            self.snapshot.resources = part.resources;
        }
        let mut snapshot = std::mem::take(&mut self.snapshot);
        self.saved = (snapshot.entities.len(), snapshot.resources.len());
        // The assets the bridge made that the entities use go with them, so the file loads
        // back whole in another app.
        let made = WorldFileAssets::used_by(
            world,
            &registry.read(),
            snapshot
                .entities
                .iter()
                .flat_map(|entity| entity.components.iter().map(|component| component.as_ref())),
        );
        if !made.assets.is_empty() {
            snapshot.resources.push(Box::new(made));
        }
        let (target, relative) = (self.target.take(), self.relative.clone());
        let write = move || -> Written {
            let failed = |reason: String| BridgeError::Io {
                file: relative.clone(),
                reason,
            };
            let bytes = target
                .ok_or_else(|| failed("it was written already".to_owned()))
                .and_then(|target| {
                    let text = snapshot
                        .serialize(&registry.read())
                        .map_err(|error| failed(format!("could not serialize: {error}")))?;
                    write_atomically(&target, text.as_bytes())?;
                    Ok(text.len())
                });
            // Not dropped here: see `free_over_frames`.
            Written { bytes, snapshot }
        };
        let spawned = spawn_background("bevy-mcp-save", write);
        self.writing = Some(match spawned {
            Ok(thread) => Writing::Thread(thread),
            Err(error) => Writing::Failed(format!("no thread could write it: {error}")),
        });
    }
}

/// A snapshot's values were made on the game thread and are freed there, a slice at a time:
/// freed by the writing thread in one go, glibc kept their small blocks unmerged until the game
/// thread's next allocation of a kilobyte or more, which then merged them all (27–33 ms of one
/// frame after a save of 100,000 entities).
fn free_over_frames(world: &mut World, snapshot: DynamicWorld) {
    FreedOverFrames::hand_over_items(world, snapshot.entities);
}

impl LongJob for Saving {
    type Output = Value;
    type Error = BridgeError;

    fn poll(
        &mut self,
        world: &mut World,
        progress: &ProgressSink,
    ) -> Option<Result<Value, BridgeError>> {
        if let Some(writing) = self.writing.take() {
            let failed = |reason: String| Written {
                bytes: Err(BridgeError::Io {
                    file: self.relative.clone(),
                    reason,
                }),
                snapshot: DynamicWorld::default(),
            };
            let written = match writing {
                Writing::Thread(thread) if !thread.is_finished() => {
                    self.writing = Some(Writing::Thread(thread));
                    return None;
                }
                Writing::Thread(thread) => thread
                    .join()
                    .unwrap_or_else(|_| failed("the thread writing it panicked".to_owned())),
                Writing::Failed(reason) => failed(reason),
            };
            free_over_frames(world, written.snapshot);
            return Some(written.bytes.map(|bytes| {
                let mut reply = json!({
                    "file": self.relative,
                    "entityCount": self.saved.0,
                    "resourceCount": self.saved.1,
                    "bytes": bytes,
                    "skipped": skipped_json(&self.skipped),
                });
                if self.model_parts_left_out > 0 {
                    reply["modelParts"] = json!({
                        "leftOut": self.model_parts_left_out,
                        "why": "Bevy spawned them for a model (WorldAssetRoot), which spawns them again when the file loads",
                    });
                }
                reply
            }));
        }
        if !Slice::within(world, |world, slice| self.read(world, slice)) {
            progress.report_paced(
                f64::from(self.next_index),
                Some(f64::from(PlainIndex::len(world))),
                Some("reading the selection"),
            );
            return None;
        }
        self.start_writing(world);
        None
    }

    /// What was read so far is freed like a written snapshot.
    fn abort(&mut self, world: &mut World) {
        free_over_frames(world, std::mem::take(&mut self.snapshot));
    }

    /// Once writing, the file is written whole (atomically) whatever happens to the call.
    fn cancellable(&self) -> bool {
        self.writing.is_none()
    }
}

fn type_path_of(value: &dyn PartialReflect) -> String {
    value.get_represented_type_info().map_or_else(
        || value.reflect_type_path().to_owned(),
        |info| info.type_path().to_owned(),
    )
}

/// Why a value of the file may not be loaded: its type is protected (relations excepted: a load
/// rebuilds them itself, see [`take_relations`]).
fn protected_in_file(
    world: &World,
    policy: &WritePolicy,
    registry: &TypeRegistry,
    value: &dyn PartialReflect,
) -> Option<String> {
    let registration = registry.get(value.get_represented_type_info()?.type_id())?;
    if policy::is_relation(world, registration.type_id()) {
        return None;
    }
    policy
        .protection(world, registration)
        .map(|protection| format!("protected: {}", protection.reason))
}

/// Drops what a load would refuse (protected types: engine clocks, counters, bookkeeping) and
/// values that cannot be written to a file (no serialization registered); returns
/// `{type, reason}` for each type dropped, so the reply says what was not saved.
fn keep_saveable(
    world: &World,
    snapshot: &mut DynamicWorld,
    registry: &TypeRegistry,
    skipped: &mut BTreeMap<String, String>,
) {
    let policy = WritePolicy::of(world);
    let mut keep = |value: &dyn PartialReflect| -> bool {
        let type_path = type_path_of(value);
        if let Some(reason) = protected_in_file(world, &policy, registry, value) {
            skipped.insert(type_path, reason);
            return false;
        }
        // Handles are written as the file will hold them: their path, or the id of an asset
        // the bridge made (which the file carries); an asset made at run time by the game has
        // neither, and no file can hold it.
        let handles = HandleSerializeProcessor {
            ephemeral_handle_behavior: EphemeralHandleBehavior::Error,
        };
        match serde_json::to_value(TypedReflectSerializer::with_processor(
            value, registry, &handles,
        )) {
            Ok(_) => true,
            Err(error) => {
                skipped.insert(type_path, error.to_string());
                false
            }
        }
    };
    snapshot
        .resources
        .retain(|resource| keep(resource.as_ref()));
    for entity in &mut snapshot.entities {
        entity
            .components
            .retain(|component| keep(component.as_ref()));
    }
}

/// `{type, reason}` for each type a save left out.
fn skipped_json(skipped: &BTreeMap<String, String>) -> Vec<Value> {
    skipped
        .iter()
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

/// Takes out of a file's resources the assets the bridge made, which its entities use.
fn take_made_assets(resources: &mut Vec<Box<dyn PartialReflect>>) -> WorldFileAssets {
    let mut made = WorldFileAssets::default();
    resources.retain(|resource| {
        let is_made = resource
            .get_represented_type_info()
            .is_some_and(|info| info.type_id() == TypeId::of::<WorldFileAssets>());
        if is_made && let Some(assets) = WorldFileAssets::from_reflect(resource.as_ref()) {
            made.assets.extend(assets.assets);
        }
        !is_made
    });
    made
}

/// Reads and parses a world file.
fn read_world(
    asset_server: Option<AssetServer>,
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
    let mut assets = Assets(asset_server);
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
    world: &World,
    file: &str,
    (entities, resources): (&[DynamicEntity], &[Box<dyn PartialReflect>]),
    registry: &TypeRegistry,
) -> Result<(), BridgeError> {
    let policy = WritePolicy::of(world);
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
        if let Some(reason) = protected_in_file(world, &policy, registry, value) {
            return Err(invalid(format!(
                "it holds {}, which is {reason}",
                info.type_path()
            )));
        }
        policy
            .check_file_write(registration, value)
            .map_err(|error| invalid(error.to_string()))
    };
    for entity in entities {
        for component in &entity.components {
            check(component.as_ref(), false)?;
        }
        placement_in_file(&policy, registry, &entity.components).map_err(&invalid)?;
    }
    for resource in resources {
        check(resource.as_ref(), true)?;
    }
    Ok(())
}

/// Refuses an entity of a file whose engine components could not share an entity made by a
/// spawn (the same placement rules: lights alone, cameras only where the game made them).
fn placement_in_file(
    policy: &WritePolicy,
    registry: &TypeRegistry,
    components: &[Box<dyn PartialReflect>],
) -> Result<(), String> {
    let paths: Vec<&str> = components
        .iter()
        .filter_map(|component| component.get_represented_type_info())
        .map(|info| info.type_path())
        .collect();
    for path in &paths {
        let bounded = registry
            .get_with_type_path(path)
            .is_some_and(|registration| policy.bounded(registration));
        let has = |other: &str| other != *path && paths.contains(&other);
        if bounded && let Some(reason) = writable::placement_refusal(path, &has) {
            return Err(format!("an entity holds {path}, which {reason}"));
        }
    }
    Ok(())
}

fn load(
    world: &mut World,
    dir: &Path,
    params: ManageWorldLoadParams,
) -> Result<Loading, BridgeError> {
    let (file, path) = existing_file(dir, &params.name)?;
    let registry = names::registry(world);
    let asset_server = world.get_resource::<AssetServer>().cloned();
    let parsing = {
        let file = file.clone();
        move || read_world(asset_server, &file, &path, &registry.read())
    };
    let stage = match spawn_background("bevy-mcp-load", parsing) {
        Ok(thread) => LoadStage::Parsing(thread),
        Err(error) => {
            return Err(BridgeError::Io {
                file,
                reason: format!("no thread could read it: {error}"),
            });
        }
    };
    Ok(Loading::new(file, stage))
}

/// Entities of a file checked, spawned or written per unit of a load's slice.
const LOADED_PER_UNIT: usize = 8;
/// Rows from which a table's growth costs enough to be given a slice of its own.
const LARGE_TABLE: usize = 16_384;
/// Entities a load writes, one at a time, in a slice of its own once the table they go into
/// is about to grow: it ends right after the growth, and a false alarm costs one frame.
const WRITTEN_NEAR_GROWTH: usize = 2 * LOADED_PER_UNIT;
/// Rows of the old-to-new id mapping a load's reply holds at most (every entity is counted).
const MAPPING_KEPT: usize = 200;

/// The capacity of a table of the world, if it has that table.
fn table_capacity(world: &World, table: TableId) -> Option<usize> {
    world.storages().tables.get(table).map(Table::capacity)
}

/// Where a load stands.
enum LoadStage {
    /// The file is read and parsed off the game thread.
    Parsing(std::thread::JoinHandle<Result<DynamicWorld, BridgeError>>),
    /// Its values are checked and its relations taken out, a slice per frame: nothing is
    /// spawned until all of it holds.
    Checking,
    /// An entity is spawned for each of the file's (so references between them resolve).
    Spawning,
    /// The values are written, from the last entity of the file to the first.
    Writing,
    /// The file's resources and the relations between its entities are written, in a slice of
    /// their own (0.37 ms at 100,000 entities, which added to a full slice of writing made the
    /// load's longest frame).
    Finishing,
}

/// A load in progress: parsed off the game thread, then checked and written a slice per frame
/// (calls that change the world wait meanwhile). Once it began spawning it finishes.
struct Loading {
    file: String,
    stage: LoadStage,
    snapshot: DynamicWorld,
    /// The next entity of the file for the stage at hand.
    next: usize,
    relations: Vec<PendingRelation>,
    mapping: EntityHashMap<Entity>,
    /// The first [`MAPPING_KEPT`] entities of the file, the mapping rows of the reply (the
    /// reply lists them without reading the whole mapping).
    first_saved: Vec<Entity>,
    /// Entities whose values are written.
    written: usize,
    /// The file's id of the entity written last (where it went tells which table grows next).
    last_written: Option<Entity>,
    /// The assets the bridge made that the file's entities use, made before they spawn.
    made_assets: WorldFileAssets,
}

impl Loading {
    /// A load of `file` at `stage`, nothing read from it yet.
    fn new(file: String, stage: LoadStage) -> Loading {
        Loading {
            file,
            stage,
            snapshot: DynamicWorld::default(),
            next: 0,
            relations: Vec::new(),
            mapping: EntityHashMap::default(),
            first_saved: Vec::new(),
            written: 0,
            last_written: None,
            made_assets: WorldFileAssets::default(),
        }
    }

    /// The table the last written entity went into, and its capacity, if it is big and the
    /// next unit may make it grow: Bevy doubles a table's columns in the one insert that
    /// crosses its capacity, which may cost a slice by itself (the entity table's growth,
    /// measured the same way, took 1.3–2.6 ms at 131,072 entities).
    fn growing_table(&self, world: &World) -> Option<(TableId, usize)> {
        let saved = self.last_written?;
        let entity = *self.mapping.get(&saved)?;
        let table_id = world.entities().get_spawned(entity).ok()?.table_id;
        let table = world.storages().tables.get(table_id)?;
        let (capacity, count) = (table.capacity(), table.entity_count() as usize);
        (capacity >= LARGE_TABLE && capacity - count.min(capacity) < LOADED_PER_UNIT)
            .then_some((table_id, capacity))
    }

    fn invalid(&self, reason: String) -> BridgeError {
        BridgeError::InvalidFile {
            file: self.file.clone(),
            reason,
        }
    }

    /// Goes on while the slice lasts; the reply once done.
    fn advance(
        &mut self,
        world: &mut World,
        slice: &mut Slice,
    ) -> Result<Option<Value>, BridgeError> {
        let registry = names::registry(world);
        let registry = registry.read();
        loop {
            match &mut self.stage {
                LoadStage::Parsing(thread) => {
                    if !thread.is_finished() {
                        return Ok(None);
                    }
                    let parsing = std::mem::replace(&mut self.stage, LoadStage::Checking);
                    let LoadStage::Parsing(thread) = parsing else {
                        return Ok(None);
                    };
                    self.snapshot = thread
                        .join()
                        .map_err(|_| self.invalid("reading it panicked".to_owned()))??;
                    self.made_assets = take_made_assets(&mut self.snapshot.resources);
                    // Sized once: growing a map of 100,000 entities rehashes it in one frame.
                    self.mapping.reserve(self.snapshot.entities.len());
                }
                LoadStage::Checking => {
                    let entities = &mut self.snapshot.entities;
                    while self.next < entities.len() {
                        if !slice.more() {
                            return Ok(None);
                        }
                        let part = self.next..entities.len().min(self.next + LOADED_PER_UNIT);
                        check_loadable(
                            world,
                            &self.file,
                            (&entities[part.clone()], &[]),
                            &registry,
                        )?;
                        take_relations(
                            world,
                            &mut entities[part.clone()],
                            &registry,
                            &mut self.relations,
                        );
                        self.next = part.end;
                    }
                    check_loadable(
                        world,
                        &self.file,
                        (&[], &self.snapshot.resources),
                        &registry,
                    )?;
                    check_relations(world, &self.file, &self.relations)?;
                    // The last check, and the first change: the assets its entities use.
                    self.made_assets
                        .make_missing(world, &registry)
                        .map_err(|error| self.invalid(error.to_string()))?;
                    self.next = 0;
                    self.stage = LoadStage::Spawning;
                }
                LoadStage::Spawning => {
                    let mut room = entity_table_room(world);
                    while self.next < self.snapshot.entities.len() {
                        // Near the size where Bevy's entity table grows, a slice of its own
                        // spawns one entity at a time and ends with the growth.
                        let near_growth = room < LOADED_PER_UNIT;
                        let (more, unit) = if near_growth {
                            (slice.more_as_first(), SPAWNED_NEAR_GROWTH)
                        } else {
                            (slice.more(), LOADED_PER_UNIT)
                        };
                        if !more {
                            return Ok(None);
                        }
                        let end = self.snapshot.entities.len().min(self.next + unit);
                        let table = world.entities().len();
                        for entity in &self.snapshot.entities[self.next..end] {
                            self.mapping
                                .entry(entity.entity)
                                .or_insert_with(|| world.spawn_empty().id());
                            if self.first_saved.len() < MAPPING_KEPT {
                                self.first_saved.push(entity.entity);
                            }
                            self.next += 1;
                            room = room.saturating_sub(1);
                            if near_growth && world.entities().len() > table {
                                return Ok(None);
                            }
                        }
                    }
                    self.stage = LoadStage::Writing;
                }
                LoadStage::Writing => {
                    // Each entity written gets components the game's systems then work on in
                    // this frame (transforms propagated, required components added).
                    slice.halve();
                    // The values written are freed off the game thread, once per slice: freeing
                    // thousands of small values here left glibc's allocator a backlog that the
                    // next allocation on this thread paid for (1 to 2 ms at a time).
                    let mut written = Vec::new();
                    while !self.snapshot.entities.is_empty() {
                        // Near the size where the table the last entity went into grows, a
                        // slice of its own writes one entity at a time and ends with the growth.
                        // So does the first entity: until one is written, which table the
                        // file's entities go into is not known.
                        let near = self.growing_table(world);
                        let alone = near.is_some() || self.last_written.is_none();
                        let (more, unit) = if alone {
                            (slice.more_as_first(), 1)
                        } else {
                            (slice.more(), LOADED_PER_UNIT)
                        };
                        if !more {
                            retire(written);
                            return Ok(None);
                        }
                        let writes = if near.is_some() {
                            WRITTEN_NEAR_GROWTH
                        } else {
                            1
                        };
                        for _ in 0..writes {
                            let at = self.snapshot.entities.len().saturating_sub(unit);
                            let part = DynamicWorld {
                                resources: Vec::new(),
                                entities: self.snapshot.entities.split_off(at),
                            };
                            self.write(world, &part, &registry)?;
                            self.written += part.entities.len();
                            self.last_written = part.entities.last().map(|saved| saved.entity);
                            written.push(part);
                            let grown = near.is_some_and(|(table, capacity)| {
                                table_capacity(world, table) != Some(capacity)
                            });
                            if grown || self.snapshot.entities.is_empty() {
                                break;
                            }
                        }
                        if alone && !self.snapshot.entities.is_empty() {
                            retire(written);
                            return Ok(None);
                        }
                    }
                    retire(written);
                    self.stage = LoadStage::Finishing;
                }
                LoadStage::Finishing => {
                    if !slice.more_as_first() {
                        return Ok(None);
                    }
                    // Resources after every entity, so their references resolve.
                    let resources = DynamicWorld {
                        resources: std::mem::take(&mut self.snapshot.resources),
                        entities: Vec::new(),
                    };
                    self.write(world, &resources, &registry)?;
                    let relations = std::mem::take(&mut self.relations);
                    let detached = attach_relations(world, relations, &mut self.mapping, &registry);
                    return Ok(Some(self.reply(world, resources.resources.len(), detached)));
                }
            }
        }
    }

    /// Writes a part of the file; the entities it names are spawned already.
    fn write(
        &mut self,
        world: &mut World,
        part: &DynamicWorld,
        registry: &TypeRegistry,
    ) -> Result<(), BridgeError> {
        part.write_to_world_with(world, &mut self.mapping, registry)
            .map_err(|error| {
                // Checked before anything was spawned: this is not expected, and what was
                // written stays (the reply says how much).
                self.invalid(format!(
                    "{error}; {} of its entities were written before it stopped",
                    self.written
                ))
            })
    }

    fn reply(&self, world: &World, resources: usize, detached: Vec<Value>) -> Value {
        let rows: Vec<Value> = self
            .first_saved
            .iter()
            .filter_map(|old| {
                let new = self.mapping.get(old)?;
                Some(json!({"saved": old.to_string(), "entity": entity_info(world, *new)}))
            })
            .collect();
        let mut reply = json!({
            "file": self.file,
            "spawned": self.written,
            "resources": resources,
            "mapping": rows,
            "detached": detached,
        });
        if self.first_saved.len() < self.mapping.len() {
            reply["mappingKept"] = json!(format!(
                "mapping holds the first {MAPPING_KEPT} entities of the file; spawned counts them all"
            ));
        }
        reply
    }
}

impl LongJob for Loading {
    type Output = Value;
    type Error = BridgeError;

    fn poll(
        &mut self,
        world: &mut World,
        progress: &ProgressSink,
    ) -> Option<Result<Value, BridgeError>> {
        match Slice::within(world, |world, slice| self.advance(world, slice)) {
            Ok(None) => {
                // Three passes over the file's entities, counted one after the other (progress
                // only goes up).
                let entities = self.snapshot.entities.len() + self.written;
                let (stage, done) = match self.stage {
                    LoadStage::Parsing(_) => ("reading the file", 0),
                    LoadStage::Checking => ("checking its values", self.next),
                    LoadStage::Spawning => ("spawning its entities", entities + self.next),
                    LoadStage::Writing => ("writing its values", 2 * entities + self.written),
                    LoadStage::Finishing => ("writing its resources and relations", 3 * entities),
                };
                let total = 3 * entities;
                progress.report_paced(done as f64, Some(total as f64), Some(stage));
                None
            }
            Ok(Some(reply)) => Some(Ok(reply)),
            Err(error) => Some(Err(error)),
        }
    }

    /// Until it spawns anything, a cancelled load leaves the world as it was; after, it
    /// finishes, so no half-written entity is left.
    fn cancellable(&self) -> bool {
        matches!(self.stage, LoadStage::Parsing(_) | LoadStage::Checking)
    }
}

/// A relation of a loaded entity (`ChildOf`, or any relationship), attached after the entities
/// exist so Bevy's hooks build the other side.
struct PendingRelation {
    /// The entity, by its id in the file.
    source: Entity,
    /// Where it points, by id in the file.
    target: Entity,
    type_path: String,
    value: Box<dyn PartialReflect>,
}

/// Takes every relation out of the file's values before they are written: both sides of a
/// relation are written with Bevy's hooks skipped, so a file could otherwise bring a loop or
/// a one-sided relation that hangs or panics the next despawn. Targets (`Children`) are dropped
/// (Bevy rebuilds them); sources are returned, after refusing any that close a loop.
fn take_relations(
    world: &mut World,
    entities: &mut [DynamicEntity],
    registry: &TypeRegistry,
    pending: &mut Vec<PendingRelation>,
) {
    for entity in entities {
        let mut kept = Vec::with_capacity(entity.components.len());
        for component in std::mem::take(&mut entity.components) {
            let relation = component
                .get_represented_type_info()
                .and_then(|info| registry.get(info.type_id()))
                .and_then(|registration| {
                    let id = registration
                        .data::<ReflectComponent>()?
                        .register_component(world);
                    let accessor = *world.components().get_info(id)?.relationship_accessor()?;
                    Some(matches!(
                        accessor,
                        RelationshipAccessor::Relationship { .. }
                    ))
                });
            match relation {
                None => kept.push(component),
                Some(false) => {}
                Some(true) => match hierarchy::first_entity(component.as_partial_reflect()) {
                    Some(target) => pending.push(PendingRelation {
                        source: entity.entity,
                        target,
                        type_path: type_path_of(component.as_ref()),
                        value: component,
                    }),
                    None => kept.push(component),
                },
            }
        }
        entity.components = kept;
    }
}

/// Refuses relations of a file that close a loop or make a hierarchy deeper than the bound.
fn check_relations(
    world: &World,
    file: &str,
    pending: &[PendingRelation],
) -> Result<(), BridgeError> {
    if let Some(looped) = first_loop(pending) {
        return Err(BridgeError::InvalidFile {
            file: file.to_owned(),
            reason: format!("its {looped} relations form a loop"),
        });
    }
    let levels = deepest_hierarchy(pending);
    let limit = WritePolicy::of(world).limits().max_hierarchy_depth;
    if levels > limit {
        return Err(BridgeError::InvalidFile {
            file: file.to_owned(),
            reason: format!(
                "its hierarchy is {levels} levels deep; the bridge makes none deeper than {limit} (WriteLimits::max_hierarchy_depth)"
            ),
        });
    }
    Ok(())
}

/// How many levels the file's parent relations make, counting entities from a root down (0
/// without any). The relations were checked to form no loop.
fn deepest_hierarchy(pending: &[PendingRelation]) -> usize {
    let parent: HashMap<Entity, Entity> = pending
        .iter()
        .filter(|relation| relation.type_path == CHILD_OF)
        .map(|relation| (relation.source, relation.target))
        .collect();
    let mut levels: HashMap<Entity, usize> = HashMap::new();
    let mut deepest = 0;
    for start in parent.keys() {
        // Up to the first entity whose level is known, or to the root (level 1).
        let mut path = Vec::new();
        let mut current = *start;
        let mut level = loop {
            if let Some(known) = levels.get(&current) {
                break *known;
            }
            path.push(current);
            match parent.get(&current) {
                Some(next) => current = *next,
                None => break 0,
            }
        };
        for entity in path.into_iter().rev() {
            level += 1;
            levels.insert(entity, level);
            deepest = deepest.max(level);
        }
    }
    deepest
}

/// The type of the first relation in `pending` whose chain of targets comes back to itself.
/// Each entity is walked once per relation type (the relations of one type form a graph where
/// every entity has at most one target).
fn first_loop(pending: &[PendingRelation]) -> Option<&str> {
    let next: HashMap<(&str, Entity), Entity> = pending
        .iter()
        .map(|relation| {
            (
                (relation.type_path.as_str(), relation.source),
                relation.target,
            )
        })
        .collect();
    let mut finished: HashSet<(&str, Entity)> = HashSet::new();
    for start in pending {
        let kind = start.type_path.as_str();
        let mut path = HashSet::new();
        let mut current = Some(start.source);
        while let Some(step) = current {
            if finished.contains(&(kind, step)) {
                break;
            }
            if !path.insert(step) {
                return Some(kind);
            }
            current = next.get(&(kind, step)).copied();
        }
        finished.extend(path.into_iter().map(|step| (kind, step)));
    }
    None
}

/// Inserts the relations whose targets were loaded too, with hooks, so Bevy links both sides.
/// A relation to an entity that is not in the file is left out and listed (`{entity, type,
/// saved}`): the entity loads unattached.
fn attach_relations(
    world: &mut World,
    pending: Vec<PendingRelation>,
    mapping: &mut EntityHashMap<Entity>,
    registry: &TypeRegistry,
) -> Vec<Value> {
    let mut detached = Vec::new();
    for relation in pending {
        let (Some(source), true) = (
            mapping.get(&relation.source).copied(),
            mapping.contains_key(&relation.target),
        ) else {
            if let Some(source) = mapping.get(&relation.source).copied() {
                detached.push(json!({"entity": entity_info(world, source), "type": relation.type_path, "savedTarget": relation.target.to_string()}));
            }
            continue;
        };
        let Some(component) = registry
            .get_with_type_path(&relation.type_path)
            .and_then(|registration| registration.data::<ReflectComponent>())
        else {
            continue;
        };
        if let Ok(mut entity_mut) = world.get_entity_mut(source) {
            component.apply_or_insert_mapped(
                &mut entity_mut,
                relation.value.as_partial_reflect(),
                registry,
                mapping,
                RelationshipHookMode::Run,
            );
        }
    }
    detached
}

fn list_files(dir: &Path) -> Result<Value, BridgeError> {
    let root = canonical_dir(dir)?;
    let files = crate::reflect::files::files_ending_with(&root, EXTENSION);
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

/// A clear in progress: every plain entity, with everything below it, goes to the holding area
/// (or is despawned without a history), a slice of entity indices per frame. The journal's entry
/// holds each entity as it was just before it went.
struct Clearing {
    next_index: u32,
    despawned: usize,
    /// What the journal gets: `None` without a journal, `Err` once the change outgrew it.
    change: Option<Result<Delta, String>>,
    tally: Tally,
    limit: usize,
}

impl Clearing {
    fn new(world: &World) -> Clearing {
        let limit = journal_bytes(world);
        Clearing {
            next_index: 0,
            despawned: 0,
            change: limit.map(|_| Ok(Delta::default())),
            tally: Tally::default(),
            limit: limit.unwrap_or(0),
        }
    }

    /// Holds the entity at each index (and what hangs below it) while the slice lasts; `true`
    /// once every index is done.
    fn advance(&mut self, world: &mut World, slice: &mut Slice) -> bool {
        let registry = names::registry(world);
        let registry = registry.read();
        // Entities held here move to archetypes made since, which count as plumbing.
        let plain = PlainIndex::of(world);
        let mut reader = EntityReader::new(&registry);
        loop {
            let entity = plain.at(world, self.next_index);
            if self.next_index >= PlainIndex::len(world) {
                return true;
            }
            if !slice.more() {
                return false;
            }
            self.next_index += 1;
            let Some(entity) = entity else {
                continue;
            };
            let tree = holding::trees(world, &[entity]);
            if let Some(Ok(delta)) = &mut self.change {
                for entity in &tree {
                    let change = EntityChange::Whole(Change {
                        before: Some(reader.read(world, *entity)),
                        after: None,
                    });
                    self.tally.add(entity.to_bits(), &change);
                    delta.entities.insert(entity.to_bits(), change);
                }
                if self.tally.bytes > self.limit {
                    let too_large = Some(Err(format!(
                        "the change takes more than {} bytes, the most the journal holds",
                        self.limit
                    )));
                    retire(std::mem::replace(&mut self.change, too_large));
                }
            }
            self.despawned += holding::remove_trees(world, &tree);
        }
    }
}

impl LongJob for Clearing {
    type Output = Value;
    type Error = BridgeError;

    fn poll(
        &mut self,
        world: &mut World,
        progress: &ProgressSink,
    ) -> Option<Result<Value, BridgeError>> {
        let done = Slice::within(world, |world, slice| self.advance(world, slice));
        if !done {
            progress.report_paced(
                f64::from(self.next_index),
                Some(f64::from(world.entities().len())),
                Some("clearing"),
            );
            return None;
        }
        if let Some(change) = self.change.take() {
            report_change(world, change, Some(std::mem::take(&mut self.tally)));
        }
        Some(Ok(json!({"despawned": self.despawned})))
    }

    fn cancellable(&self) -> bool {
        // Half a world cleared is no state anyone asked for: once it began, it finishes.
        self.despawned == 0
    }
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

    #[test]
    fn a_loads_resources_and_relations_wait_for_a_slice_of_their_own() {
        use crate::runtime::slices::SliceTime;
        let mut world = World::new();
        world.init_resource::<SliceTime>();
        let mut loading = Loading::new("arena.scn.ron".to_owned(), LoadStage::Writing);
        // The slice already wrote entities' values: the rest waits for the next frame.
        let mut slice = Slice::begin(&mut world);
        assert!(slice.more());
        assert!(matches!(loading.advance(&mut world, &mut slice), Ok(None)));
        assert!(matches!(loading.stage, LoadStage::Finishing));
        slice.end(&mut world);
        let mut fresh = Slice::begin(&mut world);
        let reply = loading.advance(&mut world, &mut fresh);
        assert!(
            matches!(&reply, Ok(Some(reply)) if reply["file"] == "arena.scn.ron"),
            "{reply:?}"
        );
    }

    #[test]
    fn a_written_snapshot_is_freed_over_slices_not_at_once() {
        use crate::runtime::retire::ITEMS_PER_UNIT;
        use crate::runtime::slices::MAX_UNITS;
        // One slice frees at most MAX_UNITS units of ITEMS_PER_UNIT entities.
        let per_slice = MAX_UNITS as usize * ITEMS_PER_UNIT;
        let entity = |index: u32| DynamicEntity {
            entity: Entity::from_raw_u32(index).unwrap_or(Entity::PLACEHOLDER),
            components: Vec::new(),
        };
        let snapshot = DynamicWorld {
            resources: Vec::new(),
            entities: (0..per_slice as u32 + 10).map(entity).collect(),
        };
        let mut world = World::new();
        world.init_resource::<FreedOverFrames>();
        free_over_frames(&mut world, snapshot);
        assert!(
            FreedOverFrames::frames_to_free_all(&mut world) >= 2,
            "everything was freed in one frame"
        );
    }
}
