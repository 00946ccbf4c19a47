//! `input`: the keyboard, the mouse's buttons and wheel, and simulated gamepads, played through
//! Bevy's own input messages (`KeyboardInput`, `MouseButtonInput`, `MouseWheel`,
//! `RawGamepadEvent`), so `ButtonInput<KeyCode>`, `ButtonInput<MouseButton>`, `Gamepad` and
//! every reader of the messages see exactly what real devices produce.
//!
//! Messages are written after `Last` and read by Bevy's input systems in the next frame's
//! `PreUpdate`: a control pressed by a call is seen pressed in exactly the frames it is held.
//! Every control the bridge presses is recorded in [`HeldByBridge`] with the call that pressed
//! it, and released when that call ends, however it ends: its frames are over, `release_all`,
//! cancelled, past its deadline, its session gone (the session's calls are cancelled) or its
//! handler panicked (`LongJob::abort`). Nothing stays stuck.

mod pointer;

use std::collections::BTreeMap;

use bevy::ecs::message::Messages;
use bevy::input::gamepad::{
    Gamepad, GamepadAxis, GamepadButton, GamepadConnection, GamepadConnectionEvent,
    RawGamepadAxisChangedEvent, RawGamepadButtonChangedEvent, RawGamepadEvent,
};
use bevy::input::gestures::{DoubleTapGesture, PanGesture, PinchGesture, RotationGesture};
use bevy::input::keyboard::{Key, KeyCode, KeyboardInput};
use bevy::input::mouse::{MouseButton, MouseButtonInput, MouseMotion, MouseScrollUnit, MouseWheel};
use bevy::input::touch::TouchPhase;
use bevy::input::{ButtonInput, ButtonState};
use bevy::math::Vec2;
use bevy::prelude::{Entity, Resource, World};
use bevy::reflect::enums::{DynamicEnum, DynamicVariant, Enum, VariantInfo};
use bevy::reflect::{FromReflect, TypeInfo, Typed};
use bevy_mcp_generated::params::{
    InputClickParams, InputDisconnectGamepadParams, InputDragParams, InputGamepadParams,
    InputGestureParams, InputGestureParamsKind, InputHeldParams, InputMoveMouseParams,
    InputPressKeysParams, InputReleaseAllParams, InputScrollParams, InputScrollParamsUnit,
    InputTypeTextParams, MouseMotion as Motion, ScreenPoint,
};
use mcp_native_transport::ProgressSink;
use mcp_native_transport::gateway::guidance::suggest;
use serde_json::{Map, Value, json};

use crate::error::BridgeError;
use crate::reflect::names::{entity_info, resolve_entity};
use crate::reflect::world::{BridgeOwned, frame};
use crate::runtime::action::{Action, Footprint};
use crate::runtime::job::{LongJob, Outcome};
use pointer::{CursorAt, Placement};

/// Something the bridge can hold down.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Control {
    Key(KeyCode),
    Mouse(MouseButton),
    PadButton(Entity, GamepadButton),
    /// An axis held at a value; released, it returns to 0.
    PadAxis(Entity, GamepadAxis, f32),
}

impl Control {
    /// Whether two controls are the same key, button or axis (whatever value an axis holds).
    fn same(&self, other: &Control) -> bool {
        match (self, other) {
            (Control::PadAxis(pad, axis, _), Control::PadAxis(other_pad, other_axis, _)) => {
                pad == other_pad && axis == other_axis
            }
            _ => self == other,
        }
    }

    fn name(&self) -> String {
        match self {
            Control::Key(key) => key.variant_name().to_owned(),
            Control::Mouse(button) => button.variant_name().to_owned(),
            Control::PadButton(_, button) => button.variant_name().to_owned(),
            Control::PadAxis(_, axis, _) => axis.variant_name().to_owned(),
        }
    }

    fn write(&self, world: &mut World, text: Option<&str>, state: ButtonState) {
        let pressed = state == ButtonState::Pressed;
        match *self {
            Control::Key(code) => {
                let window = pointer::input_window(world);
                pointer::write_input(
                    world,
                    KeyboardInput {
                        key_code: code,
                        logical_key: logical_key(code, text),
                        state,
                        // The text comes with the press, as winit sends it.
                        text: pressed.then(|| text.map(Into::into)).flatten(),
                        repeat: false,
                        window,
                    },
                );
            }
            Control::Mouse(button) => {
                let window = pointer::input_window(world);
                pointer::write_input(
                    world,
                    MouseButtonInput {
                        button,
                        state,
                        window,
                    },
                );
            }
            Control::PadButton(pad, button) => {
                let value = if pressed { 1.0 } else { 0.0 };
                world.write_message(RawGamepadEvent::Button(RawGamepadButtonChangedEvent::new(
                    pad, button, value,
                )));
            }
            Control::PadAxis(pad, axis, value) => {
                let value = if pressed { value } else { 0.0 };
                world.write_message(RawGamepadEvent::Axis(RawGamepadAxisChangedEvent::new(
                    pad, axis, value,
                )));
            }
        }
    }
}

