//! Small records for the search modules' unit tests.

use mcp_vocabulary::catalog::{ActionRecord, Category, Consent, Effect, Scope, ToolRecord};

/// A write action named `name` with `summary` and `topics`, nothing else.
pub(super) fn action(
    name: &'static str,
    summary: &'static str,
    topics: &'static [&str],
) -> ActionRecord {
    ActionRecord {
        name,
        summary,
        effect: Effect::Write,
        consent: Consent::None,
        scope: Scope::Write,
        long_running: false,
        aliases: &[],
        topics,
        subjects: &[],
        when_to_use: "",
        when_not_to_use: "",
        params: &[],
        input_schema: "{}",
        output_schema: "{}",
        examples: &[],
        errors: &[],
    }
}

/// A core tool named `name` holding `actions`.
pub(super) fn tool(name: &'static str, actions: Vec<ActionRecord>) -> ToolRecord {
    ToolRecord {
        name,
        category: Category::Core,
        summary: "",
        protected: false,
        actions: Box::leak(actions.into_boxed_slice()),
    }
}
