//! Budget, estimate and search over small hand-made catalogs.

use std::sync::Arc;

use mcp_config::ToolFilter;
use mcp_transport::Tool;
use serde_json::{Value, json};

use super::*;
use crate::catalog::{Catalog, MaterializeOptions, ServerFeatures, ServerTools, materialize};

/// A tool whose definition is about the same size as every other's made
/// here (names and descriptions of equal length).
fn tool(name: &str, description: &str, parameters: &[&str]) -> Tool {
    let properties: serde_json::Map<String, Value> = parameters
        .iter()
        .map(|p| ((*p).to_owned(), json!({"type": "string"})))
        .collect();
    Tool {
        name: name.into(),
        title: None,
        description: Some(description.into()),
        input_schema: json!({"type": "object", "properties": properties}),
        output_schema: None,
        annotations: None,
        execution: None,
    }
}

fn server(name: &str, tools: Vec<Tool>) -> ServerTools {
    ServerTools {
        server: name.into(),
        tools: Arc::from(tools),
        filter: ToolFilter::default(),
        features: ServerFeatures::default(),
        description_limit: None,
        instructions: None,
    }
}

/// Ten tools `t0`…`t9` of server `s`, each costing the same.
fn ten() -> Vec<ServerTools> {
    let tools = (0..10)
        .map(|i| tool(&format!("t{i}"), "does one thing well", &["x"]))
        .collect();
    vec![server("s", tools)]
}

fn build(servers: &[ServerTools], profile: ProviderProfile, budget: Option<ToolBudget>) -> Catalog {
    let options = MaterializeOptions {
        profile,
        budget,
        ..openclaw()
    };
    materialize(servers, &options)
}

fn cost_of_one() -> usize {
    build(&ten(), ProviderProfile::Generic, None).tools()[0].estimated_tokens()
}

#[test]
fn the_estimate_is_serialised_bytes_over_four_rounded_up() {
    let check =
        |value: Value, expect: usize| assert_eq!(estimate_tokens(&value), expect, "{value}");
    check(json!(null), 1); // 4 bytes
    check(json!("abc"), 2); // 5 bytes
    check(json!("ab"), 1); // 4 bytes
    check(json!({"a": 1}), 2); // 7 bytes
    check(json!(""), 1); // 2 bytes
    for profile in [
        ProviderProfile::Generic,
        ProviderProfile::Anthropic,
        ProviderProfile::OpenAiStrict,
        ProviderProfile::Gemini,
    ] {
        let catalog = build(&ten(), profile, None);
        let bytes = serde_json::to_vec(&catalog.tools()[0]).unwrap().len();
        let estimates = catalog.token_estimates();
        assert_eq!(estimates[0], ("s__t0", bytes.div_ceil(4)), "{profile:?}");
        let sum: usize = estimates.iter().map(|(_, t)| t).sum();
        assert_eq!(catalog.total_tokens(), sum, "{profile:?}");
        assert_eq!(catalog.loaded_tokens(), sum, "{profile:?}");
        assert_eq!(catalog.budget_report(), None);
    }
}

#[test]
fn without_a_budget_or_within_it_nothing_changes() {
    for profile in [ProviderProfile::Generic, ProviderProfile::Anthropic] {
        let plain = serde_json::to_string(&build(&ten(), profile, None)).unwrap();
        let roomy = build(&ten(), profile, Some(ToolBudget::new(1_000_000)));
        assert_eq!(serde_json::to_string(&roomy).unwrap(), plain);
        assert_eq!(roomy.deferred_tools().count(), 0);
        assert_eq!(roomy.search_tool(), None);
        let report = roomy.budget_report().unwrap();
        assert_eq!((report.loaded, report.deferred), (10, 0));
    }
}