/// What the bridge holds, by the call holding it, and the gamepads it connected.
#[derive(Resource, Debug, Default)]
pub(crate) struct HeldByBridge {
    holds: BTreeMap<u64, Hold>,
    next: u64,
    simulated_gamepads: Vec<Entity>,
    /// Simulated gamepads disconnected, despawned once Bevy has read their disconnection.
    retiring_gamepads: Vec<(Entity, u8)>,
}

/// Frames a disconnected simulated gamepad waits for Bevy to read its disconnection before it
/// is despawned anyway.
const RETIRE_FRAMES: u8 = 8;

/// Despawns the simulated gamepads that were disconnected, once Bevy's gamepad system has seen
/// them go (it removes their `Gamepad`): disconnected pads do not pile up in the world.
fn retire_gamepads(world: &mut World) {
    let Some(mut held) = world.get_resource_mut::<HeldByBridge>() else {
        return;
    };
    if held.retiring_gamepads.is_empty() {
        return;
    }
    let retiring = std::mem::take(&mut held.retiring_gamepads);
    let mut waiting = Vec::new();
    for (pad, frames) in retiring {
        let gone = world.get::<Gamepad>(pad).is_none();
        if gone || frames == 0 {
            if let Ok(entity_mut) = world.get_entity_mut(pad) {
                entity_mut.despawn();
            }
        } else {
            waiting.push((pad, frames - 1));
        }
    }
    if let Some(mut held) = world.get_resource_mut::<HeldByBridge>() {
        held.retiring_gamepads.extend(waiting);
    }
}

#[derive(Debug)]
struct Hold {
    action: &'static str,
    controls: Vec<Control>,
    frames_left: u64,
}

/// The state of the input actions: what the bridge holds pressed, so nothing stays stuck.
#[derive(Debug, Clone, Copy, Default)]
pub struct BridgeInputPlugin;

impl bevy::app::Plugin for BridgeInputPlugin {
    fn build(&self, app: &mut bevy::app::App) {
        app.init_resource::<HeldByBridge>()
            .add_systems(bevy::app::Last, retire_gamepads);
    }
}

/// Why no input action is undoable.
const INPUT_GOES_TO_THE_GAME: &str = "input goes to the game, and what the game did with it is the game's own doing; release what is held with input.release_all";

/// The footprint of every input action that plays something.
fn goes_to_the_game<P>(_: &World, _: &P) -> Footprint {
    Footprint::not_undoable(INPUT_GOES_TO_THE_GAME)
}

/// `input.press_keys`.
pub(crate) const PRESS_KEYS: Action<InputPressKeysParams> =
    Action::run_long(|world, params| start(world, |_| press_keys(params)))
        .touching(goes_to_the_game);
/// `input.type_text`.
pub(crate) const TYPE_TEXT: Action<InputTypeTextParams> =
    Action::run_long(|world, params| start(world, |_| Ok(type_text(params))))
        .touching(goes_to_the_game);
/// `input.click`.
pub(crate) const CLICK: Action<InputClickParams> =
    Action::run_long(|world, params| start(world, |world| click(world, params)))
        .touching(goes_to_the_game);
/// `input.move_mouse`.
pub(crate) const MOVE_MOUSE: Action<InputMoveMouseParams> =
    Action::run_long(|world, params| start(world, |world| move_mouse(world, params)))
        .touching(goes_to_the_game);
/// `input.drag`.
pub(crate) const DRAG: Action<InputDragParams> =
    Action::run_long(|world, params| start(world, |world| drag(world, params)))
        .touching(goes_to_the_game);
/// `input.gamepad`.
pub(crate) const GAMEPAD: Action<InputGamepadParams> =
    Action::run_long(|world, params| start(world, |world| gamepad(world, params)))
        .touching(goes_to_the_game);
/// `input.scroll`.
pub(crate) const SCROLL: Action<InputScrollParams> = Action::run(|world, params| {
    require_input(world)?;
    scroll(world, &params)
})
.touching(goes_to_the_game);
/// `input.gesture`.
pub(crate) const GESTURE: Action<InputGestureParams> = Action::run(|world, params| {
    require_input(world)?;
    gesture(world, &params)
})
.touching(goes_to_the_game);
/// `input.disconnect_gamepad`.
pub(crate) const DISCONNECT_GAMEPAD: Action<InputDisconnectGamepadParams> =
    Action::run(|world, _| now(world, disconnect_gamepads)).touching(goes_to_the_game);
