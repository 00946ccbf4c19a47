//! The bridge's errors, and the one place they become the error object a model sees.

use bevy_mcp_generated::names::{
    control_entity, error_codes, history, inspect, manage_asset, manage_resource, manage_world,
    playtest, state, view,
};
use mcp_native_transport::gateway::guidance::suggest;
use mcp_vocabulary::next_call::{ActionName, describe_action, execute};
use mcp_vocabulary::{ErrorCode, ToolError, codes};
use serde_json::{Value, json};

/// How a game makes a state type reachable by reflection, for the states it has that are not.
pub(crate) const HOW_TO_REFLECT_STATE: &str = "derive Reflect and register it: #[derive(States, Reflect)] on the type, and app.register_type_mutable_state::<S>() (register_type_state::<S>() for a state only read)";

/// Everything a handler can refuse, with what the model needs to fix it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BridgeError {
    /// No live entity matches.
    #[error("no live entity matches {given}")]
    EntityNotFound {
        /// What the caller sent.
        given: String,
        /// Names that are close.
        suggestions: Vec<String>,
    },
    /// No entity has that Name, but a component is called so: a game without names calls its
    /// entities by their components (breakout's `Paddle`).
    #[error(
        "no entity is named {given:?}, but the component {type_path} is: {}; pass an id instead",
        carried_by(*count, carriers)
    )]
    NamedByComponent {
        /// What the caller sent.
        given: String,
        /// The component's full name, as Bevy knows it.
        type_path: String,
        /// How many entities carry it.
        count: usize,
        /// The first few of them (`{entity, bits}`).
        carriers: Vec<Value>,
    },
    /// A Name shared by several entities.
    #[error("{} entities are named {given:?}: pass one of their ids", candidates.len())]
    AmbiguousEntity {
        /// The name.
        given: String,
        /// The entities with that name (`{entity, bits}`).
        candidates: Vec<Value>,
    },
    /// No registered type has that path.
    #[error("no registered type is called {given:?}")]
    TypeNotFound {
        /// What the caller sent.
        given: String,
        /// Close type paths.
        suggestions: Vec<String>,
    },
    /// A type reflection does not know that Bevy knows as a component: game code without
    /// `Reflect` (breakout's `Brick`).
    #[error(
        "{type_path} is a component of this app, but it is not reflected, so its values cannot be read or written; the entities that have it can be found with inspect.query {{with: [\"{type_path}\"]}}; to reach its values, derive Reflect on it and add #[reflect(Component)]"
    )]
    NotReflected {
        /// What the caller sent.
        given: String,
        /// The component's full name, as Bevy knows it.
        type_path: String,
    },
    /// A short path that names several types.
    #[error("{given:?} names several types: pass one of the full paths")]
    AmbiguousType {
        /// The short path.
        given: String,
        /// Full paths it could mean.
        candidates: Vec<String>,
    },
    /// A registered type that cannot be used as a component here.
    #[error("{type_path} is not a reflected component: {reason}")]
    NotAComponent {
        /// The type.
        type_path: String,
        /// Why, and what to use instead.
        reason: String,
    },
    /// The entity lacks the component.
    #[error("entity {entity} has no {type_path}")]
    ComponentNotPresent {
        /// The entity.
        entity: String,
        /// The component.
        type_path: String,
    },
    /// A component that can only be replaced, not changed in place.
    #[error("{type_path} is immutable: it cannot be changed in place{}", use_instead.as_ref().map(|action| format!("; use {action}")).unwrap_or_default())]
    ImmutableComponent {
        /// The component.
        type_path: String,
        /// The action to use instead.
        use_instead: Option<ActionName>,
    },
    /// The reflect path does not exist.
    #[error("path {path:?} does not exist in {type_path}: {reason}")]
    PathNotFound {
        /// The path.
        path: String,
        /// The type.
        type_path: String,
        /// What the path parser said.
        reason: String,
        /// The type's real paths closest to the one given.
        suggestions: Vec<String>,
        /// The type's real paths (capped).
        paths: Vec<String>,
    },
    /// A value that does not fit its type.
    #[error("the value does not fit {type_path}: {reason}")]
    InvalidValue {
        /// The expected type.
        type_path: String,
        /// What went wrong.
        reason: String,
    },
    /// A value that does not fit its type, with where it breaks the type's JSON Schema.
    #[error("the value does not fit {type_path}: {reason} (at {at})", at = violation_at(violation))]
    ValueBreaksSchema {
        /// The expected type.
        type_path: String,
        /// What the deserializer said.
        reason: String,
        /// `{instancePath, schemaPath, message}` from the type's schema.
        violation: Value,
    },
    /// Parameters that passed the schema but do not make sense together.
    #[error("{0}")]
    InvalidParams(String),
    /// A registered type that is not a reflected resource.
    #[error("{type_path} is not a reflected resource{}", hint.as_ref().map(|hint| format!(": {hint}")).unwrap_or_default())]
    NotAResource {
        /// The type.
        type_path: String,
        /// What to use instead.
        hint: Option<String>,
    },
    /// A resource type that is not in the world.
    #[error("no {type_path} resource is in the world")]
    ResourceNotFound {
        /// The type.
        type_path: String,
    },
    /// A resource the app did not declare removable.
    #[error(
        "{type_path} is not removable: the app did not declare it with BridgeConfig::with_removable_resource, because a system that needs it would stop the app"
    )]
    ResourceNotRemovable {
        /// The type.
        type_path: String,
        /// The resources the app did declare removable.
        removable: Vec<String>,
    },
    /// A value that has no serialization.
    #[error("{type_path} cannot be serialized: {reason}")]
    NotSerializable {
        /// The type.
        type_path: String,
        /// Why.
        reason: String,
    },
    /// An entity that holds a resource.
    #[error(
        "entity {entity} holds a resource; resources are read with inspect.get_resource and are never despawned"
    )]
    IsResource {
        /// The entity.
        entity: String,
    },
    /// A type the generic actions may not change (see [`crate::reflect::policy`]).
    #[error("{type_path} is protected: {reason}")]
    ProtectedType {
        /// The type.
        type_path: String,
        /// Why.
        reason: String,
        /// The dedicated action that does it safely.
        use_instead: Option<ActionName>,
    },
    /// An entity that is Bevy plumbing (an observer), not game content.
    #[error("entity {entity} is {what}; the bridge does not change it")]
    ProtectedEntity {
        /// The entity.
        entity: String,
        /// What it is.
        what: &'static str,
    },
    /// A write larger than a configured bound.
    #[error("{what} exceeds the limit of {limit} {unit}; {advice}")]
    LimitExceeded {
        /// What is too large.
        what: String,
        /// The bound.
        limit: u64,
        /// Its unit.
        unit: &'static str,
        /// How to stay within it.
        advice: &'static str,
    },
    /// An error about one part of a call (`children[2]`, `where[0]`): the part's own error, with
    /// where it happened.
    #[error("{place}: {error}")]
    At {
        /// Which part of the params.
        place: String,
        /// The part's error.
        error: Box<BridgeError>,
    },
    /// A type that is not one of the app's reflected state types.
    #[error("{given:?} is not a state type of this app (its state types: {})", states.join(", "))]
    StateNotFound {
        /// What the caller sent.
        given: String,
        /// The app's state types (short paths), closest first.
        states: Vec<String>,
    },
    /// A state the game has but reflection does not reach (`States` derived without `Reflect`).
    #[error(
        "{type_path} is a state of this app, but it is not reflected, so it cannot be read or set; to reach it, {}",
        HOW_TO_REFLECT_STATE
    )]
    StateNotReflected {
        /// The state type, as Bevy names it.
        type_path: String,
    },
    /// A state that only follows others (a computed state).
    #[error("{type_path} cannot be set: {reason}")]
    StateNotSettable {
        /// The state type.
        type_path: String,
        /// Why.
        reason: String,
    },
    /// A sub-state that does not exist while its source state has another value.
    #[error("{type_path} is not active now: its source state has a value it does not exist in")]
    StateInactive {
        /// The state type.
        type_path: String,
    },
    /// A value that is not a variant of an enum.
    #[error("{given} is not a value of {type_path}; its variants: {}", variants.join(", "))]
    UnknownVariant {
        /// The enum.
        type_path: String,
        /// What the caller sent.
        given: String,
        /// Every variant.
        variants: Vec<String>,
        /// The closest variants, best first.
        suggestions: Vec<String>,
    },
    /// Reparenting that would make a loop.
    #[error("{parent} is {entity} itself or one of its descendants")]
    HierarchyCycle {
        /// The entity being moved.
        entity: String,
        /// The requested parent.
        parent: String,
    },
    /// `wait_until` ran out of frames or time.
    #[error("the condition did not hold within {frames} frames")]
    WaitLimitReached {
        /// Frames waited.
        frames: u64,
        /// The last value read.
        last_value: Value,
    },
    /// A registered type that is not a reflected event.
    #[error("{type_path} is not a reflected event (#[reflect(Event)])")]
    NotAnEvent {
        /// The type.
        type_path: String,
    },
    /// A registered type that is not a usable reflected message.
    #[error("{type_path} is not a usable message: {reason}")]
    NotAMessage {
        /// The type.
        type_path: String,
        /// Why.
        reason: String,
    },
    /// An asset that could not be loaded.
    #[error("{path} could not be loaded: {reason}")]
    AssetLoadFailed {
        /// The asset path.
        path: String,
        /// The loader's reason.
        reason: String,
    },
    /// An asset handle in a written value that cannot be made: a missing or foreign file, an
    /// asset that does not exist, a new asset that cannot be built.
    #[error("{given} cannot be a handle to a {asset_type}: {reason}")]
    HandleRefused {
        /// The asset type the handle holds.
        asset_type: String,
        /// The handle's JSON as sent.
        given: String,
        /// Why it is refused.
        reason: String,
        /// Where to look next.
        help: HandleHelp,
    },
    /// Nothing was loaded from a path.
    #[error("no asset is known as {path}: nothing was loaded from it, and no asset has that id")]
    AssetNotFound {
        /// The asset path.
        path: String,
    },
    /// A file name that would leave the scenes directory.
    #[error("{given:?} is not a permitted file name: {reason}")]
    PathNotPermitted {
        /// What the caller sent.
        given: String,
        /// Why it is refused.
        reason: String,
    },
    /// A save that would overwrite a file.
    #[error("{file} already exists; pass overwrite: true to replace it, or pick another name")]
    FileExists {
        /// The file.
        file: String,
    },
    /// A checkpoint name already taken.
    #[error(
        "a checkpoint named {name:?} exists; pass overwrite: true to replace it, or pick another name"
    )]
    CheckpointExists {
        /// The name.
        name: String,
    },
    /// A checkpoint name nobody took.
    #[error("no checkpoint is named {name:?}")]
    CheckpointNotFound {
        /// The name.
        name: String,
        /// The checkpoints held.
        held: Vec<String>,
    },
    /// A world too large to keep in memory as a checkpoint.
    #[error(
        "the world takes {bytes} bytes as a checkpoint; a checkpoint holds at most {limit}. Nothing was kept"
    )]
    CheckpointTooLarge {
        /// What it would take.
        bytes: usize,
        /// The limit.
        limit: usize,
    },
    /// A file that does not exist.
    #[error("{file} does not exist in the scenes directory")]
    FileNotFound {
        /// The file.
        file: String,
    },
    /// A file that is not a readable world.
    #[error("{file} is not a world file this app can read: {reason}; nothing was spawned")]
    InvalidFile {
        /// The file.
        file: String,
        /// What is wrong.
        reason: String,
    },
    /// Reading or writing failed.
    #[error("{file}: {reason}")]
    Io {
        /// The file.
        file: String,
        /// What went wrong.
        reason: String,
    },
    /// A handler panicked.
    #[error("the handler of {action} panicked: {message}; the app is unharmed and keeps serving")]
    HandlerPanicked {
        /// `tool.action`.
        action: String,
        /// The panic message.
        message: String,
    },
    /// The call was cancelled.
    #[error("the call was cancelled")]
    Cancelled,
    /// Nothing can be captured: the bridge or the app does not render.
    #[error("nothing can be captured: {reason}")]
    RenderingUnavailable {
        /// Why, and what to do.
        reason: String,
    },
    /// The app shows nothing a player could see here: no window, or no UI built in.
    #[error("the app has no window or UI here: {reason}")]
    NoDisplay {
        /// Why, and what to do.
        reason: String,
    },
    /// No playtest script of that name in the scripts folder.
    #[error("{file} is not in the scripts folder")]
    ScriptNotFound {
        /// The script's file, as given.
        file: String,
    },
    /// The entity to crop is not in the camera's view.
    #[error("{entity} is not in the view of {camera}: {reason}")]
    NotOnScreen {
        /// The entity, as given.
        entity: String,
        /// The camera that was tried (or "any camera").
        camera: String,
        /// Why (behind the camera, outside the viewport).
        reason: String,
    },
    /// A playtest script that cannot run here: unreadable, too large, a step the app cannot
    /// plan, or a destructive step in a run that would not restore the app. Nothing ran.
    #[error("{file} cannot run: {reason}")]
    ScriptNotRunnable {
        /// The script.
        file: String,
        /// Why.
        reason: String,
    },
    /// A pointer target a player could not point at: hidden, clipped, zero-size or off-screen.
    #[error("the cursor cannot aim at {entity}: {reason}; nothing was pressed")]
    NotPointable {
        /// The entity, as resolved.
        entity: String,
        /// Why.
        reason: String,
        /// Whether it is a UI node (then the UI tree shows what can be aimed at).
        ui: bool,
    },
    /// The capture would show nothing: no active camera draws the target, or the entity to
    /// crop is hidden or has no size.
    #[error("{what} would show nothing: {reason}")]
    NothingToCapture {
        /// What was asked for (a window, a camera, an entity).
        what: String,
        /// Why, and what to do.
        reason: String,
        /// The cameras there are: `{entity, bits, name?, active, order}`.
        cameras: Vec<Value>,
    },
    /// The renderer gave no image.
    #[error("no image was captured: {reason}")]
    CaptureFailed {
        /// What was waited for.
        reason: String,
    },
    /// A result bigger than the caller allowed.
    #[error("the image is {bytes} bytes, over maxBytes {limit}; {advice}")]
    ResultTooLarge {
        /// Its size.
        bytes: usize,
        /// The limit asked for.
        limit: u64,
        /// How to ask for less.
        advice: String,
    },
    /// The app has no input of the kind asked for.
    #[error("input cannot be simulated: {reason}")]
    InputUnavailable {
        /// Why, and what to add.
        reason: String,
    },
    /// A key, button or axis name that is not one of Bevy's.
    #[error("{given:?} is not a {kind} name{}", closest(suggestions))]
    UnknownInput {
        /// The Bevy enum (`KeyCode`).
        kind: &'static str,
        /// What the caller sent.
        given: String,
        /// The closest names, best first.
        suggestions: Vec<String>,
    },
    /// A page's cursor that no page returned.
    #[error(
        "cursor {given:?} was not returned by inspect.{action}: pass the last page's cursor, or start again without one"
    )]
    InvalidCursor {
        /// What the caller sent.
        given: String,
        /// The `inspect` action that pages (`list_entities`, `hierarchy`).
        action: &'static str,
    },
    /// No change of the session's (or anyone's) is left to undo or redo.
    #[error("{}", nothing_left(*redo, *others))]
    NothingToUndo {
        /// Whether it was a redo.
        redo: bool,
        /// Entries of other sessions that could be, with `allSessions: true`.
        others: usize,
    },
    /// The world no longer holds what a journal entry left: the game or another call changed it
    /// since. Nothing was changed.
    #[error(
        "{} entry {entry} ({action}) would overwrite changes made since: {} differ ({first}). Nothing was changed; pass force: true to overwrite them",
        if *redo { "redoing" } else { "undoing" },
        conflicts.len()
    )]
    UndoConflict {
        /// Whether it was a redo.
        redo: bool,
        /// The entry that met the conflict.
        entry: u64,
        /// Its action.
        action: String,
        /// The first difference, for the message.
        first: String,
        /// `{entry, what, expected, current}` of every difference.
        conflicts: Vec<Value>,
        /// Newer entries still in the world that may have made them.
        newer: Vec<Value>,
        /// The call again, forced.
        forced: Value,
    },
    /// Undoing or redoing would make a parent loop, or a hierarchy deeper than the bound, with
    /// the world as it is now. Nothing was changed; forcing does not help.
    #[error(
        "{} entry {entry} ({action}) would break the hierarchy as it is now: {first}. Nothing was changed; bring the parent back first (undo what removed it) or change the parents (control_entity.set_parent), then try again",
        if *redo { "redoing" } else { "undoing" }
    )]
    UndoBreaksHierarchy {
        /// Whether it was a redo.
        redo: bool,
        /// The last entry of the run.
        entry: u64,
        /// Its action.
        action: String,
        /// The first problem, for the message.
        first: String,
        /// `{what, expected, current}` of every problem.
        conflicts: Vec<Value>,
    },
    /// Restoring a checkpoint would make a parent loop, a hierarchy deeper than the bound, or
    /// a child of an entity that is not in the world. Nothing was changed.
    #[error(
        "restoring checkpoint {name} would break the hierarchy: {first}. Nothing was changed; take a new checkpoint, or change the parents first (control_entity.set_parent)"
    )]
    RestoreBreaksHierarchy {
        /// The checkpoint.
        name: String,
        /// The first problem, for the message.
        first: String,
        /// `{what, expected, current}` of every problem.
        conflicts: Vec<Value>,
    },
    /// A journal entry that is not (or no longer) held, or not the caller's.
    #[error("no journal entry {id} can be used: {reason}")]
    EntryNotFound {
        /// The entry number asked for.
        id: u64,
        /// Why.
        reason: String,
    },
    /// A journal entry whose change cannot be taken back.
    #[error("entry {id} ({action}) cannot be undone: {reason}")]
    NotUndoable {
        /// The entry.
        id: u64,
        /// Its action.
        action: String,
        /// Why.
        reason: String,
    },
    /// An error an action of the app's own returned, passed on as it is.
    #[error("{0}")]
    Action(ToolError),
}

