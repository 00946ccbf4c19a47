//! Access to the live world that every part of the bridge shares: the frame count, which
//! entities are game content rather than plumbing (resource entities, observers, the bridge's own
//! entities, entities the history holds out of sight), and where a resource's value lives
//! (resources are entities in Bevy 0.19).

use bevy::diagnostic::FrameCount;
use bevy::ecs::archetype::ArchetypeId;
use bevy::ecs::component::ComponentId;
use bevy::ecs::entity::EntityIndex;
use bevy::ecs::observer::Observer;
use bevy::ecs::reflect::{ReflectComponent, ReflectResource};
use bevy::ecs::resource::IsResource;
use bevy::prelude::{Component, Entity, World};
use bevy::reflect::{TypeRegistration, TypeRegistry};
use serde_json::Value;

use crate::error::BridgeError;
use crate::reflect::values;

/// Frames the app has run.
pub(crate) fn frame(world: &World) -> u64 {
    world
        .get_resource::<FrameCount>()
        .map_or(0, |count| u64::from(count.0))
}

/// Marks an entity the bridge removed and holds out of the game's sight (with Bevy's
/// `Disabled`), so undo and restore can bring it back whole; see `history::holding`.
#[derive(Component, Debug, Clone, Copy)]
pub(crate) struct HeldOutOfSight {
    /// When it was put away, counting from 1: the oldest go first past the bound.
    pub order: u64,
    /// Whether it was `Disabled` already (the game's own doing) before the bridge held it.
    pub was_disabled: bool,
}

/// Spreads held entities over [`HELD_SHARDS`] tables, one marker type each (see
/// `history::holding`): Bevy grows a table by copying it whole, so a table of 100,000 held
/// entities copied 64,000 rows in one frame as it grew. With 64 shards, a full holding area
/// (100,000 entities) puts about 1,600 in each, so a growth copies at most 1,024 rows; with 16
/// it copied 4,096 (0.55–0.70 ms at 100,000 entities, more than half a slice).
#[derive(Component, Debug, Clone, Copy, Default)]
pub(crate) struct HeldShard<const N: u8>;

/// How many tables held entities are spread over.
pub(crate) const HELD_SHARDS: u64 = 64;

/// Calls `$then!` with every shard number (`0 1 … 63`), so the marker types are listed once.
macro_rules! with_shard_numbers {
    ($then:ident) => {
        $then!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63)
    };
}
pub(crate) use with_shard_numbers;

/// Every shard marker, for removing whichever one an entity has (in groups of eight: Bevy's
/// bundles are tuples of at most 15).
pub(crate) type HeldShards = (
    (
        HeldShard<0>,
        HeldShard<1>,
        HeldShard<2>,
        HeldShard<3>,
        HeldShard<4>,
        HeldShard<5>,
        HeldShard<6>,
        HeldShard<7>,
    ),
    (
        HeldShard<8>,
        HeldShard<9>,
        HeldShard<10>,
        HeldShard<11>,
        HeldShard<12>,
        HeldShard<13>,
        HeldShard<14>,
        HeldShard<15>,
    ),
    (
        HeldShard<16>,
        HeldShard<17>,
        HeldShard<18>,
        HeldShard<19>,
        HeldShard<20>,
        HeldShard<21>,
        HeldShard<22>,
        HeldShard<23>,
    ),
    (
        HeldShard<24>,
        HeldShard<25>,
        HeldShard<26>,
        HeldShard<27>,
        HeldShard<28>,
        HeldShard<29>,
        HeldShard<30>,
        HeldShard<31>,
    ),
    (
        HeldShard<32>,
        HeldShard<33>,
        HeldShard<34>,
        HeldShard<35>,
        HeldShard<36>,
        HeldShard<37>,
        HeldShard<38>,
        HeldShard<39>,
    ),
    (
        HeldShard<40>,
        HeldShard<41>,
        HeldShard<42>,
        HeldShard<43>,
        HeldShard<44>,
        HeldShard<45>,
        HeldShard<46>,
        HeldShard<47>,
    ),
    (
        HeldShard<48>,
        HeldShard<49>,
        HeldShard<50>,
        HeldShard<51>,
        HeldShard<52>,
        HeldShard<53>,
        HeldShard<54>,
        HeldShard<55>,
    ),
    (
        HeldShard<56>,
        HeldShard<57>,
        HeldShard<58>,
        HeldShard<59>,
        HeldShard<60>,
        HeldShard<61>,
        HeldShard<62>,
        HeldShard<63>,
    ),
);

