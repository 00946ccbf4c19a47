//! `control_app`: the clock (pause, resume, speed), stepping frames, waiting for a condition, and
//! exiting.

use std::time::{Duration, Instant};

use bevy::prelude::{Entity, Real, Resource, Time, Virtual, World};
use bevy_mcp_generated::params::*;
use mcp_native_transport::ProgressSink;
use serde_json::{Value, json};

use crate::error::BridgeError;
use crate::reflect::names;
use crate::reflect::names::{resolve_component, resolve_entity};
use crate::reflect::paths;
use crate::reflect::values;
use crate::reflect::world::frame;
use crate::runtime::action::{Action, Footprint};
use crate::runtime::job::{LongJob, Outcome};

/// `control_app.get_state`.
pub(crate) const GET_STATE: Action<ControlAppGetStateParams> =
    Action::read(|world, _| Ok(state(world)));
/// `control_app.pause`.
pub(crate) const PAUSE: Action<ControlAppPauseParams> =
    Action::run(|world, _| set_paused(world, true)).touching(|_, _| Footprint::time());
/// `control_app.resume`.
pub(crate) const RESUME: Action<ControlAppResumeParams> =
    Action::run(|world, _| set_paused(world, false)).touching(|_, _| Footprint::time());
/// `control_app.set_speed`.
pub(crate) const SET_SPEED: Action<ControlAppSetSpeedParams> =
    Action::run(set_speed).touching(|_, _| Footprint::time());
/// `control_app.step_frames`.
pub(crate) const STEP_FRAMES: Action<ControlAppStepFramesParams> = Action::run_long(step_frames)
    .touching(|_, _| Footprint::not_undoable("it lets game time pass; the game's own systems ran"));
/// `control_app.wait_until`.
pub(crate) const WAIT_UNTIL: Action<ControlAppWaitUntilParams> =
    Action::run_long(|world, params| Outcome::started(WaitUntil::start(world, params)));
/// `control_app.set_window_title`.
pub(crate) const SET_WINDOW_TITLE: Action<ControlAppSetWindowTitleParams> =
    Action::run(set_window_title).touching(|_, _| {
        Footprint::not_undoable("a window's title is not part of the world's history")
    });
/// `control_app.exit`.
pub(crate) const EXIT: Action<ControlAppExitParams> =
    Action::run(exit).touching(|_, _| Footprint::not_undoable("the app exits"));

fn virtual_time(world: &World) -> Option<&Time<Virtual>> {
    world.get_resource::<Time<Virtual>>()
}

fn state(world: &World) -> Value {
    let real = world
        .get_resource::<Time<Real>>()
        .map_or(0.0, |time| time.elapsed_secs_f64());
    let (paused, speed, elapsed, delta) =
        virtual_time(world).map_or((false, 1.0, 0.0, 0.0), |time| {
            (
                time.is_paused(),
                time.relative_speed_f64(),
                time.elapsed_secs_f64(),
                time.delta_secs_f64(),
            )
        });
    json!({
        "frame": frame(world),
        "paused": paused,
        "speed": speed,
        "elapsedSeconds": elapsed,
        "realElapsedSeconds": real,
        "deltaSeconds": delta,
    })
}

fn with_virtual_time<T>(
    world: &mut World,
    change: impl FnOnce(&mut Time<Virtual>) -> T,
) -> Result<T, BridgeError> {
    let mut time = world.get_resource_mut::<Time<Virtual>>().ok_or_else(|| {
        BridgeError::InvalidParams("this app has no Time<Virtual> (add TimePlugin)".to_owned())
    })?;
    Ok(change(&mut time))
}

fn set_paused(world: &mut World, paused: bool) -> Result<Value, BridgeError> {
    let was_paused = with_virtual_time(world, |time| {
        let was = time.is_paused();
        if paused {
            time.pause();
        } else {
            time.unpause();
        }
        was
    })?;
    Ok(json!({"paused": paused, "wasPaused": was_paused, "frame": frame(world)}))
}

fn set_speed(world: &mut World, params: ControlAppSetSpeedParams) -> Result<Value, BridgeError> {
    if !(params.speed.is_finite() && params.speed > 0.0 && params.speed <= 100.0) {
        return Err(BridgeError::InvalidParams(
            "speed must be above 0 and at most 100".to_owned(),
        ));
    }
    let before = with_virtual_time(world, |time| {
        let before = time.relative_speed_f64();
        time.set_relative_speed_f64(params.speed);
        before
    })?;
    Ok(json!({"before": before, "after": params.speed}))
}

