//! A reflective fuzzer over every registered component, resource, event and message type of an
//! app with the bridge (the sandbox in `reflective_fuzz.rs`; the sandbox drawn with what real
//! games render in `engine_fuzz.rs`).
//!
//! For each type it tries the generic writes an agent can make (insert, spawn with, mutate at
//! every reachable field path, on a fresh entity or on one of the world's own holders, remove,
//! trigger, write) with extreme values: 0, -1, numbers that overflow an f32 into infinity, the
//! largest integers, empty and huge strings, dead entities and self-references, and values of the
//! wrong shape. Every call goes through the real `Dispatch` path (typed parse, mailbox, game
//! thread). After each call frames run, and the run fails when:
//!
//! - the app panics, asks to exit, or stops answering (`control_app.get_state`);
//! - a handler panicked (caught by the bridge, but still a path that must not exist);
//! - a refused call changed anything the bridge can see (entities, components, resources);
//! - the plan's own check after a case fails (the engine fuzzer: a render error happened).
//!
//! The run is seeded and bounded; the seed and the number of cases are written to stderr, and
//! `BRIDGE_FUZZ_ONLY=<text>` narrows it to the types whose path holds the text
//! (`BRIDGE_FUZZ_TRACE=1` writes each case as it starts). A
//! watchdog fails the test, naming the case, when one case makes no progress for
//! [`STALL_LIMIT`]: that is a hang detector, not a speed assertion.

#![allow(dead_code)] // Some parts serve only the render-gated tests.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write as _;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use bevy::ecs::observer::Observer;
use bevy::ecs::reflect::{ReflectComponent, ReflectEvent, ReflectMessage, ReflectResource};
use bevy::ecs::resource::IsResource;
use bevy::prelude::{AppTypeRegistry, Entity, Name, Time, Transform, Virtual, World};
use bevy::reflect::enums::VariantInfo;
use bevy::reflect::serde::TypedReflectSerializer;
use bevy::reflect::std_traits::ReflectDefault;
use bevy::reflect::{TypeInfo, TypeRegistry};
use bevy_mcp_sandbox::testing::Harness;
use parking_lot::Mutex;
use serde_json::{Value, json};

/// A case that makes no progress for this long is reported as a hang.
const STALL_LIMIT: Duration = Duration::from_secs(120);
/// Field paths followed this deep into a type.
const PATH_DEPTH: usize = 4;

/// What one fuzz run does.
pub struct Plan {
    /// The name written to stderr.
    pub name: &'static str,
    /// The seed.
    pub seed: u64,
    /// Builds the app (on the fuzz thread: an app stays on the thread that made it).
    pub harness: fn() -> Result<Harness, String>,
    /// Cases for each type.
    pub cases_for: Box<dyn Fn(&Target) -> usize + Send>,
    /// Frames run after each accepted call.
    pub settle_frames: usize,
    /// A check after each case: `Err` names what broke.
    pub after_case: fn(&mut Harness) -> Result<(), String>,
}

/// Reads a number from the environment, or `default`.
pub fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(default)
}

/// What the watchdog sees of the run.
#[derive(Default)]
struct Progress {
    case: usize,
    description: String,
    changed: Option<Instant>,
}

