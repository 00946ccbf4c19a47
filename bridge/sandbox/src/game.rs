//! The demo game's own actions, added to the catalog with the bridge's game-action API: waves of
//! goblins, points for a team, a destructive level reset, and a long-running wait for a wave to be
//! cleared.

use bevy::app::App;
use bevy::math::Vec3;
use bevy::prelude::{Commands, Component, Entity, In, Name, Query, ResMut, Transform, With, World};
use bevy_mcp_bridge::ToolError;
use bevy_mcp_bridge::catalog::{Category, Consent, Effect};
use bevy_mcp_bridge::game::{ActionSpec, GameUndo, LongJob, McpAppExt, ToolSpec};
use mcp_native_transport::ProgressSink;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::{Health, Score, Team, Velocity};

/// The demo game's tool.
pub const TOOL: &str = "game";

/// Marks the goblins a wave brought, so a reset can take them away again.
#[derive(Component, Debug, Clone, Copy)]
pub struct WaveEnemy;

/// How big a wave to spawn.
#[derive(Deserialize, JsonSchema, Debug)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SpawnWave {
    /// How many goblins the wave has.
    #[schemars(range(min = 1, max = 20))]
    pub count: u32,
}

/// One enemy a wave spawned.
#[derive(Serialize, JsonSchema, Debug)]
pub struct SpawnedEnemy {
    /// Display form of its id, e.g. "12v0".
    pub entity: String,
    /// Its bits.
    pub bits: u64,
    /// Its Name.
    pub name: String,
}

/// The wave that was spawned.
#[derive(Serialize, JsonSchema, Debug)]
pub struct WaveSpawned {
    /// The new goblins, closing in on the origin.
    pub spawned: Vec<SpawnedEnemy>,
}

fn spawn_wave(In(wave): In<SpawnWave>, mut commands: Commands) -> Result<WaveSpawned, ToolError> {
    let spawned = (1..=wave.count)
        .map(|index| {
            let angle = index as f32 / wave.count as f32 * std::f32::consts::TAU;
            let at = Vec3::new(angle.cos(), 0.0, angle.sin()) * 15.0;
            let name = format!("Wave Goblin {index}");
            let entity = commands
                .spawn((
                    Name::new(name.clone()),
                    Transform::from_translation(at),
                    Velocity {
                        linear: -at.normalize_or_zero(),
                    },
                    Health {
                        current: 30.0,
                        max: 30.0,
                    },
                    Team::Red,
                    WaveEnemy,
                ))
                .id();
            SpawnedEnemy {
                entity: entity.to_string(),
                bits: entity.to_bits(),
                name,
            }
        })
        .collect();
    Ok(WaveSpawned { spawned })
}

/// A team of the demo game.
#[derive(Deserialize, JsonSchema, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum TeamName {
    /// The red team.
    Red,
    /// The blue team.
    Blue,
}

/// Points for a team.
#[derive(Deserialize, JsonSchema, Debug)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AddScore {
    /// The team that scores.
    pub team: TeamName,
    /// How many points it gets.
    #[schemars(range(min = 1, max = 1000))]
    pub points: u32,
}

/// The score after the change.
#[derive(Serialize, JsonSchema, Debug)]
pub struct ScoreNow {
    /// Red team points.
    pub red: u32,
    /// Blue team points.
    pub blue: u32,
}

fn add_score(In(add): In<AddScore>, score: Option<ResMut<Score>>) -> Result<ScoreNow, ToolError> {
    let Some(mut score) = score else {
        return Err(ToolError::new(
            ERROR_NO_SCORE,
            "the game has no Score resource right now",
        ));
    };
    match add.team {
        TeamName::Red => score.red = score.red.saturating_add(add.points),
        TeamName::Blue => score.blue = score.blue.saturating_add(add.points),
    }
    Ok(ScoreNow {
        red: score.red,
        blue: score.blue,
    })
}

/// The error `add_score` answers when the score was removed.
const ERROR_NO_SCORE: bevy_mcp_bridge::ErrorCode = bevy_mcp_bridge::ErrorCode::new("NO_SCORE");

/// A level reset takes no parameters.
#[derive(Deserialize, JsonSchema, Debug)]
#[serde(deny_unknown_fields)]
pub struct ResetLevel {}

/// What a reset took away.
#[derive(Serialize, JsonSchema, Debug)]
pub struct LevelReset {
    /// Wave goblins despawned.
    pub despawned: u32,
}

fn reset_level(
    In(_): In<ResetLevel>,
    mut commands: Commands,
    enemies: Query<Entity, With<WaveEnemy>>,
    score: Option<ResMut<Score>>,
) -> Result<LevelReset, ToolError> {
    let mut despawned = 0;
    for enemy in &enemies {
        commands.entity(enemy).despawn();
        despawned += 1;
    }
    if let Some(mut score) = score {
        *score = Score::default();
    }
    Ok(LevelReset { despawned })
}

/// How long to wait for a wave to be cleared.
#[derive(Deserialize, JsonSchema, Debug)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WaitForWaveCleared {
    /// Frames to wait at most.
    #[schemars(range(min = 1, max = 100000))]
    pub max_frames: u64,
}

