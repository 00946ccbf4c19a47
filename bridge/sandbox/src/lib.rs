//! The sandbox: a small demo world to try the bridge on (the `bevy-mcp` binary), and the test
//! support that drives it ([`testing`]). None of this is part of the bridge a game embeds.
//!
//! It owns the demo's components, resources, events, messages and assets. The bridge crate never
//! depends on it; it depends on the bridge.

#![deny(missing_docs)]

pub mod game;
#[cfg(feature = "render")]
pub mod render;
pub mod testing;

use std::collections::BTreeMap;

use bevy::app::{App, FixedUpdate, Plugin, Startup, Update};
use bevy::asset::io::Reader;
use bevy::asset::{Asset, AssetApp, AssetLoader, AssetPlugin, LoadContext, ReflectAsset};
use bevy::ecs::reflect::{ReflectEvent, ReflectMessage};
use bevy::ecs::schedule::{Schedules, SingleThreadedExecutor};
use bevy::input::gamepad::Gamepad;
use bevy::input::keyboard::{KeyCode, KeyboardInput};
use bevy::input::{ButtonInput, ButtonState, InputPlugin};
use bevy::math::{Vec2, Vec3};
use bevy::prelude::{
    ChildOf, Commands, Component, Event, Fixed, Message, MessageReader, Name, On, Query, Reflect,
    ReflectComponent, ReflectDefault, ReflectResource, Res, ResMut, Resource, Time, Transform,
};
use bevy::reflect::TypePath;
use bevy::state::app::{AppExtStates, StatesPlugin};
use bevy::state::prelude::{ComputedStates, OnEnter, States, SubStates};

use bevy_mcp_bridge::BridgeConfig;

/// Linear velocity in units per second of game time; `apply_velocity` moves entities by it.
#[derive(Component, Reflect, Default, Debug, Clone, Copy, PartialEq)]
#[reflect(Component, Default)]
pub struct Velocity {
    /// Units per second.
    pub linear: Vec3,
}

/// Hit points.
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Component, Default)]
pub struct Health {
    /// Current hit points.
    pub current: f32,
    /// Maximum hit points.
    pub max: f32,
}

impl Default for Health {
    fn default() -> Self {
        Health {
            current: 100.0,
            max: 100.0,
        }
    }
}

/// Which side an entity is on.
#[derive(Component, Reflect, Default, Debug, Clone, Copy, PartialEq, Eq)]
#[reflect(Component, Default)]
pub enum Team {
    /// Nobody's.
    #[default]
    Neutral,
    /// The red team.
    Red,
    /// The blue team.
    Blue,
}

/// What an entity fights with: an enum whose variants carry data.
#[derive(Component, Reflect, Default, Debug, Clone, PartialEq)]
#[reflect(Component, Default)]
pub enum Weapon {
    /// Bare hands.
    #[default]
    Unarmed,
    /// A sword.
    Sword {
        /// Hit points taken per blow.
        damage: f32,
        /// Whether it glows.
        enchanted: bool,
    },
    /// A bow with this many arrows.
    Bow(u32),
    /// A staff of an element, with its power.
    Staff(String, f32),
}

/// One thing an entity carries.
#[derive(Reflect, Default, Debug, Clone, PartialEq)]
#[reflect(Default)]
pub struct Item {
    /// What it is called.
    pub name: String,
    /// How heavy it is.
    pub weight: f32,
    /// The belt slot it sits in, if any.
    pub slot: Option<u8>,
}

/// What an entity carries: a nested game type (structs in a list, an enum in an option, a map).
#[derive(Component, Reflect, Default, Debug, Clone, PartialEq)]
#[reflect(Component, Default)]
pub struct Inventory {
    /// Coins.
    pub gold: u32,
    /// Everything carried.
    pub items: Vec<Item>,
    /// The weapon in hand, if any.
    pub equipped: Option<Weapon>,
    /// Keys by door name, with how many of each.
    pub keys: BTreeMap<String, u8>,
}

