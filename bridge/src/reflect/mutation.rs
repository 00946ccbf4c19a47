//! Changing one field of a reflected value in the world in place, after the write policy has
//! checked the new value (and, for an engine type, the whole value as it would be).

use bevy::ecs::reflect::ReflectComponent;
use bevy::prelude::{Entity, World};
use bevy::reflect::{TypeRegistration, TypeRegistry};
use serde_json::Value;

use crate::error::BridgeError;
use crate::reflect::handles::{self, HandleReader};
use crate::reflect::policy::WritePolicy;
use crate::reflect::values::{apply_at_path, value_at_path};
use crate::reflect::writable;

/// A reflected value in the world: a component of an entity, or a resource (its entity).
#[derive(Clone, Copy)]
pub(crate) struct Reflected<'r> {
    /// The entity that holds it.
    pub entity: Entity,
    /// Its registration.
    pub registration: &'r TypeRegistration,
    /// Its component reflection.
    pub component: &'r ReflectComponent,
}

impl std::fmt::Debug for Reflected<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reflected")
            .field("entity", &self.entity)
            .field("type", &self.registration.type_info().type_path())
            .finish()
    }
}

/// Sets the field at `path` of a reflected value to `value` (reflect JSON) and returns the field
/// before and after. The new value is read and checked by the write policy before anything is
/// borrowed mutably, so a refused value changes nothing, not even the change tick; `missing` is
/// the error when the value is not there.
pub(crate) fn mutate_at_path(
    world: &mut World,
    target: Reflected<'_>,
    registry: &TypeRegistry,
    path: &str,
    value: &Value,
    missing: &dyn Fn() -> BridgeError,
) -> Result<(Value, Value), BridgeError> {
    let owner = target.registration.type_info().type_path();
    let policy = WritePolicy::of(world);
    policy.check_path(target.registration, path)?;
    let (new_value, new_assets) = {
        let entity_ref = world.get_entity(target.entity).map_err(|_| missing())?;
        let current = target.component.reflect(entity_ref).ok_or_else(missing)?;
        let mut handles = HandleReader::new(world);
        let new_value = value_at_path(
            current.as_partial_reflect(),
            path,
            value,
            registry,
            owner,
            &mut handles,
        )?;
        let new_assets = handles.into_new_assets();
        policy.check_value(world, target.registration, new_value.as_ref())?;
        if writable::writable(owner).is_some() {
            // An engine type's bounds are on the whole value: check it as it would be.
            let mut whole = match current.reflect_clone() {
                Ok(whole) => whole.into_partial_reflect(),
                Err(_) => {
                    bevy::compat::to_dynamic(current.as_partial_reflect()).map_err(|error| {
                        BridgeError::NotSerializable {
                            type_path: owner.to_owned(),
                            reason: format!(
                                "its value cannot be copied to check the write ({error})"
                            ),
                        }
                    })?
                }
            };
            apply_at_path(whole.as_mut(), path, new_value.as_ref(), registry, owner)?;
            policy.check_write(
                world,
                registry,
                target.registration,
                whole.as_ref(),
                Some(current.as_partial_reflect()),
            )?;
        }
        (new_value, new_assets)
    };
    let mut entity_mut = world.get_entity_mut(target.entity).map_err(|_| missing())?;
    let mut reflected = target
        .component
        .reflect_mut(&mut entity_mut)
        .ok_or_else(missing)?;
    let changed = apply_at_path(
        reflected.as_partial_reflect_mut(),
        path,
        new_value.as_ref(),
        registry,
        owner,
    )?;
    handles::make_new_assets(world, new_assets);
    Ok(changed)
}