/// Runs the plan on its own thread under the watchdog; panics (with the seed and the case) when
/// a case fails, and returns what ran.
pub fn fuzz(plan: Plan) -> Option<Summary> {
    let seed = plan.seed;
    let name = plan.name;
    let progress = Arc::new(Mutex::new(Progress::default()));
    let (done, finished) = mpsc::channel();
    let shared = Arc::clone(&progress);
    let fuzz = std::thread::Builder::new()
        .name("reflective-fuzz".to_owned())
        .spawn(move || {
            let outcome = catch_unwind(AssertUnwindSafe(|| run(plan, &shared)));
            let _ = done.send(outcome.map_err(|payload| panic_text(payload.as_ref())));
        })
        .unwrap_or_else(|error| panic!("spawn the fuzz thread: {error}"));
    let report = loop {
        match finished.recv_timeout(Duration::from_secs(1)) {
            Ok(outcome) => break outcome,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let progress = progress.lock();
                if progress
                    .changed
                    .is_some_and(|changed| changed.elapsed() > STALL_LIMIT)
                {
                    panic!(
                        "seed {seed}: case {} made no progress for {STALL_LIMIT:?} (a hang): {}",
                        progress.case, progress.description
                    );
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                break Err("the fuzz thread ended without a report".to_owned());
            }
        }
    };
    let _ = fuzz.join();
    match report {
        Ok(None) => None,
        Ok(Some(summary)) => {
            let _ = writeln!(
                std::io::stderr(),
                "{name}: seed {seed}, {} cases over {} types ({} accepted, {} refused); rerun with BRIDGE_FUZZ_SEED={seed}",
                summary.cases,
                summary.types,
                summary.accepted,
                summary.refused
            );
            assert!(summary.types > 0 && summary.cases > 0, "nothing was fuzzed");
            Some(summary)
        }
        Err(failure) => {
            let progress = progress.lock();
            panic!(
                "seed {seed}: case {} failed: {}\n{failure}",
                progress.case, progress.description
            );
        }
    }
}

fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|text| (*text).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned())
}

/// What a run did.
#[derive(Debug, Default)]
pub struct Summary {
    /// Types fuzzed.
    pub types: usize,
    /// Cases run.
    pub cases: usize,
    /// Calls accepted.
    pub accepted: usize,
    /// Calls refused.
    pub refused: usize,
}

/// The reflected kinds of one registered type the generic actions can reach.
#[derive(Debug, Clone)]
pub struct Target {
    /// The type's path.
    pub type_path: String,
    component: bool,
    resource: bool,
    event: bool,
    message: bool,
    default: Option<Value>,
    /// Reflect paths (the empty one first) with the type each reaches.
    paths: Vec<FieldPath>,
    /// Unit variant names of every enum the type holds, for string leaves of whole values.
    variants: Vec<String>,
}

/// A reflect path into a type and what it reaches.
#[derive(Debug, Clone, Default)]
struct FieldPath {
    path: String,
    type_path: String,
    info: Option<&'static TypeInfo>,
}

fn targets(world: &World) -> Vec<Target> {
    let registry = world.resource::<AppTypeRegistry>().clone();
    let registry = registry.read();
    let mut found: Vec<Target> = registry
        .iter()
        .filter_map(|registration| {
            let resource = registration.data::<ReflectResource>().is_some();
            let component = registration.data::<ReflectComponent>().is_some() && !resource;
            let event = registration.data::<ReflectEvent>().is_some();
            let message = registration.data::<ReflectMessage>().is_some();
            if !(component || resource || event || message) {
                return None;
            }
            let info = registration.type_info();
            let default = registration.data::<ReflectDefault>().and_then(|default| {
                let value = default.default();
                serde_json::to_value(TypedReflectSerializer::new(
                    value.as_partial_reflect(),
                    &registry,
                ))
                .ok()
            });
            let mut paths = vec![FieldPath {
                path: String::new(),
                type_path: info.type_path().to_owned(),
                info: Some(info),
            }];
            field_paths(info, "", PATH_DEPTH, &mut paths);
            let mut variants: Vec<String> = paths
                .iter()
                .filter_map(|field| match field.info {
                    Some(TypeInfo::Enum(info)) => Some(info.variant_names()),
                    _ => None,
                })
                .flatten()
                .map(|name| (*name).to_owned())
                .collect();
            variants.sort();
            variants.dedup();
            Some(Target {
                type_path: info.type_path().to_owned(),
                component,
                resource,
                event,
                message,
                default,
                paths,
                variants,
            })
        })
        .collect();
    found.sort_by(|a, b| a.type_path.cmp(&b.type_path));
    found
}