/// `input.held`.
pub(crate) const HELD: Action<InputHeldParams> = Action::run(|world, _| now(world, held));
/// `input.release_all`.
pub(crate) const RELEASE_ALL: Action<InputReleaseAllParams> =
    Action::run(|world, _| now(world, release_all)).touching(goes_to_the_game);

/// Every input action needs Bevy's input in the app.
fn require_input(world: &World) -> Result<(), BridgeError> {
    if world.contains_resource::<ButtonInput<KeyCode>>() {
        return Ok(());
    }
    Err(BridgeError::InputUnavailable {
        reason: "the app has no input: add Bevy's InputPlugin (DefaultPlugins has it; \
                 MinimalPlugins does not)"
            .to_owned(),
    })
}

/// An input action answered in this frame.
fn now(world: &mut World, act: impl FnOnce(&mut World) -> Value) -> Result<Value, BridgeError> {
    require_input(world)?;
    Ok(act(world))
}

/// An input action held over frames: planned, begun, then played frame by frame.
fn start(
    world: &mut World,
    plan: impl FnOnce(&mut World) -> Result<InputJob, BridgeError>,
) -> Outcome {
    if let Err(error) = require_input(world) {
        return Outcome::Done(Err(error));
    }
    let mut job = match plan(world) {
        Ok(job) => job,
        Err(error) => return Outcome::Done(Err(error)),
    };
    match job.begin(world) {
        Ok(()) => Outcome::Running(Box::new(job)),
        Err(error) => Outcome::Done(Err(error)),
    }
}

/// A unit variant of a reflected Bevy enum by name (any case); the closest names when none fits.
fn named<T: Typed + FromReflect>(kind: &'static str, given: &str) -> Result<T, BridgeError> {
    let names = unit_variants::<T>();
    names
        .iter()
        .find(|name| name.eq_ignore_ascii_case(given.trim()))
        .and_then(|name| T::from_reflect(&DynamicEnum::new(*name, DynamicVariant::Unit)))
        .ok_or_else(|| BridgeError::UnknownInput {
            kind,
            given: given.to_owned(),
            suggestions: suggest(given.trim(), names.iter().copied())
                .into_iter()
                .map(str::to_owned)
                .collect(),
        })
}

/// A key as Bevy names it in `KeyCode`: the name (any case), or a single letter or digit.
pub(crate) fn key_code(given: &str) -> Result<KeyCode, BridgeError> {
    let mut characters = given.trim().chars();
    let short = match (characters.next(), characters.next()) {
        (Some(letter), None) if letter.is_ascii_alphabetic() => {
            Some(format!("Key{}", letter.to_ascii_uppercase()))
        }
        (Some(digit), None) if digit.is_ascii_digit() => Some(format!("Digit{digit}")),
        _ => None,
    };
    named("KeyCode", short.as_deref().unwrap_or(given))
}

/// The unit variants of a reflected enum, in declaration order.
fn unit_variants<T: Typed>() -> Vec<&'static str> {
    match T::type_info() {
        TypeInfo::Enum(info) => info
            .iter()
            .filter(|variant| matches!(variant, VariantInfo::Unit(_)))
            .map(VariantInfo::name)
            .collect(),
        _ => Vec::new(),
    }
}

/// The logical key a key produces: its character for letters, digits and space (as a US layout
/// does, lower case), the same-named `Key` for named keys (arrows, Enter, Escape...), else none.
fn logical_key(code: KeyCode, text: Option<&str>) -> Key {
    if let Some(text) = text {
        return Key::Character(text.into());
    }
    let name = code.variant_name();
    if let Some(letter) = name.strip_prefix("Key") {
        return Key::Character(letter.to_ascii_lowercase().as_str().into());
    }
    if let Some(digit) = name.strip_prefix("Digit") {
        return Key::Character(digit.into());
    }
    if code == KeyCode::Space {
        return Key::Space;
    }
    Key::from_reflect(&DynamicEnum::new(name, DynamicVariant::Unit)).unwrap_or(Key::Unidentified(
        bevy::input::keyboard::NativeKey::Unidentified,
    ))
}

/// The key that types `character` and the text it carries (a US layout; other characters are
/// typed as text on an unidentified key, which is what a text field reads).
fn key_for(character: char) -> (KeyCode, Option<String>) {
    let code = match character {
        '\n' => return (KeyCode::Enter, None),
        '\t' => return (KeyCode::Tab, None),
        ' ' => KeyCode::Space,
        letter if letter.is_ascii_alphabetic() => {
            key_code(&letter.to_string()).unwrap_or(KeyCode::Space)
        }
        digit if digit.is_ascii_digit() => key_code(&digit.to_string()).unwrap_or(KeyCode::Space),
        _ => KeyCode::Unidentified(bevy::input::keyboard::NativeKeyCode::Unidentified),
    };
    (code, Some(character.to_string()))
}

