//! `manage_resource`: insert, mutate, reset and remove resources through reflection (resources are
//! entities with `IsResource` in Bevy 0.19, so their values are reached through
//! `ReflectComponent`).

use bevy::ecs::reflect::{ReflectComponent, ReflectResource};
use std::any::TypeId;

use bevy::prelude::{Resource, World};
use bevy::reflect::std_traits::ReflectDefault;
use bevy::reflect::{Reflect, TypeRegistration, TypeRegistry};
use bevy_mcp_generated::names::manage_resource;
use bevy_mcp_generated::params::*;
use mcp_vocabulary::next_call::ActionName;
use serde_json::{Value, json};

use crate::error::BridgeError;
use crate::reflect::handles::{self, HandleReader};
use crate::reflect::mutation;
use crate::reflect::names;
use crate::reflect::names::resolve_type;
use crate::reflect::policy::WritePolicy;
use crate::reflect::values;
use crate::reflect::world::resource_entity;
use crate::runtime::action::{Action, Footprint};

/// `manage_resource.insert`.
pub(crate) const INSERT: Action<ManageResourceInsertParams> =
    Action::run(insert).touching(|world, params| Footprint::resource(world, &params.resource));
/// `manage_resource.mutate`.
pub(crate) const MUTATE: Action<ManageResourceMutateParams> =
    Action::run(mutate).touching(|world, params| Footprint::resource(world, &params.resource));
/// `manage_resource.remove`.
pub(crate) const REMOVE: Action<ManageResourceRemoveParams> =
    Action::run(remove).touching(|world, params| Footprint::resource(world, &params.resource));
/// `manage_resource.reset_to_default`.
pub(crate) const RESET_TO_DEFAULT: Action<ManageResourceResetToDefaultParams> =
    Action::run(reset_to_default)
        .touching(|world, params| Footprint::resource(world, &params.resource));

/// The registration of a reflected resource type, with its component reflection.
fn resource_type<'r>(
    registry: &'r TypeRegistry,
    given: &str,
) -> Result<(&'r TypeRegistration, &'r ReflectComponent), BridgeError> {
    let registration = resolve_type(registry, given)?;
    let type_path = registration.type_info().type_path().to_owned();
    if registration.data::<ReflectResource>().is_none() {
        return Err(BridgeError::NotAResource {
            type_path,
            hint: Some("components are changed with control_entity".to_owned()),
        });
    }
    let component = registration
        .data::<ReflectComponent>()
        .ok_or(BridgeError::NotAResource {
            type_path,
            hint: None,
        })?;
    Ok((registration, component))
}

fn insert(world: &mut World, params: ManageResourceInsertParams) -> Result<Value, BridgeError> {
    let registry = names::registry(world);
    let registry = registry.read();
    let (registration, component) = resource_type(&registry, &params.resource)?;
    WritePolicy::of(world).require_unprotected(world, registration)?;
    // Checked before anything changes: a value that does not fit leaves the old one in place.
    let mut handles = HandleReader::new(world);
    let value = values::concrete_from_json(registration, &registry, &params.value, &mut handles)?;
    let new_assets = handles.into_new_assets();
    let answer = put(world, &registry, registration, component, value.as_ref())?;
    handles::make_new_assets(world, new_assets);
    Ok(answer)
}

fn reset_to_default(
    world: &mut World,
    params: ManageResourceResetToDefaultParams,
) -> Result<Value, BridgeError> {
    let registry = names::registry(world);
    let registry = registry.read();
    let (registration, component) = resource_type(&registry, &params.resource)?;
    WritePolicy::of(world).require_unprotected(world, registration)?;
    let default = registration
        .data::<ReflectDefault>()
        .ok_or_else(|| BridgeError::InvalidValue {
            type_path: registration.type_info().type_path().to_owned(),
            reason: "it registers no default value (#[reflect(Default)]); set one with manage_resource.insert".to_owned(),
        })?
        .default();
    put(world, &registry, registration, component, default.as_ref())
}

