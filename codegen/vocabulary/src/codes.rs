//! Error codes: the one [`ErrorCode`] type, and the codes that are not any single action's.
//!
//! Action-specific codes are declared by the records (`errors`: code -> hint) and emitted as
//! constants by codegen in the generated `names::error_codes`; the codes below belong to the
//! gateway, the transport or every action of the bridge, are declared here once, and the
//! generated module re-exports them where a record names one.

use std::fmt;

/// A code a model can branch on (`UNKNOWN_TOOL`, `ENTITY_NOT_FOUND`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ErrorCode(&'static str);

impl ErrorCode {
    /// A code; by convention SCREAMING_SNAKE_CASE.
    pub const fn new(code: &'static str) -> ErrorCode {
        ErrorCode(code)
    }

    /// The code as it goes on the wire.
    pub const fn as_str(self) -> &'static str {
        self.0
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl serde::Serialize for ErrorCode {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.0)
    }
}

impl PartialEq<str> for ErrorCode {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for ErrorCode {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

macro_rules! codes {
    ($($(#[doc = $doc:literal])* $name:ident,)*) => {
        $($(#[doc = $doc])* pub const $name: ErrorCode = ErrorCode::new(stringify!($name));)*
        /// Every code declared here, for codegen's check that records do not redeclare them.
        pub const ALL: &[ErrorCode] = &[$($name),*];
    };
}

codes! {
    /// The arguments of the tool are not an object.
    INVALID_ARGUMENTS,
    /// `operation` is missing or not one of describe, search, execute, configure.
    UNKNOWN_OPERATION,
    /// A top-level argument the operation does not take.
    UNKNOWN_ARGUMENT,
    /// A name or query longer than any real one.
    ARGUMENT_TOO_LONG,
    /// A malformed top-level argument (an unknown category or effect).
    INVALID_ARGUMENT,
    /// No tool has that name.
    UNKNOWN_TOOL,
    /// The tool has no such action.
    UNKNOWN_ACTION,
    /// The action has no such parameter.
    UNKNOWN_PARAM,
    /// A call that needs a tool named none.
    MISSING_TOOL,
    /// A call that needs an action named none.
    MISSING_ACTION,
    /// `search` without a query.
    MISSING_QUERY,
    /// Parameters that do not fit the action's schema or each other.
    INVALID_PARAMS,
    /// A parameter holds a placeholder (`TBD`, `<entity>`, ...), not a real value.
    PLACEHOLDER_VALUE,
    /// The tool is disabled for this session.
    TOOL_DISABLED,
    /// The session's token scope does not allow the action; a token of a wider scope does.
    SCOPE_DENIED,
    /// The tool cannot be disabled.
    TOOL_PROTECTED,
    /// The category cannot be disabled.
    CATEGORY_PROTECTED,
    /// The action needs a consent grant.
    CONSENT_REQUIRED,
    /// The consent grant was already used.
    CONSENT_REUSED,
    /// The consent grant does not fit the call.
    CONSENT_INVALID,
    /// The result is larger than the caller allowed.
    RESULT_TOO_LARGE,
    /// The session already runs its maximum of calls.
    TOO_MANY_IN_FLIGHT,
    /// The call passed its deadline and was cancelled.
    TIMEOUT,
    /// The call was cancelled.
    CANCELLED,
    /// The app has not run a frame for a while, or its mailbox is full; retry later.
    APP_BUSY,
    /// The app shut down while the call waited.
    APP_GONE,
    /// A handler panicked; the app is unharmed.
    HANDLER_PANICKED,
    /// A value could not be serialized.
    NOT_SERIALIZABLE,
    /// The entity holds a resource.
    IS_RESOURCE,
    /// A handler's result does not match its record's output schema (checked in debug builds:
    /// a bug in the handler or the record, never the caller's).
    OUTPUT_SCHEMA_VIOLATION,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_their_names() {
        assert_eq!(UNKNOWN_TOOL.as_str(), "UNKNOWN_TOOL");
        assert_eq!(TIMEOUT.to_string(), "TIMEOUT");
        assert!(ALL.contains(&APP_BUSY));
        assert_eq!(
            serde_json::to_value(CANCELLED).ok(),
            Some(serde_json::json!("CANCELLED"))
        );
    }
}