/// One step of an input call: a mouse movement, then controls pressed together, held for some
/// frames.
#[derive(Debug, Clone, Default)]
struct Step {
    pointer: Option<Pointer>,
    controls: Vec<Control>,
    text: Option<String>,
    frames: u64,
    /// Frames to wait, released, before this step (between the clicks of a double click).
    gap: u64,
}

/// A mouse movement at the start of a step.
#[derive(Debug, Clone, Copy)]
enum Pointer {
    /// The cursor goes here.
    At(CursorAt),
    /// The mouse moves by this much (no cursor).
    By(Vec2),
}

/// What an input call answers besides `frames` and `releasedEarly`.
#[derive(Debug, Clone)]
enum Summary {
    Keys,
    Text,
    Click {
        button: MouseButton,
        at: Option<CursorAt>,
    },
    /// A move or a drag (with the button held).
    Mouse {
        button: Option<MouseButton>,
        points: usize,
        end: Option<CursorAt>,
        moved: Option<Vec2>,
    },
    Gamepad {
        pad: Entity,
        connected: bool,
        buttons: Vec<String>,
        axes: Map<String, Value>,
    },
}

/// An input call in progress.
struct InputJob {
    action: &'static str,
    summary: Summary,
    steps: Vec<Step>,
    /// Controls held for the whole call (a drag's button), pressed with the first step.
    sustained: Vec<Control>,
    /// The step being held (or waited for), and the frames spent on it.
    current: usize,
    spent: u64,
    hold: u64,
    pressed_frame: u64,
    total_frames: u64,
    released_early: bool,
}

fn press_keys(params: InputPressKeysParams) -> Result<InputJob, BridgeError> {
    let controls = params
        .keys
        .iter()
        .map(|name| key_code(name).map(Control::Key))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(InputJob::new(
        "press_keys",
        Summary::Keys,
        vec![Step {
            controls,
            text: None,
            frames: params.frames,
            ..Step::default()
        }],
    ))
}

fn type_text(params: InputTypeTextParams) -> InputJob {
    let steps = params
        .text
        .chars()
        .map(|character| {
            let (code, text) = key_for(character);
            Step {
                controls: vec![Control::Key(code)],
                text,
                frames: params.frames_per_character,
                ..Step::default()
            }
        })
        .collect();
    InputJob::new("type_text", Summary::Text, steps)
}

fn click(world: &mut World, params: InputClickParams) -> Result<InputJob, BridgeError> {
    let button: MouseButton = named("MouseButton", &params.button)?;
    let placement = Placement {
        space: params.space.into(),
        camera: params.camera.as_ref(),
        window: params.window.as_ref(),
    };
    let at = pointer::resolve_at(world, params.at.as_ref(), &placement)?;
    let steps = (0..params.clicks)
        .map(|index| Step {
            // The cursor is in place in the frame that sees the first press.
            pointer: at.filter(|_| index == 0).map(Pointer::At),
            controls: vec![Control::Mouse(button)],
            text: None,
            frames: params.frames,
            gap: u64::from(index > 0),
        })
        .collect();
    Ok(InputJob::new("click", Summary::Click { button, at }, steps))
}

/// The steps of a mouse movement: the cursor through `to` or `path`, or the mouse moved `by`
/// (spread evenly over `frames`). Exactly one of the three.
fn mouse_steps(
    world: &mut World,
    (to, path, by): (
        Option<&ScreenPoint>,
        Option<&[ScreenPoint]>,
        Option<&Motion>,
    ),
    placement: &Placement,
    frames: u64,
) -> Result<(Vec<Step>, Summary), BridgeError> {
    let points: Vec<ScreenPoint> = match (to, path, by) {
        (Some(point), None, None) => vec![point.clone()],
        (None, Some(path), None) => path.to_vec(),
        (None, None, Some(by)) => {
            let total = Vec2::new(by.x as f32, by.y as f32);
            let steps = pointer::spread(total, frames)
                .into_iter()
                .map(|part| Step {
                    pointer: Some(Pointer::By(part)),
                    frames: 1,
                    ..Step::default()
                })
                .collect();
            let summary = Summary::Mouse {
                button: None,
                points: 0,
                end: None,
                moved: Some(total),
            };
            return Ok((steps, summary));
        }
        _ => {
            return Err(BridgeError::InvalidParams(
                "give exactly one of to (a point), path (points) or by (a relative move)"
                    .to_owned(),
            ));
        }
    };
    let cursor = pointer::resolve(world, &points, placement)?;
    let summary = Summary::Mouse {
        button: None,
        points: cursor.len(),
        end: cursor.last().copied(),
        moved: None,
    };
    let steps = cursor
        .into_iter()
        .map(|at| Step {
            pointer: Some(Pointer::At(at)),
            frames,
            ..Step::default()
        })
        .collect();
    Ok((steps, summary))
}