/// Reflect paths into a type with the type path of what each reaches.
fn field_paths(info: &TypeInfo, prefix: &str, depth: usize, out: &mut Vec<FieldPath>) {
    if depth == 0 {
        return;
    }
    let mut visit = |segment: String, type_path: &str, child: Option<&'static TypeInfo>| {
        let path = format!("{prefix}{segment}");
        out.push(FieldPath {
            path: path.clone(),
            type_path: type_path.to_owned(),
            info: child,
        });
        if let Some(child) = child {
            field_paths(child, &path, depth - 1, out);
        }
    };
    match info {
        TypeInfo::Struct(info) => {
            for field in info.iter() {
                visit(
                    format!(".{}", field.name()),
                    field.type_path(),
                    field.type_info(),
                );
            }
        }
        TypeInfo::TupleStruct(info) => {
            for field in info.iter() {
                visit(
                    format!(".{}", field.index()),
                    field.type_path(),
                    field.type_info(),
                );
            }
        }
        TypeInfo::Tuple(info) => {
            for field in info.iter() {
                visit(
                    format!(".{}", field.index()),
                    field.type_path(),
                    field.type_info(),
                );
            }
        }
        // The fields of every variant: a path reaches them while the value holds that variant.
        TypeInfo::Enum(info) => {
            let mut seen = BTreeSet::new();
            for variant in info.iter() {
                let fields: Vec<(String, &str, Option<&'static TypeInfo>)> = match variant {
                    VariantInfo::Struct(variant) => variant
                        .iter()
                        .map(|field| {
                            (
                                format!(".{}", field.name()),
                                field.type_path(),
                                field.type_info(),
                            )
                        })
                        .collect(),
                    VariantInfo::Tuple(variant) => variant
                        .iter()
                        .map(|field| {
                            (
                                format!(".{}", field.index()),
                                field.type_path(),
                                field.type_info(),
                            )
                        })
                        .collect(),
                    VariantInfo::Unit(_) => Vec::new(),
                };
                for (segment, type_path, child) in fields {
                    if seen.insert((segment.clone(), type_path.to_owned())) {
                        visit(segment, type_path, child);
                    }
                }
            }
        }
        TypeInfo::List(info) => visit("[0]".to_owned(), info.item_ty().path(), info.item_info()),
        TypeInfo::Array(info) => visit("[0]".to_owned(), info.item_ty().path(), info.item_info()),
        _ => {}
    }
}

/// Entities a value can refer to.
#[derive(Clone, Copy)]
struct EntityPool {
    victim: Entity,
    live: Entity,
    dead: Entity,
}

fn huge_string() -> String {
    "h".repeat(300 * 1024)
}

/// Extreme values for a field of this type: its enum variants, or edge values of its kind.
fn field_extremes(field: &FieldPath, entities: EntityPool) -> Vec<Value> {
    if field.type_path.starts_with("bevy_asset::handle::Handle<") {
        return handle_extremes();
    }
    if let Some(TypeInfo::Enum(info)) = field.info {
        let mut values: Vec<Value> = info
            .variant_names()
            .iter()
            .map(|name| json!(name))
            .collect();
        values.extend(
            info.variant_names()
                .iter()
                .map(|name| json!({ *name: null })),
        );
        values.push(json!("NoSuchVariant"));
        return values;
    }
    extremes(&field.type_path, entities)
}

