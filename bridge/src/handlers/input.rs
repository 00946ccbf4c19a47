//! `input`: the keyboard, played through Bevy's own `KeyboardInput` messages, so
//! `ButtonInput<KeyCode>`, `ButtonInput<Key>` and every reader of the messages see exactly what
//! real keys produce.
//!
//! Messages are written after `Last` and read by Bevy's input systems in the next frame's
//! `PreUpdate`: a key pressed by a call is seen pressed in exactly the frames it is held. Every
//! key the bridge presses is recorded in [`HeldByBridge`] with the call that pressed it, and
//! released when that call ends, however it ends: its frames are over, `release_all`, cancelled,
//! past its deadline, its session gone (the session's calls are cancelled) or its handler
//! panicked (`LongJob::abort`). No key stays stuck.

use std::collections::BTreeMap;

use bevy::input::ButtonInput;
use bevy::input::ButtonState;
use bevy::input::keyboard::{Key, KeyCode, KeyboardInput};
use bevy::prelude::{Entity, Resource, World};
use bevy::reflect::enums::{DynamicEnum, DynamicVariant, Enum, VariantInfo};
use bevy::reflect::{FromReflect, TypeInfo, Typed};
use bevy_mcp_generated::call::InputCall;
use bevy_mcp_generated::params::{InputPressKeysParams, InputTypeTextParams};
use mcp_native_transport::ProgressSink;
use mcp_native_transport::gateway::guidance::suggest;
use serde_json::{Value, json};

use super::inspect::frame;
use crate::error::BridgeError;
use crate::jobs::{LongJob, Outcome};

/// Keys the bridge holds, by the call holding them.
#[derive(Resource, Debug, Default)]
pub struct HeldByBridge {
    holds: BTreeMap<u64, Hold>,
    next: u64,
}

#[derive(Debug)]
struct Hold {
    action: &'static str,
    keys: Vec<KeyCode>,
    frames_left: u64,
}

/// Runs one `input` call.
pub fn run(world: &mut World, call: InputCall) -> Outcome {
    if !world.contains_resource::<ButtonInput<KeyCode>>() {
        return Outcome::Done(Err(BridgeError::InputUnavailable {
            reason:
                "the app has no keyboard input: add Bevy's InputPlugin (DefaultPlugins has it; \
                     MinimalPlugins does not)"
                    .to_owned(),
        }));
    }
    world.init_resource::<HeldByBridge>();
    match call {
        InputCall::PressKeys(params) => start(world, press_keys(params)),
        InputCall::TypeText(params) => start(world, type_text(params)),
        InputCall::Held(_) => Outcome::Done(Ok(held(world))),
        InputCall::ReleaseAll(_) => Outcome::Done(Ok(release_all(world))),
    }
}

fn start(world: &mut World, job: Result<KeyJob, BridgeError>) -> Outcome {
    let mut job = match job {
        Ok(job) => job,
        Err(error) => return Outcome::Done(Err(error)),
    };
    match job.begin(world) {
        Ok(()) => Outcome::Running(Box::new(job)),
        Err(error) => Outcome::Done(Err(error)),
    }
}

