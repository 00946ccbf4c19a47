//! `inspect`: read-only views of the world.

pub(crate) mod query;
#[cfg(feature = "render")]
mod ui_tree;

use std::collections::{BTreeMap, HashSet};

use bevy::ecs::archetype::{Archetype, ArchetypeId};
use bevy::ecs::component::ComponentId;
use bevy::ecs::observer::Observer;
use bevy::ecs::reflect::{ReflectComponent, ReflectResource};
use bevy::ecs::schedule::Schedules;
use bevy::prelude::{ChildOf, Entity, Name, World};
use bevy::reflect::std_traits::ReflectDefault;
use bevy::reflect::{TypeInfo, TypeRegistration, TypeRegistry};
use bevy_mcp_generated::names::inspect;
use bevy_mcp_generated::params::*;
use serde_json::{Map, Value, json};

use crate::actions::object;
use crate::error::BridgeError;
use crate::reflect::hierarchy;
use crate::reflect::hierarchy::{children_of, parent_of};
use crate::reflect::names;
use crate::reflect::names::{
    component_id, component_names, entity_info, resolve_entity, resolve_type,
};
use crate::reflect::paths;
use crate::reflect::policy::WritePolicy;
use crate::reflect::schema;
use crate::reflect::values;
use crate::reflect::world;
use crate::reflect::world::{PlumbingArchetypes, plain_entities_in, plain_entity_count};
use crate::reflect::world::{frame, resource_json};
use crate::runtime::action::Action;

/// `inspect.world_summary`.
pub(crate) const WORLD_SUMMARY: Action<InspectWorldSummaryParams> = Action::read(world_summary);
/// `inspect.list_entities`.
pub(crate) const LIST_ENTITIES: Action<InspectListEntitiesParams> = Action::read(list_entities);
/// `inspect.get_entity`.
pub(crate) const GET_ENTITY: Action<InspectGetEntityParams> = Action::read(get_entity);
/// `inspect.find_entities`.
pub(crate) const FIND_ENTITIES: Action<InspectFindEntitiesParams> = Action::read(find_entities);
/// `inspect.query`: reads a big world a slice per frame (see [`query`]).
pub(crate) const QUERY: Action<InspectQueryParams> = Action::run_long(query::start);
/// `inspect.hierarchy`.
pub(crate) const HIERARCHY: Action<InspectHierarchyParams> = Action::read(hierarchy);
/// `inspect.ui_tree`.
#[cfg(feature = "render")]
pub(crate) const UI_TREE: Action<InspectUiTreeParams> = Action::read(ui_tree::ui_tree);
/// `inspect.ui_tree` without the `render` feature: the app has no UI.
#[cfg(not(feature = "render"))]
pub(crate) const UI_TREE: Action<InspectUiTreeParams> = Action::read(|_, _| {
    Err(BridgeError::NoDisplay {
        reason: "the bridge was built without its `render` feature, which brings Bevy's UI; \
                 build it with `bevy_mcp_bridge = { features = [\"render\"] }`"
            .to_owned(),
    })
});
/// `inspect.list_component_types`.
pub(crate) const LIST_COMPONENT_TYPES: Action<InspectListComponentTypesParams> =
    Action::read(list_component_types);
/// `inspect.describe_type`.
pub(crate) const DESCRIBE_TYPE: Action<InspectDescribeTypeParams> = Action::read(describe_type);
/// `inspect.list_resources`.
pub(crate) const LIST_RESOURCES: Action<InspectListResourcesParams> = Action::read(list_resources);
/// `inspect.get_resource`.
pub(crate) const GET_RESOURCE: Action<InspectGetResourceParams> = Action::read(get_resource);
/// `inspect.list_schedules`.
pub(crate) const LIST_SCHEDULES: Action<InspectListSchedulesParams> = Action::read(list_schedules);

