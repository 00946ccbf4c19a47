//! `inspect.query`: entities chosen by the components they have and by what their fields hold,
//! with their values, sorted, and paged by a cursor that entities added between pages do not
//! invalidate (the cursor is the position of the last row, not an offset).

use std::cmp::Ordering;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::time::Instant;

use bevy::ecs::component::ComponentId;
use bevy::ecs::reflect::ReflectComponent;
use bevy::prelude::{Entity, World};
use bevy::reflect::{ReflectSerialize, TypeInfo, TypeRegistry};
use bevy_mcp_generated::params::{InspectQueryParams, InspectQueryParamsWhereItemOp as Op};
use mcp_native_transport::ProgressSink;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::actions::object;
use crate::error::BridgeError;
use crate::reflect::names;
use crate::reflect::names::{component_id, entity_info, resolve_component};
use crate::reflect::paths::{self, check_path};
use crate::reflect::values;
use crate::reflect::world::plain_entities_in;
use crate::runtime::job::{LongJob, Outcome};

/// Characters of a string sort key that count; longer strings sort by this prefix, so a cursor
/// stays short whatever the game's strings hold.
const SORT_KEY_CHARS: usize = 256;

/// Most entities a query reads in one frame; a bigger world is read over several frames, so one
/// query never holds a frame for long (the bridge's frame budget stays the game's).
pub const QUERY_SLICE: u32 = 2_048;
/// A slice also ends once it has taken this long (checked every 64 entities): how long an
/// entity takes to read depends on the machine and on the query.
pub(crate) const QUERY_SLICE_TIME: std::time::Duration = std::time::Duration::from_micros(750);

/// Starts `inspect.query`: a world of up to [`QUERY_SLICE`] entities is answered at once, a
/// bigger one over the next frames, a slice per frame.
pub(crate) fn start(world: &mut World, params: InspectQueryParams) -> Outcome {
    let mut scan = match QueryScan::new(world, params) {
        Ok(scan) => scan,
        Err(error) => return Outcome::Done(Err(error)),
    };
    match scan.advance(world) {
        Some(result) => Outcome::Done(result),
        None => Outcome::Running(Box::new(scan)),
    }
}

/// A query reading the world in slices of entity indices, one slice per frame. Rows are read
/// when the last slice is done; entities despawned meanwhile are left out.
struct QueryScan {
    params: InspectQueryParams,
    after: Option<Cursor>,
    next_index: u32,
    matched: Vec<Entity>,
}

impl QueryScan {
    /// Checks the query and its cursor before anything is read.
    fn new(world: &World, params: InspectQueryParams) -> Result<QueryScan, BridgeError> {
        let registry = names::registry(world);
        let registry = registry.read();
        let plan = Plan::new(world, &registry, &params)?;
        let after = params
            .cursor
            .as_deref()
            .map(|cursor| Cursor::decode(cursor, plan.fingerprint))
            .transpose()?;
        Ok(QueryScan {
            params,
            after,
            next_index: 0,
            matched: Vec::new(),
        })
    }

    /// Reads the next slice; the reply once the whole world is read.
    fn advance(&mut self, world: &World) -> Option<Result<Value, BridgeError>> {
        let registry = names::registry(world);
        let registry = registry.read();
        // Resolved again each frame: a plan borrows the registry, which a job cannot hold.
        let plan = match Plan::new(world, &registry, &self.params) {
            Ok(plan) => plan,
            Err(error) => return Some(Err(error)),
        };
        let started = Instant::now();
        let end = world
            .entities()
            .len()
            .min(self.next_index.saturating_add(QUERY_SLICE));
        while self.next_index < end {
            let chunk_end = end.min(self.next_index.saturating_add(64));
            for entity in plain_entities_in(world, self.next_index..chunk_end) {
                if !plan.admits_archetype(world, entity) {
                    continue;
                }
                match plan.passes_filters(world, &registry, entity) {
                    Ok(true) => self.matched.push(entity),
                    Ok(false) => {}
                    Err(error) => return Some(Err(error)),
                }
            }
            self.next_index = chunk_end;
            if started.elapsed() >= QUERY_SLICE_TIME {
                break;
            }
        }
        if self.next_index < world.entities().len() {
            return None;
        }
        Some(Ok(page(
            world,
            &registry,
            &plan,
            &self.matched,
            self.after.as_ref(),
            self.params.limit,
        )))
    }
}