/// A key as Bevy names it in `KeyCode`: the name (any case), or a single letter or digit.
pub fn key_code(given: &str) -> Result<KeyCode, BridgeError> {
    let trimmed = given.trim();
    let mut characters = trimmed.chars();
    let short = match (characters.next(), characters.next()) {
        (Some(letter), None) if letter.is_ascii_alphabetic() => {
            Some(format!("Key{}", letter.to_ascii_uppercase()))
        }
        (Some(digit), None) if digit.is_ascii_digit() => Some(format!("Digit{digit}")),
        _ => None,
    };
    let wanted = short.as_deref().unwrap_or(trimmed);
    let names = unit_variants::<KeyCode>();
    let found = names
        .iter()
        .find(|name| name.eq_ignore_ascii_case(wanted))
        .and_then(|name| KeyCode::from_reflect(&DynamicEnum::new(*name, DynamicVariant::Unit)));
    found.ok_or_else(|| BridgeError::UnknownInput {
        kind: "KeyCode",
        given: given.to_owned(),
        suggestions: suggest(trimmed, names.iter().copied())
            .into_iter()
            .map(str::to_owned)
            .collect(),
    })
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

/// The name results show for a key.
fn key_name(key: KeyCode) -> String {
    key.variant_name().to_owned()
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

fn write_key(world: &mut World, code: KeyCode, text: Option<&str>, state: ButtonState) {
    world.write_message(KeyboardInput {
        key_code: code,
        logical_key: logical_key(code, text),
        state,
        // The text comes with the press, as winit sends it.
        text: (state == ButtonState::Pressed)
            .then(|| text.map(Into::into))
            .flatten(),
        repeat: false,
        window: Entity::PLACEHOLDER,
    });
}

/// One step of a keyboard call: keys pressed together, held for some frames.
#[derive(Debug, Clone)]
struct Step {
    keys: Vec<KeyCode>,
    text: Option<String>,
    frames: u64,
}

/// A `press_keys` or `type_text` call in progress.
struct KeyJob {
    action: &'static str,
    steps: Vec<Step>,
    /// The step being held, and the frames it has been held.
    current: usize,
    held_frames: u64,
    hold: u64,
    pressed_frame: u64,
    total_frames: u64,
    released_early: bool,
}

fn press_keys(params: InputPressKeysParams) -> Result<KeyJob, BridgeError> {
    let keys = params
        .keys
        .iter()
        .map(|name| key_code(name))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(KeyJob::new(
        "press_keys",
        vec![Step {
            keys,
            text: None,
            frames: params.frames,
        }],
    ))
}

fn type_text(params: InputTypeTextParams) -> Result<KeyJob, BridgeError> {
    let steps = params
        .text
        .chars()
        .map(|character| {
            let (code, text) = key_for(character);
            Step {
                keys: vec![code],
                text,
                frames: params.frames_per_character,
            }
        })
        .collect();
    Ok(KeyJob::new("type_text", steps))
}

impl KeyJob {
    fn new(action: &'static str, steps: Vec<Step>) -> KeyJob {
        KeyJob {
            action,
            steps,
            current: 0,
            held_frames: 0,
            hold: 0,
            pressed_frame: 0,
            total_frames: 0,
            released_early: false,
        }
    }

    /// Claims the keys (refusing keys another call holds) and presses the first step.
    fn begin(&mut self, world: &mut World) -> Result<(), BridgeError> {
        let mut wanted: Vec<KeyCode> = self
            .steps
            .iter()
            .flat_map(|step| step.keys.clone())
            .collect();
        wanted.sort();
        wanted.dedup();
        let Some(mut held) = world.get_resource_mut::<HeldByBridge>() else {
            return Err(BridgeError::InvalidParams("input is not set up".to_owned()));
        };
        let taken: Vec<String> = held
            .holds
            .values()
            .flat_map(|hold| hold.keys.iter())
            .filter(|key| wanted.contains(key))
            .map(|key| key_name(*key))
            .collect();
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
                keys: Vec::new(),
                frames_left: self.steps.iter().map(|step| step.frames).sum(),
            },
        );
        // The messages are read in the next frame: that is the first frame that sees the keys.
        self.pressed_frame = frame(world) + 1;
        self.press_current(world);
        Ok(())
    }

    fn press_current(&mut self, world: &mut World) {
        let Some(step) = self.steps.get(self.current).cloned() else {
            return;
        };
        for key in &step.keys {
            write_key(world, *key, step.text.as_deref(), ButtonState::Pressed);
        }
        if let Some(mut held) = world.get_resource_mut::<HeldByBridge>()
            && let Some(hold) = held.holds.get_mut(&self.hold)
        {
            hold.keys.clone_from(&step.keys);
        }
        self.held_frames = 0;
    }

    /// Releases the keys of the step being held (the hold stays claimed).
    fn release_step(&mut self, world: &mut World) {
        let keys = world
            .get_resource_mut::<HeldByBridge>()
            .and_then(|mut held| {
                held.holds
                    .get_mut(&self.hold)
                    .map(|hold| std::mem::take(&mut hold.keys))
            })
            .unwrap_or_default();
        let text = self
            .steps
            .get(self.current)
            .and_then(|step| step.text.clone());
        for key in keys {
            write_key(world, key, text.as_deref(), ButtonState::Released);
        }
    }

    /// Releases what this call holds and gives up its claim.
    fn finish(&mut self, world: &mut World) {
        self.release_step(world);
        if let Some(mut held) = world.get_resource_mut::<HeldByBridge>() {
            held.holds.remove(&self.hold);
        }
    }

    fn answer(&self, world: &World) -> Value {
        let released_frame = frame(world) + 1;
        match self.action {
            "type_text" => json!({
                "typed": self.current.min(self.steps.len()),
                "frames": self.total_frames,
                "releasedEarly": self.released_early,
            }),
            _ => json!({
                "keys": self.steps.first().map(|step| step.keys.iter().map(|key| key_name(*key)).collect::<Vec<_>>()).unwrap_or_default(),
                "frames": self.total_frames,
                "pressedFrame": self.pressed_frame,
                "releasedFrame": released_frame,
                "releasedEarly": self.released_early,
            }),
        }
    }
}

