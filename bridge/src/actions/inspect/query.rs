//! `inspect.query`: entities chosen by the components they have and by what their fields hold,
//! with their values, sorted, and paged by a cursor that entities added between pages do not
//! invalidate (the cursor is the position of the last row, not an offset).

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::hash::{DefaultHasher, Hash, Hasher};

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
use crate::reflect::handle_form;
use crate::reflect::handles::HandleReader;
use crate::reflect::names;
use crate::reflect::names::{component_id, entity_info, resolve_component};
use crate::reflect::paths::{FieldPath, check_path};
use crate::reflect::values;
use crate::reflect::world::PlainIndex;
use crate::runtime::job::{LongJob, Outcome};
use crate::runtime::slices::Slice;

/// Characters of a string sort key that count; longer strings sort by this prefix, so a cursor
/// stays short whatever the game's strings hold.
const SORT_KEY_CHARS: usize = 256;

/// Starts `inspect.query`: a world small enough for one slice is answered at once, a bigger one
/// over the next frames, a slice per frame under the frame's allowance for work over the whole
/// world ([`crate::runtime::slices`]).
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

/// A query reading the world in slices of entity indices, one slice per frame. Each match's
/// place in the order is read with it, and only the page's rows are kept in order (the best
/// `limit` after the cursor), so no frame sorts the world. Rows are read in the last frame;
/// entities despawned meanwhile are left out.
struct QueryScan {
    params: InspectQueryParams,
    /// The query resolved once, when it started.
    plan: Plan,
    after: Option<Cursor>,
    next_index: u32,
    matched: Vec<Entity>,
    /// The best matches after the cursor (twice a page), worst on top.
    page: BinaryHeap<Ranked>,
    /// Matches after the cursor.
    after_cursor: usize,
    /// Once every index is read: matches checked to be still there, and how many are.
    counted: Option<(usize, usize)>,
}

/// Matches counted per unit of a slice, once every index is read.
const COUNT_PER_UNIT: usize = 64;

/// A match with its place in the order, ordered as the page is (a max-heap keeps the worst on
/// top).
struct Ranked {
    position: Position,
    entity: Entity,
    descending: bool,
}

impl PartialEq for Ranked {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Ranked {}

impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Ranked {
    fn cmp(&self, other: &Self) -> Ordering {
        self.position.cmp(&other.position, self.descending)
    }
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
            plan,
            after,
            next_index: 0,
            // Sized once for every index: growing it copies it and faults its new pages in
            // within one unit (0.1–0.3 ms past a slice's allowance at 100,000 entities, seen
            // with 16 queries at once); sized once, a page is first touched every 512 matches.
            matched: Vec::with_capacity(PlainIndex::len(world) as usize),
            page: BinaryHeap::new(),
            after_cursor: 0,
            counted: None,
        })
    }

    /// Reads the next slice; the reply once the whole world is read.
    fn advance(&mut self, world: &mut World) -> Option<Result<Value, BridgeError>> {
        Slice::within(world, |world, slice| self.read(world, slice))
    }

    fn read(&mut self, world: &World, slice: &mut Slice) -> Option<Result<Value, BridgeError>> {
        let registry = names::registry(world);
        let registry = registry.read();
        let plan = &self.plan;
        let descending = plan.order.as_ref().is_some_and(|order| order.descending);
        // Twice the page is kept, so entities despawned before the answer rarely shorten it.
        let kept = 2 * self.params.limit as usize;
        let plain = PlainIndex::of(world);
        while self.counted.is_none() && self.next_index < PlainIndex::len(world) {
            if !slice.more() {
                return None;
            }
            let index = self.next_index;
            self.next_index += 1;
            let Some(entity) = plain.at(world, index) else {
                continue;
            };
            if !plan.admits_archetype(world, entity) {
                continue;
            }
            match plan.passes_filters(world, &registry, entity) {
                Ok(true) => {}
                Ok(false) => continue,
                Err(error) => return Some(Err(error)),
            }
            self.matched.push(entity);
            let position = plan.position(world, &registry, entity);
            if self
                .after
                .as_ref()
                .is_some_and(|after| position.cmp(&after.position, descending).is_le())
            {
                continue;
            }
            self.after_cursor += 1;
            let ranked = Ranked {
                position,
                entity,
                descending,
            };
            if self.page.len() < kept {
                self.page.push(ranked);
            } else if self.page.peek().is_some_and(|worst| ranked < *worst) {
                self.page.pop();
                self.page.push(ranked);
            }
        }
        // Every index is read: how many matches are still there.
        let (checked, mut alive) = self.counted.unwrap_or((0, 0));
        let mut checked = checked;
        while checked < self.matched.len() {
            if !slice.more() {
                self.counted = Some((checked, alive));
                return None;
            }
            let end = self.matched.len().min(checked + COUNT_PER_UNIT);
            alive += self.matched[checked..end]
                .iter()
                .filter(|entity| world.get_entity(**entity).is_ok())
                .count();
            checked = end;
        }
        self.counted = Some((checked, alive));
        Some(Ok(self.reply(world, &registry, alive)))
    }

    /// The page, best first, of the matches that still exist.
    fn reply(&mut self, world: &World, registry: &TypeRegistry, total: usize) -> Value {
        let plan = &self.plan;
        let held = self.page.len();
        let mut page: Vec<Ranked> = std::mem::take(&mut self.page)
            .into_iter()
            .filter(|ranked| world.get_entity(ranked.entity).is_ok())
            .collect();
        page.sort();
        let gone = held.saturating_sub(page.len());
        page.truncate(self.params.limit as usize);
        let more_available = self.after_cursor.saturating_sub(gone) > page.len();
        let entities: Vec<Value> = page
            .iter()
            .map(|ranked| plan.row(world, registry, ranked.entity))
            .collect();
        let mut reply = object([
            ("returned", json!(page.len())),
            ("entities", Value::Array(entities)),
            ("total", json!(total)),
            ("moreAvailable", json!(more_available)),
        ]);
        if more_available && let Some(last) = page.last() {
            reply["cursor"] = json!(
                Cursor {
                    query: plan.fingerprint,
                    position: last.position.clone(),
                }
                .encode()
            );
        }
        reply
    }
}

