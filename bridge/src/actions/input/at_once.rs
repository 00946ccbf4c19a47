//! The input actions answered in the frame: scroll, gestures, gamepads unplugged, what is held, letting go.

use super::*;

pub(super) fn scroll(world: &mut World, params: &InputScrollParams) -> Result<Value, BridgeError> {
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
pub(super) fn gesture(
    world: &mut World,
    params: &InputGestureParams,
) -> Result<Value, BridgeError> {
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

pub(super) fn disconnect_gamepads(world: &mut World) -> Value {
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

pub(super) fn held(world: &mut World) -> Value {
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

pub(super) fn release_all(world: &mut World) -> Value {
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