/// Extreme values for a field of this type.
fn extremes(type_path: &str, entities: EntityPool) -> Vec<Value> {
    match type_path {
        "f32" | "f64" => vec![
            json!(0.0),
            json!(-1.0),
            // Large but finite: what a renderer or rasterizer chokes on.
            json!(100_000.0),
            json!(1e30),
            json!(f32::MAX),
            json!(1e39),
            json!(-1e39),
            json!(f64::MAX),
            json!(f64::MIN_POSITIVE),
            json!(-0.0),
        ],
        "u8" => vec![json!(0), json!(u8::MAX), json!(256), json!(-1)],
        "u16" => vec![json!(0), json!(u16::MAX), json!(65_536), json!(-1)],
        "u32" => vec![
            json!(0),
            json!(u32::MAX),
            json!(u64::from(u32::MAX) + 1),
            json!(-1),
        ],
        "u64" | "u128" | "usize" => vec![json!(0), json!(u64::MAX), json!(-1)],
        "i8" => vec![json!(0), json!(-1), json!(i8::MIN), json!(i8::MAX)],
        "i16" => vec![json!(0), json!(-1), json!(i16::MIN), json!(i16::MAX)],
        "i32" => vec![json!(0), json!(-1), json!(i32::MIN), json!(i32::MAX)],
        "i64" | "i128" | "isize" => vec![json!(0), json!(-1), json!(i64::MIN), json!(i64::MAX)],
        "bool" => vec![json!(true), json!(false)],
        "alloc::string::String" | "alloc::borrow::Cow<str>" => {
            vec![json!(""), json!(huge_string()), json!("\u{0}")]
        }
        "bevy_ecs::entity::Entity" => vec![
            json!(entities.victim.to_bits()),
            json!(entities.live.to_bits()),
            json!(entities.dead.to_bits()),
            json!(0),
            json!(u64::MAX),
            // The display form replies use ("12v1"), which values accept too.
            json!(entities.victim.to_string()),
            json!(entities.dead.to_string()),
            json!("4294967295v4294967295"),
            json!("0v"),
        ],
        "core::time::Duration" => vec![
            json!({"secs": 0, "nanos": 0}),
            json!({"secs": u64::MAX, "nanos": 999_999_999}),
        ],
        _ => junk(),
    }
}

/// Handles of every form, right and wrong: files that exist, are missing, lie outside the asset
/// folder or have no loader; ids that name nothing; new assets of the right and wrong shape, huge
/// and degenerate shapes and materials.
fn handle_extremes() -> Vec<Value> {
    let red = json!({"Srgba": {"red": 1.0, "green": 0.0, "blue": 0.0, "alpha": 1.0}});
    let mut values = vec![
        json!("hello.note"),
        json!("notes/briefing.note"),
        json!("hello.note#label"),
        json!("missing.png"),
        json!("../outside.png"),
        json!("/etc/passwd"),
        json!("embedded://bevy_pbr/render/pbr.wgsl"),
        json!({"path": "hello.note", "type": "bevy_mcp_sandbox::Note"}),
        json!({"path": "hello.note", "type": "NoSuchType"}),
        json!({"asset": "0"}),
        json!({"asset": "18446744073709551615"}),
        json!({"asset": "7b1e3a36-0000-4000-8000-000000000000"}),
        json!({"asset": "not an id"}),
        json!({"asset": 3}),
        json!({"new": {}}),
        json!({"new": null}),
        json!({"new": {"text": "made by the fuzzer"}}),
        json!({"new": {"Cuboid": {}}}),
        json!({"new": {"Cuboid": {"half_size": [0.5, 0.5, 0.5]}}}),
        json!({"new": {"Cuboid": {"half_size": [1e9, 1e9, 1e9]}}}),
        json!({"new": {"Sphere": {"radius": -1.0}}}),
        json!({"new": {"Sphere": {"radius": 1e39}}}),
        json!({"new": {"RegularPolygon": {"circumcircle": {"radius": 1.0}, "sides": 100_000_000}}}),
        json!({"new": {"RegularPolygon": {"circumcircle": {"radius": 1.0}, "sides": 0}}}),
        json!({"new": {"Torus": {"minor_radius": 0.0, "major_radius": 0.0}}}),
        json!({"new": {"NoSuchShape": {}}}),
        json!({"new": {"Cuboid": {}, "Sphere": {}}}),
        json!({"new": {"base_color": red}}),
        json!({"new": {"max_parallax_layer_count": 1e9}}),
        json!({"new": {"parallax_mapping_method": {"Relief": {"max_steps": 4_000_000_000_u32}}}}),
        json!({"new": {"color": red}}),
        json!({"new": {"text": "x"}, "asset": "0"}),
    ];
    values.extend(junk());
    values
}

/// Values of the wrong shape for almost anything.
fn junk() -> Vec<Value> {
    vec![
        Value::Null,
        json!(0),
        json!(-1),
        json!(1e39),
        json!(""),
        json!(huge_string()),
        json!([]),
        json!({}),
        json!({"unexpected": 1}),
        json!([1, 2, 3]),
        json!(true),
    ]
}