fn move_mouse(world: &mut World, params: InputMoveMouseParams) -> Result<InputJob, BridgeError> {
    let placement = Placement {
        space: params.space.into(),
        camera: params.camera.as_ref(),
        window: params.window.as_ref(),
    };
    let given = (
        params.to.as_ref(),
        params.path.as_deref(),
        params.by.as_ref(),
    );
    let (steps, summary) = mouse_steps(world, given, &placement, params.frames)?;
    Ok(InputJob::new("move_mouse", summary, steps))
}

fn drag(world: &mut World, params: InputDragParams) -> Result<InputJob, BridgeError> {
    let button: MouseButton = named("MouseButton", &params.button)?;
    let placement = Placement {
        space: params.space.into(),
        camera: params.camera.as_ref(),
        window: params.window.as_ref(),
    };
    let given = (None, params.path.as_deref(), params.by.as_ref());
    let (steps, summary) = mouse_steps(world, given, &placement, params.frames)?;
    let summary = match summary {
        Summary::Mouse {
            points, end, moved, ..
        } => Summary::Mouse {
            button: Some(button),
            points,
            end,
            moved,
        },
        other => other,
    };
    let mut job = InputJob::new("drag", summary, steps);
    job.sustained = vec![Control::Mouse(button)];
    Ok(job)
}

/// The bridge's simulated gamepad, connected (by a message Bevy reads next frame) when missing.
fn simulated_gamepad(world: &mut World) -> (Entity, bool) {
    let existing = world.get_resource::<HeldByBridge>().and_then(|held| {
        held.simulated_gamepads
            .iter()
            .copied()
            .find(|pad| world.get_entity(*pad).is_ok())
    });
    if let Some(pad) = existing {
        return (pad, false);
    }
    // The bridge's own: generic actions (duplicate, despawn...) leave it alone.
    let pad = world.spawn(BridgeOwned).id();
    world.write_message(GamepadConnectionEvent::new(
        pad,
        GamepadConnection::Connected {
            name: "Simulated gamepad (bevy-mcp)".to_owned(),
            vendor_id: None,
            product_id: None,
        },
    ));
    if let Some(mut held) = world.get_resource_mut::<HeldByBridge>() {
        held.simulated_gamepads.push(pad);
    }
    (pad, true)
}

fn gamepad(world: &mut World, params: InputGamepadParams) -> Result<InputJob, BridgeError> {
    let buttons = params
        .buttons
        .iter()
        .flatten()
        .map(|name| named::<GamepadButton>("GamepadButton", name))
        .collect::<Result<Vec<_>, _>>()?;
    let axes = params
        .axes
        .iter()
        .flatten()
        .map(|(name, value)| {
            named::<GamepadAxis>("GamepadAxis", name).map(|axis| (axis, *value as f32))
        })
        .collect::<Result<Vec<_>, _>>()?;
    if buttons.is_empty() && axes.is_empty() {
        return Err(BridgeError::InvalidParams(
            "nothing to press: give buttons, axes or both".to_owned(),
        ));
    }
    let (pad, connected) = match &params.gamepad {
        Some(given) => {
            let pad = resolve_entity(world, given)?;
            if world.get::<Gamepad>(pad).is_none() {
                return Err(BridgeError::InvalidParams(format!(
                    "{pad} is not a connected gamepad; omit gamepad to use the simulated one"
                )));
            }
            (pad, false)
        }
        None => simulated_gamepad(world),
    };
    let mut controls: Vec<Control> = buttons
        .iter()
        .map(|button| Control::PadButton(pad, *button))
        .collect();
    controls.extend(
        axes.iter()
            .map(|(axis, value)| Control::PadAxis(pad, *axis, *value)),
    );
    let summary = Summary::Gamepad {
        pad,
        connected,
        buttons: buttons
            .iter()
            .map(|button| button.variant_name().to_owned())
            .collect(),
        axes: axes
            .iter()
            .map(|(axis, value)| (axis.variant_name().to_owned(), json!(value)))
            .collect(),
    };
    Ok(InputJob::new(
        "gamepad",
        summary,
        vec![Step {
            controls,
            text: None,
            frames: params.frames,
            // A gamepad connected by this call exists for Bevy from the next frame on.
            gap: u64::from(connected),
            ..Step::default()
        }],
    ))
}

impl InputJob {
    fn new(action: &'static str, summary: Summary, steps: Vec<Step>) -> InputJob {
        InputJob {
            action,
            summary,
            steps,
            sustained: Vec::new(),
            current: 0,
            spent: 0,
            hold: 0,
            pressed_frame: 0,
            total_frames: 0,
            released_early: false,
        }
    }

