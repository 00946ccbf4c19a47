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

mod clear;
mod files;
mod load;
mod relations;
mod save;

use clear::*;
use files::*;
use load::*;
use relations::*;
use save::*;

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
