//! The frame budget on a real App, deterministic: the bridge reads a clock that only the test's
//! handler moves (each call says what it cost), so what runs in which frame does not depend on
//! how fast or busy the machine is.

use std::time::Duration;

use bevy::prelude::{In, Res, ResMut, Resource};
use bevy_mcp_bridge::catalog::Category;
use bevy_mcp_bridge::game::{ActionSpec, McpAppExt, ToolSpec};
use bevy_mcp_bridge::{BudgetClock, ManualClock, PauseBridgeWork, ToolError};
use bevy_mcp_sandbox::testing::{Harness, PendingCall};
use mcp_native_transport::ProgressSink;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The budget in these tests: three units of the hand-moved clock.
const BUDGET: Duration = Duration::from_millis(3);

/// Parameters of the test's work.
#[derive(Deserialize, JsonSchema, Debug)]
#[serde(deny_unknown_fields)]
struct Work {
    /// Which call this is.
    #[schemars(length(max = 32))]
    label: String,
    /// What it costs, in milliseconds of the test clock.
    #[schemars(range(max = 100))]
    cost: u64,
}

/// What the work answers.
#[derive(Serialize, JsonSchema, Debug)]
struct Done {
    /// The call's label.
    label: String,
}

/// The clock the bridge's budget reads.
#[derive(Resource, Clone)]
struct TestClock(ManualClock);

/// Labels of the calls that ran, frame by frame.
#[derive(Resource, Default)]
struct Ran(Vec<String>);

fn work(
    In(work): In<Work>,
    clock: Res<TestClock>,
    mut ran: ResMut<Ran>,
) -> Result<Done, ToolError> {
    clock.0.advance(Duration::from_millis(work.cost));
    ran.0.push(work.label.clone());
    Ok(Done { label: work.label })
}

/// A test action that costs what its params say.
fn work_spec(name: &'static str) -> ActionSpec {
    ActionSpec::new("budget_test", name, "Costs what it is told to.")
        .with_when("To test the frame budget.", "Never in a real game.")
        .with_topics(&["budget"])
        .with_example("One unit", json!({"label": "a", "cost": 1}), "{label: a}.")
}

fn budgeted_sandbox() -> Harness {
    let clock = ManualClock::default();
    let for_app = clock.clone();
    Harness::configured(
        |config| {
            config
                .with_frame_budget(BUDGET)
                .with_budget_clock(BudgetClock::Manual(clock))
        },
        move |app| {
            app.insert_resource(TestClock(for_app))
                .init_resource::<Ran>()
                .add_mcp_tool(ToolSpec::new(
                    "budget_test",
                    Category::Gameplay,
                    "Work of a known cost.",
                ))
                .add_mcp_action(work_spec("work"), work)
                .add_mcp_action(work_spec("light_work"), work);
        },
    )
}

/// Queues calls of `budget_test.work` (all in the mailbox before the next frame), in order.
fn queue(harness: &mut Harness, calls: &[(&str, u64)]) -> Vec<PendingCall> {
    let calls: Vec<(&str, &str, u64)> = calls
        .iter()
        .map(|(label, cost)| ("work", *label, *cost))
        .collect();
    queue_actions(harness, &calls)
}

/// Queues calls of `budget_test` actions (action, label, cost), in this order.
fn queue_actions(harness: &mut Harness, calls: &[(&str, &str, u64)]) -> Vec<PendingCall> {
    calls
        .iter()
        .map(|(action, label, cost)| {
            harness.start(
                "budget_test",
                action,
                json!({"label": label, "cost": cost}),
                ProgressSink::disabled(),
            )
        })
        .collect()
}

/// Runs one frame; the labels of the calls that ran in it.
fn frame(harness: &mut Harness) -> Vec<String> {
    harness.run_frames(1);
    std::mem::take(&mut harness.world().resource_mut::<Ran>().0)
}

fn budget_diagnostics(harness: &mut Harness) -> Value {
    let diagnostics = harness
        .call("system_control", "diagnostics", json!({}))
        .unwrap_or_else(|error| panic!("{error}"));
    diagnostics["frameBudget"].clone()
}

