//! `save`: a world file written from a slice of the world per frame, then on a thread of its own.

use super::*;

/// What a save selects: the listed entities and the named ones (every plain entity when neither
/// is given), then only those with every `withComponents` type. Decided for each entity as its
/// slice reads it: collecting and sorting 100,000 entities first held the call's first frame.
#[derive(Debug)]
pub(super) struct Selection {
    pub(super) listed: HashSet<Entity>,
    pub(super) names: Option<Vec<String>>,
    /// `None` for a type the world has never stored (then nothing has it).
    pub(super) with: Vec<Option<ComponentId>>,
    /// Entities Bevy spawned for a model: never saved, as the model's root brings them back.
    pub(super) model_parts: EntityHashSet,
}

impl Selection {
    pub(super) fn of(
        world: &mut World,
        params: &ManageWorldSaveParams,
    ) -> Result<Selection, BridgeError> {
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
    pub(super) fn everything(&self, params: &ManageWorldSaveParams) -> bool {
        params.entities.is_none() && self.names.is_none()
    }

    /// Whether the save takes this plain entity.
    pub(super) fn takes(&self, world: &World, entity: Entity, everything: bool) -> bool {
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
pub(super) const SAVED_PER_UNIT: u32 = 8;

pub(super) fn save(
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
pub(super) struct Written {
    pub(super) bytes: Result<usize, BridgeError>,
    pub(super) snapshot: DynamicWorld,
}

/// A save in progress: the selection is read a slice per frame (an entity despawned before its
/// turn is left out), then the file is serialized and written off the game thread.
pub(super) struct Saving {
    pub(super) relative: String,
    /// Taken by the writing thread.
    pub(super) target: Option<FileTarget>,
    pub(super) include_resources: bool,
    pub(super) selection: Selection,
    pub(super) everything: bool,
    /// The next entity index to look at.
    pub(super) next_index: u32,
    pub(super) snapshot: DynamicWorld,
    /// Types left out, with why.
    pub(super) skipped: BTreeMap<String, String>,
    /// Selected entities left out as parts of a model.
    pub(super) model_parts_left_out: usize,
    /// Entities and resources the file holds.
    pub(super) saved: (usize, usize),
    /// The thread writing the file, once started.
    pub(super) writing: Option<Writing>,
}

/// Where the file's writing stands.
pub(super) enum Writing {
    Thread(std::thread::JoinHandle<Written>),
    /// No thread could be started (or it ended without a result).
    Failed(String),
}

impl Saving {
    /// Reads entities while the slice lasts; `true` once every one is read.
    pub(super) fn read(&mut self, world: &World, slice: &mut Slice) -> bool {
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
    pub(super) fn start_writing(&mut self, world: &World) {
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
pub(super) fn free_over_frames(world: &mut World, snapshot: DynamicWorld) {
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

pub(super) fn type_path_of(value: &dyn PartialReflect) -> String {
    value.get_represented_type_info().map_or_else(
        || value.reflect_type_path().to_owned(),
        |info| info.type_path().to_owned(),
    )
}

/// Why a value of the file may not be loaded: its type is protected (relations excepted: a load
/// rebuilds them itself, see [`take_relations`]).
pub(super) fn protected_in_file(
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
pub(super) fn keep_saveable(
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
pub(super) fn skipped_json(skipped: &BTreeMap<String, String>) -> Vec<Value> {
    skipped
        .iter()
        .map(|(type_path, reason)| json!({"type": type_path, "reason": reason}))
        .collect()
}