    /// Claims the controls (refusing those another call holds) and presses the first step
    /// unless it waits first.
    fn begin(&mut self, world: &mut World) -> Result<(), BridgeError> {
        let wanted: Vec<Control> = self
            .steps
            .iter()
            .flat_map(|step| step.controls.iter().copied())
            .chain(self.sustained.iter().copied())
            .collect();
        let Some(mut held) = world.get_resource_mut::<HeldByBridge>() else {
            return Err(BridgeError::InvalidParams("input is not set up".to_owned()));
        };
        let mut taken: Vec<String> = held
            .holds
            .values()
            .flat_map(|hold| hold.controls.iter())
            .filter(|control| wanted.iter().any(|want| want.same(control)))
            .map(Control::name)
            .collect();
        taken.dedup();
        if !taken.is_empty() {
            return Err(BridgeError::InvalidParams(format!(
                "{} already held by another input call; wait for it to end or call input.release_all",
                taken.join(", ")
            )));
        }
        held.next += 1;
        self.hold = held.next;
        held.holds.insert(
            self.hold,
            Hold {
                action: self.action,
                controls: Vec::new(),
                frames_left: self.steps.iter().map(|step| step.gap + step.frames).sum(),
            },
        );
        // Messages are read in the next frame: that is the first frame that sees the press.
        let first_gap = self.steps.first().map_or(0, |step| step.gap);
        self.pressed_frame = frame(world) + 1 + first_gap;
        if first_gap == 0 {
            self.press_current(world);
        }
        Ok(())
    }

    fn current_text(&self) -> Option<String> {
        self.steps
            .get(self.current)
            .and_then(|step| step.text.clone())
    }

    /// Moves the mouse as the current step says, then presses its controls (and, on the
    /// first step, the controls held for the whole call).
    fn press_current(&mut self, world: &mut World) {
        let Some(step) = self.steps.get(self.current).cloned() else {
            return;
        };
        match step.pointer {
            Some(Pointer::At(at)) => pointer::place(world, at),
            Some(Pointer::By(delta)) => pointer::write_input(world, MouseMotion { delta }),
            None => {}
        }
        let mut pressed = step.controls.clone();
        if self.current == 0 {
            pressed.extend(self.sustained.iter().copied());
        }
        for control in &pressed {
            control.write(world, step.text.as_deref(), ButtonState::Pressed);
        }
        if let Some(mut held) = world.get_resource_mut::<HeldByBridge>()
            && let Some(hold) = held.holds.get_mut(&self.hold)
        {
            hold.controls.extend(pressed);
        }
    }

    /// Releases the controls of the step being held (the hold stays claimed, and so do the
    /// controls held for the whole call).
    fn release_step(&mut self, world: &mut World) {
        let step_controls = self
            .steps
            .get(self.current)
            .map(|step| step.controls.clone())
            .unwrap_or_default();
        let released = self.take_held(world, |control| step_controls.contains(control));
        let text = self.current_text();
        for control in released {
            control.write(world, text.as_deref(), ButtonState::Released);
        }
    }

    /// Removes from this call's hold the controls `which` picks, and returns them.
    fn take_held(&self, world: &mut World, which: impl Fn(&Control) -> bool) -> Vec<Control> {
        let Some(mut held) = world.get_resource_mut::<HeldByBridge>() else {
            return Vec::new();
        };
        let Some(hold) = held.holds.get_mut(&self.hold) else {
            return Vec::new();
        };
        let (taken, kept) = std::mem::take(&mut hold.controls)
            .into_iter()
            .partition(|control| which(control));
        hold.controls = kept;
        taken
    }

    /// Releases what this call holds and gives up its claim.
    fn finish(&mut self, world: &mut World) {
        self.release_step(world);
        for control in self.take_held(world, |_| true) {
            control.write(world, None, ButtonState::Released);
        }
        if let Some(mut held) = world.get_resource_mut::<HeldByBridge>() {
            held.holds.remove(&self.hold);
        }
    }

    fn answer(&self, world: &World) -> Value {
        let mut answer = json!({
            "frames": self.total_frames,
            "releasedEarly": self.released_early,
        });
        let done = self.current.min(self.steps.len());
        match &self.summary {
            Summary::Keys => {
                answer["keys"] = json!(
                    self.steps
                        .first()
                        .map(|step| step.controls.iter().map(Control::name).collect::<Vec<_>>())
                        .unwrap_or_default()
                );
                answer["pressedFrame"] = json!(self.pressed_frame);
                answer["releasedFrame"] = json!(frame(world) + 1);
            }
            Summary::Text => answer["typed"] = json!(done),
            Summary::Click { button, at } => {
                answer["button"] = json!(button.variant_name());
                answer["clicks"] = json!(done);
                if let Some(at) = at {
                    at.describe(world, &mut answer);
                }
            }
            Summary::Mouse {
                button,
                points,
                end,
                moved,
            } => {
                if let Some(button) = button {
                    answer["button"] = json!(button.variant_name());
                }
                answer["points"] = json!(points);
                match end {
                    Some(at) => at.describe(world, &mut answer),
                    None => {
                        answer["position"] = Value::Null;
                        answer["window"] = Value::Null;
                    }
                }
                if let Some(moved) = moved {
                    answer["moved"] = json!([moved.x, moved.y]);
                }
            }
            Summary::Gamepad {
                pad,
                connected,
                buttons,
                axes,
            } => {
                answer["gamepad"] = entity_info(world, *pad);
                answer["connected"] = json!(connected);
                answer["buttons"] = json!(buttons);
                answer["axes"] = Value::Object(axes.clone());
            }
        }
        answer
    }
}

