//! `watch`: long-running observation of an entity, a resource, or an event type. Changes stream
//! as progress; the full (capped) list comes back at the end. The one helper a watch creates, the
//! observer entity of `observe_event`, is despawned at the end, on cancel, on deadline and when
//! the session ends (all of which reach `abort`).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bevy::diagnostic::FrameCount;
use bevy::ecs::reflect::{ReflectComponent, ReflectEvent};
use bevy::prelude::{Entity, World};
use bevy_mcp_generated::params::*;
use mcp_native_transport::ProgressSink;
use parking_lot::Mutex;
use serde_json::{Value, json};

use crate::error::BridgeError;
use crate::reflect::names;
use crate::reflect::names::{resolve_component, resolve_entity, resolve_type};
use crate::reflect::values;
use crate::reflect::world::{frame, resource_json};
use crate::runtime::action::Action;
use crate::runtime::job::{LongJob, Outcome};

/// Changes or events kept in a result at most (the count says how many there were).
pub(crate) const MAX_RECORDED: usize = 200;

/// `watch.watch_entity`.
pub(crate) const WATCH_ENTITY: Action<WatchWatchEntityParams> =
    Action::run_long(|world, params| Outcome::started(WatchEntity::start(world, params)));
/// `watch.watch_resource`.
pub(crate) const WATCH_RESOURCE: Action<WatchWatchResourceParams> =
    Action::run_long(|world, params| Outcome::started(WatchResource::start(world, params)));
/// `watch.observe_event`.
pub(crate) const OBSERVE_EVENT: Action<WatchObserveEventParams> =
    Action::run_long(|world, params| Outcome::started(ObserveEvent::start(world, params)));

/// How long a watch lasts: a number of frames, or real time if that comes first.
struct Span {
    frames: u64,
    total: u64,
    until: Option<Instant>,
}

impl Span {
    fn new(total: u64, seconds: Option<f64>) -> Self {
        Span {
            frames: 0,
            total,
            until: seconds.map(|seconds| Instant::now() + Duration::from_secs_f64(seconds)),
        }
    }

    /// Counts a frame; true when the watch is over.
    fn tick(&mut self) -> bool {
        self.frames += 1;
        self.frames >= self.total || self.until.is_some_and(|until| Instant::now() >= until)
    }
}

/// Recorded rows, capped, with the true count.
#[derive(Default)]
struct Recorded {
    rows: Vec<Value>,
    count: u64,
}

impl Recorded {
    fn push(&mut self, row: Value) {
        self.count += 1;
        if self.rows.len() < MAX_RECORDED {
            self.rows.push(row);
        }
    }
}

struct WatchEntity {
    entity: Entity,
    only: Option<Vec<String>>,
    last: BTreeMap<String, Value>,
    span: Span,
    changes: Recorded,
}

/// The watched components' current values, by full type path.
fn entity_state(
    world: &World,
    entity: Entity,
    only: &Option<Vec<String>>,
) -> Option<BTreeMap<String, Value>> {
    let registry = names::registry(world);
    let registry = registry.read();
    let entity_ref = world.get_entity(entity).ok()?;
    let mut state = BTreeMap::new();
    for (type_path, registration) in values::reflected_components(world, entity, &registry) {
        if only.as_ref().is_some_and(|only| !only.contains(&type_path)) {
            continue;
        }
        if let Some(component) = registration.data::<ReflectComponent>()
            && let Some(Ok(value)) = values::component_json(entity_ref, component, &registry)
        {
            state.insert(type_path, value);
        }
    }
    Some(state)
}

impl WatchEntity {
    fn start(
        world: &mut World,
        params: WatchWatchEntityParams,
    ) -> Result<WatchEntity, BridgeError> {
        let entity = resolve_entity(world, &params.entity)?;
        let only = match &params.components {
            Some(names) => {
                let registry = names::registry(world);
                let registry = registry.read();
                Some(
                    names
                        .iter()
                        .map(|name| {
                            resolve_component(&registry, name).map(|(registration, _)| {
                                registration.type_info().type_path().to_owned()
                            })
                        })
                        .collect::<Result<Vec<_>, _>>()?,
                )
            }
            None => None,
        };
        let last = entity_state(world, entity, &only).unwrap_or_default();
        Ok(WatchEntity {
            entity,
            only,
            last,
            span: Span::new(params.frames, params.seconds),
            changes: Recorded::default(),
        })
    }

    fn result(&self, despawned: bool) -> Value {
        json!({"frames": self.span.frames, "changes": self.changes.rows, "changeCount": self.changes.count, "despawned": despawned})
    }
}

impl LongJob for WatchEntity {
    type Output = Value;
    type Error = BridgeError;

    fn poll(
        &mut self,
        world: &mut World,
        progress: &ProgressSink,
    ) -> Option<Result<Value, BridgeError>> {
        let done = self.span.tick();
        let Some(state) = entity_state(world, self.entity, &self.only) else {
            return Some(Ok(self.result(true)));
        };
        let now = frame(world);
        let mut changed = Vec::new();
        for (type_path, value) in &state {
            if self.last.get(type_path) != Some(value) {
                changed.push(type_path.clone());
                self.changes
                    .push(json!({"frame": now, "component": type_path, "value": value}));
            }
        }
        for type_path in self
            .last
            .keys()
            .filter(|type_path| !state.contains_key(*type_path))
        {
            changed.push(type_path.clone());
            self.changes.push(
                json!({"frame": now, "component": type_path, "value": null, "removed": true}),
            );
        }
        let message = (!changed.is_empty())
            .then(|| format!("frame {now}: {} changed", short_names(&changed)));
        progress.report(
            self.span.frames as f64,
            Some(self.span.total as f64),
            message.as_deref(),
        );
        self.last = state;
        done.then(|| Ok(self.result(false)))
    }
}

