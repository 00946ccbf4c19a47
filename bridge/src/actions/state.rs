//! `state`: the app's game states (`bevy_state`), read and moved through real transitions.
//!
//! A state type is found in the type registry: by the `ReflectState` data that
//! `register_type_state`/`register_type_mutable_state` add, or by a registered `State<S>`
//! resource. It is set through `ReflectFreelyMutableState` or a registered `NextState<S>`, so the
//! app's `StateTransition` schedule runs OnExit/OnEnter exactly as when the game sets it.

use std::collections::BTreeMap;

use bevy::ecs::schedule::Schedules;
use bevy::prelude::World;
use bevy::reflect::{Reflect, TypeRegistry};
use bevy::state::reflect::ReflectFreelyMutableState;
use bevy_mcp_generated::params::{StateListParams, StateSetParams};
use mcp_native_transport::ProgressSink;
use mcp_native_transport::gateway::guidance::suggest;
use serde_json::{Value, json};

use crate::error::{BridgeError, HOW_TO_REFLECT_STATE};
use crate::reflect::handles::HandleReader;
use crate::reflect::names;
use crate::reflect::names::resolve_type;
use crate::reflect::states::{StateType, first_type_parameter, state_types, unreflected_states};
use crate::reflect::values;
use crate::reflect::world::{frame, resource_entity};
use crate::runtime::action::{Action, Footprint};
use crate::runtime::job::{LongJob, Outcome};

/// `state.list`.
pub(crate) const LIST: Action<StateListParams> = Action::run(list);
/// `state.set`: a real transition, awaited over frames.
pub(crate) const SET: Action<StateSetParams> = Action::run_long(set).touching(|_, _| {
    Footprint::not_undoable(
        "a state transition runs the game's own OnEnter/OnExit systems, whose effects the bridge cannot take back; set the state back with state.set",
    )
});

/// Labels of the app's schedules that enter, leave or pass through one of `variants`, with their
/// system counts. Schedule labels only print their value, so they are matched by variant name.
fn schedules_of(world: &World, variants: &[&str]) -> Vec<(String, usize)> {
    let Some(schedules) = world.get_resource::<Schedules>() else {
        return Vec::new();
    };
    let mut found: Vec<(String, usize)> = schedules
        .iter()
        .map(|(label, schedule)| (format!("{label:?}"), schedule.systems_len()))
        .filter(|(label, _)| {
            let inner = ["OnEnter(", "OnExit("]
                .iter()
                .find_map(|prefix| label.strip_prefix(prefix));
            match inner {
                Some(inner) => variants.iter().any(|variant| names_variant(inner, variant)),
                None => {
                    label.starts_with("OnTransition")
                        && variants.iter().any(|variant| label.contains(variant))
                }
            }
        })
        .collect();
    found.sort();
    found
}

/// Whether a printed value starts with this variant (`Playing)`, `Level(3))`, `Boss { .. })`).
fn names_variant(printed: &str, variant: &str) -> bool {
    printed
        .strip_prefix(variant)
        .and_then(|rest| rest.chars().next())
        .is_some_and(|next| matches!(next, ')' | '(' | ' '))
}

/// The variant name of a value in reflect JSON form (`"Playing"`, `{"Level": 3}`).
fn variant_of(value: &Value) -> Option<&str> {
    match value {
        Value::String(name) => Some(name),
        Value::Object(map) if map.len() == 1 => map.keys().next().map(String::as_str),
        _ => None,
    }
}

fn list(world: &mut World, params: StateListParams) -> Result<Value, BridgeError> {
    let registry = names::registry(world);
    let registry = registry.read();
    let filter = params.filter.as_ref().map(|filter| filter.to_lowercase());
    let states = state_types(&registry);
    // States the game derives without `Reflect` are named, so an empty list never hides them.
    let unreflected: Vec<Value> = unreflected_states(world, &states)
        .into_iter()
        .filter(|type_path| {
            filter
                .as_ref()
                .is_none_or(|filter| type_path.to_lowercase().contains(filter.as_str()))
        })
        .map(|type_path| json!({"typePath": type_path, "reflected": false}))
        .collect();
    let rows: Vec<Value> = states
        .into_values()
        .filter(|state| {
            filter
                .as_ref()
                .is_none_or(|filter| state.type_path().to_lowercase().contains(filter.as_str()))
        })
        .map(|state| {
            let current = state.current(world, &registry);
            let variants = state.variants();
            let schedules: Vec<Value> = schedules_of(world, &variants)
                .into_iter()
                .map(|(label, systems)| json!({"label": label, "systems": systems}))
                .collect();
            let mut row = json!({
                "typePath": state.type_path(),
                "shortPath": state.short_path(),
                "active": current.is_some(),
                "settable": state.settable(world),
                "variants": variants,
                "schedules": schedules,
            });
            if let Some(current) = current {
                row["current"] = current;
            }
            if let Some(pending) = state.pending(world, &registry) {
                row["pending"] = pending;
            }
            if let Some(previous) = state.previous(world, &registry) {
                row["previous"] = previous;
            }
            row
        })
        .collect();
    let mut listed = json!({"total": rows.len(), "states": rows});
    if !unreflected.is_empty() {
        listed["unreflected"] = json!(unreflected);
        listed["howToReflect"] = json!(HOW_TO_REFLECT_STATE);
    }
    Ok(listed)
}