fn world_summary(world: &World, params: InspectWorldSummaryParams) -> Result<Value, BridgeError> {
    // Counted per archetype, never per entity: the cost follows the world's shapes, not its size.
    let observer = world.component_id::<Observer>();
    let (name, child_of) = (
        world.component_id::<Name>(),
        world.component_id::<ChildOf>(),
    );
    let has = |archetype: &Archetype, id: Option<ComponentId>| {
        id.is_some_and(|id| archetype.contains(id))
    };
    let plumbing = PlumbingArchetypes::of(world);
    let registry = names::registry(world);
    let registry = registry.read();
    let (mut entities, mut named, mut roots, mut observers) = (0u64, 0u64, 0u64, 0u64);
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    for archetype in world
        .archetypes()
        .iter()
        .filter(|archetype| !archetype.is_empty())
    {
        let len = u64::from(archetype.len());
        if has(archetype, observer) {
            observers += len;
        }
        // Plumbing as every listing decides it: resources, observers, the bridge's own
        // entities and the ones the history holds out of sight.
        if plumbing.contains(archetype.id()) {
            continue;
        }
        entities += len;
        named += if has(archetype, name) { len } else { 0 };
        roots += if has(archetype, child_of) { 0 } else { len };
        for id in archetype.components() {
            *counts
                .entry(names::component_short_name(world, &registry, *id))
                .or_default() += len;
        }
    }
    let mut top: Vec<(String, u64)> = counts.into_iter().collect();
    top.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    top.truncate(params.top as usize);
    let component_types = registry
        .iter()
        .filter(|registration| {
            registration.data::<ReflectComponent>().is_some()
                && registration.data::<ReflectResource>().is_none()
        })
        .count();
    Ok(json!({
        "entityCount": entities,
        "namedEntityCount": named,
        "rootCount": roots,
        "resourceCount": world.resource_entities().iter().count(),
        "observerCount": observers,
        "componentTypeCount": component_types,
        "topComponents": top.into_iter().map(|(name, count)| json!({"type": name, "count": count})).collect::<Vec<_>>(),
        "frame": frame(world),
    }))
}

fn list_entities(world: &World, params: InspectListEntitiesParams) -> Result<Value, BridgeError> {
    let (page, next) = entity_page(
        world,
        inspect::LIST_ENTITIES,
        params.cursor.as_deref(),
        params.offset as usize,
        params.limit as usize,
        |_, _| true,
    )?;
    let registry = names::registry(world);
    let registry = registry.read();
    let rows: Vec<Value> = page
        .iter()
        .map(|entity| {
            let mut row = entity_info(world, *entity);
            if params.with_component_names {
                row["components"] = json!(component_names(world, &registry, *entity));
            }
            row
        })
        .collect();
    let total = plain_entity_count(world);
    let reply = object([
        ("entities", Value::Array(rows)),
        ("total", json!(total)),
        ("offset", json!(params.offset)),
    ]);
    Ok(with_page_cursor(reply, next))
}

