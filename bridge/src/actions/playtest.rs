//! `playtest`: `expect`, one condition on the world, answered pass or fail with what was found
//! and how it differs (field checks share `inspect.query`'s tests, [`FieldTest`]: the path is
//! checked against the type and the value read as the field's type before anything is
//! compared); recording; and `run`, a script replayed in the running app
//! ([`run`](crate::playtest::run)).

use bevy::prelude::{Entity, World};
use bevy_mcp_generated::params::{
    EntityRef, InspectQueryParamsWhereItemOp as Op, PlaytestExpectParams,
    PlaytestExpectParamsCount, PlaytestExpectParamsOp, PlaytestListScriptsParams,
    PlaytestRecordStartParams, PlaytestRecordStopParams, PlaytestRunParams,
};
use serde_json::{Value, json};

use super::inspect::query::{FieldTest, Holder, compare, op_name};
use crate::error::BridgeError;
use crate::playtest::{record, run};
use crate::reflect::names;
use crate::reflect::names::{component_id, resolve_component, resolve_entity};
use crate::reflect::world::plain_entities;
use crate::reflect::world::resource_entity;
use crate::runtime::action::{Action, Footprint};
use crate::runtime::job::Outcome;

/// Differences listed at most.
const MAX_DIFFERENCES: usize = 20;

/// Why recording is not undoable.
const SCRIPT_ONLY: &str = "it records a playtest script and leaves the world as it was";

/// `playtest.expect`.
pub(crate) const EXPECT: Action<PlaytestExpectParams> =
    Action::run(|world, params| expect(world, &params));
/// `playtest.record_start`.
pub(crate) const RECORD_START: Action<PlaytestRecordStartParams> =
    Action::run(|world, params| record::start_recording(world, &params))
        .touching(|_, _| Footprint::not_undoable(SCRIPT_ONLY));
/// `playtest.record_stop`.
pub(crate) const RECORD_STOP: Action<PlaytestRecordStopParams> =
    Action::run(|world, _| record::stop_recording(world))
        .touching(|_, _| Footprint::not_undoable(SCRIPT_ONLY));
/// `playtest.run`: a script replayed in the running app, a step per call, over frames.
pub(crate) const RUN: Action<PlaytestRunParams> =
    Action::run_long(|world, params: PlaytestRunParams| {
        match run::start_run(world, &params.name, params.restore) {
            Ok(job) => Outcome::Running(Box::new(job)),
            Err(error) => Outcome::Done(Err(error)),
        }
    })
    .touching(|_, _| {
        Footprint::not_undoable("its steps are journaled one by one, as the session replay")
    });
/// `playtest.list_scripts`.
pub(crate) const LIST_SCRIPTS: Action<PlaytestListScriptsParams> =
    Action::read(|world, _| record::list_scripts(world));

fn op_of(op: PlaytestExpectParamsOp) -> Op {
    match op {
        PlaytestExpectParamsOp::Eq => Op::Eq,
        PlaytestExpectParamsOp::Ne => Op::Ne,
        PlaytestExpectParamsOp::Lt => Op::Lt,
        PlaytestExpectParamsOp::Le => Op::Le,
        PlaytestExpectParamsOp::Gt => Op::Gt,
        PlaytestExpectParamsOp::Ge => Op::Ge,
        PlaytestExpectParamsOp::Contains => Op::Contains,
    }
}

/// What an expectation found, before it is judged.
struct Found {
    check: &'static str,
    subject: String,
    expected: Value,
    actual: Value,
    pass: bool,
    tolerance: f64,
}

fn expect(world: &mut World, params: &PlaytestExpectParams) -> Result<Value, BridgeError> {
    let op = op_of(params.op);
    let path = params.path.as_deref().unwrap_or_default();
    let found = match (
        &params.entity,
        &params.component,
        &params.resource,
        params.exists,
        &params.count,
    ) {
        (Some(entity), Some(component), None, None, None) => {
            let entity = resolve_entity(world, entity)?;
            field_check(
                world,
                params,
                op,
                Holder::Component,
                component,
                path,
                entity,
            )?
        }
        (None, None, Some(resource), None, None) => {
            let registry = names::registry(world);
            let entity = {
                let registry = registry.read();
                let registration = names::resolve_type(&registry, resource)?;
                resource_entity(world, registration)?.0
            };
            field_check(world, params, op, Holder::Resource, resource, path, entity)?
        }
        (Some(entity), None, None, Some(exists), None) => existence(world, entity, exists),
        (None, None, None, None, Some(count)) => counted(world, params, op, count)?,
        _ => {
            return Err(BridgeError::InvalidParams(
                "name one check: entity and component (a component field), resource (a resource \
                 field), entity and exists (whether it exists), or count (how many entities)"
                    .to_owned(),
            ));
        }
    };
    Ok(judged(found, op))
}

fn required_value(params: &PlaytestExpectParams) -> Result<&Value, BridgeError> {
    params.value.as_ref().ok_or_else(|| {
        BridgeError::InvalidParams(
            "value is missing: say what the field or count should be compared with".to_owned(),
        )
    })
}