/// Where the game is: the sandbox's state machine.
#[derive(States, Reflect, Default, Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[reflect(Default)]
pub enum GameState {
    /// The title menu.
    #[default]
    Menu,
    /// A round is on.
    Playing,
    /// The round is paused.
    Paused,
    /// The round is lost.
    GameOver,
}

/// Whether a round is on (playing or paused): a computed state, following [`GameState`].
#[derive(Reflect, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct InGame;

impl ComputedStates for InGame {
    type SourceStates = GameState;

    fn compute(sources: GameState) -> Option<Self> {
        matches!(sources, GameState::Playing | GameState::Paused).then_some(InGame)
    }
}

/// The page of the pause menu: a sub-state that exists only while [`GameState::Paused`].
#[derive(SubStates, Reflect, Default, Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[source(GameState = GameState::Paused)]
#[reflect(Default)]
pub enum PauseMenu {
    /// Resume / quit.
    #[default]
    Main,
    /// Settings.
    Settings,
}

/// What the state machine's OnEnter systems did, so tests and agents can see them run.
#[derive(Resource, Reflect, Default, Debug, Clone, Copy, PartialEq, Eq)]
#[reflect(Resource, Default)]
pub struct StateLog {
    /// Times `OnEnter(GameState::Playing)` ran.
    pub entered_playing: u32,
    /// Times `OnEnter(GameState::GameOver)` ran.
    pub games_over: u32,
}

/// Text typed on the keyboard (the `text` of `KeyboardInput` presses): the sandbox's stand-in for
/// a text field.
#[derive(Resource, Reflect, Default, Debug, Clone, PartialEq, Eq)]
#[reflect(Resource, Default)]
pub struct TypedText {
    /// Everything typed so far; Backspace removes the last character.
    pub text: String,
}

/// How fast the arrow keys (or WASD) move the player, in units per second of fixed time.
pub const PLAYER_SPEED: f32 = 4.0;
/// The fixed time step of the sandbox: one step per frame at 60 fps.
pub const FIXED_HZ: f64 = 60.0;

/// The score of each team.
#[derive(Resource, Reflect, Default, Debug, Clone, Copy, PartialEq, Eq)]
#[reflect(Resource, Default)]
pub struct Score {
    /// Red team points.
    pub red: u32,
    /// Blue team points.
    pub blue: u32,
}

/// An explosion: every entity with `Health` within `radius` of `at` loses `damage` points.
#[derive(Event, Reflect, Default, Debug, Clone, Copy, PartialEq)]
#[reflect(Event, Default)]
pub struct Explosion {
    /// Where it happens.
    pub at: Vec3,
    /// How far it reaches.
    pub radius: f32,
    /// Hit points taken from each entity in reach.
    pub damage: f32,
}

/// A goal for a team; `count_goals` adds it to the `Score` during the next frame.
#[derive(Message, Reflect, Default, Debug, Clone, Copy, PartialEq, Eq)]
#[reflect(Message, Default)]
pub struct GoalScored {
    /// The team that scored.
    pub team: Team,
}

/// A text asset (`*.note` files in the sandbox's asset folder).
#[derive(Asset, Reflect, Debug, Clone)]
#[reflect(Asset)]
pub struct Note {
    /// The file's text.
    pub text: String,
}

/// Loads `*.note` files as [`Note`]s.
#[derive(Default, Debug, TypePath)]
pub struct NoteLoader;

impl AssetLoader for NoteLoader {
    type Asset = Note;
    type Settings = ();
    type Error = std::io::Error;

    async fn load(
        &self,
        reader: &mut dyn Reader,
        _settings: &(),
        _context: &mut LoadContext<'_>,
    ) -> Result<Note, std::io::Error> {
        let mut bytes = Vec::new();
        reader.read_to_end(&mut bytes).await?;
        let text = String::from_utf8(bytes)
            .map_err(|error| std::io::Error::new(std::io::ErrorKind::InvalidData, error))?;
        Ok(Note { text })
    }

    fn extensions(&self) -> &[&str] {
        &["note"]
    }
}

/// The sandbox's asset folder (`bridge/assets`, fixed at build time: the sandbox is a dev tool).
pub const ASSET_FOLDER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/assets");