/// Every JSON pointer to a leaf (or an empty container) of `value`.
fn leaf_pointers(value: &Value, prefix: String, out: &mut Vec<String>) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (key, item) in map {
                leaf_pointers(
                    item,
                    format!("{prefix}/{}", key.replace('~', "~0").replace('/', "~1")),
                    out,
                );
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for (index, item) in items.iter().enumerate() {
                leaf_pointers(item, format!("{prefix}/{index}"), out);
            }
        }
        _ => out.push(prefix),
    }
}

/// Extremes for a JSON leaf of this kind.
fn json_extremes(leaf: &Value, variants: &[String], entities: EntityPool) -> Vec<Value> {
    match leaf {
        Value::Number(_) => {
            let mut values = extremes("f64", entities);
            for integer in ["i64", "u8", "u16", "u32", "i8", "i16", "i32"] {
                values.extend(extremes(integer, entities));
            }
            values.push(json!(entities.dead.to_bits()));
            values.push(json!(entities.victim.to_bits()));
            values
        }
        Value::String(_) => {
            let mut values = extremes("alloc::string::String", entities);
            values.extend(variants.iter().map(|name| json!(name)));
            values
        }
        Value::Bool(flag) => vec![json!(!flag), Value::Null],
        _ => junk(),
    }
}

/// A whole value to write as this type: its default with one leaf made extreme, or junk.
fn whole_value(target: &Target, entities: EntityPool, rng: &mut fastrand::Rng) -> Value {
    let Some(default) = target.default.as_ref().filter(|_| rng.u8(..4) != 0) else {
        return pick(rng, junk());
    };
    let mut pointers = Vec::new();
    leaf_pointers(default, String::new(), &mut pointers);
    let pointer = pick(rng, pointers);
    let Some(leaf) = default.pointer(&pointer) else {
        return default.clone();
    };
    let extreme = pick(rng, json_extremes(leaf, &target.variants, entities));
    if pointer.is_empty() {
        return extreme;
    }
    let mut value = default.clone();
    if let Some(slot) = value.pointer_mut(&pointer) {
        *slot = extreme;
    }
    value
}

/// One of `items`, or null when there are none.
fn pick<T: Default>(rng: &mut fastrand::Rng, mut items: Vec<T>) -> T {
    if items.is_empty() {
        return T::default();
    }
    let index = rng.usize(..items.len());
    items.swap_remove(index)
}

/// The numeric leaf types.
const NUMBERS: &[&str] = &[
    "f32", "f64", "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128",
    "isize",
];

/// One call: `(tool, action, params)`.
type Case = (&'static str, &'static str, Value);

/// The generic writes that reach a type.
#[derive(Clone, Copy, Debug)]
enum Write {
    Insert,
    Spawn,
    Mutate,
    Remove,
    InsertResource,
    MutateResource,
    ResetResource,
    RemoveResource,
    Trigger,
    Send,
}

fn writes(target: &Target) -> Vec<Write> {
    let mut writes = Vec::new();
    if target.component {
        writes.extend([Write::Insert, Write::Spawn, Write::Mutate, Write::Remove]);
    }
    if target.resource {
        writes.extend([
            Write::InsertResource,
            Write::MutateResource,
            Write::ResetResource,
            Write::RemoveResource,
        ]);
    }
    if target.event {
        writes.push(Write::Trigger);
    }
    if target.message {
        writes.push(Write::Send);
    }
    writes
}