impl LongJob for QueryScan {
    type Output = Value;
    type Error = BridgeError;

    fn poll(
        &mut self,
        world: &mut World,
        _progress: &ProgressSink,
    ) -> Option<Result<Value, BridgeError>> {
        self.advance(world)
    }
}

/// The sorted page of the matched entities that still exist, after the cursor.
fn page(
    world: &World,
    registry: &TypeRegistry,
    plan: &Plan<'_>,
    matched: &[Entity],
    after: Option<&Cursor>,
    limit: u64,
) -> Value {
    let mut rows: Vec<(Entity, Position)> = matched
        .iter()
        .filter(|entity| world.get_entity(**entity).is_ok())
        .map(|entity| (*entity, plan.position(world, registry, *entity)))
        .collect();
    let descending = plan.order.as_ref().is_some_and(|order| order.descending);
    rows.sort_by(|a, b| a.1.cmp(&b.1, descending));
    let total = rows.len();
    let start = after.map_or(0, |after| {
        rows.partition_point(|(_, position)| position.cmp(&after.position, descending).is_le())
    });
    let page: Vec<&(Entity, Position)> = rows.iter().skip(start).take(limit as usize).collect();
    let more_available = start + page.len() < total;
    let entities: Vec<Value> = page
        .iter()
        .map(|(entity, _)| plan.row(world, registry, *entity))
        .collect();
    let mut reply = object([
        ("returned", json!(page.len())),
        ("entities", Value::Array(entities)),
        ("total", json!(total)),
        ("moreAvailable", json!(more_available)),
    ]);
    if more_available && let Some((_, last)) = page.last() {
        reply["cursor"] = json!(
            Cursor {
                query: plan.fingerprint,
                position: last.clone(),
            }
            .encode()
        );
    }
    reply
}

/// A component named by the query, resolved.
struct Named<'r> {
    type_path: String,
    id: Option<ComponentId>,
    reflect: &'r ReflectComponent,
}

impl<'r> Named<'r> {
    fn resolve(
        world: &World,
        registry: &'r TypeRegistry,
        given: &str,
    ) -> Result<Self, BridgeError> {
        Named::resolve_as(world, registry, given, Holder::Component)
    }

    fn resolve_as(
        world: &World,
        registry: &'r TypeRegistry,
        given: &str,
        holder: Holder,
    ) -> Result<Self, BridgeError> {
        let (registration, reflect) = match holder {
            Holder::Component => resolve_component(registry, given)?,
            Holder::Resource => {
                let registration = names::resolve_type(registry, given)?;
                let (_, reflect) = crate::reflect::world::resource_entity(world, registration)?;
                (registration, reflect)
            }
        };
        Ok(Named {
            type_path: registration.type_info().type_path().to_owned(),
            // A type the world never saw as a component is on no entity.
            id: component_id(world, registration.type_id()),
            reflect,
        })
    }

    fn on(&self, world: &World, entity: Entity) -> bool {
        self.id.is_some_and(|id| {
            world
                .get_entity(entity)
                .is_ok_and(|entity| entity.contains_id(id))
        })
    }

    /// The field at `path` of this component of `entity`, as reflect JSON; `None` when the entity
    /// lacks the component or this value has no such field (another enum variant, a short list).
    fn field_json(
        &self,
        world: &World,
        registry: &TypeRegistry,
        entity: Entity,
        path: &str,
    ) -> Option<Value> {
        let entity_ref = world.get_entity(entity).ok()?;
        let value = self.reflect.reflect(entity_ref)?;
        let field = paths::field_at(value.as_partial_reflect(), path, &self.type_path).ok()?;
        values::to_json(field, registry).ok()
    }
}