/// "carried by 1 entity, 4v0" or "carried by 43 entities, 7v0, 8v0, 9v0 ...": the ids listed
/// out of how many.
fn carried_by(count: usize, carriers: &[Value]) -> String {
    let ids: Vec<&str> = carriers
        .iter()
        .filter_map(|carrier| carrier["entity"].as_str())
        .collect();
    let more = if count > ids.len() { " ..." } else { "" };
    let entities = if count == 1 { "entity" } else { "entities" };
    format!("carried by {count} {entities}, {}{more}", ids.join(", "))
}

impl BridgeError {
    /// The error code a model sees.
    pub fn code(&self) -> ErrorCode {
        match self {
            BridgeError::EntityNotFound { .. } | BridgeError::NamedByComponent { .. } => {
                error_codes::ENTITY_NOT_FOUND
            }
            BridgeError::AmbiguousEntity { .. } => error_codes::AMBIGUOUS_ENTITY,
            BridgeError::TypeNotFound { .. } | BridgeError::NotReflected { .. } => {
                error_codes::TYPE_NOT_FOUND
            }
            BridgeError::AmbiguousType { .. } => error_codes::AMBIGUOUS_TYPE,
            BridgeError::NotAComponent { .. } => error_codes::NOT_A_COMPONENT,
            BridgeError::ComponentNotPresent { .. } => error_codes::COMPONENT_NOT_PRESENT,
            BridgeError::ImmutableComponent { .. } => error_codes::IMMUTABLE_COMPONENT,
            BridgeError::PathNotFound { .. } => error_codes::PATH_NOT_FOUND,
            BridgeError::InvalidValue { .. } | BridgeError::ValueBreaksSchema { .. } => {
                error_codes::INVALID_VALUE
            }
            BridgeError::InvalidParams(_) => error_codes::INVALID_PARAMS,
            BridgeError::ResourceNotFound { .. } => error_codes::RESOURCE_NOT_FOUND,
            BridgeError::NotAResource { .. } => error_codes::NOT_A_RESOURCE,
            BridgeError::ResourceNotRemovable { .. } => error_codes::RESOURCE_NOT_REMOVABLE,
            BridgeError::NotSerializable { .. } => codes::NOT_SERIALIZABLE,
            BridgeError::IsResource { .. } => codes::IS_RESOURCE,
            BridgeError::HierarchyCycle { .. } => error_codes::HIERARCHY_CYCLE,
            BridgeError::ProtectedType { .. } => error_codes::PROTECTED_TYPE,
            BridgeError::ProtectedEntity { .. } => error_codes::PROTECTED_ENTITY,
            BridgeError::LimitExceeded { .. } => error_codes::LIMIT_EXCEEDED,
            BridgeError::WaitLimitReached { .. } => error_codes::WAIT_LIMIT_REACHED,
            BridgeError::NotAnEvent { .. } => error_codes::NOT_AN_EVENT,
            BridgeError::NotAMessage { .. } => error_codes::NOT_A_MESSAGE,
            BridgeError::AssetLoadFailed { .. } => error_codes::ASSET_LOAD_FAILED,
            BridgeError::AssetNotFound { .. } => error_codes::ASSET_NOT_FOUND,
            BridgeError::HandleRefused { .. } => error_codes::INVALID_VALUE,
            BridgeError::PathNotPermitted { .. } => error_codes::PATH_NOT_PERMITTED,
            BridgeError::FileExists { .. } => error_codes::FILE_EXISTS,
            BridgeError::CheckpointExists { .. } => error_codes::CHECKPOINT_EXISTS,
            BridgeError::CheckpointNotFound { .. } => error_codes::CHECKPOINT_NOT_FOUND,
            BridgeError::CheckpointTooLarge { .. } => error_codes::CHECKPOINT_TOO_LARGE,
            BridgeError::InvalidCursor { .. } => error_codes::INVALID_CURSOR,
            BridgeError::NothingToUndo { redo: false, .. } => error_codes::NOTHING_TO_UNDO,
            BridgeError::NothingToUndo { redo: true, .. } => error_codes::NOTHING_TO_REDO,
            BridgeError::UndoConflict { .. }
            | BridgeError::UndoBreaksHierarchy { .. }
            | BridgeError::RestoreBreaksHierarchy { .. } => error_codes::UNDO_CONFLICT,
            BridgeError::EntryNotFound { .. } => error_codes::ENTRY_NOT_FOUND,
            BridgeError::NotUndoable { .. } => error_codes::NOT_UNDOABLE,
            BridgeError::FileNotFound { .. } => error_codes::FILE_NOT_FOUND,
            BridgeError::InvalidFile { .. } => error_codes::INVALID_FILE,
            BridgeError::Io { .. } => error_codes::IO_ERROR,
            BridgeError::HandlerPanicked { .. } => codes::HANDLER_PANICKED,
            BridgeError::Cancelled => codes::CANCELLED,
            BridgeError::Action(error) => error.code,
            BridgeError::At { error, .. } => error.code(),
            BridgeError::StateNotFound { .. } | BridgeError::StateNotReflected { .. } => {
                error_codes::STATE_NOT_FOUND
            }
            BridgeError::StateNotSettable { .. } => error_codes::STATE_NOT_SETTABLE,
            BridgeError::StateInactive { .. } => error_codes::STATE_INACTIVE,
            BridgeError::UnknownVariant { .. } => error_codes::INVALID_VALUE,
            BridgeError::RenderingUnavailable { .. } | BridgeError::NoDisplay { .. } => {
                error_codes::RENDERING_UNAVAILABLE
            }
            BridgeError::ScriptNotFound { .. } => error_codes::FILE_NOT_FOUND,
            BridgeError::NotOnScreen { .. } | BridgeError::NotPointable { .. } => {
                error_codes::NOT_ON_SCREEN
            }
            BridgeError::ScriptNotRunnable { .. } => error_codes::INVALID_PARAMS,
            BridgeError::NothingToCapture { .. } => error_codes::NOTHING_TO_CAPTURE,
            BridgeError::CaptureFailed { .. } => error_codes::CAPTURE_FAILED,
            BridgeError::ResultTooLarge { .. } => error_codes::RESULT_TOO_LARGE,
            BridgeError::InputUnavailable { .. } => error_codes::INPUT_UNAVAILABLE,
            BridgeError::UnknownInput { .. } => error_codes::INVALID_VALUE,
        }
    }
}