/// One seeded case for `target`.
fn pick_case(
    target: &Target,
    entities: EntityPool,
    holder: Option<Entity>,
    rng: &mut fastrand::Rng,
) -> Option<Case> {
    let type_path = target.type_path.as_str();
    let victim = entities.victim.to_bits();
    let writes = writes(target);
    let write = *writes.get(rng.usize(..writes.len().max(1)))?;
    let mutation = |rng: &mut fastrand::Rng| {
        // Numbers are where engines break: half the mutations go to a numeric field.
        let numeric: Vec<FieldPath> = target
            .paths
            .iter()
            .filter(|field| NUMBERS.contains(&field.type_path.as_str()))
            .cloned()
            .collect();
        let field = if !numeric.is_empty() && rng.bool() {
            pick(rng, numeric)
        } else {
            pick(rng, target.paths.clone())
        };
        let value = pick(rng, field_extremes(&field, entities));
        (field.path, value)
    };
    Some(match write {
        Write::Insert => (
            "control_entity",
            "insert_components",
            json!({"entity": holder.map_or(victim, Entity::to_bits), "components": {type_path: whole_value(target, entities, rng)}}),
        ),
        Write::Spawn => (
            "control_entity",
            "spawn",
            json!({"components": {type_path: whole_value(target, entities, rng)}}),
        ),
        Write::Mutate => {
            let (path, value) = mutation(rng);
            let entity = holder.map_or(victim, Entity::to_bits);
            (
                "control_entity",
                "mutate_component",
                json!({"entity": entity, "component": type_path, "path": path, "value": value}),
            )
        }
        Write::Remove => (
            "control_entity",
            "remove_components",
            json!({"entity": victim, "components": [type_path]}),
        ),
        Write::InsertResource => (
            "manage_resource",
            "insert",
            json!({"resource": type_path, "value": whole_value(target, entities, rng)}),
        ),
        Write::MutateResource => {
            let (path, value) = mutation(rng);
            (
                "manage_resource",
                "mutate",
                json!({"resource": type_path, "path": path, "value": value}),
            )
        }
        Write::ResetResource => (
            "manage_resource",
            "reset_to_default",
            json!({"resource": type_path}),
        ),
        Write::RemoveResource => ("manage_resource", "remove", json!({"resource": type_path})),
        Write::Trigger => (
            "manage_events",
            "trigger_event",
            json!({"event": type_path, "value": whole_value(target, entities, rng)}),
        ),
        Write::Send => (
            "manage_events",
            "write_message",
            json!({"message": type_path, "value": whole_value(target, entities, rng)}),
        ),
    })
}

/// Everything the bridge can see: each plain entity's reflected components and each reflected
/// resource, as JSON text keyed by `entity/type` or `resource/type`.
fn fingerprint(world: &mut World) -> BTreeMap<String, String> {
    let registry = world.resource::<AppTypeRegistry>().clone();
    let registry = registry.read();
    let mut seen = BTreeMap::new();
    let entities: Vec<Entity> = world
        .iter_entities()
        .filter(|entity| !entity.contains::<Observer>())
        .map(|entity| entity.id())
        .collect();
    for entity in entities {
        let Ok(entity_ref) = world.get_entity(entity) else {
            continue;
        };
        let is_resource = entity_ref.contains::<IsResource>();
        for id in entity_ref.archetype().components().iter() {
            let Some(registration) = world
                .components()
                .get_info(*id)
                .and_then(|info| info.type_id())
                .and_then(|type_id| registry.get(type_id))
            else {
                continue;
            };
            let Some(component) = registration.data::<ReflectComponent>() else {
                continue;
            };
            let text = component
                .reflect(entity_ref)
                .map(|value| serialize(value.as_partial_reflect(), &registry))
                .unwrap_or_default();
            let key = if is_resource {
                format!("resource/{}", registration.type_info().type_path())
            } else {
                format!("{entity}/{}", registration.type_info().type_path())
            };
            seen.insert(key, text);
        }
    }
    seen
}

fn serialize(value: &dyn bevy::reflect::PartialReflect, registry: &TypeRegistry) -> String {
    serde_json::to_string(&TypedReflectSerializer::new(value, registry))
        .unwrap_or_else(|error| format!("<unserializable: {error}>"))
}

struct Fuzzer {
    harness: Harness,
    /// Keys that change by themselves from one frame to the next (clocks, counters).
    volatile: BTreeSet<String>,
    settle_frames: usize,
    after_case: fn(&mut Harness) -> Result<(), String>,
}

impl Fuzzer {
    fn new(
        mut harness: Harness,
        settle_frames: usize,
        after_case: fn(&mut Harness) -> Result<(), String>,
    ) -> Fuzzer {
        // Game time stands still, so nothing moves between the two looks at a refused call.
        harness.world().resource_mut::<Time<Virtual>>().pause();
        harness.run_frames(settle_frames.max(1));
        let mut fuzzer = Fuzzer {
            harness,
            volatile: BTreeSet::new(),
            settle_frames,
            after_case,
        };
        let quiet = fuzzer.changes_by_itself();
        fuzzer.volatile = quiet;
        fuzzer
    }