impl LongJob for QueryScan {
    type Output = Value;
    type Error = BridgeError;

    fn poll(
        &mut self,
        world: &mut World,
        progress: &ProgressSink,
    ) -> Option<Result<Value, BridgeError>> {
        let answer = self.advance(world);
        if answer.is_none() {
            progress.report_paced(
                f64::from(self.next_index),
                Some(f64::from(PlainIndex::len(world))),
                Some("reading the world"),
            );
        }
        answer
    }
}

/// A component named by the query, resolved.
struct Named {
    type_path: String,
    id: Option<ComponentId>,
    /// Its reflection (function pointers, copied: a plan outlives the registry's lock).
    reflect: ReflectComponent,
}

impl Named {
    fn resolve(world: &World, registry: &TypeRegistry, given: &str) -> Result<Self, BridgeError> {
        Named::resolve_as(world, registry, given, Holder::Component)
    }

    fn resolve_as(
        world: &World,
        registry: &TypeRegistry,
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
            reflect: reflect.clone(),
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
        path: &FieldPath,
    ) -> Option<Value> {
        let entity_ref = world.get_entity(entity).ok()?;
        let value = self.reflect.reflect(entity_ref)?;
        let field = path.of(value.as_partial_reflect())?;
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
pub(crate) struct FieldTest {
    /// Where the test is in its call (`where[0]`, `expect`), for messages.
    place: String,
    component: Named,
    path: FieldPath,
    op: Op,
    value: Value,
    tolerance: f64,
}

/// What to sort by.
struct Order {
    component: Named,
    path: FieldPath,
    descending: bool,
}

/// A query resolved against the registry, before any entity is read.
struct Plan {
    /// Components whose values come back; `None` for every reflected one.
    values: Option<Vec<Named>>,
    /// Components an entity must have (reflected or not); `None` for one the world never saw.
    with: Vec<Option<ComponentId>>,
    without: Vec<Option<ComponentId>>,
    filters: Vec<FieldTest>,
    order: Option<Order>,
    /// Identifies the query, so a cursor is only taken by the query that gave it.
    fingerprint: u64,
}

impl Plan {
    fn new(
        world: &World,
        registry: &TypeRegistry,
        params: &InspectQueryParams,
    ) -> Result<Self, BridgeError> {
        let resolve_all = |names: &[String]| -> Result<Vec<Named>, BridgeError> {
            names
                .iter()
                .map(|name| Named::resolve(world, registry, name))
                .collect()
        };
        let present_all = |names: &[String]| -> Result<Vec<Option<ComponentId>>, BridgeError> {
            names
                .iter()
                .map(|name| names::resolve_present_component(world, registry, name))
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
                    path: FieldPath::new(&order.path),
                    descending: order.descending,
                })
            }
            None => None,
        };
        Ok(Plan {
            values,
            with: present_all(params.with.as_deref().unwrap_or_default())?,
            without: present_all(params.without.as_deref().unwrap_or_default())?,
            filters,
            order,
            fingerprint: fingerprint(params),
        })
    }

    /// Whether the entity has every required component and none of the excluded ones.
    fn admits_archetype(&self, world: &World, entity: Entity) -> bool {
        let has = |id: &Option<ComponentId>| {
            id.is_some_and(|id| {
                world
                    .get_entity(entity)
                    .is_ok_and(|entity| entity.contains_id(id))
            })
        };
        self.with.iter().all(has)
            && self
                .filters
                .iter()
                .all(|test| test.component.on(world, entity))
            && !self.without.iter().any(has)
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
        Position::new(key, entity.index_u32(), entity.to_bits())
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
                    add(&named.type_path, &named.reflect);
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

impl FieldTest {
    /// Checks `component.path op value` against the registered types before any entity is read.
    #[allow(clippy::too_many_arguments)] // the parts of one test, named as the caller has them
    pub(crate) fn new(
        world: &World,
        registry: &TypeRegistry,
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
            // A handle is compared by its JSON form (a path, a reference): reading one would
            // load its file.
            Some(registration) if handle_form::is_handle_type(registration) => value.clone(),
            Some(registration) => {
                let parsed = values::from_json(
                    registration,
                    registry,
                    value,
                    &mut HandleReader::naming(world),
                )
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
            path: FieldPath::new(path),
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
            self.path.as_str(),
            clip(field),
            op_name(self.op),
            op_operands(self.op),
        ))
    }
}