/// Advances exactly `total` frames; game time runs during them even when paused.
struct StepFrames {
    total: u64,
    done: u64,
    start_frame: u64,
    repause: bool,
}

fn step_frames(world: &mut World, params: ControlAppStepFramesParams) -> Outcome {
    let was_paused = match with_virtual_time(world, |time| {
        let was = time.is_paused();
        time.unpause();
        was
    }) {
        Ok(was) => was,
        Err(error) => return Outcome::Done(Err(error)),
    };
    Outcome::Running(Box::new(StepFrames {
        total: params.frames,
        done: 0,
        start_frame: frame(world),
        repause: was_paused,
    }))
}

impl LongJob for StepFrames {
    type Output = Value;
    type Error = BridgeError;

    fn poll(
        &mut self,
        world: &mut World,
        progress: &ProgressSink,
    ) -> Option<Result<Value, BridgeError>> {
        self.done += 1;
        progress.report(self.done as f64, Some(self.total as f64), None);
        if self.done < self.total {
            return None;
        }
        self.abort(world);
        let paused = virtual_time(world).is_some_and(Time::is_paused);
        Some(Ok(
            json!({"stepped": self.done, "startFrame": self.start_frame, "frame": frame(world), "paused": paused}),
        ))
    }

    fn abort(&mut self, world: &mut World) {
        if self.repause {
            let _ = with_virtual_time(world, Time::pause);
            self.repause = false;
        }
    }
}

/// Compares a component field each frame until a condition holds.
struct WaitUntil {
    entity: Entity,
    component: String,
    path: String,
    op: ControlAppWaitUntilParamsOp,
    value: Option<Value>,
    initial: Value,
    last: Value,
    frames: u64,
    max_frames: u64,
    until: Option<Instant>,
}

impl WaitUntil {
    fn start(
        world: &mut World,
        params: ControlAppWaitUntilParams,
    ) -> Result<WaitUntil, BridgeError> {
        use ControlAppWaitUntilParamsOp as Op;
        let numeric = matches!(params.op, Op::Lt | Op::Le | Op::Gt | Op::Ge);
        match (&params.value, params.op) {
            (None, op) if op != Op::Changed => {
                return Err(BridgeError::InvalidParams(
                    "every op but changed needs a value to compare with".to_owned(),
                ));
            }
            (Some(value), _) if numeric && !value.is_number() => {
                return Err(BridgeError::InvalidParams(
                    "lt, le, gt and ge compare numbers: value must be a number".to_owned(),
                ));
            }
            _ => {}
        }
        let entity = resolve_entity(world, &params.entity)?;
        let registry = names::registry(world);
        let component = {
            let registry = registry.read();
            let (registration, _) = resolve_component(&registry, &params.component)?;
            registration.type_info().type_path().to_owned()
        };
        let initial = read_field(world, entity, &component, &params.path)?;
        if numeric && !initial.is_number() {
            return Err(BridgeError::InvalidParams(format!(
                "the field at {:?} is not a number ({initial}); use eq, ne or changed",
                params.path
            )));
        }
        Ok(WaitUntil {
            entity,
            component,
            path: params.path,
            op: params.op,
            value: params.value,
            last: initial.clone(),
            initial,
            frames: 0,
            max_frames: params.max_frames,
            until: params
                .max_seconds
                .map(|seconds| Instant::now() + Duration::from_secs_f64(seconds)),
        })
    }

    fn holds(&self, current: &Value) -> bool {
        use ControlAppWaitUntilParamsOp as Op;
        let target = self.value.as_ref().unwrap_or(&Value::Null);
        let number = |value: &Value| value.as_f64();
        match self.op {
            Op::Eq => json_eq(current, target),
            Op::Ne => !json_eq(current, target),
            Op::Changed => !json_eq(current, &self.initial),
            Op::Lt => matches!((number(current), number(target)), (Some(a), Some(b)) if a < b),
            Op::Le => matches!((number(current), number(target)), (Some(a), Some(b)) if a <= b),
            Op::Gt => matches!((number(current), number(target)), (Some(a), Some(b)) if a > b),
            Op::Ge => matches!((number(current), number(target)), (Some(a), Some(b)) if a >= b),
        }
    }
}

impl LongJob for WaitUntil {
    type Output = Value;
    type Error = BridgeError;

