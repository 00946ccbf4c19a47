//! The input that spans frames: what each frame presses, moves and releases, as one long-running job.

use super::*;

/// One step of an input call: a mouse movement, then controls pressed together, held for some
/// frames.
#[derive(Debug, Clone, Default)]
pub(super) struct Step {
    pub(super) pointer: Option<Pointer>,
    pub(super) controls: Vec<Control>,
    pub(super) text: Option<String>,
    pub(super) frames: u64,
    /// Frames to wait, released, before this step (between the clicks of a double click).
    pub(super) gap: u64,
}

/// A mouse movement at the start of a step.
#[derive(Debug, Clone, Copy)]
pub(super) enum Pointer {
    /// The cursor goes here.
    At(CursorAt),
    /// The mouse moves by this much (no cursor).
    By(Vec2),
}

/// What an input call answers besides `frames` and `releasedEarly`.
#[derive(Debug, Clone)]
pub(super) enum Summary {
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
pub(super) struct InputJob {
    pub(super) action: &'static str,
    pub(super) summary: Summary,
    pub(super) steps: Vec<Step>,
    /// Controls held for the whole call (a drag's button), pressed with the first step.
    pub(super) sustained: Vec<Control>,
    /// The step being held (or waited for), and the frames spent on it.
    pub(super) current: usize,
    pub(super) spent: u64,
    pub(super) hold: u64,
    pub(super) pressed_frame: u64,
    pub(super) total_frames: u64,
    pub(super) released_early: bool,
}

pub(super) fn press_keys(params: InputPressKeysParams) -> Result<InputJob, BridgeError> {
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

pub(super) fn type_text(params: InputTypeTextParams) -> InputJob {
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

pub(super) fn click(world: &mut World, params: InputClickParams) -> Result<InputJob, BridgeError> {
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
pub(super) fn mouse_steps(
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

pub(super) fn move_mouse(
    world: &mut World,
    params: InputMoveMouseParams,
) -> Result<InputJob, BridgeError> {
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

pub(super) fn drag(world: &mut World, params: InputDragParams) -> Result<InputJob, BridgeError> {
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
pub(super) fn simulated_gamepad(world: &mut World) -> (Entity, bool) {
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

pub(super) fn gamepad(
    world: &mut World,
    params: InputGamepadParams,
) -> Result<InputJob, BridgeError> {
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
    pub(super) fn new(action: &'static str, summary: Summary, steps: Vec<Step>) -> InputJob {
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
    pub(super) fn begin(&mut self, world: &mut World) -> Result<(), BridgeError> {
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

    pub(super) fn current_text(&self) -> Option<String> {
        self.steps
            .get(self.current)
            .and_then(|step| step.text.clone())
    }

    /// Moves the mouse as the current step says, then presses its controls (and, on the
    /// first step, the controls held for the whole call).
    pub(super) fn press_current(&mut self, world: &mut World) {
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
    pub(super) fn release_step(&mut self, world: &mut World) {
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
    pub(super) fn take_held(
        &self,
        world: &mut World,
        which: impl Fn(&Control) -> bool,
    ) -> Vec<Control> {
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
    pub(super) fn finish(&mut self, world: &mut World) {
        self.release_step(world);
        for control in self.take_held(world, |_| true) {
            control.write(world, None, ButtonState::Released);
        }
        if let Some(mut held) = world.get_resource_mut::<HeldByBridge>() {
            held.holds.remove(&self.hold);
        }
    }

    pub(super) fn answer(&self, world: &World) -> Value {
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