/// What holds the field a [`FieldTest`] reads. Resources are components of their own entity in
/// Bevy 0.19, but a query names components only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Holder {
    /// A component of the entities tested.
    Component,
    /// A resource (tested on its entity).
    Resource,
}

/// One test on a component field (a `where` test, an expectation), checked against the type and
/// with its value in the field's canonical reflect form.
pub(crate) struct FieldTest<'r> {
    /// Where the test is in its call (`where[0]`, `expect`), for messages.
    place: String,
    component: Named<'r>,
    path: String,
    op: Op,
    value: Value,
    tolerance: f64,
}

/// What to sort by.
struct Order<'r> {
    component: Named<'r>,
    path: String,
    descending: bool,
}

/// A query resolved against the registry, before any entity is read.
struct Plan<'r> {
    /// Components whose values come back; `None` for every reflected one.
    values: Option<Vec<Named<'r>>>,
    with: Vec<Named<'r>>,
    without: Vec<Named<'r>>,
    filters: Vec<FieldTest<'r>>,
    order: Option<Order<'r>>,
    /// Identifies the query, so a cursor is only taken by the query that gave it.
    fingerprint: u64,
}

impl<'r> Plan<'r> {
    fn new(
        world: &World,
        registry: &'r TypeRegistry,
        params: &InspectQueryParams,
    ) -> Result<Self, BridgeError> {
        let resolve_all = |names: &[String]| -> Result<Vec<Named<'r>>, BridgeError> {
            names
                .iter()
                .map(|name| Named::resolve(world, registry, name))
                .collect()
        };
        let values = params.components.as_deref().map(resolve_all).transpose()?;
        let filters = params
            .r#where
            .iter()
            .flatten()
            .enumerate()
            .map(|(index, test)| {
                FieldTest::new(
                    world,
                    registry,
                    format!("where[{index}]"),
                    Holder::Component,
                    &test.component,
                    &test.path,
                    test.op,
                    &test.value,
                    test.tolerance,
                )
            })
            .collect::<Result<_, _>>()?;
        let order = match &params.order_by {
            Some(order) => {
                let component = Named::resolve(world, registry, &order.component)?;
                check_path(
                    type_info(registry, &component)?,
                    &order.path,
                    &component.type_path,
                )?;
                Some(Order {
                    component,
                    path: order.path.clone(),
                    descending: order.descending,
                })
            }
            None => None,
        };
        Ok(Plan {
            values,
            with: resolve_all(params.with.as_deref().unwrap_or_default())?,
            without: resolve_all(params.without.as_deref().unwrap_or_default())?,
            filters,
            order,
            fingerprint: fingerprint(params),
        })
    }

    /// Whether the entity has every required component and none of the excluded ones.
    fn admits_archetype(&self, world: &World, entity: Entity) -> bool {
        self.with.iter().all(|named| named.on(world, entity))
            && self
                .filters
                .iter()
                .all(|test| test.component.on(world, entity))
            && !self.without.iter().any(|named| named.on(world, entity))
    }

    fn passes_filters(
        &self,
        world: &World,
        registry: &TypeRegistry,
        entity: Entity,
    ) -> Result<bool, BridgeError> {
        for test in &self.filters {
            let Some(field) = test
                .component
                .field_json(world, registry, entity, &test.path)
            else {
                return Ok(false);
            };
            if !test.passes(&field)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn position(&self, world: &World, registry: &TypeRegistry, entity: Entity) -> Position {
        let key = self.order.as_ref().and_then(|order| {
            order
                .component
                .field_json(world, registry, entity, &order.path)
                .map(sort_key)
        });
        Position {
            key,
            index: entity.index_u32(),
            bits: entity.to_bits(),
        }
    }

    /// `{entity, bits, name?, components}` for one entity of the page.
    fn row(&self, world: &World, registry: &TypeRegistry, entity: Entity) -> Value {
        let mut row = entity_info(world, entity);
        let mut components = Map::new();
        let Ok(entity_ref) = world.get_entity(entity) else {
            return row;
        };
        let mut add = |type_path: &str, reflect: &ReflectComponent| {
            if let Some(Ok(value)) = values::component_json(entity_ref, reflect, registry) {
                components.insert(type_path.to_owned(), value);
            }
        };
        match &self.values {
            Some(values) => {
                for named in values {
                    add(&named.type_path, named.reflect);
                }
            }
            None => {
                for (type_path, registration) in
                    values::reflected_components(world, entity, registry)
                {
                    if let Some(reflect) = registration.data::<ReflectComponent>() {
                        add(&type_path, reflect);
                    }
                }
            }
        }
        row["components"] = Value::Object(components);
        row
    }
}

impl<'r> FieldTest<'r> {
    /// Checks `component.path op value` against the registered types before any entity is read.
    #[allow(clippy::too_many_arguments)] // the parts of one test, named as the caller has them
    pub(crate) fn new(
        world: &World,
        registry: &'r TypeRegistry,
        place: String,
        holder: Holder,
        component: &str,
        path: &str,
        op: Op,
        value: &Value,
        tolerance: Option<f64>,
    ) -> Result<Self, BridgeError> {
        let component = Named::resolve_as(world, registry, component, holder)?;
        let owner = type_info(registry, &component)?;
        let field = check_path(owner, path, &component.type_path)?;
        let by_path = |info: Option<&TypeInfo>| {
            info.and_then(|info| registry.get_with_type_path(info.type_path()))
        };
        let compared = match (op, field) {
            // `contains` on a list compares with its elements.
            (Op::Contains, Some(TypeInfo::List(list))) => by_path(list.item_info()),
            (Op::Contains, Some(TypeInfo::Array(array))) => by_path(array.item_info()),
            (Op::Contains, Some(TypeInfo::Set(set))) => registry.get(set.value_ty().id()),
            _ => by_path(field),
        };
        // A type with its own serde form (Name is a string) is judged by the values it gives.
        let own_form = by_path(field)
            .is_some_and(|registration| registration.data::<ReflectSerialize>().is_some());
        if let Some(field) = field
            && !own_form
            && !op_fits(op, field)
        {
            return Err(BridgeError::InvalidParams(format!(
                "{place}: {}{path} is a {} ({}); {} compares {}. Pick a field from the type's paths (inspect.describe_type) or another op.",
                component.type_path,
                kind_word(field),
                field.type_path(),
                op_name(op),
                op_operands(op),
            )));
        }
        let value = match compared {
            // The value is read as the field's type, so `"red"` for an enum says which variants
            // exist instead of matching nothing, and `{x,y,z}` compares with what the field holds.
            Some(registration) => {
                let parsed = values::from_json(registration, registry, value)
                    .map_err(|error| at_value(&place, error))?;
                values::to_json(parsed.as_ref(), registry).unwrap_or(value.clone())
            }
            None => value.clone(),
        };
        if matches!(op, Op::Lt | Op::Le | Op::Gt | Op::Ge)
            && !(value.is_number() || value.is_string())
        {
            return Err(BridgeError::InvalidParams(format!(
                "{place}: {} compares numbers or strings, not {value}",
                op_name(op)
            )));
        }
        Ok(FieldTest {
            place,
            component,
            path: path.to_owned(),
            op,
            value,
            tolerance: tolerance.unwrap_or(0.0),
        })
    }

    /// The component's full type path.
    pub(crate) fn type_path(&self) -> &str {
        &self.component.type_path
    }

    /// The value compared with, in the field's canonical form.
    pub(crate) fn expected(&self) -> &Value {
        &self.value
    }

    /// The field of `entity`; `None` when it lacks the component or the field.
    pub(crate) fn field(
        &self,
        world: &World,
        registry: &TypeRegistry,
        entity: Entity,
    ) -> Option<Value> {
        self.component
            .field_json(world, registry, entity, &self.path)
    }

    /// Whether `field` passes the test; an error when the field holds something the op cannot
    /// compare (a field whose type reflection could not name up front).
    pub(crate) fn passes(&self, field: &Value) -> Result<bool, BridgeError> {
        compare(self.op, field, &self.value, self.tolerance).ok_or_else(|| self.mismatch(field))
    }

    fn mismatch(&self, field: &Value) -> BridgeError {
        BridgeError::InvalidParams(format!(
            "{}: {}{} holds {}; {} compares {}",
            self.place,
            self.component.type_path,
            self.path,
            clip(field),
            op_name(self.op),
            op_operands(self.op),
        ))
    }
}

/// The registered type info of a named component.
fn type_info(registry: &TypeRegistry, named: &Named<'_>) -> Result<&'static TypeInfo, BridgeError> {
    registry
        .get_with_type_path(&named.type_path)
        .map(|registration| registration.type_info())
        .ok_or_else(|| BridgeError::TypeNotFound {
            given: named.type_path.clone(),
            suggestions: Vec::new(),
        })
}

fn at_value(place: &str, error: BridgeError) -> BridgeError {
    BridgeError::At {
        place: format!("{place}.value"),
        error: Box::new(error),
    }
}

/// `field op value`; `None` when the op cannot compare these two values.
pub(crate) fn compare(op: Op, field: &Value, value: &Value, tolerance: f64) -> Option<bool> {
    let ordered = |accept: fn(Ordering) -> bool| compare_scalars(field, value).map(accept);
    match op {
        Op::Eq => Some(equal(field, value, tolerance)),
        Op::Ne => Some(!equal(field, value, tolerance)),
        Op::Lt => ordered(Ordering::is_lt),
        Op::Le => ordered(Ordering::is_le),
        Op::Gt => ordered(Ordering::is_gt),
        Op::Ge => ordered(Ordering::is_ge),
        Op::Contains => match (field, value) {
            (Value::String(text), Value::String(part)) => Some(text.contains(part.as_str())),
            (Value::Array(items), value) => {
                Some(items.iter().any(|item| equal(item, value, tolerance)))
            }
            _ => None,
        },
    }
}

/// Whether `op` can compare values of this type.
fn op_fits(op: Op, field: &TypeInfo) -> bool {
    match op {
        Op::Eq | Op::Ne => true,
        Op::Lt | Op::Le | Op::Gt | Op::Ge => matches!(field, TypeInfo::Opaque(_)),
        Op::Contains => matches!(
            field,
            TypeInfo::Opaque(_) | TypeInfo::List(_) | TypeInfo::Array(_) | TypeInfo::Set(_)
        ),
    }
}

fn kind_word(info: &TypeInfo) -> &'static str {
    match info {
        TypeInfo::Struct(_) | TypeInfo::TupleStruct(_) | TypeInfo::Tuple(_) => "struct",
        TypeInfo::List(_) | TypeInfo::Array(_) | TypeInfo::Set(_) => "list",
        TypeInfo::Map(_) => "map",
        TypeInfo::Enum(_) => "enum",
        TypeInfo::Opaque(_) => "plain value",
    }
}

/// The wire name of an op.
pub(crate) fn op_name(op: Op) -> &'static str {
    match op {
        Op::Eq => "eq",
        Op::Ne => "ne",
        Op::Lt => "lt",
        Op::Le => "le",
        Op::Gt => "gt",
        Op::Ge => "ge",
        Op::Contains => "contains",
    }
}

