//! Collector: a small windowed 2D game with the MCP bridge in it.
//!
//! Move the blue square with the arrow keys, WASD or a gamepad's left stick (the bridge's simulated
//! gamepad: real ones need Bevy's `bevy_gilrs` feature), collect the yellow coins, avoid the red
//! hazards. Touching a hazard ends the game; R or the "New game" button (top right) restarts. The
//! score is in the window title.
//!
//! ```text
//! cargo run --release -p bevy_mcp_sandbox --example collector --features render
//! ```
//!
//! The bridge listens on `127.0.0.1:15720/mcp` (`BEVY_MCP_PORT` changes the port, 0 picks a free
//! one). `--reactive` runs winit in a reactive mode, as editors and tools do: the game only
//! updates on input, and a call from an agent wakes it.

use std::time::Duration;

use bevy::prelude::*;
use bevy::state::app::AppExtStates;
use bevy::ui::FocusPolicy;
use bevy::winit::{UpdateMode, WinitSettings};
use bevy_mcp_bridge::{BridgeConfig, BridgeEndpoint, McpBridgePlugin};

/// The playing field, in pixels around the origin.
const FIELD: Vec2 = Vec2::new(1200.0, 640.0);
const PLAYER_SIZE: f32 = 40.0;
const COIN_SIZE: f32 = 24.0;
const HAZARD_SIZE: f32 = 36.0;
const COINS: usize = 5;
/// The "New game" button: its size and its distance from the window's top right corner, in
/// logical pixels.
const BUTTON_SIZE: Vec2 = Vec2::new(160.0, 48.0);
const BUTTON_MARGIN: f32 = 16.0;

/// The player: moved by the keyboard at `speed` pixels per second.
#[derive(Component, Reflect, Debug, Clone, Copy)]
#[reflect(Component)]
struct Player {
    speed: f32,
}

/// A coin: one point when the player touches it, then it moves elsewhere.
#[derive(Component, Reflect, Debug, Default, Clone, Copy)]
#[reflect(Component, Default)]
struct Coin;

/// A hazard: bounces across the field; touching it ends the game.
#[derive(Component, Reflect, Debug, Default, Clone, Copy)]
#[reflect(Component, Default)]
struct Hazard {
    velocity: Vec2,
}

/// The button that starts a new game.
#[derive(Component, Reflect, Debug, Default, Clone, Copy)]
#[reflect(Component, Default)]
struct NewGameButton;

/// Points so far, and the best game of this run.
#[derive(Resource, Reflect, Debug, Default, Clone, Copy)]
#[reflect(Resource, Default)]
struct Score {
    points: u32,
    best: u32,
}

/// Where coins land next: a small deterministic sequence, so a replayed game is the same game.
#[derive(Resource, Debug, Clone, Copy)]
struct CoinSpots(u32);

impl CoinSpots {
    fn next(&mut self) -> Vec2 {
        // A linear congruential step; only the spread matters, not the quality.
        self.0 = self.0.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        let x = (self.0 >> 8) % 1000;
        let y = (self.0 >> 20) % 1000;
        let half = FIELD / 2.0 - Vec2::splat(COIN_SIZE);
        Vec2::new(
            (x as f32 / 999.0) * 2.0 * half.x - half.x,
            (y as f32 / 999.0) * 2.0 * half.y - half.y,
        )
    }
}

/// Playing, or lost (R restarts).
#[derive(States, Reflect, Debug, Default, Clone, Copy, PartialEq, Eq, Hash)]
#[reflect(Default)]
enum GameState {
    #[default]
    Playing,
    GameOver,
}