    /// Keys that differ across one frame without any call.
    fn changes_by_itself(&mut self) -> BTreeSet<String> {
        let before = fingerprint(self.harness.world());
        self.harness.run_frames(1);
        let after = fingerprint(self.harness.world());
        differing(&before, &after)
    }

    fn fresh_victim(&mut self) -> EntityPool {
        let world = self.harness.world();
        let victim = world
            .spawn((Name::new("FuzzVictim"), Transform::default()))
            .id();
        let dead = world.spawn_empty().id();
        world.despawn(dead);
        let live = world
            .query::<(Entity, &Name)>()
            .iter(world)
            .find(|(_, name)| name.as_str() == "Player")
            .map_or(victim, |(entity, _)| entity);
        // What the game adds to a new named entity (the drawn sandbox gives it a sprite) and
        // what Bevy computes from that (visibility) settles now, not during the first case.
        self.harness.run_frames(3);
        EntityPool { victim, live, dead }
    }

    /// One of the world's own entities holding the target component, half the time (so inserts
    /// and mutations reach what the game draws, not only the victim).
    fn holder_of(
        &mut self,
        target: &Target,
        keep: &BTreeSet<Entity>,
        rng: &mut fastrand::Rng,
    ) -> Option<Entity> {
        if !target.component || rng.bool() {
            return None;
        }
        let world = self.harness.world();
        let registry = world.resource::<AppTypeRegistry>().clone();
        let type_id = registry
            .read()
            .get_with_type_path(&target.type_path)?
            .type_id();
        let id = world.components().get_id(type_id)?;
        let holders: Vec<Entity> = world
            .iter_entities()
            .filter(|entity| keep.contains(&entity.id()) && entity.contains_id(id))
            .map(|entity| entity.id())
            .collect();
        (!holders.is_empty()).then(|| holders[rng.usize(..holders.len())])
    }

    /// Runs one case; `Ok(accepted)` or a description of what broke.
    fn run_case(&mut self, case: &Case) -> Result<bool, String> {
        let (tool, action, params) = case;
        let before = fingerprint(self.harness.world());
        let answer = self.harness.call(tool, action, params.clone());
        let accepted = match &answer {
            Ok(_) => true,
            Err(error) if error.code == "HANDLER_PANICKED" => {
                return Err(format!("a handler panicked: {error}"));
            }
            Err(_) => false,
        };
        if !accepted {
            let after = fingerprint(self.harness.world());
            let mut changed = differing(&before, &after);
            changed.retain(|key| !self.volatile.contains(key));
            if !changed.is_empty() {
                // Something may change by itself only now (a value a system reacts to): look again
                // across a quiet frame before calling it a change made by the refused call.
                let quiet = self.changes_by_itself();
                changed.retain(|key| !quiet.contains(key));
                self.volatile.extend(quiet);
            }
            if !changed.is_empty() {
                return Err(format!(
                    "the call was refused ({}) but changed {changed:?}",
                    answer
                        .err()
                        .map(|error| error.to_string())
                        .unwrap_or_default()
                ));
            }
        }
        if accepted {
            self.harness.run_frames(self.settle_frames);
        }
        if let Some(exit) = self.harness.app.should_exit() {
            return Err(format!("the app was asked to exit ({exit:?})"));
        }
        (self.after_case)(&mut self.harness)?;
        self.harness
            .call("control_app", "get_state", json!({}))
            .map_err(|error| format!("the app stopped answering: {error}"))?;
        Ok(accepted)
    }

    /// Despawns what the case spawned and the victim, so cases stay independent and cheap.
    fn clean_up(&mut self, entities: EntityPool, keep: &BTreeSet<Entity>) {
        let world = self.harness.world();
        let spawned: Vec<Entity> = world
            .iter_entities()
            .filter(|entity| {
                !keep.contains(&entity.id())
                    && !entity.contains::<IsResource>()
                    && !entity.contains::<Observer>()
            })
            .map(|entity| entity.id())
            .collect();
        for entity in spawned.into_iter().chain([entities.victim]) {
            if let Ok(entity_mut) = world.get_entity_mut(entity) {
                entity_mut.despawn();
            }
        }
    }
}