/// The registered type info of a named component.
fn type_info(registry: &TypeRegistry, named: &Named) -> Result<&'static TypeInfo, BridgeError> {
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
    /// The key as it compares, made once (comparing JSON objects by their text would write the
    /// text at every comparison).
    #[serde(skip)]
    order: Option<SortKey>,
}

impl Position {
    fn new(key: Option<Value>, index: u32, bits: u64) -> Position {
        Position {
            order: key.as_ref().map(SortKey::of),
            key,
            index,
            bits,
        }
    }

    fn cmp(&self, other: &Position, descending: bool) -> Ordering {
        let keys = match (&self.order, &other.order) {
            (Some(a), Some(b)) => {
                let ordering = a.cmp(b);
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

/// A sort key as it compares: a total order of numbers, then strings, then booleans, then
/// anything else by its JSON text.
#[derive(Clone, Debug)]
enum SortKey {
    Number(f64),
    Text(String),
    Flag(bool),
    Json(String),
}

impl SortKey {
    fn of(value: &Value) -> SortKey {
        match value {
            Value::Number(number) => SortKey::Number(number.as_f64().unwrap_or(f64::NAN)),
            Value::String(text) => SortKey::Text(text.clone()),
            Value::Bool(flag) => SortKey::Flag(*flag),
            other => SortKey::Json(other.to_string()),
        }
    }

    fn rank(&self) -> u8 {
        match self {
            SortKey::Number(_) => 0,
            SortKey::Text(_) => 1,
            SortKey::Flag(_) => 2,
            SortKey::Json(_) => 3,
        }
    }

    fn cmp(&self, other: &SortKey) -> Ordering {
        match (self, other) {
            (SortKey::Number(a), SortKey::Number(b)) => a.total_cmp(b),
            (SortKey::Text(a), SortKey::Text(b)) | (SortKey::Json(a), SortKey::Json(b)) => a.cmp(b),
            (SortKey::Flag(a), SortKey::Flag(b)) => a.cmp(b),
            _ => self.rank().cmp(&other.rank()),
        }
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
        let mut cursor = cursor;
        cursor.position.order = cursor.position.key.as_ref().map(SortKey::of);
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