fn main() {
    let reactive = std::env::args().any(|argument| argument == "--reactive");
    let port = std::env::var("BEVY_MCP_PORT")
        .ok()
        .and_then(|port| port.parse().ok())
        .unwrap_or(15720);

    let mut app = App::new();
    app.add_plugins(DefaultPlugins.set(WindowPlugin {
        primary_window: Some(Window {
            title: "Collector".to_owned(),
            resolution: (1280, 720).into(),
            ..default()
        }),
        ..default()
    }));
    // The bridge: three lines.
    app.add_plugins(McpBridgePlugin::new(
        BridgeConfig::default().with_port(port),
    ));
    if reactive {
        // Like an editor: a frame only when something happens (an agent's call is something).
        let idle = UpdateMode::reactive_low_power(Duration::from_secs(600));
        app.insert_resource(WinitSettings {
            focused_mode: idle,
            unfocused_mode: idle,
        });
    }
    app.init_state::<GameState>()
        .register_type_mutable_state::<GameState>()
        .register_type::<Player>()
        .register_type::<Coin>()
        .register_type::<Hazard>()
        .register_type::<Score>()
        .register_type::<NewGameButton>()
        .init_resource::<Score>()
        .insert_resource(CoinSpots(7))
        .insert_resource(ClearColor(Color::srgb(0.06, 0.06, 0.09)))
        .add_systems(Startup, setup)
        .add_systems(
            FixedUpdate,
            (move_player, move_hazards, collect_coins, hit_hazards)
                .chain()
                .run_if(in_state(GameState::Playing)),
        )
        .add_systems(OnEnter(GameState::Playing), reset_round)
        .add_systems(
            Update,
            (restart_on_r, new_game_button, show_score, announce_endpoint),
        )
        .run();
}

fn square(color: Color, size: f32) -> Sprite {
    Sprite {
        color,
        custom_size: Some(Vec2::splat(size)),
        ..default()
    }
}

// The button is what bevy_ui's `Button` requires (`Interaction`, which bevy_ui keeps up to date,
// and a blocking `FocusPolicy`): Bevy 0.20 deprecates both for `ui_widgets::Button`, `Hovered` and
// `Pressed`, which need picking, and its `Button` cannot be spawned by name any more; `Interaction`
// still works there, so the game builds and plays on 0.19 and 0.20.
#[allow(deprecated)]
fn setup(mut commands: Commands, mut spots: ResMut<CoinSpots>) {
    commands.spawn((Name::new("Camera"), Camera2d));
    commands.spawn((
        Name::new("New game button"),
        NewGameButton,
        Interaction::None,
        FocusPolicy::Block,
        Node {
            position_type: PositionType::Absolute,
            top: Val::Px(BUTTON_MARGIN),
            right: Val::Px(BUTTON_MARGIN),
            width: Val::Px(BUTTON_SIZE.x),
            height: Val::Px(BUTTON_SIZE.y),
            ..default()
        },
        BackgroundColor(BUTTON_IDLE),
    ));
    commands.spawn((
        Name::new("Player"),
        Player { speed: 300.0 },
        square(Color::srgb_u8(40, 110, 255), PLAYER_SIZE),
        Transform::default(),
    ));
    for index in 0..COINS {
        commands.spawn((
            Name::new(format!("Coin {}", index + 1)),
            Coin,
            square(Color::srgb_u8(250, 210, 40), COIN_SIZE),
            Transform::from_translation(spots.next().extend(0.0)),
        ));
    }
    for (index, (start, velocity)) in [
        (Vec2::new(-400.0, 200.0), Vec2::new(180.0, 0.0)),
        (Vec2::new(400.0, -200.0), Vec2::new(0.0, 150.0)),
    ]
    .into_iter()
    .enumerate()
    {
        commands.spawn((
            Name::new(format!("Hazard {}", index + 1)),
            Hazard { velocity },
            square(Color::srgb_u8(230, 40, 40), HAZARD_SIZE),
            Transform::from_translation(start.extend(1.0)),
        ));
    }
}