/// The names `budget` (over [`ten`]) keeps loaded.
fn check(budget: ToolBudget, expect: &[&str]) {
    let search = search_entry(ProviderProfile::Generic, AnthropicToolSearch::Bm25).tokens;
    let catalog = build(&ten(), ProviderProfile::Generic, Some(budget.clone()));
    let loaded: Vec<&str> = catalog.loaded_tools().map(CatalogTool::name).collect();
    assert_eq!(loaded, expect, "{budget:?}");
    let pinned = budget
        .pinned
        .iter()
        .filter(|name| catalog.get(name).is_some())
        .count();
    if loaded.len() > pinned {
        assert!(
            catalog.loaded_tokens() <= budget.budget_tokens,
            "{budget:?}: {} tokens",
            catalog.loaded_tokens()
        );
    }
    assert_eq!(
        catalog.loaded_tokens(),
        loaded.len() * cost_of_one() + search,
        "{budget:?}"
    );
    // same inputs, same bytes
    let again = build(&ten(), ProviderProfile::Generic, Some(budget.clone()));
    assert_eq!(
        serde_json::to_string(&catalog).unwrap(),
        serde_json::to_string(&again).unwrap()
    );
}

#[test]
fn the_budget_keeps_pinned_then_recent_then_catalog_order() {
    let one = cost_of_one();
    let search = search_entry(ProviderProfile::Generic, AnthropicToolSearch::Bm25).tokens;
    let room = |tools: usize| search + tools * one;
    check(ToolBudget::new(room(3)), &["s__t0", "s__t1", "s__t2"]);
    // a token short of three
    check(ToolBudget::new(room(3) - 1), &["s__t0", "s__t1"]);
    check(
        ToolBudget::new(room(3)).with_pinned(["s__t7"]),
        &["s__t0", "s__t1", "s__t7"],
    );
    check(
        ToolBudget::new(room(3))
            .with_pinned(["s__t7", "nope"])
            .with_recently_used(["s__t5", "s__t9", "s__t4"]),
        &["s__t5", "s__t7", "s__t9"],
    );
    // pinned tools load past the budget; nothing else does
    check(
        ToolBudget::new(room(1)).with_pinned(["s__t8", "s__t9"]),
        &["s__t8", "s__t9"],
    );
    check(ToolBudget::new(0), &[]);
}

#[test]
fn deferred_tools_are_marked_for_anthropic_and_left_out_elsewhere() {
    let budget = ToolBudget::new(
        search_entry(ProviderProfile::Anthropic, AnthropicToolSearch::Bm25).tokens + cost_of_one(),
    );
    let anthropic =
        serde_json::to_value(build(&ten(), ProviderProfile::Anthropic, Some(budget))).unwrap();
    let list = anthropic.as_array().unwrap();
    assert_eq!(list.len(), 11);
    assert_eq!(list[0].get("defer_loading"), None);
    assert_eq!(list[1]["defer_loading"], true);
    assert_eq!(list[1]["name"], "s__t1");
    assert_eq!(
        list[10],
        json!({"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"})
    );
    let regex = ToolBudget::new(0).with_anthropic_search(AnthropicToolSearch::Regex);
    let catalog = build(&ten(), ProviderProfile::Anthropic, Some(regex));
    assert_eq!(
        catalog.search_tool().unwrap()["type"],
        "tool_search_tool_regex_20251119"
    );
    assert!(!catalog.offers_search_tools());

    for (profile, schema_key) in [
        (ProviderProfile::Generic, "input_schema"),
        (ProviderProfile::OpenAiStrict, "parameters"),
        (ProviderProfile::Gemini, "parameters"),
    ] {
        let catalog = build(&ten(), profile, Some(ToolBudget::new(0)));
        assert!(catalog.offers_search_tools());
        let list = serde_json::to_value(&catalog).unwrap();
        let list = list.as_array().unwrap();
        assert_eq!(list.len(), 1, "{profile:?}");
        assert_eq!(list[0]["name"], SEARCH_TOOLS_NAME, "{profile:?}");
        assert!(
            list[0][schema_key]["properties"]["query"].is_object(),
            "{profile:?}"
        );
        // deferred tools still answer calls by name
        assert!(catalog.get("s__t3").is_some() && catalog.is_deferred("s__t3"));
    }
    let strict = build(
        &ten(),
        ProviderProfile::OpenAiStrict,
        Some(ToolBudget::new(0)),
    );
    let entry = strict.search_tool().unwrap();
    assert_eq!(entry["strict"], true);
    assert_eq!(entry["parameters"]["additionalProperties"], false);
}