    fn poll(
        &mut self,
        world: &mut World,
        progress: &ProgressSink,
    ) -> Option<Result<Value, BridgeError>> {
        let current = match read_field(world, self.entity, &self.component, &self.path) {
            Ok(current) => current,
            Err(error) => return Some(Err(error)),
        };
        // Frame 0 is the frame the wait started in: an already true condition answers at once.
        if self.holds(&current) {
            return Some(Ok(
                json!({"satisfied": true, "frames": self.frames, "value": current}),
            ));
        }
        self.last = current;
        self.frames += 1;
        progress.report(self.frames as f64, Some(self.max_frames as f64), None);
        let out_of_time = self.until.is_some_and(|until| Instant::now() >= until);
        if self.frames >= self.max_frames || out_of_time {
            return Some(Err(BridgeError::WaitLimitReached {
                frames: self.frames,
                last_value: self.last.clone(),
            }));
        }
        None
    }
}

/// Numbers compare by value (5 equals 5.0); everything else structurally.
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| json_eq(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(key, value)| y.get(key).is_some_and(|other| json_eq(value, other)))
        }
        _ => a == b,
    }
}

/// Reads `path` of a component of an entity as JSON.
fn read_field(
    world: &World,
    entity: Entity,
    component: &str,
    path: &str,
) -> Result<Value, BridgeError> {
    let registry = names::registry(world);
    let registry = registry.read();
    let (_, reflect_component) = resolve_component(&registry, component)?;
    let entity_ref = world
        .get_entity(entity)
        .map_err(|_| BridgeError::EntityNotFound {
            given: entity.to_string(),
            suggestions: Vec::new(),
        })?;
    let value =
        reflect_component
            .reflect(entity_ref)
            .ok_or_else(|| BridgeError::ComponentNotPresent {
                entity: entity.to_string(),
                type_path: component.to_owned(),
            })?;
    let field = paths::field_at(value.as_partial_reflect(), path, component)?;
    values::to_json(field, &registry)
}

/// An exit requested by `control_app.exit`, carried out a few frames later so the reply is sent
/// first.
#[derive(Resource, Debug)]
pub struct PendingExit {
    /// Frames left before `AppExit` is written.
    pub frames_left: u32,
    /// The process exit code.
    pub code: u8,
}

fn exit(world: &mut World, params: ControlAppExitParams) -> Result<Value, BridgeError> {
    let code = u8::try_from(params.code)
        .map_err(|_| BridgeError::InvalidParams("code must be 0..255".to_owned()))?;
    world.insert_resource(PendingExit {
        frames_left: 3,
        code,
    });
    Ok(json!({"exiting": true, "code": code}))
}

/// Writes `AppExit` once a requested exit's countdown ends, so the exit reply goes out first.
pub(crate) fn process_exit_request(world: &mut World) {
    let Some(mut pending) = world.get_resource_mut::<PendingExit>() else {
        return;
    };
    if pending.frames_left > 0 {
        pending.frames_left -= 1;
        return;
    }
    let code = pending.code;
    world.remove_resource::<PendingExit>();
    world.write_message(bevy::app::AppExit::from_code(code));
}

#[cfg(feature = "render")]
fn set_window_title(
    world: &mut World,
    params: ControlAppSetWindowTitleParams,
) -> Result<Value, BridgeError> {
    use bevy::window::{PrimaryWindow, Window};
    let window = match &params.window {
        Some(given) => resolve_entity(world, given)?,
        None => {
            let mut primary = world.query_filtered::<Entity, (
                bevy::prelude::With<Window>,
                bevy::prelude::With<PrimaryWindow>,
            )>();
            primary
                .iter(world)
                .next()
                .ok_or_else(|| BridgeError::NoDisplay {
                    reason: "it has no primary window (it runs headless or draws offscreen); \
                             view.list_windows lists the windows there are"
                        .to_owned(),
                })?
        }
    };
    let Some(mut shown) = world.get_mut::<Window>(window) else {
        return Err(BridgeError::InvalidParams(format!(
            "{window} is not a window; view.list_windows lists the windows"
        )));
    };
    let before = std::mem::replace(&mut shown.title, params.title.clone());
    Ok(
        json!({"window": names::entity_info(world, window), "before": before, "after": params.title}),
    )
}

#[cfg(not(feature = "render"))]
fn set_window_title(
    _world: &mut World,
    _params: ControlAppSetWindowTitleParams,
) -> Result<Value, BridgeError> {
    Err(BridgeError::NoDisplay {
        reason: "the bridge was built without its `render` feature, so the app has no windows"
            .to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_compare_by_value() {
        assert!(json_eq(&json!(5), &json!(5.0)));
        assert!(json_eq(&json!([1, 2.0]), &json!([1.0, 2])));
        assert!(!json_eq(&json!("5"), &json!(5)));
        assert!(json_eq(&json!({"a": 1}), &json!({"a": 1.0})));
    }
}