fn move_player(
    keys: Res<ButtonInput<KeyCode>>,
    pads: Query<&Gamepad>,
    time: Res<Time>,
    mut players: Query<(&Player, &mut Transform)>,
) {
    let pressed = |a: KeyCode, b: KeyCode| keys.pressed(a) || keys.pressed(b);
    let mut direction = Vec2::ZERO;
    if pressed(KeyCode::ArrowLeft, KeyCode::KeyA) {
        direction.x -= 1.0;
    }
    if pressed(KeyCode::ArrowRight, KeyCode::KeyD) {
        direction.x += 1.0;
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
    let limit = FIELD / 2.0 - Vec2::splat(PLAYER_SIZE / 2.0);
    for (player, mut transform) in &mut players {
        let step = direction.clamp_length_max(1.0) * player.speed * time.delta_secs();
        let moved = (transform.translation.truncate() + step).clamp(-limit, limit);
        transform.translation = moved.extend(transform.translation.z);
    }
}

fn move_hazards(time: Res<Time>, mut hazards: Query<(&mut Hazard, &mut Transform)>) {
    let limit = FIELD / 2.0 - Vec2::splat(HAZARD_SIZE / 2.0);
    for (mut hazard, mut transform) in &mut hazards {
        let mut at = transform.translation.truncate() + hazard.velocity * time.delta_secs();
        for axis in 0..2 {
            if at[axis].abs() > limit[axis] {
                at[axis] = at[axis].clamp(-limit[axis], limit[axis]);
                hazard.velocity[axis] = -hazard.velocity[axis];
            }
        }
        transform.translation = at.extend(transform.translation.z);
    }
}

fn touching(a: &Transform, b: &Transform, reach: f32) -> bool {
    (a.translation.truncate() - b.translation.truncate())
        .abs()
        .max_element()
        < reach
}

fn collect_coins(
    players: Query<&Transform, With<Player>>,
    mut coins: Query<&mut Transform, (With<Coin>, Without<Player>)>,
    mut score: ResMut<Score>,
    mut spots: ResMut<CoinSpots>,
) {
    for player in &players {
        for mut coin in &mut coins {
            if touching(player, &coin, (PLAYER_SIZE + COIN_SIZE) / 2.0) {
                score.points += 1;
                score.best = score.best.max(score.points);
                coin.translation = spots.next().extend(0.0);
            }
        }
    }
}

fn hit_hazards(
    players: Query<&Transform, With<Player>>,
    hazards: Query<&Transform, With<Hazard>>,
    mut next: ResMut<NextState<GameState>>,
) {
    let hit = players.iter().any(|player| {
        hazards
            .iter()
            .any(|hazard| touching(player, hazard, (PLAYER_SIZE + HAZARD_SIZE) / 2.0))
    });
    if hit {
        next.set(GameState::GameOver);
    }
}

fn reset_round(mut score: ResMut<Score>, mut players: Query<&mut Transform, With<Player>>) {
    score.points = 0;
    for mut transform in &mut players {
        transform.translation = Vec3::ZERO;
    }
}

const BUTTON_IDLE: Color = Color::srgb(0.25, 0.6, 0.3);
const BUTTON_HOVERED: Color = Color::srgb(0.35, 0.75, 0.4);
const BUTTON_PRESSED: Color = Color::srgb(0.15, 0.4, 0.2);

/// A button whose interaction changed this frame.
#[allow(deprecated)]
type ChangedButton = (Changed<Interaction>, With<NewGameButton>);

/// The "New game" button: lit under the cursor, and a press starts a new game from any state.
#[allow(deprecated)]
fn new_game_button(
    mut buttons: Query<(&Interaction, &mut BackgroundColor), ChangedButton>,
    state: Res<State<GameState>>,
    mut next: ResMut<NextState<GameState>>,
    score: ResMut<Score>,
    players: Query<&mut Transform, With<Player>>,
) {
    let mut pressed = false;
    for (interaction, mut colour) in &mut buttons {
        colour.0 = match interaction {
            Interaction::Pressed => BUTTON_PRESSED,
            Interaction::Hovered => BUTTON_HOVERED,
            Interaction::None => BUTTON_IDLE,
        };
        pressed |= *interaction == Interaction::Pressed;
    }
    if !pressed {
        return;
    }
    match state.get() {
        GameState::GameOver => next.set(GameState::Playing),
        // Already playing: OnEnter(Playing) will not run, so the round resets here.
        GameState::Playing => reset_round(score, players),
    }
}

fn restart_on_r(
    keys: Res<ButtonInput<KeyCode>>,
    state: Res<State<GameState>>,
    mut next: ResMut<NextState<GameState>>,
) {
    if *state.get() == GameState::GameOver && keys.just_pressed(KeyCode::KeyR) {
        next.set(GameState::Playing);
    }
}

fn show_score(score: Res<Score>, state: Res<State<GameState>>, mut windows: Query<&mut Window>) {
    if !score.is_changed() && !state.is_changed() {
        return;
    }
    let title = match state.get() {
        GameState::Playing => format!("Collector — score {}", score.points),
        GameState::GameOver => format!(
            "Collector — game over: {} points (best {}); R restarts",
            score.points, score.best
        ),
    };
    for mut window in &mut windows {
        window.title.clone_from(&title);
    }
}

/// Prints where the bridge listens once it does (tests read this line).
fn announce_endpoint(endpoint: Res<BridgeEndpoint>) {
    if !endpoint.is_changed() {
        return;
    }
    match endpoint.as_ref() {
        BridgeEndpoint::Listening { url, .. } => println!("MCP endpoint: {url}"),
        BridgeEndpoint::Failed(reason) => eprintln!("the MCP bridge did not start: {reason}"),
        _ => {}
    }
}