#[test]
fn search_ranks_name_words_over_description_words() {
    let servers = vec![server(
        "s",
        vec![
            tool("weather_now", "Current conditions for a city", &["city"]),
            tool("forecast", "The weather for the next days", &["city"]),
            tool("send_mail", "Send an email", &["to", "subject"]),
            tool("calendar", "Events of a day", &["day"]),
        ],
    )];
    let catalog = build(&servers, ProviderProfile::Generic, Some(ToolBudget::new(0)));
    let check = |query: &str, limit: usize, expect: &[&str]| {
        let got: Vec<&str> = catalog
            .search(query, limit)
            .into_iter()
            .map(CatalogTool::name)
            .collect();
        assert_eq!(got, expect, "{query}");
    };
    check("weather", 5, &["s__weather_now", "s__forecast"]);
    check("weather", 1, &["s__weather_now"]);
    check("subject", 5, &["s__send_mail"]);
    check("EVENTS", 5, &["s__calendar"]);
    check("city", 5, &["s__weather_now", "s__forecast"]);
    check("the of", 5, &[]);
    check("volcano", 5, &[]);
}

#[test]
fn search_arguments_are_read_with_a_bounded_limit() {
    let check = |arguments: Value, expect: Result<(&str, usize), &str>| {
        let got = search_arguments(&arguments);
        let expect = expect
            .map(|(q, n)| (q.to_owned(), n))
            .map_err(str::to_owned);
        match (&got, &expect) {
            (Ok(got), Ok(expect)) => assert_eq!(got, expect, "{arguments}"),
            (Err(got), Err(expect)) => assert!(got.contains(expect.as_str()), "{arguments}: {got}"),
            _ => panic!("{arguments}: {got:?}, not {expect:?}"),
        }
    };
    check(json!({"query": "mail"}), Ok(("mail", DEFAULT_SEARCH_LIMIT)));
    check(
        json!({"query": "mail", "limit": null}),
        Ok(("mail", DEFAULT_SEARCH_LIMIT)),
    );
    check(json!({"query": "mail", "limit": 2}), Ok(("mail", 2)));
    check(
        json!({"query": "mail", "limit": 500}),
        Ok(("mail", MAX_SEARCH_LIMIT)),
    );
    check(json!({"query": "mail", "limit": 0}), Err("`limit`"));
    check(json!({"query": " "}), Err("`query`"));
    check(json!({}), Err("`query`"));
}

#[test]
fn the_deferred_set_does_not_depend_on_the_order_servers_answer_in() {
    let servers = |reverse: bool| {
        let mut servers: Vec<ServerTools> = ["a", "b", "c"]
            .iter()
            .map(|name| {
                let tools = (0..6)
                    .map(|i| tool(&format!("t{i}"), "does one thing well", &["x"]))
                    .collect();
                server(name, tools)
            })
            .collect();
        if reverse {
            servers.reverse();
        }
        servers
    };
    let budget = ToolBudget::new(5 * cost_of_one()).with_recently_used(["c__t5", "b__t1"]);
    for profile in [ProviderProfile::Generic, ProviderProfile::Anthropic] {
        let forward = build(&servers(false), profile, Some(budget.clone()));
        let backward = build(&servers(true), profile, Some(budget.clone()));
        assert!(forward.deferred_tools().count() > 0, "{profile:?}");
        assert_eq!(
            serde_json::to_string(&forward).unwrap(),
            serde_json::to_string(&backward).unwrap(),
            "{profile:?}"
        );
    }
}

/// These tests predate the `claw` default and are about other things
/// than naming: they keep the `server__tool` names they were written for.
fn openclaw() -> MaterializeOptions {
    MaterializeOptions::default().with_style(crate::NamingStyle::OpenClaw)
}
