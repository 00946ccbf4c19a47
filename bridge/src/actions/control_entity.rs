//! `control_entity`: insert, remove and mutate components, move, reparent and rename (spawn,
//! duplicate and despawn are in `lifecycle`). Inputs are checked before the world changes; where
//! a call applies several components, the reply says exactly which were applied and which
//! failed.

mod lifecycle;

use std::any::TypeId;

use bevy::ecs::component::ComponentId;
use bevy::ecs::reflect::ReflectComponent;
use bevy::math::{EulerRot, Quat, Vec3};
use bevy::prelude::{ChildOf, Entity, Name, Transform, World};
use bevy::reflect::{Reflect, TypeRegistration, TypeRegistry};
use bevy_mcp_generated::names::control_entity as names;
use bevy_mcp_generated::params::*;
use mcp_vocabulary::next_call::ActionName;
use serde_json::{Value, json};

use crate::error::BridgeError;
use crate::reflect::handles::{self, HandleReader, NewAsset};
use crate::reflect::hierarchy;
use crate::reflect::hierarchy::parent_of;
use crate::reflect::models;
use crate::reflect::mutation;
use crate::reflect::names::{
    component_id, entity_info, is_mutable, registry, resolve_component, resolve_entity,
};
use crate::reflect::policy::{self, WritePolicy};
use crate::reflect::values;
use crate::reflect::world::require_plain_entity;
use crate::reflect::writable;
use crate::runtime::action::{Action, Focus, Footprint};

pub(crate) use lifecycle::{DESPAWN, DESPAWN_DESCENDANTS, DUPLICATE, SPAWN};

/// `control_entity.insert_components`.
pub(crate) const INSERT_COMPONENTS: Action<ControlEntityInsertComponentsParams> =
    Action::run(insert_components).touching(|world, params| {
        let named = params.components.keys().map(String::as_str);
        Footprint::entity(world, &params.entity, Focus::named(world, named))
    });
/// `control_entity.remove_components`.
pub(crate) const REMOVE_COMPONENTS: Action<ControlEntityRemoveComponentsParams> =
    Action::run(remove_components).touching(|world, params| {
        let named = params.components.iter().map(String::as_str);
        Footprint::entity(world, &params.entity, Focus::named(world, named))
    });
/// `control_entity.mutate_component`.
pub(crate) const MUTATE_COMPONENT: Action<ControlEntityMutateComponentParams> =
    Action::run(mutate_component).touching(|world, params| {
        let named = Focus::named(world, [params.component.as_str()]);
        Footprint::entity(world, &params.entity, named)
    });
/// `control_entity.set_transform`.
pub(crate) const SET_TRANSFORM: Action<ControlEntitySetTransformParams> =
    Action::run(set_transform).touching(|world, params| {
        Footprint::entity(world, &params.entity, Focus::component::<Transform>())
    });
/// `control_entity.set_parent`.
pub(crate) const SET_PARENT: Action<ControlEntitySetParentParams> = Action::run(set_parent)
    .touching(|world, params| {
        Footprint::entity(world, &params.entity, Focus::component::<ChildOf>())
    });
/// `control_entity.rename`.
pub(crate) const RENAME: Action<ControlEntityRenameParams> = Action::run(rename)
    .touching(|world, params| Footprint::entity(world, &params.entity, Focus::component::<Name>()));

/// A component value checked against its type and the write policy, ready to insert.
pub(super) struct Prepared<'r> {
    type_path: String,
    component: &'r ReflectComponent,
    value: Box<dyn Reflect>,
    /// Where the value points when the component is a relation the app opened (loop check).
    relation_target: Option<Entity>,
    /// The assets its handles ask for, made when it is inserted.
    new_assets: Vec<NewAsset>,
}

/// Components that could not be used, with why.
pub(super) type Failures = Vec<(String, BridgeError)>;

/// `{type, code, reason, schemaViolation?}` rows for a reply.
fn failure_rows(failed: &Failures) -> Vec<Value> {
    failed
        .iter()
        .map(|(given, error)| {
            let mut row = json!({"type": given, "code": error.code(), "reason": error.to_string()});
            if let BridgeError::ValueBreaksSchema { violation, .. } = error {
                row["schemaViolation"] = violation.clone();
            }
            row
        })
        .collect()
}