#[allow(clippy::too_many_arguments)] // the parts of one check, as the call names them
fn field_check(
    world: &World,
    params: &PlaytestExpectParams,
    op: Op,
    holder: Holder,
    type_name: &str,
    path: &str,
    entity: Entity,
) -> Result<Found, BridgeError> {
    let value = required_value(params)?;
    let registry = names::registry(world);
    let registry = registry.read();
    let test = FieldTest::new(
        world,
        &registry,
        "expect".to_owned(),
        holder,
        type_name,
        path,
        op,
        value,
        params.tolerance,
    )?;
    let short = test
        .type_path()
        .rsplit("::")
        .next()
        .unwrap_or(test.type_path());
    let subject = match holder {
        Holder::Component => {
            let who = world
                .get::<bevy::prelude::Name>(entity)
                .map_or_else(|| entity.to_string(), |name| name.as_str().to_owned());
            format!("{who}: {short}{path}")
        }
        Holder::Resource => format!("{short}{path}"),
    };
    let actual = test.field(world, &registry, entity);
    let pass = match &actual {
        Some(actual) => test.passes(actual)?,
        None => false,
    };
    Ok(Found {
        check: match holder {
            Holder::Component => "component",
            Holder::Resource => "resource",
        },
        subject,
        expected: test.expected().clone(),
        actual: actual.unwrap_or(Value::Null),
        pass,
        tolerance: params.tolerance.unwrap_or(0.0),
    })
}

fn existence(world: &mut World, entity: &EntityRef, exists: bool) -> Found {
    let subject = match entity {
        EntityRef::Bits(bits) => bits.to_string(),
        EntityRef::Text(text) => text.clone(),
    };
    let found = match resolve_entity(world, entity) {
        Ok(_) | Err(BridgeError::AmbiguousEntity { .. }) => true,
        Err(_) => false,
    };
    Found {
        check: "exists",
        subject,
        expected: json!(exists),
        actual: json!(found),
        pass: found == exists,
        tolerance: 0.0,
    }
}

fn counted(
    world: &World,
    params: &PlaytestExpectParams,
    op: Op,
    count: &PlaytestExpectParamsCount,
) -> Result<Found, BridgeError> {
    let value = required_value(params)?;
    let registry = names::registry(world);
    let registry = registry.read();
    let ids = |names: &[String]| {
        names
            .iter()
            .map(|name| {
                let (registration, _) = resolve_component(&registry, name)?;
                Ok(component_id(world, registration.type_id()))
            })
            .collect::<Result<Vec<_>, BridgeError>>()
    };
    let with = ids(&count.with)?;
    let without = ids(count.without.as_deref().unwrap_or_default())?;
    let has = |entity: Entity, id: &Option<bevy::ecs::component::ComponentId>| {
        id.is_some_and(|id| {
            world
                .get_entity(entity)
                .is_ok_and(|entity| entity.contains_id(id))
        })
    };
    let total = plain_entities(world)
        .into_iter()
        .filter(|entity| {
            with.iter().all(|id| has(*entity, id)) && !without.iter().any(|id| has(*entity, id))
        })
        .count();
    let actual = json!(total);
    let pass = compare(op, &actual, value, params.tolerance.unwrap_or(0.0)).ok_or_else(|| {
        BridgeError::InvalidParams(format!(
            "a count is compared with a number; value is {value}"
        ))
    })?;
    let mut subject = format!("entities with {}", count.with.join(", "));
    if let Some(without) = &count.without {
        subject.push_str(&format!(" without {}", without.join(", ")));
    }
    Ok(Found {
        check: "count",
        subject,
        expected: value.clone(),
        actual,
        pass,
        tolerance: params.tolerance.unwrap_or(0.0),
    })
}

fn judged(found: Found, op: Op) -> Value {
    let op = op_name(op);
    let message = if found.pass {
        format!(
            "pass: {} is {} ({op} {})",
            found.subject, found.actual, found.expected
        )
    } else if found.actual.is_null() {
        format!(
            "fail: {} has no value (the entity lacks it, or the field is another variant)",
            found.subject
        )
    } else {
        format!(
            "fail: {} is {}, expected {op} {}",
            found.subject, found.actual, found.expected
        )
    };
    let mut answer = json!({
        "pass": found.pass,
        "check": found.check,
        "subject": found.subject,
        "op": op,
        "expected": found.expected,
        "actual": found.actual,
        "message": message,
    });
    if !found.pass {
        let mut differences = Vec::new();
        differ(
            "",
            &found.expected,
            &found.actual,
            found.tolerance,
            &mut differences,
        );
        answer["diff"] = json!(differences);
    }
    answer
}

/// The parts where `actual` differs from `expected` (numbers beyond `tolerance`), by JSON path.
fn differ(path: &str, expected: &Value, actual: &Value, tolerance: f64, out: &mut Vec<Value>) {
    if out.len() >= MAX_DIFFERENCES {
        return;
    }
    match (expected, actual) {
        (Value::Number(a), Value::Number(b)) => {
            // Also under an ordering op (lt, gt...), where equal numbers fail: say by how much.
            let difference = match (a.as_f64(), b.as_f64()) {
                (Some(want), Some(have)) => json!(have - want),
                _ => Value::Null,
            };
            out.push(json!({"path": path, "expected": expected, "actual": actual, "difference": difference}));
        }
        (Value::Object(want), Value::Object(have)) => {
            let keys: std::collections::BTreeSet<&String> =
                want.keys().chain(have.keys()).collect();
            for key in keys {
                let nested = format!("{path}.{key}");
                match (want.get(key), have.get(key)) {
                    (Some(a), Some(b)) if compare(Op::Eq, b, a, tolerance) == Some(true) => {}
                    (Some(a), Some(b)) => differ(&nested, a, b, tolerance, out),
                    (a, b) => out.push(json!({"path": nested, "expected": a, "actual": b})),
                }
            }
        }
        (Value::Array(want), Value::Array(have)) if want.len() == have.len() => {
            for (index, (a, b)) in want.iter().zip(have).enumerate() {
                if compare(Op::Eq, b, a, tolerance) != Some(true) {
                    differ(&format!("{path}[{index}]"), a, b, tolerance, out);
                }
            }
        }
        _ => out.push(json!({"path": path, "expected": expected, "actual": actual})),
    }
}