fn op_operands(op: Op) -> &'static str {
    match op {
        Op::Eq | Op::Ne => "any two values",
        Op::Lt | Op::Le | Op::Gt | Op::Ge => "numbers or strings",
        Op::Contains => "a string with a substring or a list with an element",
    }
}

/// A value shortened for an error message.
fn clip(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(80) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text,
    }
}

/// Numbers with numbers, strings with strings; `None` for anything else.
fn compare_scalars(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Number(a), Value::Number(b)) => Some(a.as_f64()?.total_cmp(&b.as_f64()?)),
        (Value::String(a), Value::String(b)) => Some(a.cmp(b)),
        _ => None,
    }
}

/// Structural equality where numbers may differ by `tolerance`.
fn equal(a: &Value, b: &Value, tolerance: f64) -> bool {
    match (a, b) {
        (Value::Number(a), Value::Number(b)) => match (a.as_f64(), b.as_f64()) {
            (Some(a), Some(b)) => (a - b).abs() <= tolerance,
            _ => a == b,
        },
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| equal(a, b, tolerance))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .all(|(key, a)| b.get(key).is_some_and(|b| equal(a, b, tolerance)))
        }
        _ => a == b,
    }
}

/// A field value made into a sort key: long strings cut to their first [`SORT_KEY_CHARS`].
fn sort_key(value: Value) -> Value {
    match value {
        Value::String(text) if text.chars().count() > SORT_KEY_CHARS => {
            Value::String(text.chars().take(SORT_KEY_CHARS).collect())
        }
        other => other,
    }
}