fn get_entity(world: &World, params: InspectGetEntityParams) -> Result<Value, BridgeError> {
    let entity = resolve_entity(world, &params.entity)?;
    let registry = names::registry(world);
    let registry = registry.read();
    let wanted: Option<Vec<String>> = match &params.components {
        Some(names) => Some(
            names
                .iter()
                .map(|name| {
                    resolve_type(&registry, name)
                        .map(|registration| registration.type_info().type_path().to_owned())
                })
                .collect::<Result<_, _>>()?,
        ),
        None => None,
    };
    let Ok(entity_ref) = world.get_entity(entity) else {
        return Err(BridgeError::EntityNotFound {
            given: entity.to_string(),
            suggestions: Vec::new(),
        });
    };
    let mut components = Map::new();
    let mut unreadable = Vec::new();
    let present = values::reflected_components(world, entity, &registry);
    for (type_path, registration) in &present {
        if wanted
            .as_ref()
            .is_some_and(|wanted| !wanted.contains(type_path))
        {
            continue;
        }
        let Some(component) = registration.data::<ReflectComponent>() else {
            continue;
        };
        match values::component_json(entity_ref, component, &registry) {
            Some(Ok(value)) => {
                components.insert(type_path.clone(), value);
            }
            Some(Err(error)) => {
                unreadable.push(json!({"type": type_path, "reason": error.to_string()}))
            }
            None => {}
        }
    }
    if let Some(wanted) = &wanted {
        for type_path in wanted {
            if !present.iter().any(|(present, _)| present == type_path) {
                unreadable.push(
                    json!({"type": type_path, "reason": "the entity does not have this component"}),
                );
            }
        }
    }
    let children = children_of(world, entity)
        .into_iter()
        .map(|child| entity_info(world, child))
        .collect();
    let mut reply = object([
        ("entity", entity_info(world, entity)),
        ("components", Value::Object(components)),
        ("children", Value::Array(children)),
    ]);
    if !unreadable.is_empty() {
        reply["unreadable"] = Value::Array(unreadable);
    }
    let unreflected = names::unreflected_components(world, &registry, entity);
    if wanted.is_none() && !unreflected.is_empty() {
        reply["unreflected"] = unreflected
            .iter()
            .map(|name| json!({"type": name, "reflected": false}))
            .collect();
        reply["howToReflect"] = json!(names::HOW_TO_REFLECT);
    }
    if let Some(parent) = parent_of(world, entity) {
        reply["parent"] = entity_info(world, parent);
    }
    if world::is_resource(world, entity) {
        reply["isResource"] = json!(true);
    }
    Ok(reply)
}

fn component_filter(
    world: &World,
    registry: &TypeRegistry,
    names: &Option<Vec<String>>,
) -> Result<Vec<Option<bevy::ecs::component::ComponentId>>, BridgeError> {
    let Some(names) = names else {
        return Ok(Vec::new());
    };
    names
        .iter()
        .map(|name| names::resolve_present_component(world, registry, name))
        .collect()
}

fn find_entities(world: &World, params: InspectFindEntitiesParams) -> Result<Value, BridgeError> {
    let registry = names::registry(world);
    let registry = registry.read();
    let with = component_filter(world, &registry, &params.with_components)?;
    let without = component_filter(world, &registry, &params.without_components)?;
    let needle = params.name.as_ref().map(|name| name.to_lowercase());
    // Component filters are decided once per archetype, not once per entity.
    let plumbing = PlumbingArchetypes::of(world);
    let allowed: HashSet<ArchetypeId> = world
        .archetypes()
        .iter()
        .filter(|archetype| {
            let has = |id: &Option<ComponentId>| id.is_some_and(|id| archetype.contains(id));
            !plumbing.contains(archetype.id()) && with.iter().all(has) && !without.iter().any(has)
        })
        .map(Archetype::id)
        .collect();
    let archetype_of = |world: &World, entity: Entity| {
        world
            .entities()
            .get_spawned(entity)
            .ok()
            .map(|location| location.archetype_id)
    };
    let mut page = LowestIndices::new(params.limit as usize);
    match (&params.name, &needle) {
        (Some(name), needle) => {
            // Compared through `Name`'s precomputed hash first: no string is read unless it matches.
            let exact = Name::new(name.clone());
            // A world that has never seen a `Name` has no query for it, and no named entity.
            let mut named = world.try_query::<(Entity, &Name)>();
            for (entity, own) in named.iter_mut().flat_map(|query| query.iter(world)) {
                let name_ok = if params.exact_name {
                    *own == exact
                } else {
                    needle
                        .as_deref()
                        .is_some_and(|needle| contains_ignoring_case(own.as_str(), needle))
                };
                if name_ok && archetype_of(world, entity).is_some_and(|id| allowed.contains(&id)) {
                    page.offer(entity);
                }
            }
        }
        (None, _) => {
            for archetype in world.archetypes().iter() {
                if allowed.contains(&archetype.id()) {
                    for entity in archetype.entities() {
                        page.offer(entity.id());
                    }
                }
            }
        }
    }
    let total = page.offered;
    let matches = page.into_sorted();
    let rows: Vec<Value> = matches
        .iter()
        .map(|entity| entity_info(world, *entity))
        .collect();
    Ok(object([
        ("entities", Value::Array(rows)),
        ("total", json!(total)),
    ]))
}