/// Finds the state type named by `given`: the state itself or its `State<S>`/`NextState<S>`.
fn find_state<'r>(
    registry: &'r TypeRegistry,
    states: &BTreeMap<&'static str, StateType<'r>>,
    given: &str,
) -> Result<&'static str, BridgeError> {
    let not_found = || {
        let names: Vec<&str> = states.values().map(StateType::short_path).collect();
        let mut ranked: Vec<String> = suggest(given, names.iter().copied())
            .into_iter()
            .map(str::to_owned)
            .collect();
        for name in names {
            if !ranked.iter().any(|ranked| ranked == name) {
                ranked.push(name.to_owned());
            }
        }
        BridgeError::StateNotFound {
            given: given.to_owned(),
            states: ranked,
        }
    };
    let registration = match resolve_type(registry, given) {
        Ok(registration) => registration,
        Err(BridgeError::TypeNotFound { .. }) => return Err(not_found()),
        Err(other) => return Err(other),
    };
    let type_path = registration.type_info().type_path();
    if let Some((path, _)) = states.get_key_value(type_path) {
        return Ok(path);
    }
    // `State<GameState>` or `NextState<GameState>` name the state too.
    first_type_parameter(registration.type_info())
        .and_then(|inner| registry.get(inner))
        .and_then(|inner| states.get_key_value(inner.type_info().type_path()))
        .map(|(path, _)| *path)
        .ok_or_else(not_found)
}

/// Reads `value` as a value of the state type; an unknown variant gets the closest ones.
fn state_value(
    world: &World,
    registry: &TypeRegistry,
    state: &StateType<'_>,
    value: &Value,
) -> Result<Box<dyn Reflect>, BridgeError> {
    values::concrete_from_json(
        state.registration,
        registry,
        value,
        &mut HandleReader::naming(world),
    )
    .map_err(|error| {
        let variants = state.variants();
        if variants.is_empty() {
            return error;
        }
        let given = variant_of(value).unwrap_or_default();
        BridgeError::UnknownVariant {
            type_path: state.type_path().to_owned(),
            given: value.to_string(),
            variants: variants.iter().map(|name| (*name).to_owned()).collect(),
            suggestions: suggest(given, variants.iter().copied())
                .into_iter()
                .map(str::to_owned)
                .collect(),
        }
    })
}

fn set(world: &mut World, params: StateSetParams) -> Outcome {
    match request(world, &params) {
        Err(error) => Outcome::Done(Err(error)),
        Ok(request) if !request.requested => Outcome::Done(Ok(json!({
            "typePath": request.type_path,
            "from": request.from,
            "to": request.to,
            "changed": false,
            "frames": 0,
        }))),
        Ok(request) => Outcome::Running(Box::new(AwaitTransition {
            request,
            frames: 0,
            max_frames: params.max_frames,
        })),
    }
}

/// The refusal for a state the game has but reflection does not reach, when `given` names one
/// (its type path or short name, any case).
fn unreflected_named(
    world: &World,
    states: &BTreeMap<&'static str, StateType<'_>>,
    given: &str,
) -> Option<BridgeError> {
    unreflected_states(world, states)
        .into_iter()
        .find(|type_path| {
            type_path.eq_ignore_ascii_case(given)
                || type_path
                    .rsplit("::")
                    .next()
                    .is_some_and(|short| short.eq_ignore_ascii_case(given))
        })
        .map(|type_path| BridgeError::StateNotReflected { type_path })
}

/// A transition requested from `NextState<S>`, waited for by [`AwaitTransition`].
struct Requested {
    type_path: &'static str,
    from: Value,
    to: Value,
    /// False when nothing needed to happen: the state already had the value and `reenter` was
    /// not asked.
    requested: bool,
}

