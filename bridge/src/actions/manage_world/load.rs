//! `load`: a world file read and checked whole on a thread of its own, then spawned a slice per frame.

use super::*;

/// Asset handles in a file are loaded through the app's asset server when it has one; without
/// one they become placeholder handles (the sandbox has no assets in its files).
pub(super) struct Assets(Option<AssetServer>);

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
pub(super) fn take_made_assets(resources: &mut Vec<Box<dyn PartialReflect>>) -> WorldFileAssets {
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
pub(super) fn read_world(
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
pub(super) fn check_loadable(
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
pub(super) fn placement_in_file(
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

pub(super) fn load(
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
pub(super) const LOADED_PER_UNIT: usize = 8;
/// Rows from which a table's growth costs enough to be given a slice of its own.
pub(super) const LARGE_TABLE: usize = 16_384;
/// Entities a load writes, one at a time, in a slice of its own once the table they go into
/// is about to grow: it ends right after the growth, and a false alarm costs one frame.
pub(super) const WRITTEN_NEAR_GROWTH: usize = 2 * LOADED_PER_UNIT;
/// Rows of the old-to-new id mapping a load's reply holds at most (every entity is counted).
pub(super) const MAPPING_KEPT: usize = 200;

/// The capacity of a table of the world, if it has that table.
pub(super) fn table_capacity(world: &World, table: TableId) -> Option<usize> {
    world.storages().tables.get(table).map(Table::capacity)
}

/// Where a load stands.
pub(super) enum LoadStage {
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
pub(super) struct Loading {
    pub(super) file: String,
    pub(super) stage: LoadStage,
    pub(super) snapshot: DynamicWorld,
    /// The next entity of the file for the stage at hand.
    pub(super) next: usize,
    pub(super) relations: Vec<PendingRelation>,
    pub(super) mapping: EntityHashMap<Entity>,
    /// The first [`MAPPING_KEPT`] entities of the file, the mapping rows of the reply (the
    /// reply lists them without reading the whole mapping).
    pub(super) first_saved: Vec<Entity>,
    /// Entities whose values are written.
    pub(super) written: usize,
    /// The file's id of the entity written last (where it went tells which table grows next).
    pub(super) last_written: Option<Entity>,
    /// The assets the bridge made that the file's entities use, made before they spawn.
    pub(super) made_assets: WorldFileAssets,
}

impl Loading {
    /// A load of `file` at `stage`, nothing read from it yet.
    pub(super) fn new(file: String, stage: LoadStage) -> Loading {
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
    pub(super) fn growing_table(&self, world: &World) -> Option<(TableId, usize)> {
        let saved = self.last_written?;
        let entity = *self.mapping.get(&saved)?;
        let table_id = world.entities().get_spawned(entity).ok()?.table_id;
        let table = world.storages().tables.get(table_id)?;
        let (capacity, count) = (table.capacity(), table.entity_count() as usize);
        (capacity >= LARGE_TABLE && capacity - count.min(capacity) < LOADED_PER_UNIT)
            .then_some((table_id, capacity))
    }

    pub(super) fn invalid(&self, reason: String) -> BridgeError {
        BridgeError::InvalidFile {
            file: self.file.clone(),
            reason,
        }
    }

    /// Goes on while the slice lasts; the reply once done.
    pub(super) fn advance(
        &mut self,
        world: &mut World,
        slice: &mut Slice,
    ) -> Result<Option<Value>, BridgeError> {
        let registry = names::registry(world);
        let registry = registry.read();
        loop {
            // Whether the stage ended in this slice, so the next one begins.
            let ended = match self.stage {
                LoadStage::Parsing(ref thread) if !thread.is_finished() => false,
                LoadStage::Parsing(_) => self.take_parsed()?,
                LoadStage::Checking => self.check(world, slice, &registry)?,
                LoadStage::Spawning => self.spawn(world, slice),
                LoadStage::Writing => self.write_entities(world, slice, &registry)?,
                LoadStage::Finishing => {
                    if !slice.more_as_first() {
                        return Ok(None);
                    }
                    return Ok(Some(self.finish(world, &registry)?));
                }
            };
            if !ended {
                return Ok(None);
            }
        }
    }

    /// The file as its thread parsed it.
    fn take_parsed(&mut self) -> Result<bool, BridgeError> {
        let parsing = std::mem::replace(&mut self.stage, LoadStage::Checking);
        let LoadStage::Parsing(thread) = parsing else {
            return Ok(false);
        };
        self.snapshot = thread
            .join()
            .map_err(|_| self.invalid("reading it panicked".to_owned()))??;
        self.made_assets = take_made_assets(&mut self.snapshot.resources);
        // Sized once: growing a map of 100,000 entities rehashes it in one frame.
        self.mapping.reserve(self.snapshot.entities.len());
        Ok(true)
    }

    /// Checks every entity, resource and relation of the file before anything changes.
    fn check(
        &mut self,
        world: &mut World,
        slice: &mut Slice,
        registry: &TypeRegistry,
    ) -> Result<bool, BridgeError> {
        let entities = &mut self.snapshot.entities;
        while self.next < entities.len() {
            if !slice.more() {
                return Ok(false);
            }
            let part = self.next..entities.len().min(self.next + LOADED_PER_UNIT);
            check_loadable(world, &self.file, (&entities[part.clone()], &[]), registry)?;
            take_relations(
                world,
                &mut entities[part.clone()],
                registry,
                &mut self.relations,
            );
            self.next = part.end;
        }
        check_loadable(world, &self.file, (&[], &self.snapshot.resources), registry)?;
        check_relations(world, &self.file, &self.relations)?;
        // The last check, and the first change: the assets its entities use.
        self.made_assets
            .make_missing(world, registry)
            .map_err(|error| self.invalid(error.to_string()))?;
        self.next = 0;
        self.stage = LoadStage::Spawning;
        Ok(true)
    }

    /// Spawns an empty entity for each of the file's.
    fn spawn(&mut self, world: &mut World, slice: &mut Slice) -> bool {
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
                return false;
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
                    return false;
                }
            }
        }
        self.stage = LoadStage::Writing;
        true
    }

    /// Writes the file's entities into those spawned, a slice at a time.
    fn write_entities(
        &mut self,
        world: &mut World,
        slice: &mut Slice,
        registry: &TypeRegistry,
    ) -> Result<bool, BridgeError> {
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
                return Ok(false);
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
                self.write(world, &part, registry)?;
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
                return Ok(false);
            }
        }
        retire(written);
        self.stage = LoadStage::Finishing;
        Ok(true)
    }

    /// Writes the resources and attaches the relations: the last slice.
    fn finish(&mut self, world: &mut World, registry: &TypeRegistry) -> Result<Value, BridgeError> {
        // Resources after every entity, so their references resolve.
        let resources = DynamicWorld {
            resources: std::mem::take(&mut self.snapshot.resources),
            entities: Vec::new(),
        };
        self.write(world, &resources, registry)?;
        let relations = std::mem::take(&mut self.relations);
        let detached = attach_relations(world, relations, &mut self.mapping, registry);
        Ok(self.reply(world, resources.resources.len(), detached))
    }

    /// Writes a part of the file; the entities it names are spawned already.
    pub(super) fn write(
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

    pub(super) fn reply(&self, world: &World, resources: usize, detached: Vec<Value>) -> Value {
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