/// The error for a call where nothing could be used: the one failure itself (its code and
/// nextCall), or `INVALID_PARAMS` listing them all.
pub(super) fn nothing_applied(what: &str, mut failed: Failures) -> BridgeError {
    if failed.len() == 1
        && let Some((_, error)) = failed.pop()
    {
        return error;
    }
    let reasons: Vec<String> = failed.iter().map(|(_, error)| error.to_string()).collect();
    BridgeError::InvalidParams(format!("{what}: {}", reasons.join("; ")))
}

/// Checks every `type path -> value` pair: a registered, unprotected component whose value fits
/// its type, the value rules and, for an engine type, its bounds (against what `entity` holds
/// now, when it is given). Returns the good ones and the failures.
pub(super) fn prepare_components<'r>(
    world: &World,
    registry: &'r TypeRegistry,
    policy: &WritePolicy,
    components: &ComponentValues,
    entity: Option<Entity>,
) -> (Vec<Prepared<'r>>, Failures) {
    let mut ready = Vec::new();
    let mut failed = Vec::new();
    // What the entity holds with this call: for the placement rules of engine components.
    let adding: Vec<String> = components
        .keys()
        .filter_map(|given| resolve_component(registry, given).ok())
        .map(|(registration, _)| registration.type_info().type_path().to_owned())
        .collect();
    let held = |type_path: &str| {
        let Some(entity_ref) = entity.and_then(|entity| world.get_entity(entity).ok()) else {
            return false;
        };
        registry
            .get_with_type_path(type_path)
            .and_then(|registration| world.components().get_id(registration.type_id()))
            .is_some_and(|id| entity_ref.contains_id(id))
    };
    for (given, value) in components {
        let prepared = resolve_component(registry, given).and_then(|(registration, component)| {
            // The type first: a protected type is refused whatever the value.
            policy.require_unprotected(world, registration)?;
            let type_path = registration.type_info().type_path();
            let has = |other: &str| {
                held(other)
                    || (!writable::placed_where_it_is(type_path)
                        && other != type_path
                        && adding.iter().any(|adding| adding == other))
            };
            if policy.bounded(registration)
                && let Some(reason) = writable::placement_refusal(type_path, &has)
            {
                return Err(BridgeError::InvalidValue {
                    type_path: type_path.to_owned(),
                    reason,
                });
            }
            let mut handles = HandleReader::new(world);
            let value = values::concrete_from_json(registration, registry, value, &mut handles)?;
            let new_assets = handles.into_new_assets();
            let before = entity
                .and_then(|entity| world.get_entity(entity).ok())
                .and_then(|entity| component.reflect(entity));
            policy.check_write(
                world,
                registry,
                registration,
                value.as_partial_reflect(),
                before.map(|before| before.as_partial_reflect()),
            )?;
            let relation_target = policy::is_relation(world, registration.type_id())
                .then(|| hierarchy::first_entity(value.as_partial_reflect()))
                .flatten();
            Ok(Prepared {
                type_path: registration.type_info().type_path().to_owned(),
                component,
                value,
                relation_target,
                new_assets,
            })
        });
        match prepared {
            Ok(prepared) => ready.push(prepared),
            Err(error) => failed.push((given.clone(), error)),
        }
    }
    (ready, failed)
}

/// Moves the relations (of types the app opened) that would close a loop from `ready` to
/// `failed`.
fn refuse_loops(
    world: &World,
    entity: Entity,
    ready: &mut Vec<Prepared<'_>>,
    failed: &mut Failures,
) {
    let mut index = 0;
    while index < ready.len() {
        let prepared = &ready[index];
        let loops = prepared.relation_target.is_some_and(|target| {
            hierarchy::relation_would_loop(world, prepared.component, entity, target)
        });
        if loops {
            let prepared = ready.remove(index);
            let parent = prepared
                .relation_target
                .map_or_else(String::new, |target| target.to_string());
            failed.push((
                prepared.type_path,
                BridgeError::HierarchyCycle {
                    entity: entity.to_string(),
                    parent,
                },
            ));
        } else {
            index += 1;
        }
    }
}