impl LongJob for InputJob {
    type Output = Value;
    type Error = BridgeError;

    fn poll(
        &mut self,
        world: &mut World,
        progress: &ProgressSink,
    ) -> Option<Result<Value, BridgeError>> {
        let still_held = world
            .get_resource::<HeldByBridge>()
            .is_some_and(|held| held.holds.contains_key(&self.hold));
        if !still_held {
            // input.release_all let go (and wrote the releases).
            self.released_early = true;
            return Some(Ok(self.answer(world)));
        }
        self.spent += 1;
        self.total_frames += 1;
        if let Some(mut held) = world.get_resource_mut::<HeldByBridge>()
            && let Some(hold) = held.holds.get_mut(&self.hold)
        {
            hold.frames_left = hold.frames_left.saturating_sub(1);
        }
        let Some(step) = self.steps.get(self.current) else {
            self.finish(world);
            return Some(Ok(self.answer(world)));
        };
        let (gap, frames) = (step.gap, step.frames);
        if self.spent == gap {
            // The wait before this step is over: press it.
            self.press_current(world);
            return None;
        }
        if self.spent < gap + frames {
            return None;
        }
        // This step is over: release it, then start the next one (if any).
        self.release_step(world);
        self.current += 1;
        self.spent = 0;
        let total = self.steps.len();
        progress.report(self.current as f64, Some(total as f64), None);
        match self.steps.get(self.current) {
            Some(next) if next.gap == 0 => {
                self.press_current(world);
                None
            }
            Some(_) => None,
            None => {
                self.finish(world);
                Some(Ok(self.answer(world)))
            }
        }
    }

    fn abort(&mut self, world: &mut World) {
        self.finish(world);
    }
}

fn scroll(world: &mut World, params: &InputScrollParams) -> Result<Value, BridgeError> {
    let (unit, word) = match params.unit {
        InputScrollParamsUnit::Line => (MouseScrollUnit::Line, "line"),
        InputScrollParamsUnit::Pixel => (MouseScrollUnit::Pixel, "pixel"),
    };
    let placement = Placement {
        space: params.space.into(),
        camera: params.camera.as_ref(),
        window: params.window.as_ref(),
    };
    // Every point is checked before the cursor moves.
    let at = pointer::resolve_at(world, params.at.as_ref(), &placement)?;
    let window = match at {
        Some(at) => {
            pointer::place(world, at);
            at.window
        }
        None => pointer::input_window(world),
    };
    // The amounts are bounded by the schema (±10 000).
    pointer::write_input(
        world,
        MouseWheel {
            unit,
            x: params.x as f32,
            y: params.y as f32,
            window,
            phase: TouchPhase::Moved,
        },
    );
    let mut answer = json!({"x": params.x, "y": params.y, "unit": word, "frame": frame(world) + 1});
    if let Some(at) = at {
        at.describe(world, &mut answer);
    }
    Ok(answer)
}

/// One gesture message, as winit writes it from a touchpad or touchscreen.
fn gesture(world: &mut World, params: &InputGestureParams) -> Result<Value, BridgeError> {
    if !world.contains_resource::<Messages<PinchGesture>>() {
        return Err(BridgeError::InputUnavailable {
            reason: "the app does not read gestures: Bevy's `gestures` feature is off (it is \
                     among Bevy's default features)"
                .to_owned(),
        });
    }
    // The amounts are bounded by the schema (±10, ±10 000).
    let (amount, x, y) = (params.amount as f32, params.x as f32, params.y as f32);
    let (kind, message) = match params.kind {
        InputGestureParamsKind::Pinch => {
            pointer::write_input(world, PinchGesture(amount));
            ("pinch", json!({"PinchGesture": amount}))
        }
        InputGestureParamsKind::Rotate => {
            pointer::write_input(world, RotationGesture(amount));
            ("rotate", json!({"RotationGesture": amount}))
        }
        InputGestureParamsKind::Pan => {
            pointer::write_input(world, PanGesture(Vec2::new(x, y)));
            ("pan", json!({"PanGesture": [x, y]}))
        }
        InputGestureParamsKind::DoubleTap => {
            pointer::write_input(world, DoubleTapGesture);
            ("double_tap", json!("DoubleTapGesture"))
        }
    };
    Ok(json!({"kind": kind, "message": message, "frame": frame(world) + 1}))
}