/// Checks the request and writes `NextState<S>`.
fn request(world: &mut World, params: &StateSetParams) -> Result<Requested, BridgeError> {
    let registry = names::registry(world);
    let registry = registry.read();
    let states = state_types(&registry);
    let key = match find_state(&registry, &states, &params.state) {
        Ok(key) => key,
        Err(BridgeError::StateNotFound {
            given,
            states: known,
        }) => {
            return Err(unreflected_named(world, &states, &given).unwrap_or(
                BridgeError::StateNotFound {
                    given,
                    states: known,
                },
            ));
        }
        Err(other) => return Err(other),
    };
    let Some(state) = states.get(key) else {
        return Err(BridgeError::StateNotFound {
            given: params.state.clone(),
            states: Vec::new(),
        });
    };
    let type_path = state.type_path();
    if !state.mutable() {
        return Err(BridgeError::StateNotSettable {
            type_path: type_path.to_owned(),
            reason: "it is a computed state (it follows its source states: set those), or its NextState is not registered for reflection (app.register_type_mutable_state::<S>())".to_owned(),
        });
    }
    let value = state_value(world, &registry, state, &params.value)?;
    let to = values::to_json(value.as_partial_reflect(), &registry)?;
    let Some(from) = state.current(world, &registry) else {
        return Err(BridgeError::StateInactive {
            type_path: type_path.to_owned(),
        });
    };
    if !state.settable(world) {
        return Err(BridgeError::StateNotSettable {
            type_path: type_path.to_owned(),
            reason: "its NextState resource is missing".to_owned(),
        });
    }
    if from == to && !params.reenter {
        return Ok(Requested {
            type_path,
            from,
            to,
            requested: false,
        });
    }
    match state.registration.data::<ReflectFreelyMutableState>() {
        // The value was built with FromReflect above, so Bevy's fallback construction (which
        // can panic) is never reached.
        Some(mutable) => mutable.set_next_state(world, value.as_ref(), &registry),
        None => write_next_state(world, &registry, state, &to)?,
    }
    Ok(Requested {
        type_path,
        from,
        to,
        requested: true,
    })
}

/// Writes `NextState::Pending(value)` through the `NextState<S>` resource's reflection.
fn write_next_state(
    world: &mut World,
    registry: &TypeRegistry,
    state: &StateType<'_>,
    to: &Value,
) -> Result<(), BridgeError> {
    let not_settable = || BridgeError::StateNotSettable {
        type_path: state.type_path().to_owned(),
        reason: "its NextState resource is missing".to_owned(),
    };
    let next = state.next.ok_or_else(not_settable)?;
    let pending = values::concrete_from_json(
        next,
        registry,
        &json!({ "Pending": to }),
        &mut HandleReader::naming(world),
    )?;
    let (entity, component) = resource_entity(world, next)?;
    let mut entity_mut = world.get_entity_mut(entity).map_err(|_| not_settable())?;
    component.insert(&mut entity_mut, pending.as_partial_reflect(), registry);
    Ok(())
}

/// Waits, one poll per frame, until the state has the requested value and nothing is pending.
struct AwaitTransition {
    request: Requested,
    frames: u64,
    max_frames: u64,
}

impl LongJob for AwaitTransition {
    type Output = Value;
    type Error = BridgeError;

    fn poll(
        &mut self,
        world: &mut World,
        progress: &ProgressSink,
    ) -> Option<Result<Value, BridgeError>> {
        self.frames += 1;
        progress.report(self.frames as f64, Some(self.max_frames as f64), None);
        let registry = names::registry(world);
        let registry = registry.read();
        let states = state_types(&registry);
        let Some(state) = states.get(self.request.type_path) else {
            return Some(Err(BridgeError::StateNotFound {
                given: self.request.type_path.to_owned(),
                states: states
                    .values()
                    .map(|state| state.short_path().to_owned())
                    .collect(),
            }));
        };
        let current = state.current(world, &registry);
        let pending = state.pending(world, &registry);
        if pending.is_none() && current.as_ref() == Some(&self.request.to) {
            let variants: Vec<&str> =
                [variant_of(&self.request.from), variant_of(&self.request.to)]
                    .into_iter()
                    .flatten()
                    .collect();
            let ran: Vec<String> = schedules_of(world, &variants)
                .into_iter()
                .map(|(label, _)| label)
                .filter(|label| {
                    let exit = label
                        .strip_prefix("OnExit(")
                        .zip(variant_of(&self.request.from))
                        .is_some_and(|(inner, from)| names_variant(inner, from));
                    let enter = label
                        .strip_prefix("OnEnter(")
                        .zip(variant_of(&self.request.to))
                        .is_some_and(|(inner, to)| names_variant(inner, to));
                    exit || enter
                })
                .collect();
            return Some(Ok(json!({
                "typePath": self.request.type_path,
                "from": self.request.from,
                "to": self.request.to,
                "changed": true,
                "frames": self.frames,
                "frame": frame(world),
                "ranSchedules": ran,
            })));
        }
        if self.frames >= self.max_frames {
            return Some(Err(BridgeError::WaitLimitReached {
                frames: self.frames,
                last_value: current.unwrap_or(Value::Null),
            }));
        }
        None
    }
}