/// The bridge's own markers (never game content): held, bridge-owned, and the shards.
pub(crate) fn bridge_markers(world: &World) -> Vec<ComponentId> {
    macro_rules! shard_ids {
        ($($n:literal)*) => { [$(world.component_id::<HeldShard<$n>>()),*] };
    }
    [
        world.component_id::<HeldOutOfSight>(),
        world.component_id::<BridgeOwned>(),
    ]
    .into_iter()
    .chain(with_shard_numbers!(shard_ids))
    .flatten()
    .collect()
}

/// Marks an entity the bridge made for its own use (a simulated gamepad, a screenshot request):
/// generic actions do not touch it, and the history neither holds nor restores it.
#[derive(Component, Debug, Clone, Copy, Default)]
pub(crate) struct BridgeOwned;

/// Whether the entity exists and is in the game's sight: not held out of sight by the history.
pub(crate) fn is_present(world: &World, entity: Entity) -> bool {
    world
        .get_entity(entity)
        .is_ok_and(|entity_ref| !entity_ref.contains::<HeldOutOfSight>())
}

/// Whether the entity holds a resource.
pub(crate) fn is_resource(world: &World, entity: Entity) -> bool {
    world.get::<IsResource>(entity).is_some()
}

/// Refuses resource entities and observers (Bevy plumbing: the game's, or another session's
/// watch) for actions that change entities.
pub(crate) fn require_plain_entity(world: &World, entity: Entity) -> Result<(), BridgeError> {
    if is_resource(world, entity) {
        return Err(BridgeError::IsResource {
            entity: entity.to_string(),
        });
    }
    if world.get::<Observer>(entity).is_some() {
        return Err(BridgeError::ProtectedEntity {
            entity: entity.to_string(),
            what: "an observer (Bevy plumbing that runs when an event is triggered)",
        });
    }
    if world.get::<BridgeOwned>(entity).is_some() {
        return Err(BridgeError::ProtectedEntity {
            entity: entity.to_string(),
            what: "the bridge's own (a simulated device or a screenshot request); use the input or view actions",
        });
    }
    if world.get::<HeldOutOfSight>(entity).is_some() {
        return Err(BridgeError::ProtectedEntity {
            entity: entity.to_string(),
            what: "removed and held by the history so undo can bring it back; history.undo or history.restore returns it",
        });
    }
    Ok(())
}

/// Every entity that is not plumbing (a resource entity, an observer, the bridge's own, or one
/// the history holds out of sight), ordered by index.
pub(crate) fn plain_entities(world: &World) -> Vec<Entity> {
    plain_entities_by_index(world).collect()
}

/// [`plain_entities`] one at a time, walked in index order: a page of a listing costs what it
/// skips and returns, never a sort of the whole world.
pub(crate) fn plain_entities_by_index(world: &World) -> impl Iterator<Item = Entity> + '_ {
    plain_entities_in(world, 0..world.entities().len())
}

/// [`plain_entities_by_index`] over a range of entity indices only: a scan that spans frames
/// takes one slice per frame.
pub(crate) fn plain_entities_in(
    world: &World,
    indices: std::ops::Range<u32>,
) -> impl Iterator<Item = Entity> + '_ {
    let plain = PlainIndex::of(world);
    indices.filter_map(move |index| plain.at(world, index))
}

/// The plain entity at each entity index, for scans that walk the indices a slice at a time.
/// Plumbing is decided for the archetypes there were when it was made: an archetype made since
/// counts as plumbing, as the holding area's are.
#[derive(Debug)]
pub(crate) struct PlainIndex {
    plumbing: PlumbingArchetypes,
}

impl PlainIndex {
    /// The world's archetypes as they are now.
    pub(crate) fn of(world: &World) -> PlainIndex {
        PlainIndex {
            // Plumbing is decided once per archetype: per entity it was two type-id lookups,
            // most of what a listing's skip over 50,000 indices cost.
            plumbing: PlumbingArchetypes::of(world),
        }
    }

    /// How many indices there are (spawned or not).
    pub(crate) fn len(world: &World) -> u32 {
        world.entities().len()
    }