fn differing(
    before: &BTreeMap<String, String>,
    after: &BTreeMap<String, String>,
) -> BTreeSet<String> {
    before
        .keys()
        .chain(after.keys())
        .filter(|key| before.get(*key) != after.get(*key))
        .cloned()
        .collect()
}

/// Cases run against one victim entity before it is replaced.
const ROUND: usize = 64;

fn run(plan: Plan, progress: &Mutex<Progress>) -> Option<Summary> {
    let mut rng = fastrand::Rng::with_seed(plan.seed);
    // `BRIDGE_FUZZ_TRACE=1` writes every case to stderr as it starts.
    let trace = std::env::var_os("BRIDGE_FUZZ_TRACE").is_some();
    let harness = match (plan.harness)() {
        Ok(harness) => harness,
        Err(reason) => {
            assert!(std::env::var_os("CI").is_none(), "{reason}");
            let _ = writeln!(std::io::stderr(), "skipping {}: {reason}", plan.name);
            return None;
        }
    };
    let mut fuzzer = Fuzzer::new(harness, plan.settle_frames, plan.after_case);
    let mut targets = targets(fuzzer.harness.world());
    // `BRIDGE_FUZZ_ONLY=TextFont` fuzzes only the types whose path holds that text.
    if let Ok(only) = std::env::var("BRIDGE_FUZZ_ONLY") {
        targets.retain(|target| target.type_path.contains(&only));
    }
    let mut summary = Summary {
        types: targets.len(),
        ..Summary::default()
    };
    // The world's own entities stay (cases may change them); whatever a round spawns goes.
    let keep: BTreeSet<Entity> = fuzzer
        .harness
        .world()
        .iter_entities()
        .map(|entity| entity.id())
        .collect();
    // Every type gets its cases, interleaved in a seeded order, so a value one case leaves
    // behind meets what later cases of other types do with it.
    let mut schedule: Vec<usize> = targets
        .iter()
        .enumerate()
        .flat_map(|(index, target)| std::iter::repeat_n(index, (plan.cases_for)(target)))
        .collect();
    rng.shuffle(&mut schedule);
    for round in schedule.chunks(ROUND) {
        let entities = fuzzer.fresh_victim();
        for &index in round {
            let target = &targets[index];
            let holder = fuzzer.holder_of(target, &keep, &mut rng);
            let Some(case) = pick_case(target, entities, holder, &mut rng) else {
                continue;
            };
            let case = &case;
            {
                let mut progress = progress.lock();
                progress.case = summary.cases + 1;
                progress.description = describe(case);
                progress.changed = Some(Instant::now());
            }
            if trace {
                let _ = writeln!(
                    std::io::stderr(),
                    "case {}: {}",
                    summary.cases + 1,
                    describe(case)
                );
            }
            let outcome = catch_unwind(AssertUnwindSafe(|| fuzzer.run_case(case)));
            if trace && let Ok(Ok(accepted)) = &outcome {
                let _ = writeln!(std::io::stderr(), "  accepted: {accepted}");
            }
            match outcome {
                Ok(Ok(true)) => summary.accepted += 1,
                Ok(Ok(false)) => summary.refused += 1,
                Ok(Err(failure)) => panic!("{failure}"),
                Err(payload) => panic!("the app panicked: {}", panic_text(payload.as_ref())),
            }
            summary.cases += 1;
        }
        fuzzer.clean_up(entities, &keep);
    }
    Some(summary)
}

/// A case as text, with huge strings shortened.
fn describe(case: &Case) -> String {
    let (tool, action, params) = case;
    let mut text = format!("{tool}.{action} {params}");
    if text.len() > 600 {
        let cut = (0..=600)
            .rev()
            .find(|index| text.is_char_boundary(*index))
            .unwrap_or(0);
        text.truncate(cut);
        text.push('…');
    }
    text
}