/// Where a row stands in the order: its sort key (none when it lacks the field, sorting last),
/// then its entity index and bits.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Position {
    #[serde(rename = "k", default, skip_serializing_if = "Option::is_none")]
    key: Option<Value>,
    #[serde(rename = "i")]
    index: u32,
    #[serde(rename = "b")]
    bits: u64,
}

impl Position {
    fn cmp(&self, other: &Position, descending: bool) -> Ordering {
        let keys = match (&self.key, &other.key) {
            (Some(a), Some(b)) => {
                let ordering = compare_keys(a, b);
                if descending {
                    ordering.reverse()
                } else {
                    ordering
                }
            }
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => Ordering::Equal,
        };
        keys.then(self.index.cmp(&other.index))
            .then(self.bits.cmp(&other.bits))
    }
}

/// A total order on sort keys: numbers, then strings, then booleans, then anything else by its
/// JSON text.
fn compare_keys(a: &Value, b: &Value) -> Ordering {
    fn rank(value: &Value) -> u8 {
        match value {
            Value::Number(_) => 0,
            Value::String(_) => 1,
            Value::Bool(_) => 2,
            _ => 3,
        }
    }
    match (a, b) {
        (Value::Bool(a), Value::Bool(b)) => a.cmp(b),
        _ => compare_scalars(a, b).unwrap_or_else(|| {
            rank(a)
                .cmp(&rank(b))
                .then_with(|| a.to_string().cmp(&b.to_string()))
        }),
    }
}