fn disconnect_gamepads(world: &mut World) -> Value {
    let pads = world
        .get_resource_mut::<HeldByBridge>()
        .map(|mut held| std::mem::take(&mut held.simulated_gamepads))
        .unwrap_or_default();
    let mut disconnected = Vec::new();
    for pad in pads {
        if world.get_entity(pad).is_err() {
            continue;
        }
        disconnected.push(entity_info(world, pad));
        world.write_message(GamepadConnectionEvent::new(
            pad,
            GamepadConnection::Disconnected,
        ));
        if let Some(mut held) = world.get_resource_mut::<HeldByBridge>() {
            held.retiring_gamepads.push((pad, RETIRE_FRAMES));
        }
    }
    json!({"disconnected": disconnected})
}

fn held(world: &mut World) -> Value {
    let mut keys: Vec<String> = world
        .get_resource::<ButtonInput<KeyCode>>()
        .map(|input| {
            input
                .get_pressed()
                .map(|key| key.variant_name().to_owned())
                .collect()
        })
        .unwrap_or_default();
    keys.sort();
    let mut mouse_buttons: Vec<String> = world
        .get_resource::<ButtonInput<MouseButton>>()
        .map(|input| {
            input
                .get_pressed()
                .map(|button| button.variant_name().to_owned())
                .collect()
        })
        .unwrap_or_default();
    mouse_buttons.sort();
    let simulated = world
        .get_resource::<HeldByBridge>()
        .map(|held| held.simulated_gamepads.clone())
        .unwrap_or_default();
    let mut pads = world.query::<(Entity, &Gamepad)>();
    let gamepads: Vec<Value> = pads
        .iter(world)
        .map(|(entity, pad)| {
            let mut row = entity_info(world, entity);
            row["buttons"] = json!(
                pad.get_pressed()
                    .map(|button| button.variant_name().to_owned())
                    .collect::<Vec<_>>()
            );
            row["leftStick"] = json!(pad.left_stick().to_array());
            row["rightStick"] = json!(pad.right_stick().to_array());
            row["simulated"] = json!(simulated.contains(&entity));
            row
        })
        .collect();
    let by_bridge: Vec<Value> = world
        .get_resource::<HeldByBridge>()
        .map(|held| {
            held.holds
                .iter()
                .map(|(id, hold)| {
                    json!({
                        "hold": id,
                        "action": hold.action,
                        "controls": hold.controls.iter().map(Control::name).collect::<Vec<_>>(),
                        "framesLeft": hold.frames_left,
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    let cursors = pointer::cursors(world);
    json!({"keys": keys, "mouseButtons": mouse_buttons, "cursors": cursors, "gamepads": gamepads, "heldByBridge": by_bridge})
}

fn release_all(world: &mut World) -> Value {
    let holds = world
        .get_resource_mut::<HeldByBridge>()
        .map(|mut held| std::mem::take(&mut held.holds))
        .unwrap_or_default();
    let calls = holds.len();
    let mut released = Vec::new();
    for hold in holds.into_values() {
        for control in hold.controls {
            control.write(world, None, ButtonState::Released);
            released.push(control.name());
        }
    }
    released.sort();
    json!({"released": released, "calls": calls})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_found_by_name_letter_or_digit_and_bad_ones_get_suggestions() {
        assert_eq!(key_code("ArrowRight").ok(), Some(KeyCode::ArrowRight));
        assert_eq!(key_code("arrowright").ok(), Some(KeyCode::ArrowRight));
        assert_eq!(key_code("w").ok(), Some(KeyCode::KeyW));
        assert_eq!(key_code("7").ok(), Some(KeyCode::Digit7));
        match key_code("ArowRight") {
            Err(BridgeError::UnknownInput { suggestions, .. }) => {
                assert_eq!(suggestions.first().map(String::as_str), Some("ArrowRight"));
            }
            other => panic!("expected UnknownInput, got {other:?}"),
        }
    }

    #[test]
    fn logical_keys_follow_a_us_layout() {
        assert_eq!(logical_key(KeyCode::KeyW, None), Key::Character("w".into()));
        assert_eq!(logical_key(KeyCode::ArrowUp, None), Key::ArrowUp);
        assert_eq!(logical_key(KeyCode::Space, None), Key::Space);
        assert_eq!(key_for('A'), (KeyCode::KeyA, Some("A".to_owned())));
        assert_eq!(key_for('\n'), (KeyCode::Enter, None));
    }
}
