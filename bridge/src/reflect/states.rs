//! The app's `bevy_state` state types as the type registry reaches them: each `S` with its
//! `State<S>`, `NextState<S>` and `PreviousState<S>` wrappers, its current and pending values,
//! and whether it can be set. The `state` actions and `search` read them.

use std::any::TypeId;
use std::collections::BTreeMap;

use bevy::prelude::World;
use bevy::reflect::{GenericInfo, TypeInfo, TypeRegistration, TypeRegistry};
use bevy::state::reflect::{ReflectFreelyMutableState, ReflectState};
use serde_json::{Value, json};

use crate::reflect::values;
use crate::reflect::world::{resource_entity, resource_holder, resource_json};

pub(crate) const STATE_PREFIX: &str = "bevy_state::state::resources::State<";
pub(crate) const NEXT_STATE_PREFIX: &str = "bevy_state::state::resources::NextState<";
pub(crate) const PREVIOUS_STATE_PREFIX: &str = "bevy_state::state::resources::PreviousState<";

/// The type paths of the app's states that have a `State<S>` in the world but that reflection
/// does not reach (game code that derives `States` without `Reflect`): they can be named, not
/// read or set. `reflected` holds the type paths [`state_types`] found.
pub(crate) fn unreflected_states(
    world: &World,
    reflected: &BTreeMap<&str, StateType<'_>>,
) -> Vec<String> {
    // States are resources: only the resources present are looked at.
    let mut found: Vec<String> = world
        .resource_entities()
        .iter()
        .filter(|(id, _)| resource_holder(world, *id).is_some())
        .filter_map(|(id, _)| {
            let name = world.components().get_info(id)?.name().to_string();
            let inner = name.strip_prefix(STATE_PREFIX)?.strip_suffix('>')?;
            (!reflected.contains_key(inner)).then(|| inner.to_owned())
        })
        .collect();
    found.sort();
    found.dedup();
    found
}

/// A state type `S` and the registrations that reach it.
pub(crate) struct StateType<'r> {
    /// `S` itself.
    pub(crate) registration: &'r TypeRegistration,
    /// `State<S>`, when registered.
    pub(crate) state: Option<&'r TypeRegistration>,
    /// `NextState<S>`, when registered.
    pub(crate) next: Option<&'r TypeRegistration>,
    /// `PreviousState<S>`, when registered.
    pub(crate) previous: Option<&'r TypeRegistration>,
}

impl<'r> StateType<'r> {
    pub(crate) fn type_path(&self) -> &'static str {
        self.registration.type_info().type_path()
    }

    pub(crate) fn short_path(&self) -> &'static str {
        self.registration.type_info().type_path_table().short_path()
    }

    /// The current value, or `None` while the state does not exist (an inactive sub-state).
    pub(crate) fn current(&self, world: &World, registry: &TypeRegistry) -> Option<Value> {
        if let Some(reflect_state) = self.registration.data::<ReflectState>() {
            let value = reflect_state.reflect(world)?;
            return values::to_json(value.as_partial_reflect(), registry).ok();
        }
        self.state
            .and_then(|state| resource_json(world, state, registry).ok())
    }

    /// The transition waiting in `NextState<S>`, when one is.
    pub(crate) fn pending(&self, world: &World, registry: &TypeRegistry) -> Option<Value> {
        let value = resource_json(world, self.next?, registry).ok()?;
        (value != json!("Unchanged")).then_some(value)
    }

    pub(crate) fn previous(&self, world: &World, registry: &TypeRegistry) -> Option<Value> {
        resource_json(world, self.previous?, registry).ok()
    }

    /// Whether values can be requested at all: the state is freely mutable, not computed.
    pub(crate) fn mutable(&self) -> bool {
        self.registration
            .data::<ReflectFreelyMutableState>()
            .is_some()
            || self.next.is_some()
    }

    /// Whether a value can be requested now: it is mutable and its `NextState<S>` exists (when
    /// its registration says where to look).
    pub(crate) fn settable(&self, world: &World) -> bool {
        self.mutable()
            && self
                .next
                .is_none_or(|next| resource_entity(world, next).is_ok())
    }

    pub(crate) fn variants(&self) -> Vec<&'static str> {
        match self.registration.type_info() {
            TypeInfo::Enum(info) => info.variant_names().to_vec(),
            _ => Vec::new(),
        }
    }
}

/// The registrations of the app's state types (`S`, not its `State<S>` wrapper).
pub(crate) fn state_registrations(registry: &TypeRegistry) -> Vec<&TypeRegistration> {
    state_types(registry)
        .into_values()
        .map(|state| state.registration)
        .collect()
}

/// Every state type the registry can reach, keyed by type path.
pub(crate) fn state_types(registry: &TypeRegistry) -> BTreeMap<&'static str, StateType<'_>> {
    let mut wrappers: BTreeMap<(&str, TypeId), &TypeRegistration> = BTreeMap::new();
    let mut found: BTreeMap<TypeId, &TypeRegistration> = BTreeMap::new();
    for registration in registry.iter() {
        let type_path = registration.type_info().type_path();
        if registration.data::<ReflectState>().is_some() {
            found.insert(registration.type_id(), registration);
        }
        for prefix in [STATE_PREFIX, NEXT_STATE_PREFIX, PREVIOUS_STATE_PREFIX] {
            if !type_path.starts_with(prefix) {
                continue;
            }
            let Some(inner) = first_type_parameter(registration.type_info()) else {
                continue;
            };
            wrappers.insert((prefix, inner), registration);
            if prefix == STATE_PREFIX
                && let Some(inner) = registry.get(inner)
            {
                found.insert(inner.type_id(), inner);
            }
        }
    }
    found
        .into_values()
        .map(|registration| {
            let id = registration.type_id();
            let wrapper = |prefix| wrappers.get(&(prefix, id)).copied();
            let state = StateType {
                registration,
                state: wrapper(STATE_PREFIX),
                next: wrapper(NEXT_STATE_PREFIX),
                previous: wrapper(PREVIOUS_STATE_PREFIX),
            };
            (state.type_path(), state)
        })
        .collect()
}

pub(crate) fn first_type_parameter(info: &TypeInfo) -> Option<TypeId> {
    info.generics().iter().find_map(|generic| match generic {
        GenericInfo::Type(param) => Some(param.type_id()),
        GenericInfo::Const(_) => None,
    })
}