/// The position after which the next page starts, and the query it belongs to.
#[derive(Serialize, Deserialize)]
struct Cursor {
    #[serde(rename = "q")]
    query: u64,
    #[serde(rename = "after")]
    position: Position,
}

impl Cursor {
    fn encode(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    fn decode(text: &str, fingerprint: u64) -> Result<Self, BridgeError> {
        let cursor: Cursor = serde_json::from_str(text).map_err(|_| {
            BridgeError::InvalidParams(
                "the cursor is not one inspect.query gave; pass the cursor of the previous page unchanged, or omit it for the first page".to_owned(),
            )
        })?;
        if cursor.query != fingerprint {
            return Err(BridgeError::InvalidParams(
                "the cursor belongs to a different query; send the same components, with, without, where and orderBy as the page it came from, or omit the cursor to start over".to_owned(),
            ));
        }
        Ok(cursor)
    }
}

/// A hash of everything that decides which rows a query returns and in what order.
fn fingerprint(params: &InspectQueryParams) -> u64 {
    let deciding = json!({
        "components": params.components,
        "with": params.with,
        "without": params.without,
        "where": params.r#where,
        "orderBy": params.order_by,
    });
    let mut hasher = DefaultHasher::new();
    deciding.to_string().hash(&mut hasher);
    hasher.finish()
}