/// The bridge configuration of the sandbox: the defaults, plus `Score` declared removable (its
/// only system takes `Option<ResMut<Score>>`).
pub fn bridge_config() -> BridgeConfig {
    BridgeConfig::default().with_removable_resource::<Score>()
}

/// Adds the demo world: named entities with transforms, velocities, health and teams, a
/// parent/child pair, a `Score` resource, and the system that moves things.
#[derive(Debug, Default)]
pub struct SandboxPlugin;

impl Plugin for SandboxPlugin {
    fn finish(&self, app: &mut App) {
        // The demo world has a handful of entities and systems: handing them to task-pool threads
        // costs more than running them (the executor's thread wake-ups were most of a frame on
        // two cores), so the sandbox runs each schedule on the main thread.
        if let Some(mut schedules) = app.world_mut().get_resource_mut::<Schedules>() {
            for (_, schedule) in schedules.iter_mut() {
                schedule.set_executor(SingleThreadedExecutor::new());
            }
        }
    }

    fn build(&self, app: &mut App) {
        if !app.is_plugin_added::<AssetPlugin>() {
            app.add_plugins(AssetPlugin {
                file_path: ASSET_FOLDER.to_owned(),
                watch_for_changes_override: Some(false),
                ..AssetPlugin::default()
            });
        }
        app.init_asset::<Note>()
            .register_asset_reflect::<Note>()
            .init_asset_loader::<NoteLoader>();
        app.register_type::<Velocity>()
            .register_type::<Health>()
            .register_type::<Team>()
            .register_type::<Weapon>()
            .register_type::<Inventory>()
            .register_type::<Score>()
            .register_type::<Explosion>()
            .register_type::<GoalScored>()
            .init_resource::<Score>()
            .init_resource::<StateLog>()
            .add_message::<GoalScored>()
            .add_observer(explode)
            .add_systems(Startup, spawn_demo_world)
            .add_systems(Update, (apply_velocity, count_goals, read_typed_text))
            .add_systems(FixedUpdate, steer_player);
        if !app.is_plugin_added::<InputPlugin>() {
            app.add_plugins(InputPlugin);
        }
        app.register_type::<TypedText>()
            .init_resource::<TypedText>()
            .insert_resource(Time::<Fixed>::from_hz(FIXED_HZ));
        add_state_machine(app);
        game::add_game_actions(app);
    }
}

/// Menu / playing / paused / game over, with a computed and a sub-state, all registered for
/// reflection so the bridge's `state` tool can read and set them.
fn add_state_machine(app: &mut App) {
    if !app.is_plugin_added::<StatesPlugin>() {
        app.add_plugins(StatesPlugin);
    }
    app.init_state::<GameState>()
        .register_type_mutable_state::<GameState>()
        .add_computed_state::<InGame>()
        .register_type_state::<InGame>()
        .add_sub_state::<PauseMenu>()
        .register_type_mutable_state::<PauseMenu>()
        .add_systems(OnEnter(GameState::Playing), |mut log: ResMut<StateLog>| {
            log.entered_playing += 1;
        })
        .add_systems(OnEnter(GameState::GameOver), |mut log: ResMut<StateLog>| {
            log.games_over += 1;
        });
}

fn at(x: f32, y: f32, z: f32) -> Transform {
    Transform::from_xyz(x, y, z)
}

