//! The relations a world file holds: checked for loops and depth, then attached by Bevy's hooks.

use super::*;

/// A relation of a loaded entity (`ChildOf`, or any relationship), attached after the entities
/// exist so Bevy's hooks build the other side.
pub(super) struct PendingRelation {
    /// The entity, by its id in the file.
    pub(super) source: Entity,
    /// Where it points, by id in the file.
    pub(super) target: Entity,
    pub(super) type_path: String,
    pub(super) value: Box<dyn PartialReflect>,
}

/// Takes every relation out of the file's values before they are written: both sides of a
/// relation are written with Bevy's hooks skipped, so a file could otherwise bring a loop or
/// a one-sided relation that hangs or panics the next despawn. Targets (`Children`) are dropped
/// (Bevy rebuilds them); sources are returned, after refusing any that close a loop.
pub(super) fn take_relations(
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
pub(super) fn check_relations(
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
pub(super) fn deepest_hierarchy(pending: &[PendingRelation]) -> usize {
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
pub(super) fn first_loop(pending: &[PendingRelation]) -> Option<&str> {
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
pub(super) fn attach_relations(
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