/// Whether `text` holds `lowercase_needle`, ignoring case. ASCII names (most of a big world's)
/// are compared in place: lowercasing a copy of each name was most of a scan's cost.
fn contains_ignoring_case(text: &str, lowercase_needle: &str) -> bool {
    if !text.is_ascii() || !lowercase_needle.is_ascii() {
        return text.to_lowercase().contains(lowercase_needle);
    }
    let needle = lowercase_needle.as_bytes();
    needle.is_empty()
        || text
            .as_bytes()
            .windows(needle.len())
            .any(|window| window.eq_ignore_ascii_case(needle))
}

fn hierarchy(world: &World, params: InspectHierarchyParams) -> Result<Value, BridgeError> {
    let (roots, next) = match &params.root {
        Some(root) => (vec![resolve_entity(world, root)?], None),
        None => entity_page(
            world,
            inspect::HIERARCHY,
            params.cursor.as_deref(),
            0,
            params.limit as usize,
            |world, entity| parent_of(world, entity).is_none(),
        )?,
    };
    let total = roots.len();
    // Each entity is shown once, however the game's own data loops.
    let mut seen = HashSet::new();
    let nodes: Vec<Value> = roots
        .into_iter()
        .map(|root| tree(world, root, params.depth, &mut seen))
        .collect();
    Ok(with_page_cursor(
        object([("roots", Value::Array(nodes)), ("total", json!(total))]),
        next,
    ))
}

/// Adds `moreAvailable` and, when another page follows, the `cursor` that reads it (the index of
/// the entity it starts at, as [`entity_page`] takes it back).
fn with_page_cursor(mut reply: Value, next: Option<Entity>) -> Value {
    reply["moreAvailable"] = json!(next.is_some());
    if let Some(next) = next {
        reply["cursor"] = json!(next.index_u32().to_string());
    }
    reply
}

/// A page of plain entities that `keep` accepts, in index order: from the entity index the
/// `cursor` names (a page's last answer), skipping `offset`, at most `limit`; and the entity the
/// next page starts at, when there is one. A deep page walks from its cursor instead of
/// skipping everything before it.
fn entity_page(
    world: &World,
    action: &'static str,
    cursor: Option<&str>,
    offset: usize,
    limit: usize,
    keep: impl Fn(&World, Entity) -> bool,
) -> Result<(Vec<Entity>, Option<Entity>), BridgeError> {
    let end = world.entities().len();
    let start = match cursor {
        Some(cursor) => cursor
            .parse::<u32>()
            .ok()
            .filter(|index| *index <= end)
            .ok_or_else(|| BridgeError::InvalidCursor {
                given: cursor.to_owned(),
                action,
            })?,
        None => 0,
    };
    // One entity more than the page says whether another page follows.
    let mut page: Vec<Entity> = plain_entities_in(world, start..end)
        .filter(|entity| keep(world, *entity))
        .skip(offset)
        .take(limit + 1)
        .collect();
    let next = (page.len() > limit).then(|| page.pop()).flatten();
    Ok((page, next))
}

fn tree(world: &World, entity: Entity, depth: u64, seen: &mut HashSet<Entity>) -> Value {
    let mut node = entity_info(world, entity);
    if !seen.insert(entity) || seen.len() > hierarchy::MAX_WALK {
        node["repeated"] = json!(true);
        return node;
    }
    let children = children_of(world, entity);
    if depth == 0 {
        if !children.is_empty() {
            node["truncatedChildren"] = json!(children.len());
        }
        return node;
    }
    node["children"] = Value::Array(
        children
            .into_iter()
            .map(|child| tree(world, child, depth - 1, seen))
            .collect::<Vec<_>>(),
    );
    node
}