/// The one mapping from bridge errors to what a model sees: code, message, details and the next
/// call that helps. Hints come from the records (the gateway adds them).
impl From<BridgeError> for ToolError {
    fn from(error: BridgeError) -> ToolError {
        let error = match error {
            BridgeError::Action(error) => return error,
            BridgeError::At { place, error } => {
                let mut inner = ToolError::from(*error);
                inner.message = format!("{place}: {}", inner.message);
                let mut details = inner.details.take().unwrap_or_else(|| json!({}));
                if let Some(details) = details.as_object_mut() {
                    details.insert("at".to_owned(), json!(place));
                }
                return inner.details(details);
            }
            other => other,
        };
        let tool_error = ToolError::new(error.code(), error.to_string());
        guide_names_and_values(error, tool_error)
    }
}

/// The next call for a name, type or value the world does not hold as given.
fn guide_names_and_values(error: BridgeError, tool_error: ToolError) -> ToolError {
    let describe_type = |type_path: String| {
        execute(
            inspect::TOOL,
            inspect::DESCRIBE_TYPE,
            json!({"type": type_path}),
        )
    };
    match error {
        BridgeError::EntityNotFound { suggestions, .. } => tool_error
            .details(json!({"similarNames": suggestions}))
            .next_call(describe_action(inspect::TOOL, inspect::FIND_ENTITIES)),
        BridgeError::NamedByComponent {
            type_path,
            count,
            carriers,
            ..
        } => tool_error
            .details(json!({"component": type_path, "carriers": carriers, "count": count}))
            .next_call(execute(
                inspect::TOOL,
                inspect::QUERY,
                json!({"with": [type_path]}),
            )),
        BridgeError::AmbiguousEntity { candidates, .. } => {
            tool_error.details(json!({"candidates": candidates}))
        }
        BridgeError::TypeNotFound { suggestions, .. } => tool_error
            .details(json!({"suggestions": suggestions}))
            .next_call(describe_action(inspect::TOOL, inspect::LIST_COMPONENT_TYPES)),
        BridgeError::NotReflected { type_path, .. } => tool_error
            .details(json!({"typePath": type_path, "reflected": false}))
            .next_call(execute(
                inspect::TOOL,
                inspect::QUERY,
                json!({"with": [type_path]}),
            )),
        BridgeError::AmbiguousType { candidates, .. } => {
            tool_error.details(json!({"candidates": candidates}))
        }
        BridgeError::ImmutableComponent {
            use_instead: Some(action),
            ..
        } => tool_error.next_call(action.describe()),
        BridgeError::ProtectedType {
            type_path,
            use_instead,
            ..
        } => match use_instead {
            Some(action) => tool_error
                .hint(format!("Use {action}, which keeps the engine's invariants."))
                .next_call(action.describe()),
            None => tool_error
                .hint("No action changes it; if the user wants it changed anyway, the app can open the type with BridgeConfig::with_open_type.")
                .next_call(describe_type(type_path)),
        },
        BridgeError::ProtectedEntity { .. } => {
            tool_error.next_call(describe_action(inspect::TOOL, inspect::FIND_ENTITIES))
        }
        BridgeError::LimitExceeded { limit, .. } => {
            tool_error.details(json!({"limit": limit}))
        }
        BridgeError::PathNotFound {
            type_path,
            suggestions,
            paths,
            ..
        } => tool_error
            .details(json!({"suggestions": suggestions, "paths": paths}))
            .next_call(describe_type(type_path)),
        BridgeError::InvalidValue { type_path, .. } => {
            tool_error.next_call(describe_type(type_path))
        }
        BridgeError::ValueBreaksSchema {
            type_path,
            violation,
            ..
        } => tool_error
            .details(violation)
            .hint("schemaPath points into the schema inspect.describe_type returns for the type.")
            .next_call(describe_type(type_path)),
        other => guide_app_state(other, tool_error),
    }
}