/// How the wait ended.
#[derive(Serialize, JsonSchema, Debug)]
#[serde(rename_all = "camelCase")]
pub struct WaveWait {
    /// Whether no wave goblin was left.
    pub cleared: bool,
    /// Frames waited.
    pub frames: u64,
    /// Wave goblins left.
    pub remaining: u64,
}

/// Waits, frame by frame, until no wave goblin is left.
#[derive(Debug)]
struct WaveClearedJob {
    max_frames: u64,
    frames: u64,
}

impl LongJob for WaveClearedJob {
    type Output = WaveWait;
    type Error = ToolError;

    fn poll(
        &mut self,
        world: &mut World,
        progress: &ProgressSink,
    ) -> Option<Result<WaveWait, ToolError>> {
        let remaining = world
            .query_filtered::<Entity, With<WaveEnemy>>()
            .iter(world)
            .count() as u64;
        if remaining == 0 || self.frames >= self.max_frames {
            return Some(Ok(WaveWait {
                cleared: remaining == 0,
                frames: self.frames,
                remaining,
            }));
        }
        self.frames += 1;
        progress.report(
            self.frames as f64,
            Some(self.max_frames as f64),
            Some(&format!("{remaining} goblins left")),
        );
        None
    }
}

fn wait_for_wave_cleared(In(wait): In<WaitForWaveCleared>) -> Result<WaveClearedJob, ToolError> {
    Ok(WaveClearedJob {
        max_frames: wait.max_frames,
        frames: 0,
    })
}

/// Adds the demo game's tool and actions.
pub fn add_game_actions(app: &mut App) {
    app.add_mcp_tool(ToolSpec::new(
        TOOL,
        Category::Gameplay,
        "The demo game's own actions: send waves of goblins, give a team points, reset the level.",
    ))
    .add_mcp_action(spawn_wave_spec(), spawn_wave)
    .add_mcp_action(add_score_spec(), add_score)
    .add_mcp_action(reset_level_spec(), reset_level)
    .add_mcp_long_action(wait_for_wave_cleared_spec(), wait_for_wave_cleared);
}

/// The `spawn_wave` action's record.
fn spawn_wave_spec() -> ActionSpec {
    ActionSpec::new(
        TOOL,
        "spawn_wave",
        "Send a wave of goblins at the base, spread on a circle around the origin.",
    )
    .with_when(
        "To test how the game copes with enemies, or to populate the level.",
        "To add one entity of your own design use control_entity.spawn.",
    )
    .with_topics(&[
        "wave",
        "enemies",
        "goblins",
        "attack",
        "spawn",
        "horde",
        "group of enemies",
        "more enemies",
        "next wave",
    ])
    .with_aliases(&["send_wave"])
    // It only adds goblins, each named in the reply: undoable in a world of any size.
    .undoable(GameUndo::Spawns(&["spawned"]))
    .with_example(
        "A wave of three",
        json!({"count": 3}),
        "Three goblins named Wave Goblin 1..3.",
    )
}

/// The `add_score` action's record.
fn add_score_spec() -> ActionSpec {
    ActionSpec::new(
        TOOL,
        "add_score",
        "Give a team points, as scoring a goal would.",
    )
    .with_when(
        "To change the score the way the game does, saturating at the maximum.",
        "To set the score to exact values use manage_resource.mutate on Score.",
    )
    .with_topics(&[
        "score", "points", "point", "team", "goal", "reward", "tally",
    ])
    .undoable(GameUndo::Resources(&["Score"]))
    .with_example(
        "Five points for red",
        json!({"team": "red", "points": 5}),
        "The score with red up by five.",
    )
    .with_error(
        "NO_SCORE",
        "The Score resource was removed; insert it with manage_resource.insert.",
    )
}

/// The `reset_level` action's record.
fn reset_level_spec() -> ActionSpec {
    ActionSpec::new(
        TOOL,
        "reset_level",
        "Reset the level: remove every wave goblin and set the score back to zero.",
    )
    .with_when(
        "To start the level over after a test.",
        "To remove one entity use control_entity.despawn.",
    )
    .with_effect(Effect::Destructive, Consent::Explicit)
    .with_topics(&[
        "reset",
        "restart",
        "level",
        "clear",
        "start over",
        "start fresh",
        "new round",
        "clean slate",
        "beginning",
        "starting layout",
    ])
    .undoable(GameUndo::World)
    .with_example(
        "Start over",
        json!({}),
        "How many wave goblins were removed.",
    )
}

/// The `wait_for_wave_cleared` action's record.
fn wait_for_wave_cleared_spec() -> ActionSpec {
    ActionSpec::new(
        TOOL,
        "wait_for_wave_cleared",
        "Wait, frame by frame, until no wave goblin is left, reporting how many remain.",
    )
    .with_when(
        "To let the game play a wave out and see whether it ends.",
        "To wait for any field to change use control_app.wait_until.",
    )
    .with_effect(Effect::Read, Consent::None)
    .with_topics(&[
        "wait",
        "wave",
        "cleared",
        "until",
        "enemies",
        "dead",
        "gone",
        "finish off",
        "kill all",
    ])
    .with_example(
        "Up to ten seconds",
        json!({"maxFrames": 600}),
        "cleared, the frames waited and the goblins left.",
    )
}
