//! `manage_events`: list, trigger and write reflected gameplay events and messages. Values are
//! built (and checked) before Bevy sees them, so a bad value can never reach its panicking
//! fallback construction.

use bevy::ecs::reflect::{ReflectEvent, ReflectMessage};
use bevy::prelude::World;
use bevy::reflect::TypeRegistration;
use bevy::reflect::std_traits::ReflectDefault;
use bevy_mcp_generated::params::*;
use serde_json::{Value, json};

use crate::error::BridgeError;
use crate::reflect::handles::{self, HandleReader};
use crate::reflect::names;
use crate::reflect::names::resolve_type;
use crate::reflect::policy::WritePolicy;
use crate::reflect::values;
use crate::runtime::action::{Action, Footprint};

/// Why no event or message is undoable.
const EVENTS: &str = "an event or message cannot be taken back once the game has seen it";

/// `manage_events.list_event_types`.
pub(crate) const LIST_EVENT_TYPES: Action<ManageEventsListEventTypesParams> =
    Action::read(|world, params| Ok(list_event_types(world, params)));
/// `manage_events.trigger_event`.
pub(crate) const TRIGGER_EVENT: Action<ManageEventsTriggerEventParams> =
    Action::run(trigger_event).touching(|_, _| Footprint::not_undoable(EVENTS));
/// `manage_events.write_message`.
pub(crate) const WRITE_MESSAGE: Action<ManageEventsWriteMessageParams> =
    Action::run(write_message).touching(|_, _| Footprint::not_undoable(EVENTS));

fn list_event_types(world: &World, params: ManageEventsListEventTypesParams) -> Value {
    let registry = names::registry(world);
    let registry = registry.read();
    let filter = params.filter.as_ref().map(|filter| filter.to_lowercase());
    let mut rows: Vec<(String, Value)> = registry
        .iter()
        .filter_map(|registration| {
            let kind = if registration.data::<ReflectEvent>().is_some() {
                "event"
            } else if registration.data::<ReflectMessage>().is_some() {
                "message"
            } else {
                return None;
            };
            let info = registration.type_info();
            let type_path = info.type_path().to_owned();
            if filter.as_ref().is_some_and(|filter| !type_path.to_lowercase().contains(filter.as_str())) {
                return None;
            }
            let mut row = json!({"typePath": type_path, "shortPath": info.type_path_table().short_path(), "kind": kind});
            if let Some(default) = registration.data::<ReflectDefault>()
                && let Ok(example) = values::to_json(default.default().as_partial_reflect(), &registry)
            {
                row["example"] = example;
            }
            Some((type_path, row))
        })
        .collect();
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    json!({"types": rows.into_iter().map(|(_, row)| row).collect::<Vec<_>>()})
}

/// A registered type with the given type data, or a typed refusal.
fn with_data<T: bevy::reflect::TypeData>(
    registration: &TypeRegistration,
    refuse: impl FnOnce(String) -> BridgeError,
) -> Result<&T, BridgeError> {
    registration
        .data::<T>()
        .ok_or_else(|| refuse(registration.type_info().type_path().to_owned()))
}

fn trigger_event(
    world: &mut World,
    params: ManageEventsTriggerEventParams,
) -> Result<Value, BridgeError> {
    let registry = names::registry(world);
    let registry = registry.read();
    let registration = resolve_type(&registry, &params.event)?;
    let event = with_data::<ReflectEvent>(registration, |type_path| BridgeError::NotAnEvent {
        type_path,
    })?;
    let policy = WritePolicy::of(world);
    policy.require_unprotected(world, registration)?;
    let mut handles = HandleReader::new(world);
    let value = values::concrete_from_json(registration, &registry, &params.value, &mut handles)?;
    let new_assets = handles.into_new_assets();
    policy.check_write(
        world,
        &registry,
        registration,
        value.as_partial_reflect(),
        None,
    )?;
    handles::make_new_assets(world, new_assets);
    event.trigger(world, value.as_partial_reflect(), &registry);
    Ok(json!({"triggered": registration.type_info().type_path()}))
}

fn write_message(
    world: &mut World,
    params: ManageEventsWriteMessageParams,
) -> Result<Value, BridgeError> {
    let registry = names::registry(world);
    let registry = registry.read();
    let registration = resolve_type(&registry, &params.message)?;
    let message =
        with_data::<ReflectMessage>(registration, |type_path| BridgeError::NotAMessage {
            type_path,
            reason: "it has no #[reflect(Message)]".to_owned(),
        })?;
    let type_path = registration.type_info().type_path().to_owned();
    let policy = WritePolicy::of(world);
    policy.require_unprotected(world, registration)?;
    let mut handles = HandleReader::new(world);
    let value = values::concrete_from_json(registration, &registry, &params.value, &mut handles)?;
    let new_assets = handles.into_new_assets();
    policy.check_write(
        world,
        &registry,
        registration,
        value.as_partial_reflect(),
        None,
    )?;
    handles::make_new_assets(world, new_assets);
    message.write_message(world, value.as_partial_reflect(), &registry);
    // Bevy cannot tell through reflection whether the app added this message type; say what
    // happens when it did not, rather than claim more than is known.
    Ok(json!({
        "written": type_path,
        "note": "systems read it during the next frames; if the app never called add_message for this type, Bevy logs an error and nothing reads it (see system_control.get_logs)",
    }))
}