fn short_names(type_paths: &[String]) -> String {
    type_paths
        .iter()
        .map(|path| path.rsplit("::").next().unwrap_or(path))
        .collect::<Vec<_>>()
        .join(", ")
}

struct WatchResource {
    registration_type: std::any::TypeId,
    type_path: String,
    last: Value,
    span: Span,
    changes: Recorded,
}

fn resource_value(world: &World, type_id: std::any::TypeId) -> Result<Value, BridgeError> {
    let registry = names::registry(world);
    let registry = registry.read();
    let registration = registry
        .get(type_id)
        .ok_or_else(|| BridgeError::TypeNotFound {
            given: format!("{type_id:?}"),
            suggestions: Vec::new(),
        })?;
    resource_json(world, registration, &registry)
}

impl WatchResource {
    fn start(
        world: &mut World,
        params: WatchWatchResourceParams,
    ) -> Result<WatchResource, BridgeError> {
        let registry = names::registry(world);
        let (type_id, type_path) = {
            let registry = registry.read();
            let registration = resolve_type(&registry, &params.resource)?;
            (
                registration.type_id(),
                registration.type_info().type_path().to_owned(),
            )
        };
        let last = resource_value(world, type_id)?;
        Ok(WatchResource {
            registration_type: type_id,
            type_path,
            last,
            span: Span::new(params.frames, params.seconds),
            changes: Recorded::default(),
        })
    }
}

impl LongJob for WatchResource {
    type Output = Value;
    type Error = BridgeError;

    fn poll(
        &mut self,
        world: &mut World,
        progress: &ProgressSink,
    ) -> Option<Result<Value, BridgeError>> {
        let done = self.span.tick();
        let current = match resource_value(world, self.registration_type) {
            Ok(current) => current,
            Err(error) => return Some(Err(error)),
        };
        let now = frame(world);
        let message = if current == self.last {
            None
        } else {
            self.changes.push(json!({"frame": now, "value": current}));
            self.last = current;
            Some(format!(
                "frame {now}: {} changed",
                short_names(std::slice::from_ref(&self.type_path))
            ))
        };
        progress.report(
            self.span.frames as f64,
            Some(self.span.total as f64),
            message.as_deref(),
        );
        done.then(|| Ok(json!({"frames": self.span.frames, "changes": self.changes.rows, "changeCount": self.changes.count})))
    }
}

struct ObserveEvent {
    observer: Option<Entity>,
    seen: Arc<Mutex<Recorded>>,
    reported: u64,
    span: Span,
}

impl ObserveEvent {
    fn start(
        world: &mut World,
        params: WatchObserveEventParams,
    ) -> Result<ObserveEvent, BridgeError> {
        let registry = names::registry(world);
        let observer = {
            let read = registry.read();
            let registration = resolve_type(&read, &params.event)?;
            let reflect_event =
                registration
                    .data::<ReflectEvent>()
                    .ok_or_else(|| BridgeError::NotAnEvent {
                        type_path: registration.type_info().type_path().to_owned(),
                    })?;
            let seen: Arc<Mutex<Recorded>> = Arc::default();
            let sink = Arc::clone(&seen);
            let callback_registry = registry.clone();
            let observer = reflect_event.create_observer(Box::new(move |event, world| {
                let frame = world
                    .get_resource::<FrameCount>()
                    .map_or(0, |count| count.0);
                let value = values::to_json(event.as_partial_reflect(), &callback_registry.read())
                    .unwrap_or(Value::Null);
                sink.lock().push(json!({"frame": frame, "value": value}));
            }));
            (observer, seen)
        };
        let (observer, seen) = observer;
        let entity = world.spawn(observer).id();
        Ok(ObserveEvent {
            observer: Some(entity),
            seen,
            reported: 0,
            span: Span::new(params.frames, params.seconds),
        })
    }
}

impl LongJob for ObserveEvent {
    type Output = Value;
    type Error = BridgeError;

    fn poll(
        &mut self,
        world: &mut World,
        progress: &ProgressSink,
    ) -> Option<Result<Value, BridgeError>> {
        let done = self.span.tick();
        let count = self.seen.lock().count;
        let message = (count > self.reported).then(|| format!("{} event(s) so far", count));
        self.reported = count;
        progress.report(
            self.span.frames as f64,
            Some(self.span.total as f64),
            message.as_deref(),
        );
        if !done {
            return None;
        }
        self.abort(world);
        let seen = self.seen.lock();
        Some(Ok(
            json!({"frames": self.span.frames, "events": seen.rows, "eventCount": seen.count}),
        ))
    }

    fn abort(&mut self, world: &mut World) {
        if let Some(observer) = self.observer.take()
            && let Ok(entity) = world.get_entity_mut(observer)
        {
            entity.despawn();
        }
    }
}