pub(super) fn insert_prepared(
    world: &mut World,
    entity: Entity,
    registry: &TypeRegistry,
    mut ready: Vec<Prepared<'_>>,
) -> Result<Vec<String>, BridgeError> {
    if world.get_entity(entity).is_err() {
        return Err(BridgeError::EntityNotFound {
            given: entity.to_string(),
            suggestions: Vec::new(),
        });
    }
    for prepared in &mut ready {
        handles::make_new_assets(world, std::mem::take(&mut prepared.new_assets));
    }
    let mut entity_mut = world
        .get_entity_mut(entity)
        .map_err(|_| BridgeError::EntityNotFound {
            given: entity.to_string(),
            suggestions: Vec::new(),
        })?;
    let mut applied = Vec::new();
    for prepared in ready {
        prepared.component.insert(
            &mut entity_mut,
            prepared.value.as_partial_reflect(),
            registry,
        );
        applied.push(prepared.type_path);
    }
    Ok(applied)
}

fn insert_components(
    world: &mut World,
    params: ControlEntityInsertComponentsParams,
) -> Result<Value, BridgeError> {
    let entity = resolve_entity(world, &params.entity)?;
    require_plain_entity(world, entity)?;
    let registry = registry(world);
    let registry = registry.read();
    let policy = WritePolicy::of(world);
    let (mut ready, mut failed) =
        prepare_components(world, &registry, &policy, &params.components, Some(entity));
    refuse_loops(world, entity, &mut ready, &mut failed);
    if ready.is_empty() {
        return Err(nothing_applied("no component was inserted", failed));
    }
    let applied = insert_prepared(world, entity, &registry, ready)?;
    Ok(
        json!({"entity": entity_info(world, entity), "applied": applied, "failed": failure_rows(&failed)}),
    )
}

/// Moves to `failed` every removal of a component that another component of the entity (one that
/// stays) requires: Bevy adds required components only on insert, and its systems trust them to
/// be there (a camera or a light without its transform panics the renderer).
fn refuse_required(
    world: &World,
    entity: Entity,
    registry: &TypeRegistry,
    targets: &mut Vec<(String, &ReflectComponent)>,
    failed: &mut Failures,
) {
    let Ok(entity_ref) = world.get_entity(entity) else {
        return;
    };
    let components = world.components();
    let id_of = |type_path: &str| {
        registry
            .get_with_type_path(type_path)
            .and_then(|registration| components.get_id(registration.type_id()))
    };
    let leaving: Vec<ComponentId> = targets.iter().filter_map(|(path, _)| id_of(path)).collect();
    targets.retain(|(type_path, _)| {
        let Some(id) = id_of(type_path) else {
            return true;
        };
        let requirer = entity_ref
            .archetype()
            .components()
            .iter()
            .filter(|other| !leaving.contains(other))
            .filter_map(|other| components.get_info(*other))
            .find(|info| info.required_components().iter_ids().any(|required| required == id));
        match requirer {
            None => true,
            Some(info) => {
                let requirer = info
                    .type_id()
                    .and_then(|type_id| registry.get(type_id))
                    .map_or_else(
                        || info.name().to_string(),
                        |registration| registration.type_info().type_path().to_owned(),
                    );
                failed.push((
                    type_path.clone(),
                    BridgeError::InvalidParams(format!(
                        "{type_path} is required by {requirer} on this entity, and Bevy's systems trust it to be there; remove {requirer} in the same call, or keep both"
                    )),
                ));
                false
            }
        }
    });
}

fn remove_components(
    world: &mut World,
    params: ControlEntityRemoveComponentsParams,
) -> Result<Value, BridgeError> {
    let entity = resolve_entity(world, &params.entity)?;
    require_plain_entity(world, entity)?;
    let registry = registry(world);
    let registry = registry.read();
    let policy = WritePolicy::of(world);
    let mut targets: Vec<(String, &ReflectComponent)> = Vec::new();
    let mut failed = Vec::new();
    for given in &params.components {
        let resolved = resolve_component(&registry, given).and_then(|(registration, component)| {
            policy.require_unprotected(world, registration)?;
            Ok((registration.type_info().type_path().to_owned(), component))
        });
        match resolved {
            Ok(target) => targets.push(target),
            Err(error) => failed.push((given.clone(), error)),
        }
    }
    refuse_required(world, entity, &registry, &mut targets, &mut failed);
    if targets.is_empty() {
        return Err(nothing_applied("nothing was removed", failed));
    }
    let (mut removed, mut not_present) = (Vec::new(), Vec::new());
    for (type_path, component) in targets {
        let Some(type_id) = registry
            .get_with_type_path(&type_path)
            .map(TypeRegistration::type_id)
        else {
            continue;
        };
        if models::remove_component(world, entity, type_id, component) {
            removed.push(type_path);
        } else {
            not_present.push(type_path);
        }
    }
    Ok(
        json!({"entity": entity_info(world, entity), "removed": removed, "notPresent": not_present, "failed": failure_rows(&failed)}),
    )
}

