//! Synthetic catalogs of any size, for the tests that show the start-up surface does not grow
//! with the catalog and for the search benchmark. Leaked to get the `'static` data catalogs are.

use mcp_native_transport::catalog::{
    ActionRecord, Catalog, Category, Consent, Effect, ParamRecord, Scope, ToolRecord,
};

fn leak(text: String) -> &'static str {
    Box::leak(text.into_boxed_str())
}

/// `actions` trivial actions in tools of 100.
pub fn synthetic_catalog(actions: usize) -> &'static Catalog {
    let schema = r#"{"additionalProperties":false,"properties":{"value":{"description":"A value.","maxLength":64,"type":"string"}},"type":"object"}"#;
    let params: &'static [ParamRecord] = Box::leak(Box::new([ParamRecord {
        name: "value",
        type_label: "string",
        required: false,
        description: "A value.",
        enum_values: &[],
        default_json: None,
        schema: r#"{"description":"A value.","maxLength":64,"type":"string"}"#,
    }]));
    let tools: Vec<ToolRecord> = (0..actions.div_ceil(100))
        .map(|tool_index| {
            let records: Vec<ActionRecord> = (0..100.min(actions - tool_index * 100))
                .map(|index| ActionRecord {
                    name: leak(format!("action_{index}")),
                    summary: leak(format!("Synthetic action {index} of tool {tool_index}.")),
                    effect: Effect::Read,
                    consent: Consent::None,
                    scope: Scope::Read,
                    long_running: false,
                    aliases: &[],
                    topics: &["synthetic"],
                    subjects: &[],
                    when_to_use: "Benchmarks.",
                    when_not_to_use: "Anything real.",
                    params,
                    input_schema: schema,
                    output_schema: r#"{"type":"object"}"#,
                    examples: &[],
                    errors: &[],
                })
                .collect();
            ToolRecord {
                name: leak(format!("synthetic_{tool_index}")),
                category: Category::Utility,
                summary: "Synthetic tool.",
                protected: false,
                actions: Box::leak(records.into_boxed_slice()),
            }
        })
        .collect();
    Box::leak(Box::new(Catalog {
        revision: "synthetic",
        tools: Box::leak(tools.into_boxed_slice()),
        prompts: &[],
        phrasebook: mcp_vocabulary::catalog::Phrasebook::EMPTY,
        usage: &[],
    }))
}

/// `actions` actions with real text: copies of `base`'s tools (`inspect_1`, `inspect_2`, ...)
/// until the count is reached, so search sees realistic summaries, topics and aliases.
pub fn scaled_catalog(base: &'static Catalog, actions: usize) -> &'static Catalog {
    let mut tools = Vec::new();
    let mut remaining = actions;
    let mut copy = 0;
    while remaining > 0 && base.tools.iter().any(|tool| !tool.actions.is_empty()) {
        copy += 1;
        for tool in base.tools {
            if remaining == 0 {
                break;
            }
            let taken = tool.actions.len().min(remaining);
            remaining -= taken;
            let records = tool.actions[..taken].to_vec();
            tools.push(ToolRecord {
                name: leak(format!("{}_{copy}", tool.name)),
                category: tool.category,
                summary: tool.summary,
                protected: false,
                actions: Box::leak(records.into_boxed_slice()),
            });
        }
    }
    Box::leak(Box::new(Catalog {
        revision: "scaled",
        tools: Box::leak(tools.into_boxed_slice()),
        prompts: base.prompts,
        phrasebook: base.phrasebook,
        usage: base.usage,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalogs_have_exactly_the_asked_number_of_actions() {
        for actions in [1, 99, 100, 1000] {
            assert_eq!(synthetic_catalog(actions).all_actions().count(), actions);
        }
        let base = &bevy_mcp_generated::CATALOG;
        let scaled = scaled_catalog(base, 1000);
        assert_eq!(scaled.all_actions().count(), 1000);
        assert_eq!(
            scaled.tools[0].actions[0].summary,
            base.tools[0].actions[0].summary
        );
    }
}
