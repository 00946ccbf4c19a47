//! Reading entities and resources as held text, an archetype at a time.

use super::*;

/// The parent an entity's held `ChildOf` names.
pub(super) fn parent_of(held: &EntitySnapshot) -> Option<u64> {
    held.get(CHILD_OF).and_then(|parent| parent.as_u64())
}

/// How the components of one archetype are read: decided once per archetype, not per entity.
pub(super) struct ArchetypeReading<'r> {
    /// Held components, sorted by type path.
    pub(super) held: Vec<(&'static str, &'r ReflectComponent, ComponentId)>,
    /// Components that are not reflected, by the name Bevy knows.
    pub(super) unreflected: Vec<String>,
}

/// Reads entities as [`EntitySnapshot`]s, deciding per archetype which components are held
/// (archetypes live as long as the world, so what it decided holds across changes of it).
pub(crate) struct EntityReader<'r> {
    pub(super) registry: &'r TypeRegistry,
    pub(super) archetypes: HashMap<ArchetypeId, ArchetypeReading<'r>>,
}

impl<'r> EntityReader<'r> {
    /// A reader with the types of `registry`.
    pub(crate) fn new(registry: &'r TypeRegistry) -> EntityReader<'r> {
        EntityReader {
            registry,
            archetypes: HashMap::new(),
        }
    }

    /// One entity's tracked components (empty when it does not exist).
    pub(crate) fn read(&mut self, world: &World, entity: Entity) -> EntitySnapshot {
        let Ok(entity_ref) = world.get_entity(entity) else {
            return EntitySnapshot::default();
        };
        let id = entity_ref.archetype().id();
        let registry = self.registry;
        let reading = self
            .archetypes
            .entry(id)
            .or_insert_with(|| archetype_reading(world, registry, id));
        let mut unread: BTreeSet<String> = reading.unreflected.iter().cloned().collect();
        let mut kept = Vec::new();
        let mut text = Vec::with_capacity(64 * reading.held.len() + 2);
        text.push(b'{');
        let mut first = true;
        for (type_path, component, _) in &reading.held {
            let before = text.len();
            if !first {
                text.push(b',');
            }
            // Writing a string into a `Vec` cannot fail.
            let _ = serde_json::to_writer(&mut text, type_path);
            text.push(b':');
            let written = component.reflect(entity_ref).is_some_and(|value| {
                json::write_json_keeping(value.as_partial_reflect(), registry, &mut text, &mut kept)
                    .is_ok()
            });
            if written {
                first = false;
            } else {
                text.truncate(before);
                unread.insert((*type_path).to_owned());
            }
        }
        text.push(b'}');
        keep_for_history(world, kept);
        EntitySnapshot {
            json: Arc::from(String::from_utf8(text).unwrap_or_else(|_| "{}".to_owned())),
            unread,
            read: Some(ReadAt {
                archetype: id,
                tick: world.read_change_tick(),
            }),
        }
    }

    /// Whether `entity` still holds what `held` read: the same components, none of them changed
    /// since (Bevy's change ticks). `false` when that cannot be told, so the caller reads it.
    pub(crate) fn unchanged(
        &mut self,
        world: &World,
        entity: Entity,
        held: &EntitySnapshot,
    ) -> bool {
        let (Some(read), Ok(entity_ref)) = (held.read, world.get_entity(entity)) else {
            return false;
        };
        let id = entity_ref.archetype().id();
        let now = world.read_change_tick();
        // Bevy clamps ticks older than this; a read that old cannot be compared by ticks.
        if id != read.archetype || now.get().wrapping_sub(read.tick.get()) > MAX_CHANGE_AGE / 2 {
            return false;
        }
        let registry = self.registry;
        let reading = self
            .archetypes
            .entry(id)
            .or_insert_with(|| archetype_reading(world, registry, id));
        reading.held.iter().all(|(_, _, component)| {
            entity_ref
                .get_change_ticks_by_id(*component)
                .is_some_and(|ticks| !ticks.is_changed(read.tick, now))
        })
    }
}

/// Moves the world's change tick on, so every change made after a read (by the bridge in the
/// same frame, or the game later) has a newer tick than the read.
pub(super) fn after_reading(world: &World) {
    world
        .as_unsafe_world_cell_readonly()
        .increment_change_tick();
}

pub(super) fn archetype_reading<'r>(
    world: &World,
    registry: &'r TypeRegistry,
    id: ArchetypeId,
) -> ArchetypeReading<'r> {
    let own = bridge_markers(world);
    let mut held = Vec::new();
    let mut unreflected = Vec::new();
    let Some(archetype) = world.archetypes().get(id) else {
        return ArchetypeReading { held, unreflected };
    };
    for component in archetype.components().iter().copied() {
        if own.contains(&component) {
            continue;
        }
        let registration = world
            .components()
            .get_info(component)
            .and_then(|info| info.type_id())
            .and_then(|type_id| registry.get(type_id));
        let reflect = registration.and_then(|registration| {
            Some((
                registration.type_info().type_path(),
                registration.data::<ReflectComponent>()?,
            ))
        });
        match reflect {
            Some((type_path, reflect)) => {
                if tracked(type_path) {
                    held.push((type_path, reflect, component));
                }
            }
            None => {
                let label = names::component_label(world, component);
                if names::is_unnamed(&label) || tracked(&label) {
                    unreflected.push(label);
                }
            }
        }
    }
    held.sort_by_key(|(type_path, _, _)| *type_path);
    ArchetypeReading { held, unreflected }
}