/// The action to use for components that cannot be changed in place.
fn instead_of(
    policy: &WritePolicy,
    world: &World,
    registration: &TypeRegistration,
) -> Option<ActionName> {
    if let Some(action) = policy
        .protection(world, registration)
        .and_then(|protection| protection.use_instead)
    {
        Some(action)
    } else if registration.type_id() == TypeId::of::<Name>() {
        Some(ActionName::new(names::TOOL, names::RENAME))
    } else {
        Some(ActionName::new(names::TOOL, names::INSERT_COMPONENTS))
    }
}

fn mutate_component(
    world: &mut World,
    params: ControlEntityMutateComponentParams,
) -> Result<Value, BridgeError> {
    let entity = resolve_entity(world, &params.entity)?;
    require_plain_entity(world, entity)?;
    let registry = registry(world);
    let registry = registry.read();
    let policy = WritePolicy::of(world);
    let (registration, component) = resolve_component(&registry, &params.component)?;
    let type_path = registration.type_info().type_path().to_owned();
    let not_present = || BridgeError::ComponentNotPresent {
        entity: entity.to_string(),
        type_path: type_path.clone(),
    };
    // A type the world never saw as a component is on no entity.
    if component_id(world, registration.type_id()).is_none() {
        return Err(not_present());
    }
    if !is_mutable(world, registration.type_id()) {
        return Err(BridgeError::ImmutableComponent {
            type_path,
            use_instead: instead_of(&policy, world, registration),
        });
    }
    policy.require_unprotected(world, registration)?;
    let target = mutation::Reflected {
        entity,
        registration,
        component,
    };
    let (before, after) = mutation::mutate_at_path(
        world,
        target,
        &registry,
        &params.path,
        &params.value,
        &not_present,
    )?;
    Ok(json!({
        "entity": entity_info(world, entity),
        "component": type_path,
        "path": params.path,
        "before": before,
        "after": after,
    }))
}

fn vec3(value: [f64; 3]) -> Vec3 {
    Vec3::new(value[0] as f32, value[1] as f32, value[2] as f32)
}

fn transform_json(transform: &Transform) -> Value {
    json!({
        "translation": transform.translation.to_array(),
        "rotation": transform.rotation.to_array(),
        "scale": transform.scale.to_array(),
    })
}

fn rotation_param(params: &ControlEntitySetTransformParams) -> Result<Option<Quat>, BridgeError> {
    match (&params.rotation, &params.euler_degrees) {
        (Some(_), Some(_)) => Err(BridgeError::InvalidParams(
            "give rotation or eulerDegrees, not both".to_owned(),
        )),
        (Some(q), None) => {
            let quat = Quat::from_xyzw(q[0] as f32, q[1] as f32, q[2] as f32, q[3] as f32);
            if quat.length_squared() < 1e-12 || !quat.is_finite() {
                return Err(BridgeError::InvalidParams(
                    "rotation must be a non-zero quaternion [x, y, z, w]".to_owned(),
                ));
            }
            Ok(Some(quat.normalize()))
        }
        (None, Some(e)) => Ok(Some(Quat::from_euler(
            EulerRot::YXZ,
            (e[1] as f32).to_radians(),
            (e[0] as f32).to_radians(),
            (e[2] as f32).to_radians(),
        ))),
        (None, None) => Ok(None),
    }
}