impl LongJob for KeyJob {
    fn poll(
        &mut self,
        world: &mut World,
        progress: &ProgressSink,
    ) -> Option<Result<Value, BridgeError>> {
        let still_held = world
            .get_resource::<HeldByBridge>()
            .is_some_and(|held| held.holds.contains_key(&self.hold));
        if !still_held {
            // input.release_all let go of the keys (and wrote the releases).
            self.released_early = true;
            return Some(Ok(self.answer(world)));
        }
        self.held_frames += 1;
        self.total_frames += 1;
        if let Some(mut held) = world.get_resource_mut::<HeldByBridge>()
            && let Some(hold) = held.holds.get_mut(&self.hold)
        {
            hold.frames_left = hold.frames_left.saturating_sub(1);
        }
        let step_frames = self.steps.get(self.current).map_or(0, |step| step.frames);
        if self.held_frames < step_frames {
            return None;
        }
        // This step is over: release its keys, then press the next one (if any).
        self.release_step(world);
        self.current += 1;
        let total = self.steps.len();
        progress.report(self.current as f64, Some(total as f64), None);
        if self.current < total {
            self.press_current(world);
            return None;
        }
        self.finish(world);
        Some(Ok(self.answer(world)))
    }

    fn abort(&mut self, world: &mut World) {
        self.finish(world);
    }
}

fn held(world: &mut World) -> Value {
    let mut keys: Vec<String> = world
        .get_resource::<ButtonInput<KeyCode>>()
        .map(|input| input.get_pressed().map(|key| key_name(*key)).collect())
        .unwrap_or_default();
    keys.sort();
    let by_bridge: Vec<Value> = world
        .get_resource::<HeldByBridge>()
        .map(|held| {
            held.holds
                .iter()
                .map(|(id, hold)| {
                    json!({
                        "hold": id,
                        "action": hold.action,
                        "keys": hold.keys.iter().map(|key| key_name(*key)).collect::<Vec<_>>(),
                        "framesLeft": hold.frames_left,
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    json!({"keys": keys, "heldByBridge": by_bridge})
}

fn release_all(world: &mut World) -> Value {
    let holds = world
        .get_resource_mut::<HeldByBridge>()
        .map(|mut held| std::mem::take(&mut held.holds))
        .unwrap_or_default();
    let calls = holds.len();
    let mut released = Vec::new();
    for hold in holds.into_values() {
        for key in hold.keys {
            write_key(world, key, None, ButtonState::Released);
            released.push(key_name(key));
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