/// One entity's tracked components (empty when it does not exist).
pub(crate) fn entity_snapshot(
    world: &World,
    entity: Entity,
    registry: &TypeRegistry,
) -> EntitySnapshot {
    EntityReader::new(registry).read(world, entity)
}

/// One component of an entity as text: `None` when absent, or not a component; `Some(Err)`
/// when its value cannot be read as JSON.
pub(crate) fn read_raw(
    world: &World,
    entity: Entity,
    registration: &TypeRegistration,
    registry: &TypeRegistry,
) -> Option<Result<Raw, BridgeError>> {
    let component = registration.data::<ReflectComponent>()?;
    let value = component.reflect(world.get_entity(entity).ok()?)?;
    let mut text = Vec::new();
    let mut kept = Vec::new();
    let written =
        json::write_json_keeping(value.as_partial_reflect(), registry, &mut text, &mut kept);
    keep_for_history(world, kept);
    Some(written.and_then(|()| Raw::from_text(text)))
}

/// Hands the handles a value names only by id to [`KeptByHistory`], so what the history holds
/// can be given back after the game dropped them.
pub(super) fn keep_for_history(world: &World, kept: Vec<UntypedHandle>) {
    if let Some(history) = world.get_resource::<KeptByHistory>() {
        history.keep(kept);
    }
}

/// One component of an entity as text: `None` when absent, unreadable, or not a component.
pub(crate) fn component_raw(
    world: &World,
    entity: Entity,
    registration: &TypeRegistration,
    registry: &TypeRegistry,
) -> Option<Raw> {
    read_raw(world, entity, registration, registry)?.ok()
}

/// A resource's value as text, when it has one that reads as JSON.
pub(crate) fn resource_raw(
    world: &World,
    registration: &TypeRegistration,
    registry: &TypeRegistry,
) -> Option<Raw> {
    let (entity, _) = resource_entity(world, registration).ok()?;
    component_raw(world, entity, registration, registry)
}

/// The game's own resources the world has whose values `held` (the resources as [`resources`]
/// read them) lacks, by the name Bevy knows: not reflected as resources, or not readable as JSON
/// (an asset handle, say). A checkpoint or an undo leaves them as they are, so a restore names
/// them instead of passing over them in silence (breakout's `Score` derives no `Reflect`).
pub(crate) fn unheld_resources(
    world: &World,
    registry: &TypeRegistry,
    held: &BTreeMap<String, Raw>,
) -> BTreeSet<String> {
    let mut unheld = BTreeSet::new();
    for (id, _) in world.resource_entities().iter() {
        let label = names::component_label(world, id);
        if names::is_unnamed(&label) || !names::is_games_own(&label) {
            continue;
        }
        let is_held = world
            .components()
            .get_info(id)
            .and_then(|info| info.type_id())
            .and_then(|type_id| registry.get(type_id))
            .is_some_and(|registration| held.contains_key(registration.type_info().type_path()));
        if !is_held {
            unheld.insert(label);
        }
    }
    unheld
}

/// Why a resource [`unheld_resources`] names keeps its value: for a restore's or an undo's
/// `notRestored`.
pub(crate) fn unheld_resource_reason(registry: &TypeRegistry, label: &str) -> String {
    let reflected = registry
        .get_with_type_path(label)
        .is_some_and(|registration| registration.data::<ReflectResource>().is_some());
    if reflected {
        "a resource of the game whose value cannot be held as JSON (it holds an asset handle or another value without a serialized form): it keeps the value it has now, which may not match the rest of the world".to_owned()
    } else {
        format!(
            "a resource of the game that is not reflected, so its value could not be held: it keeps the value it has now, which may not match the rest of the world; to bring it back next time, {}",
            names::HOW_TO_REFLECT_RESOURCE
        )
    }
}

/// Every tracked resource's value.
pub(super) fn resources(world: &World, registry: &TypeRegistry) -> BTreeMap<String, Raw> {
    let mut resources = BTreeMap::new();
    for (id, _) in world.resource_entities().iter() {
        let Some(registration) = world
            .components()
            .get_info(id)
            .and_then(|info| info.type_id())
            .and_then(|type_id| registry.get(type_id))
        else {
            continue;
        };
        let type_path = registration.type_info().type_path();
        if registration.data::<ReflectResource>().is_none() || !tracked(type_path) {
            continue;
        }
        // A resource whose value cannot be read as JSON is left out, as unreadable components are.
        if let Some(value) = resource_raw(world, registration, registry) {
            resources.insert(type_path.to_owned(), value);
        }
    }
    resources
}