/// Puts `value` in the resource's place (inserting the resource when it is missing), after the
/// write policy checked it, and answers `{typePath, created, before, after}`.
fn put(
    world: &mut World,
    registry: &TypeRegistry,
    registration: &TypeRegistration,
    component: &ReflectComponent,
    value: &dyn Reflect,
) -> Result<Value, BridgeError> {
    let type_path = registration.type_info().type_path().to_owned();
    let existing = resource_entity(world, registration)
        .ok()
        .map(|(entity, _)| entity);
    let current = existing
        .and_then(|entity| world.get_entity(entity).ok())
        .and_then(|entity| component.reflect(entity));
    WritePolicy::of(world).check_write(
        world,
        registry,
        registration,
        value.as_partial_reflect(),
        current.map(|current| current.as_partial_reflect()),
    )?;
    let before = match existing.and_then(|entity| world.get_entity(entity).ok()) {
        Some(entity_ref) => values::component_json(entity_ref, component, registry).transpose()?,
        None => None,
    };
    // The answer is made before anything changes: a value that cannot be shown (a field without
    // serialization) is refused, not written and then reported as an error.
    let after = values::to_json(value.as_partial_reflect(), registry)?;
    let entity = crate::reflect::world::resource_slot(world, registration);
    let mut entity_mut =
        world
            .get_entity_mut(entity)
            .map_err(|_| BridgeError::ResourceNotFound {
                type_path: type_path.clone(),
            })?;
    component.insert(&mut entity_mut, value.as_partial_reflect(), registry);
    Ok(
        json!({"typePath": type_path, "created": existing.is_none(), "before": before, "after": after}),
    )
}

fn mutate(world: &mut World, params: ManageResourceMutateParams) -> Result<Value, BridgeError> {
    let registry = names::registry(world);
    let registry = registry.read();
    let (registration, component) = resource_type(&registry, &params.resource)?;
    let type_path = registration.type_info().type_path().to_owned();
    let policy = WritePolicy::of(world);
    policy.require_unprotected(world, registration)?;
    let (entity, _) = resource_entity(world, registration)?;
    if !names::is_mutable(world, registration.type_id()) {
        return Err(BridgeError::ImmutableComponent {
            type_path,
            use_instead: Some(ActionName::new(
                manage_resource::TOOL,
                manage_resource::INSERT,
            )),
        });
    }
    let not_found = || BridgeError::ResourceNotFound {
        type_path: type_path.clone(),
    };
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
        &not_found,
    )?;
    Ok(json!({"typePath": type_path, "path": params.path, "before": before, "after": after}))
}

/// Removes a resource the app declared removable; any other could stop the app (see
/// [`crate::plugin::RemovableResource`]). The reply carries the value, so nothing is lost.
fn remove(world: &mut World, params: ManageResourceRemoveParams) -> Result<Value, BridgeError> {
    let registry = names::registry(world);
    let registry = registry.read();
    let (registration, component) = resource_type(&registry, &params.resource)?;
    let type_path = registration.type_info().type_path().to_owned();
    WritePolicy::of(world).require_unprotected(world, registration)?;
    let removable = world.get_resource::<RemovableResources>();
    if !removable.is_some_and(|removable| removable.allows(registration.type_id())) {
        return Err(BridgeError::ResourceNotRemovable {
            type_path,
            removable: removable.map_or_else(Vec::new, |removable| removable.type_paths(&registry)),
        });
    }
    let (entity, _) = resource_entity(world, registration)?;
    let removed = world
        .get_entity(entity)
        .ok()
        .and_then(|entity_ref| values::component_json(entity_ref, component, &registry))
        .transpose()?
        .ok_or_else(|| BridgeError::ResourceNotFound {
            type_path: type_path.clone(),
        })?;
    let removed_now = names::component_id(world, registration.type_id())
        .is_some_and(|id| world.remove_resource_by_id(id));
    if !removed_now {
        return Err(BridgeError::ResourceNotFound { type_path });
    }
    Ok(json!({"typePath": type_path, "removed": removed}))
}

/// The resources `manage_resource.remove` may remove (from [`BridgeConfig::with_removable_resource`]).
#[derive(Resource, Debug, Clone, Default)]
pub(crate) struct RemovableResources(pub Vec<RemovableResource>);

impl RemovableResources {
    /// Whether the app declared this type removable.
    pub(crate) fn allows(&self, type_id: TypeId) -> bool {
        self.0.iter().any(|removable| removable.type_id == type_id)
    }

    /// The declared types' paths (their registered type path, else their Rust name), sorted.
    pub(crate) fn type_paths(&self, registry: &TypeRegistry) -> Vec<String> {
        let mut paths: Vec<String> = self
            .0
            .iter()
            .map(|resource| {
                registry
                    .get(resource.type_id)
                    .map_or(resource.type_name, |registration| {
                        registration.type_info().type_path()
                    })
                    .to_owned()
            })
            .collect();
        paths.sort();
        paths
    }
}

/// A resource type the app declared safe to remove: every system that uses it copes with its
/// absence (`Option<Res<T>>`). Bevy stops the app when a system's `Res<T>` is missing, and it does
/// not expose which systems read what, so the app has to say so.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RemovableResource {
    /// The resource's type.
    pub type_id: TypeId,
    /// Its Rust type name, for messages.
    pub type_name: &'static str,
}