fn answered(harness: &mut Harness, pending: &[PendingCall]) -> Vec<String> {
    pending
        .iter()
        .map(|call| match harness.finish(call) {
            Ok(done) => done["label"].as_str().unwrap_or_default().to_owned(),
            Err(error) => panic!("{error}"),
        })
        .collect()
}

#[test]
fn calls_beyond_the_budget_run_in_the_next_frame_in_arrival_order() {
    let mut harness = budgeted_sandbox();
    let pending = queue(
        &mut harness,
        &[("a", 1), ("b", 1), ("c", 1), ("d", 1), ("e", 1)],
    );
    assert_eq!(frame(&mut harness), ["a", "b", "c"], "three units fit");
    assert_eq!(frame(&mut harness), ["d", "e"]);
    assert_eq!(answered(&mut harness, &pending), ["a", "b", "c", "d", "e"]);

    let budget = budget_diagnostics(&mut harness);
    assert_eq!(budget["budgetMs"], json!(3.0));
    assert_eq!(
        budget["callsDeferred"],
        json!(2),
        "d and e waited one frame"
    );
    assert_eq!(budget["framesOverBudget"], json!(0));
    assert_eq!(budget["worstFrameMs"], json!(3.0));
    assert_eq!(budget["waiting"], json!(0));
}

#[test]
fn a_call_over_the_budget_runs_alone_and_is_reported() {
    let mut harness = budgeted_sandbox();
    let pending = queue(&mut harness, &[("big", 10), ("small", 1), ("after", 1)]);
    assert_eq!(
        frame(&mut harness),
        ["big"],
        "the first call of a frame always runs"
    );
    assert_eq!(frame(&mut harness), ["small", "after"]);
    answered(&mut harness, &pending);

    let budget = budget_diagnostics(&mut harness);
    assert_eq!(budget["overBudgetCalls"], json!(1));
    assert_eq!(budget["framesOverBudget"], json!(1));
    assert_eq!(budget["worstFrameMs"], json!(10.0));
    assert_eq!(
        budget["costliestCall"],
        json!({"action": "budget_test.work", "ms": 10.0})
    );
}

#[test]
fn an_action_known_to_need_the_whole_budget_runs_alone() {
    let mut harness = budgeted_sandbox();
    // budget_test.work is learnt to be heavy; light_work stays light.
    let learnt = queue(&mut harness, &[("big", 10)]);
    assert_eq!(frame(&mut harness), ["big"]);
    answered(&mut harness, &learnt);
    let pending = queue_actions(
        &mut harness,
        &[
            ("light_work", "small", 1),
            ("work", "big again", 10),
            ("light_work", "last", 1),
        ],
    );
    assert_eq!(
        frame(&mut harness),
        ["small"],
        "the heavy one does not start second"
    );
    assert_eq!(frame(&mut harness), ["big again"], "it runs alone");
    assert_eq!(frame(&mut harness), ["last"]);
    answered(&mut harness, &pending);
}

#[test]
fn nobody_starves_when_every_call_costs_most_of_the_budget() {
    let mut harness = budgeted_sandbox();
    let labels: Vec<String> = (0..7).map(|index| format!("call {index}")).collect();
    let calls: Vec<(&str, u64)> = labels.iter().map(|label| (label.as_str(), 2)).collect();
    let pending = queue(&mut harness, &calls);
    let mut order = Vec::new();
    for _ in 0..4 {
        let ran = frame(&mut harness);
        assert!(
            ran.len() <= 2,
            "at most two calls of two units fit in three: {ran:?}"
        );
        order.extend(ran);
    }
    assert_eq!(order, labels, "every call ran, in arrival order");
    answered(&mut harness, &pending);
}

#[test]
fn a_game_can_keep_frames_to_itself() {
    let mut harness = budgeted_sandbox();
    harness.world().resource_mut::<PauseBridgeWork>().0 = true;
    let pending = queue(&mut harness, &[("waits", 1)]);
    for _ in 0..3 {
        assert!(
            frame(&mut harness).is_empty(),
            "no bridge work while paused"
        );
    }
    harness.world().resource_mut::<PauseBridgeWork>().0 = false;
    assert_eq!(frame(&mut harness), ["waits"]);
    answered(&mut harness, &pending);
    let budget = budget_diagnostics(&mut harness);
    assert_eq!(budget["pausedFrames"], json!(3));
}