fn list_component_types(
    world: &World,
    params: InspectListComponentTypesParams,
) -> Result<Value, BridgeError> {
    let registry = names::registry(world);
    let registry = registry.read();
    let policy = WritePolicy::of(world);
    let filter = params.filter.as_ref().map(|filter| filter.to_lowercase());
    // Counted over the entities listings show (held and bridge-owned ones are not).
    let plumbing = PlumbingArchetypes::of(world);
    let rows: Vec<(String, Value)> = registry
        .iter()
        .filter(|registration| {
            registration.data::<ReflectComponent>().is_some()
                && registration.data::<ReflectResource>().is_none()
        })
        .filter(|registration| {
            filter.as_ref().is_none_or(|filter| {
                registration
                    .type_info()
                    .type_path()
                    .to_lowercase()
                    .contains(filter.as_str())
            })
        })
        .map(|registration| {
            let type_path = registration.type_info().type_path().to_owned();
            let id = component_id(world, registration.type_id());
            let count: u64 = id.map_or(0, |id| {
                world
                    .archetypes()
                    .iter()
                    .filter(|archetype| {
                        archetype.contains(id) && !plumbing.contains(archetype.id())
                    })
                    .map(|archetype| u64::from(archetype.len()))
                    .sum()
            });
            let mut row = json!({
                "typePath": type_path,
                "shortPath": registration.type_info().type_path_table().short_path(),
                "entityCount": count,
            });
            if let Some(mutable) = id
                .and_then(|id| world.components().get_info(id))
                .map(|info| info.mutable())
            {
                row["mutable"] = json!(mutable);
            }
            if let Some(protected) = protection_json(&policy, world, registration) {
                row["protected"] = protected;
            }
            (type_path, row)
        })
        .collect();
    let (page, total) = sorted_page(rows, params.offset, params.limit);
    Ok(json!({"types": page, "total": total}))
}

/// `{reason, useInstead?}` when the generic actions may not change the type.
fn protection_json(
    policy: &WritePolicy,
    world: &World,
    registration: &TypeRegistration,
) -> Option<Value> {
    let protection = policy.protection(world, registration)?;
    let mut row = json!({"reason": protection.reason});
    if let Some(action) = protection.use_instead {
        row["useInstead"] = json!(action.to_string());
    }
    Some(row)
}

/// Sorts `(key, row)` pairs by key and returns one page of rows with the total before paging.
fn sorted_page(mut rows: Vec<(String, Value)>, offset: u64, limit: u64) -> (Vec<Value>, usize) {
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    let total = rows.len();
    let page = rows
        .into_iter()
        .skip(offset as usize)
        .take(limit as usize)
        .map(|(_, row)| row)
        .collect();
    (page, total)
}

fn kind_name(info: &TypeInfo) -> &'static str {
    match info {
        TypeInfo::Struct(_) => "Struct",
        TypeInfo::TupleStruct(_) => "TupleStruct",
        TypeInfo::Tuple(_) => "Tuple",
        TypeInfo::List(_) => "List",
        TypeInfo::Array(_) => "Array",
        TypeInfo::Map(_) => "Map",
        TypeInfo::Set(_) => "Set",
        TypeInfo::Enum(_) => "Enum",
        TypeInfo::Opaque(_) => "Opaque",
    }
}

fn fields_of(info: &TypeInfo) -> Map<String, Value> {
    let mut fields = Map::new();
    match info {
        TypeInfo::Struct(info) => {
            for field in info.iter() {
                fields.insert(field.name().to_owned(), json!(field.type_path()));
            }
        }
        TypeInfo::TupleStruct(info) => {
            for field in info.iter() {
                fields.insert(field.index().to_string(), json!(field.type_path()));
            }
        }
        TypeInfo::Enum(info) => {
            for variant in info.iter() {
                fields.insert(variant.name().to_owned(), json!("variant"));
            }
        }
        _ => {}
    }
    fields
}