/// The next call for the app's states, input, screen and playtests.
fn guide_app_state(error: BridgeError, tool_error: ToolError) -> ToolError {
    match error {
        BridgeError::StateNotReflected { type_path } => tool_error
            .details(json!({"typePath": type_path, "reflected": false}))
            .next_call(execute(state::TOOL, state::LIST, json!({}))),
        BridgeError::StateNotFound { states, .. } => tool_error
            .details(json!({"states": states}))
            .next_call(describe_action(state::TOOL, state::LIST)),
        BridgeError::StateNotSettable { .. } | BridgeError::StateInactive { .. } => {
            tool_error.next_call(execute(state::TOOL, state::LIST, json!({})))
        }
        BridgeError::UnknownVariant {
            variants,
            suggestions,
            ..
        } => {
            let mut tool_error = tool_error.details(json!({"variants": variants}));
            tool_error.suggestions = suggestions;
            tool_error
        }
        BridgeError::UnknownInput { suggestions, .. } => {
            let mut tool_error = tool_error;
            tool_error.suggestions = suggestions;
            tool_error
        }
        BridgeError::WaitLimitReached { frames, last_value } => {
            tool_error.details(json!({"frames": frames, "lastValue": last_value}))
        }
        BridgeError::ComponentNotPresent { .. } => tool_error.next_call(describe_action(
            control_entity::TOOL,
            control_entity::INSERT_COMPONENTS,
        )),
        BridgeError::IsResource { .. } => {
            tool_error.next_call(describe_action(inspect::TOOL, inspect::LIST_RESOURCES))
        }
        BridgeError::ResourceNotRemovable { removable, .. } => tool_error
            .details(json!({"removable": removable}))
            .next_call(describe_action(
                manage_resource::TOOL,
                manage_resource::MUTATE,
            )),
        BridgeError::NotOnScreen { .. } | BridgeError::NotPointable { ui: false, .. } => {
            tool_error.next_call(execute(view::TOOL, view::LIST_CAMERAS, json!({})))
        }
        BridgeError::ScriptNotRunnable { .. } | BridgeError::ScriptNotFound { .. } => {
            tool_error.next_call(execute(playtest::TOOL, playtest::LIST_SCRIPTS, json!({})))
        }
        BridgeError::NotPointable { ui: true, .. } => {
            tool_error.next_call(execute(inspect::TOOL, inspect::UI_TREE, json!({})))
        }
        BridgeError::NothingToCapture { cameras, .. } => tool_error
            .details(json!({"cameras": cameras}))
            .next_call(execute(view::TOOL, view::LIST_CAMERAS, json!({}))),
        BridgeError::ResultTooLarge { limit, .. } => tool_error.details(json!({"maxBytes": limit})),
        other => guide_history_and_files(other, tool_error),
    }
}

