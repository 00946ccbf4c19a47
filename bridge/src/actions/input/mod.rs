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

mod at_once;
mod job;
mod pointer;

use at_once::*;
use job::*;

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