/// The demo world. Names are unique except where a test needs otherwise.
pub fn spawn_demo_world(mut commands: Commands) {
    commands.spawn((
        Name::new("Player"),
        at(0.0, 0.0, 0.0),
        Velocity {
            linear: Vec3::new(1.0, 0.0, 0.0),
        },
        Health::default(),
        Team::Blue,
        Weapon::Sword {
            damage: 12.5,
            enchanted: true,
        },
        Inventory {
            gold: 40,
            items: vec![
                Item {
                    name: "Potion".to_owned(),
                    weight: 0.5,
                    slot: Some(1),
                },
                Item {
                    name: "Rope".to_owned(),
                    weight: 2.0,
                    slot: None,
                },
            ],
            equipped: Some(Weapon::Staff("fire".to_owned(), 3.0)),
            keys: BTreeMap::from([("gate".to_owned(), 1)]),
        },
    ));
    commands.spawn((
        Name::new("Goblin"),
        at(8.0, 0.0, 2.0),
        Velocity {
            linear: Vec3::new(-0.5, 0.0, 0.0),
        },
        Health {
            current: 30.0,
            max: 30.0,
        },
        Team::Red,
        Weapon::Bow(12),
    ));
    commands.spawn((
        Name::new("Orc"),
        at(12.0, 0.0, -3.0),
        Health {
            current: 80.0,
            max: 80.0,
        },
        Team::Red,
    ));
    commands.spawn((Name::new("Crate"), at(3.0, 0.0, 3.0)));
    let base = commands
        .spawn((Name::new("Base"), at(-10.0, 0.0, 0.0), Team::Blue))
        .id();
    commands.spawn((
        Name::new("Turret"),
        at(0.0, 2.0, 0.0),
        Team::Blue,
        ChildOf(base),
    ));
}

/// Moves every entity with a velocity by it, in game time (so pausing stops it).
pub fn apply_velocity(time: Res<Time>, mut movers: Query<(&mut Transform, &Velocity)>) {
    let delta = time.delta_secs();
    for (mut transform, velocity) in &mut movers {
        transform.translation += velocity.linear * delta;
    }
}

/// Moves the player with the arrow keys, WASD or a gamepad's left stick, at [`PLAYER_SPEED`] in
/// fixed steps, so input held for N frames of a fixed-step run moves it by an exact distance.
pub fn steer_player(
    keys: Res<ButtonInput<KeyCode>>,
    pads: Query<&Gamepad>,
    time: Res<Time>,
    mut players: Query<(&Name, &mut Transform)>,
) {
    let pressed = |a: KeyCode, b: KeyCode| keys.pressed(a) || keys.pressed(b);
    let mut direction = Vec2::ZERO;
    if pressed(KeyCode::ArrowRight, KeyCode::KeyD) {
        direction.x += 1.0;
    }
    if pressed(KeyCode::ArrowLeft, KeyCode::KeyA) {
        direction.x -= 1.0;
    }
    if pressed(KeyCode::ArrowUp, KeyCode::KeyW) {
        direction.y += 1.0;
    }
    if pressed(KeyCode::ArrowDown, KeyCode::KeyS) {
        direction.y -= 1.0;
    }
    for pad in &pads {
        direction += pad.left_stick();
    }
    if direction == Vec2::ZERO {
        return;
    }
    let step = direction.clamp_length_max(1.0) * PLAYER_SPEED * time.delta_secs();
    for (name, mut transform) in &mut players {
        if name.as_str() == "Player" {
            transform.translation += step.extend(0.0);
        }
    }
}

/// Collects typed text the way a text field does: the text of each press, Backspace deletes.
pub fn read_typed_text(mut presses: MessageReader<KeyboardInput>, mut typed: ResMut<TypedText>) {
    for press in presses.read() {
        if press.state != ButtonState::Pressed {
            continue;
        }
        if press.key_code == KeyCode::Backspace {
            typed.text.pop();
        } else if let Some(text) = &press.text {
            typed.text.push_str(text);
        }
    }
}

/// Applies an explosion's damage.
pub fn explode(explosion: On<Explosion>, mut targets: Query<(&Transform, &mut Health)>) {
    for (transform, mut health) in &mut targets {
        if transform.translation.distance(explosion.at) <= explosion.radius {
            health.current -= explosion.damage;
        }
    }
}

/// Adds scored goals to the score (when there is a score to add to). Scores saturate: an agent
/// may set any value a `u32` holds, and the bridge cannot know this system's arithmetic (the
/// reflective fuzzer found the overflow).
pub fn count_goals(mut goals: MessageReader<GoalScored>, score: Option<ResMut<Score>>) {
    let Some(mut score) = score else {
        return;
    };
    for goal in goals.read() {
        match goal.team {
            Team::Red => score.red = score.red.saturating_add(1),
            Team::Blue => score.blue = score.blue.saturating_add(1),
            Team::Neutral => {}
        }
    }
}