fn describe_type(world: &World, params: InspectDescribeTypeParams) -> Result<Value, BridgeError> {
    let registry = names::registry(world);
    let registry = registry.read();
    let registration: &TypeRegistration = resolve_type(&registry, &params.r#type)?;
    let info = registration.type_info();
    let is_resource = registration.data::<ReflectResource>().is_some();
    let is_component = registration.data::<ReflectComponent>().is_some() && !is_resource;
    let mut reply = json!({
        "typePath": info.type_path(),
        "shortPath": info.type_path_table().short_path(),
        "kind": kind_name(info),
        "fields": fields_of(info),
        "isComponent": is_component,
        "isResource": is_resource,
    });
    if let Some(mutable) = component_id(world, registration.type_id())
        .and_then(|id| world.components().get_info(id))
        .map(|info| info.mutable())
    {
        reply["mutable"] = json!(mutable);
    }
    if let Some(default) = registration.data::<ReflectDefault>() {
        let value = default.default();
        if let Ok(example) = values::to_json(value.as_partial_reflect(), &registry) {
            reply["example"] = json!({ info.type_path(): example });
        }
    }
    if let TypeInfo::Enum(info) = info {
        reply["variants"] = json!(info.variant_names());
    }
    let policy = WritePolicy::of(world);
    if let Some(protected) = protection_json(&policy, world, registration) {
        reply["protected"] = protected;
    }
    reply["mutablePaths"] = json!(paths::field_paths(info));
    let mut schema = schema::type_schema(&registry, registration);
    if let Some(bounds) = policy.bounds_of(registration) {
        reply["writable"] = bounds;
        policy.annotate_schema(registration, &mut schema);
    }
    reply["schema"] = schema;
    Ok(reply)
}

fn list_resources(world: &World, params: InspectListResourcesParams) -> Result<Value, BridgeError> {
    let registry = names::registry(world);
    let registry = registry.read();
    let policy = WritePolicy::of(world);
    let filter = params.filter.as_ref().map(|filter| filter.to_lowercase());
    let rows: Vec<(String, Value)> = world
        .resource_entities()
        .iter()
        .filter_map(|(id, _)| world.components().get_info(id))
        .map(|info| {
            let registration = info.type_id().and_then(|type_id| registry.get(type_id));
            let type_path = registration.map_or_else(
                || info.name().to_string(),
                |registration| registration.type_info().type_path().to_owned(),
            );
            let short = registration.map_or_else(
                || info.name().shortname().to_string(),
                |registration| {
                    registration
                        .type_info()
                        .type_path_table()
                        .short_path()
                        .to_owned()
                },
            );
            let reflected = registration
                .is_some_and(|registration| registration.data::<ReflectComponent>().is_some());
            let mut row =
                json!({"typePath": type_path, "shortPath": short, "reflected": reflected});
            if let Some(protected) =
                registration.and_then(|registration| protection_json(&policy, world, registration))
            {
                row["protected"] = protected;
            }
            (type_path.clone(), row)
        })
        .filter(|(type_path, _)| {
            filter
                .as_ref()
                .is_none_or(|filter| type_path.to_lowercase().contains(filter.as_str()))
        })
        .collect();
    let (page, total) = sorted_page(rows, params.offset, params.limit);
    Ok(json!({"resources": page, "total": total}))
}

fn get_resource(world: &World, params: InspectGetResourceParams) -> Result<Value, BridgeError> {
    let registry = names::registry(world);
    let registry = registry.read();
    let registration = resolve_type(&registry, &params.resource)?;
    let value = resource_json(world, registration, &registry)?;
    Ok(object([
        ("typePath", json!(registration.type_info().type_path())),
        ("value", value),
    ]))
}

fn list_schedules(world: &World, params: InspectListSchedulesParams) -> Result<Value, BridgeError> {
    let Some(schedules) = world.get_resource::<Schedules>() else {
        return Ok(json!({"schedules": []}));
    };
    let mut rows: Vec<(String, Value)> = schedules
        .iter()
        .map(|(label, schedule)| {
            let name = format!("{label:?}");
            let mut row = json!({"name": name, "systemCount": schedule.systems_len()});
            if params.with_systems
                && let Ok(systems) = schedule.systems()
            {
                let names: Vec<String> = systems
                    .map(|(_, system)| system.name().to_string())
                    .take(100)
                    .collect();
                row["systems"] = json!(names);
            }
            (name, row)
        })
        .collect();
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(json!({"schedules": rows.into_iter().map(|(_, row)| row).collect::<Vec<_>>()}))
}

/// The `limit` matches with the lowest entity indices, and how many were offered: a page of a
/// scan in index order without sorting every match.
struct LowestIndices {
    limit: usize,
    kept: std::collections::BinaryHeap<(u32, Entity)>,
    offered: usize,
}

impl LowestIndices {
    fn new(limit: usize) -> LowestIndices {
        LowestIndices {
            limit,
            kept: std::collections::BinaryHeap::with_capacity(limit + 1),
            offered: 0,
        }
    }

    fn offer(&mut self, entity: Entity) {
        self.offered += 1;
        self.kept.push((entity.index().index(), entity));
        if self.kept.len() > self.limit {
            // The highest index goes: the heap keeps the lowest `limit`.
            self.kept.pop();
        }
    }

    fn into_sorted(self) -> Vec<Entity> {
        self.kept
            .into_sorted_vec()
            .into_iter()
            .map(|(_, entity)| entity)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use bevy::ecs::reflect::AppTypeRegistry;
    use bevy::prelude::{Name, Transform, World};
    use serde_json::json;

    use super::*;

    /// A bare world, as the handlers see it: a type registry and a few entities, no App.
    fn bare_world() -> World {
        let mut world = World::new();
        let registry = AppTypeRegistry::default();
        registry.write().register::<Name>();
        registry.write().register::<Transform>();
        world.insert_resource(registry);
        world.spawn((Name::new("Player"), Transform::from_xyz(1.0, 2.0, 3.0)));
        world.spawn(Name::new("Goblin"));
        world.spawn(Name::new("Goblin archer"));
        world
    }

    fn params<P: serde::de::DeserializeOwned>(value: serde_json::Value) -> P {
        serde_json::from_value(value).unwrap_or_else(|error| panic!("{error}"))
    }

    #[test]
    fn get_entity_reads_a_bare_world() {
        let world = bare_world();
        let read = get_entity(&world, params(json!({"entity": "Player"})))
            .unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(read["entity"]["name"], json!("Player"));
        assert_eq!(
            read["components"]["bevy_transform::components::transform::Transform"]["translation"],
            json!([1.0, 2.0, 3.0])
        );
        let missing = get_entity(&world, params(json!({"entity": "Orc"})));
        assert!(
            matches!(missing, Err(BridgeError::EntityNotFound { .. })),
            "{missing:?}"
        );
    }

    #[test]
    fn find_entities_and_the_summary_read_a_bare_world() {
        let world = bare_world();
        let found = find_entities(&world, params(json!({"name": "goblin"})))
            .unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(found["total"], json!(2), "{found}");
        let summary =
            world_summary(&world, params(json!({}))).unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(summary["entityCount"], json!(3), "{summary}");
        assert_eq!(summary["namedEntityCount"], json!(3), "{summary}");
        // A world that never saw a Name finds no one, and says so.
        let empty = World::new();
        let none = find_entities(&empty, params(json!({"name": "goblin"})))
            .unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(none["total"], json!(0), "{none}");
    }

    #[test]
    fn names_match_ignoring_case_with_or_without_ascii() {
        assert!(contains_ignoring_case("Crate 50000", "crate 5"));
        assert!(contains_ignoring_case("GOBLIN", "gob"));
        assert!(contains_ignoring_case("Goblin", ""));
        assert!(!contains_ignoring_case("Gob", "goblin"));
        assert!(!contains_ignoring_case("Crate 1", "crate 2"));
        // Outside ASCII the comparison lowercases, as before.
        assert!(contains_ignoring_case("ÄRGER", "ärg"));
        assert!(contains_ignoring_case("Große Kiste", "kiste"));
        assert!(!contains_ignoring_case("Kiste", "ä"));
    }
}