    /// The plain entity at `index`, if one is spawned there.
    pub(crate) fn at(&self, world: &World, index: u32) -> Option<Entity> {
        let entities = world.entities();
        let entity = entities.resolve_from_index(EntityIndex::from_raw_u32(index)?);
        let location = entities.get_spawned(entity).ok()?;
        (!self.plumbing.contains(location.archetype_id)).then_some(entity)
    }
}

/// For every archetype, whether its entities are plumbing: decided once, asked per archetype.
#[derive(Debug)]
pub(crate) struct PlumbingArchetypes(Vec<bool>);

impl PlumbingArchetypes {
    /// The archetypes of `world` as they are now.
    pub(crate) fn of(world: &World) -> PlumbingArchetypes {
        let plumbing = [
            world.component_id::<IsResource>(),
            world.component_id::<Observer>(),
            world.component_id::<BridgeOwned>(),
            world.component_id::<HeldOutOfSight>(),
        ];
        PlumbingArchetypes(
            world
                .archetypes()
                .iter()
                .map(|archetype| plumbing.iter().flatten().any(|id| archetype.contains(*id)))
                .collect(),
        )
    }

    /// Whether the archetype's entities are plumbing (an archetype made since counts as such).
    pub(crate) fn contains(&self, archetype: ArchetypeId) -> bool {
        self.0.get(archetype.index()).copied().unwrap_or(true)
    }
}

/// How many [`plain_entities`] there are, counted per archetype rather than per entity.
pub(crate) fn plain_entity_count(world: &World) -> usize {
    let plumbing = PlumbingArchetypes::of(world);
    world
        .archetypes()
        .iter()
        .filter(|archetype| !plumbing.contains(archetype.id()))
        .map(|archetype| archetype.len() as usize)
        .sum()
}

/// The entity holding the resource of this registered type, with its reflection.
pub(crate) fn resource_entity<'r>(
    world: &World,
    registration: &'r TypeRegistration,
) -> Result<(Entity, &'r ReflectComponent), BridgeError> {
    let type_path = registration.type_info().type_path().to_owned();
    if registration.data::<ReflectResource>().is_none() {
        return Err(BridgeError::NotAResource {
            type_path,
            hint: Some("components are read with inspect.get_entity".to_owned()),
        });
    }
    let component =
        registration
            .data::<ReflectComponent>()
            .ok_or_else(|| BridgeError::NotSerializable {
                type_path: type_path.clone(),
                reason: "no reflection data".to_owned(),
            })?;
    let entity = world
        .components()
        .get_id(registration.type_id())
        .and_then(|id| resource_holder(world, id))
        .ok_or(BridgeError::ResourceNotFound { type_path })?;
    Ok((entity, component))
}

/// The entity holding the resource of component `id`, when it holds the value: the resource
/// entity can outlive its value (after a removal).
pub(crate) fn resource_holder(world: &World, id: ComponentId) -> Option<Entity> {
    let entity = world.resource_entities().get(id)?;
    world
        .get_entity(entity)
        .ok()?
        .contains_id(id)
        .then_some(entity)
}

/// The entity a resource of this type is (re)inserted on: the one holding it, else the entity a
/// removed one left behind (Bevy refuses a second resource entity for a type), else a new one.
pub(crate) fn resource_slot(world: &mut World, registration: &TypeRegistration) -> Entity {
    let kept = resource_entity(world, registration)
        .ok()
        .map(|(entity, _)| entity)
        .or_else(|| {
            world
                .components()
                .get_id(registration.type_id())
                .and_then(|id| world.resource_entities().get(id))
                .filter(|entity| world.get_entity(*entity).is_ok())
        });
    kept.unwrap_or_else(|| world.spawn_empty().id())
}

/// The current value of a registered resource type, as JSON.
pub(crate) fn resource_json(
    world: &World,
    registration: &TypeRegistration,
    registry: &TypeRegistry,
) -> Result<Value, BridgeError> {
    let (entity, component) = resource_entity(world, registration)?;
    let not_found = || BridgeError::ResourceNotFound {
        type_path: registration.type_info().type_path().to_owned(),
    };
    let entity_ref = world.get_entity(entity).map_err(|_| not_found())?;
    values::component_json(entity_ref, component, registry).ok_or_else(not_found)?
}