/// The next call for history, files and asset handles.
fn guide_history_and_files(error: BridgeError, tool_error: ToolError) -> ToolError {
    match error {
        BridgeError::FileNotFound { .. } => tool_error.next_call(execute(
            manage_world::TOOL,
            manage_world::LIST_FILES,
            json!({}),
        )),
        BridgeError::CheckpointExists { name } => tool_error.next_call(execute(
            history::TOOL,
            history::CHECKPOINT,
            json!({"name": name, "overwrite": true}),
        )),
        BridgeError::CheckpointNotFound { name, held } => {
            // With none held, the way on is to take one; otherwise to see those held.
            let next_call = if held.is_empty() {
                describe_action(history::TOOL, history::CHECKPOINT)
            } else {
                execute(history::TOOL, history::LIST_CHECKPOINTS, json!({}))
            };
            tool_error
                .suggestions(suggest(&name, held.iter().map(String::as_str)))
                .details(json!({"held": held}))
                .next_call(next_call)
        }
        BridgeError::CheckpointTooLarge { .. } => {
            tool_error.next_call(describe_action(manage_world::TOOL, manage_world::SAVE))
        }
        BridgeError::InvalidCursor { action, .. } => {
            tool_error.next_call(execute(inspect::TOOL, action, json!({})))
        }
        BridgeError::NothingToUndo { redo, others } => {
            let action = if redo { history::REDO } else { history::UNDO };
            match others {
                0 => tool_error.next_call(execute(history::TOOL, history::LIST, json!({}))),
                _ => tool_error.next_call(execute(
                    history::TOOL,
                    action,
                    json!({"allSessions": true}),
                )),
            }
        }
        BridgeError::UndoConflict {
            conflicts,
            newer,
            forced,
            redo,
            ..
        } => tool_error
            .details(json!({"conflicts": conflicts, "newerEntries": newer}))
            .hint("Look at the differences first: forcing overwrites what the game or another session changed since.")
            .next_call(execute(
                history::TOOL,
                if redo { history::REDO } else { history::UNDO },
                forced,
            )),
        BridgeError::UndoBreaksHierarchy { conflicts, .. }
        | BridgeError::RestoreBreaksHierarchy { conflicts, .. } => tool_error
            .details(json!({"conflicts": conflicts}))
            .next_call(execute(history::TOOL, history::LIST, json!({}))),
        BridgeError::EntryNotFound { .. } | BridgeError::NotUndoable { .. } => {
            tool_error.next_call(execute(history::TOOL, history::LIST, json!({})))
        }
        BridgeError::HandleRefused {
            asset_type, help, ..
        } => match help {
            HandleHelp::ListFiles => tool_error
                .next_call(execute(manage_asset::TOOL, manage_asset::LIST_FILES, json!({}))),
            HandleHelp::ListLoaded => tool_error.next_call(execute(
                manage_asset::TOOL,
                manage_asset::LIST_LOADED,
                json!({"type": asset_type}),
            )),
            HandleHelp::DescribeType => tool_error.next_call(execute(
                inspect::TOOL,
                inspect::DESCRIBE_TYPE,
                json!({"type": asset_type}),
            )),
        },
        _ => tool_error,
    }
}

/// Where a refused handle's caller looks next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandleHelp {
    /// The files of the asset folder (a path that is missing or of another type).
    ListFiles,
    /// The assets in memory (an id that names none).
    ListLoaded,
    /// The asset type (a value it cannot be made from).
    DescribeType,
}

/// Why there is nothing to undo or redo.
fn nothing_left(redo: bool, others: usize) -> String {
    let (verb, done) = if redo {
        ("redo", "redone")
    } else {
        ("undo", "undone")
    };
    match others {
        0 => format!("nothing to {verb}: the journal holds no change that can be {done}"),
        _ => format!(
            "nothing of this session's to {verb}; other sessions have {others}: pass allSessions: true to {verb} theirs"
        ),
    }
}

/// "; closest: A, B" for an error message, or nothing.
fn closest(suggestions: &[String]) -> String {
    if suggestions.is_empty() {
        String::new()
    } else {
        format!("; closest: {}", suggestions.join(", "))
    }
}

/// Where a value breaks its schema, for an error message: the JSON pointer into the value.
fn violation_at(violation: &Value) -> String {
    match violation["instancePath"].as_str() {
        Some("") | None => "the top level".to_owned(),
        Some(path) => path.to_owned(),
    }
}