fn set_transform(
    world: &mut World,
    params: ControlEntitySetTransformParams,
) -> Result<Value, BridgeError> {
    let entity = resolve_entity(world, &params.entity)?;
    require_plain_entity(world, entity)?;
    let rotation = rotation_param(&params)?;
    let missing =
        |what: &str| BridgeError::InvalidParams(format!("mode {:?} needs {what}", params.mode));
    let not_present = || BridgeError::ComponentNotPresent {
        entity: entity.to_string(),
        type_path: "bevy_transform::components::transform::Transform".to_owned(),
    };
    let Some(current) = world.get::<Transform>(entity).copied() else {
        return Err(not_present());
    };
    let before = transform_json(&current);
    let mut next = current;
    match params.mode {
        ControlEntitySetTransformParamsMode::Set => {
            if params.translation.is_none() && rotation.is_none() && params.scale.is_none() {
                return Err(missing(
                    "at least one of translation, rotation, eulerDegrees or scale",
                ));
            }
            if let Some(translation) = params.translation {
                next.translation = vec3(translation);
            }
            if let Some(rotation) = rotation {
                next.rotation = rotation;
            }
            if let Some(scale) = params.scale {
                next.scale = vec3(scale);
            }
        }
        ControlEntitySetTransformParamsMode::Translate => {
            next.translation += vec3(params.translation.ok_or_else(|| missing("translation"))?);
        }
        ControlEntitySetTransformParamsMode::Rotate => {
            next.rotate(rotation.ok_or_else(|| missing("rotation or eulerDegrees"))?);
        }
        ControlEntitySetTransformParamsMode::Scale => {
            next.scale *= vec3(params.scale.ok_or_else(|| missing("scale"))?);
        }
        ControlEntitySetTransformParamsMode::LookAt => {
            let target = vec3(params.target.ok_or_else(|| missing("target"))?);
            let up = params.up.map_or(Vec3::Y, vec3);
            if up.length_squared() < 1e-12 {
                return Err(BridgeError::InvalidParams(
                    "up must be a non-zero vector".to_owned(),
                ));
            }
            if (target - next.translation).length_squared() < 1e-12 {
                return Err(BridgeError::InvalidParams(
                    "target is where the entity already is; pick another point".to_owned(),
                ));
            }
            next.look_at(target, up);
        }
    }
    if !(next.translation.is_finite() && next.rotation.is_finite() && next.scale.is_finite()) {
        return Err(BridgeError::InvalidParams(
            "the result would not be finite; use smaller values".to_owned(),
        ));
    }
    // The same bounds as a generic write (a zero scale makes NaN directions).
    {
        let registry = registry(world);
        let registry = registry.read();
        if let Some(registration) = registry.get(TypeId::of::<Transform>()) {
            WritePolicy::of(world).check_write(
                world,
                &registry,
                registration,
                &next,
                Some(&current),
            )?;
        }
    }
    let Some(mut transform) = world.get_mut::<Transform>(entity) else {
        return Err(not_present());
    };
    *transform = next;
    let after = transform_json(&next);
    Ok(json!({"entity": entity_info(world, entity), "before": before, "after": after}))
}

fn set_parent(
    world: &mut World,
    params: ControlEntitySetParentParams,
) -> Result<Value, BridgeError> {
    let entity = resolve_entity(world, &params.entity)?;
    require_plain_entity(world, entity)?;
    let previous = parent_of(world, entity);
    let parent = match &params.parent {
        Some(parent) => {
            let parent = resolve_entity(world, parent)?;
            require_plain_entity(world, parent)?;
            if hierarchy::parent_would_loop(world, entity, parent) {
                return Err(BridgeError::HierarchyCycle {
                    entity: entity.to_string(),
                    parent: parent.to_string(),
                });
            }
            hierarchy::check_depth(
                world,
                Some(parent),
                hierarchy::height_of(world, entity),
                WritePolicy::of(world).limits().max_hierarchy_depth,
            )?;
            Some(parent)
        }
        None => None,
    };
    let previous_info = previous.map_or(Value::Null, |previous| entity_info(world, previous));
    if let Ok(mut entity_mut) = world.get_entity_mut(entity) {
        match parent {
            Some(parent) => {
                entity_mut.insert(ChildOf(parent));
            }
            None => {
                entity_mut.remove::<ChildOf>();
            }
        }
    }
    let parent_info = parent.map_or(Value::Null, |parent| entity_info(world, parent));
    Ok(
        json!({"entity": entity_info(world, entity), "previousParent": previous_info, "parent": parent_info}),
    )
}

fn rename(world: &mut World, params: ControlEntityRenameParams) -> Result<Value, BridgeError> {
    let entity = resolve_entity(world, &params.entity)?;
    require_plain_entity(world, entity)?;
    let before = world
        .get::<Name>(entity)
        .map_or(Value::Null, |name| json!(name.as_str()));
    if let Ok(mut entity_mut) = world.get_entity_mut(entity) {
        entity_mut.insert(Name::new(params.name.clone()));
    }
    Ok(json!({"entity": entity_info(world, entity), "before": before, "after": params.name}))
}
