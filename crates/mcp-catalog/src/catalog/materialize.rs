//! The build itself: every server's listing, filtered, named and with
//! its schema prepared for the provider, becomes one [`Catalog`]. Pure and
//! order-independent; [`SchemaCache`] lets a rebuild reuse the prepared
//! schemas of listings that did not change.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::num::NonZeroUsize;
use std::sync::Arc;
#[cfg(feature = "validation")]
use std::sync::OnceLock;

use mcp_config::Level;
use mcp_transport::Tool;
use serde_json::Value;

use super::tool::{SharedSchema, ToolOrigin, ToolTarget, UtilityTool};
use super::{
    Catalog, CatalogDiagnostic, CatalogTool, MAX_RAW_TOOL_NAME_BYTES, MaterializeOptions,
    ServerTools,
};
use crate::naming::{NameAdjustment, NameAllocator, ServerPrefix};
use crate::schema::{self, ProviderProfile, SchemaLimits};
use crate::{deep, filter};

/// Trims a description and cuts it to `max_chars` characters, ending a
/// cut one with a note saying so; an empty one gets a fallback naming the
/// server.
pub fn describe(description: Option<&str>, tool: &str, server: &str, max_chars: usize) -> String {
    cut_description(description, tool, server, max_chars).text
}

/// A description as the model gets it, and how much of it was kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Described {
    pub(super) text: String,
    /// `(original, kept)` lengths in characters, when it was cut.
    pub(super) cut: Option<(usize, usize)>,
}

/// The shortest limit that still leaves room for the note after some of
/// the text; below it a cut description ends with `…` alone.
const MIN_CHARS_WITH_NOTE: usize = 64;

/// [`describe`], saying whether and where it cut. The whole text, note
/// included, stays within `max_chars` (providers refuse longer ones).
pub(super) fn cut_description(
    description: Option<&str>,
    tool: &str,
    server: &str,
    max_chars: usize,
) -> Described {
    let trimmed = description.map(str::trim).unwrap_or("");
    if trimmed.is_empty() {
        return Described {
            text: format!("Tool \"{tool}\" of MCP server \"{server}\""),
            cut: None,
        };
    }
    if trimmed.char_indices().nth(max_chars).is_none() {
        return Described {
            text: trimmed.to_owned(),
            cut: None,
        };
    }
    let original = trimmed.chars().count();
    let head = |chars: usize| {
        let end = trimmed
            .char_indices()
            .nth(chars)
            .map_or(trimmed.len(), |(i, _)| i);
        trimmed[..end].trim_end()
    };
    let note = |kept: usize| format!("… [description cut at {kept} of {original} characters]");
    if max_chars < MIN_CHARS_WITH_NOTE {
        let kept = head(max_chars.saturating_sub(1));
        let kept_chars = kept.chars().count();
        return Described {
            text: format!("{kept}…"),
            cut: Some((original, kept_chars)),
        };
    }
    // Room is made for the note as written with the limit's number, which
    // is at least as long as the kept count it ends up showing; then the
    // room a shorter number leaves is taken when the whole still fits.
    let fits = |room: usize| room + note(room).chars().count() <= max_chars;
    let room = max_chars.saturating_sub(note(max_chars).chars().count());
    let wider = max_chars.saturating_sub(note(room).chars().count());
    let room = if fits(wider) { wider } else { room };
    let kept = head(room);
    let kept_chars = kept.chars().count();
    Described {
        text: format!("{kept}{}", note(kept_chars)),
        cut: Some((original, kept_chars)),
    }
}

/// A schema prepared for the catalog's profile, shared wherever no
/// rewrite changed it.
#[derive(Debug, Clone)]
struct PreparedSchema {
    /// What the model sees.
    input: SharedSchema,
    /// The normal form of the server's schema, for `openai-strict` only
    /// (see [`CatalogTool::prepare_arguments`]).
    normalized: Option<SharedSchema>,
}

/// Why a tool's schemas keep it out of the catalog.
#[derive(Debug, Clone)]
enum Refused {
    Input(schema::SchemaError),
    Output(schema::SchemaError),
}

/// Prepares `original` for `profile`, sharing it when no rewrite changes
/// it, and vets the tool's output schema (see
/// [`schema::check_output_schema`]).
fn prepare(
    original: &SharedSchema,
    profile: ProviderProfile,
    limits: &SchemaLimits,
) -> Result<PreparedSchema, Refused> {
    let prepared = prepare_input(original, profile, limits).map_err(Refused::Input)?;
    if let SharedSchema::Listed { tools, index } = original
        && let Some(output) = &tools[*index].output_schema
    {
        schema::check_output_schema(output, limits).map_err(Refused::Output)?;
    }
    Ok(prepared)
}

fn prepare_input(
    original: &SharedSchema,
    profile: ProviderProfile,
    limits: &SchemaLimits,
) -> Result<PreparedSchema, schema::SchemaError> {
    let share = |schema: Cow<'_, Value>| match schema {
        Cow::Borrowed(_) => original.clone(),
        Cow::Owned(prepared) => SharedSchema::Own(Arc::new(prepared)),
    };
    let prepared = schema::prepare_for_calls(original.get(), profile, limits)?;
    Ok(PreparedSchema {
        input: share(prepared.schema),
        normalized: prepared.normalized.map(share),
    })
}

/// One tool waiting for its name.
struct Pending<'a> {
    raw_name: &'a str,
    description: String,
    /// Whether the description was cut.
    cut: bool,
    original: SharedSchema,
    target: ToolTarget,
}

/// Builds the catalog from every server's listing. The output depends only
/// on the set of listings, never on their order, given one listing per
/// server name (as config keys and the runtime's slots guarantee).
pub fn materialize(servers: &[ServerTools], options: &MaterializeOptions) -> Catalog {
    materialize_cached(servers, options, &mut SchemaCache::default())
}

/// Prepared schemas of earlier builds, by server listing. A listing is the
/// same when it is the same shared allocation (the runtime keeps a
/// server's listing until `list_changed`), so a rebuild prepares only the
/// schemas of servers whose tools changed.
#[derive(Debug, Default)]
pub struct SchemaCache {
    profile: Option<ProviderProfile>,
    listings: HashMap<usize, CachedListing>,
}

#[derive(Debug)]
struct CachedListing {
    /// Keeps the allocation (and so its address) alive.
    tools: Arc<[Tool]>,
    prepared: Vec<Option<Result<PreparedSchema, Refused>>>,
}

impl SchemaCache {
    fn listing(&mut self, tools: &Arc<[Tool]>) -> &mut CachedListing {
        // The address identifies the allocation; the stored `Arc` keeps it
        // from being freed and reused while the entry exists.
        let key = Arc::as_ptr(tools) as *const Tool as usize;
        let fresh = || CachedListing {
            tools: Arc::clone(tools),
            prepared: vec![None; tools.len()],
        };
        let entry = self.listings.entry(key).or_insert_with(fresh);
        if !Arc::ptr_eq(&entry.tools, tools) {
            *entry = fresh();
        }
        entry
    }
}

/// [`materialize`] reusing (and refreshing) `cache`.
pub fn materialize_cached(
    servers: &[ServerTools],
    options: &MaterializeOptions,
    cache: &mut SchemaCache,
) -> Catalog {
    materialize_among(servers, [], options, cache)
}

/// [`materialize_cached`] for the listings of some of the servers of a
/// catalog: every server in `known` (the listed ones count too) gets its
/// tool prefix as if all were listed, so the names of the listed servers'
/// tools do not depend on which other servers answered. A host uses it to
/// connect only the server that owns a name (see
/// [`crate::naming::tool_owners`]). The one difference from a full catalog:
/// two tools of different servers whose names meet after sanitising or
/// cutting are told apart by the order they are named in, which only a
/// full catalog fixes.
pub fn materialize_among<'a>(
    servers: &[ServerTools],
    known: impl IntoIterator<Item = &'a str>,
    options: &MaterializeOptions,
    cache: &mut SchemaCache,
) -> Catalog {
    if cache.profile != Some(options.profile) {
        *cache = SchemaCache {
            profile: Some(options.profile),
            listings: HashMap::new(),
        };
    }
    let mut used = BTreeSet::new();
    let mut order: Vec<&ServerTools> = servers.iter().collect();
    order.sort_by(|a, b| {
        a.server.cmp(&b.server).then_with(|| {
            // Equal names only happen with bad input; order them by content
            // so even then the outcome does not depend on answer order.
            // (written without recursion: a server's schema may be deep).
            let key = |listing: &ServerTools| -> Vec<(String, String)> {
                listing
                    .tools
                    .iter()
                    .map(|t| (t.name.clone(), deep::to_json(&t.input_schema, false)))
                    .collect()
            };
            key(a).cmp(&key(b))
        })
    });

    let mut allocator = NameAllocator::new(
        options.style,
        options.reserved_names.iter().map(String::as_str),
    );
    let mut names: Vec<String> = known
        .into_iter()
        .map(str::to_owned)
        .chain(order.iter().map(|listing| listing.server.clone()))
        .collect();
    names.sort_unstable();
    names.dedup();
    let mut prefixes: HashMap<String, ServerPrefix> = names
        .into_iter()
        .map(|server| {
            let prefix = allocator.server_prefix(&server);
            (server, prefix)
        })
        .collect();
    let mut tools = Vec::new();
    let mut diagnostics = Vec::new();
    let mut filtered = BTreeMap::new();
    let mut cut = BTreeMap::new();
    let mut seen_servers = BTreeSet::new();

    for listing in order {
        let server = listing.server.as_str();
        if !seen_servers.insert(server) {
            diagnostics.push(CatalogDiagnostic::server(
                Level::Error,
                server,
                format!("server {server:?} appears twice; its second listing is left out"),
            ));
            continue;
        }
        let Some(prefix) = prefixes.remove(server) else {
            continue;
        };
        let prefix = match prefix {
            ServerPrefix::Assigned(prefix) => prefix,
            ServerPrefix::Renamed {
                prefix,
                wanted,
                taken_by,
            } => {
                diagnostics.push(CatalogDiagnostic::server(
                    Level::Error,
                    server,
                    format!(
                        "server {server:?} has the same tool prefix {wanted:?} as server {taken_by:?}; its tools are named {prefix:?}…, which changes when either server is renamed or removed: rename one of them"
                    ),
                ));
                prefix
            }
            ServerPrefix::Conflict { prefix, taken_by } => {
                diagnostics.push(CatalogDiagnostic::server(
                    Level::Error,
                    server,
                    format!(
                        "server {server:?} has the same tool prefix {prefix:?} as server {taken_by:?}; its tools are left out"
                    ),
                ));
                continue;
            }
        };

        let mut pending = pending_tools(listing, options, &mut diagnostics, &mut filtered);
        let cut_here = pending.iter().filter(|item| item.cut).count();
        if cut_here > 0 {
            cut.insert(server.to_owned(), cut_here);
        }
        pending.sort_by(|a, b| a.raw_name.cmp(b.raw_name));

        used.insert(Arc::as_ptr(&listing.tools) as *const Tool as usize);
        let cached = cache.listing(&listing.tools);
        for item in pending {
            let prepared = match &item.original {
                SharedSchema::Listed { index, .. } => cached.prepared[*index]
                    .get_or_insert_with(|| {
                        prepare(&item.original, options.profile, &options.schema_limits)
                    })
                    .clone(),
                SharedSchema::Own(_) => {
                    prepare(&item.original, options.profile, &options.schema_limits)
                }
            };
            let prepared = match prepared {
                Ok(prepared) => prepared,
                Err(refused) => {
                    let (which, error) = match refused {
                        Refused::Input(error) => ("input", error),
                        Refused::Output(error) => ("output", error),
                    };
                    diagnostics.push(CatalogDiagnostic::tool(
                        Level::Error,
                        server,
                        item.raw_name,
                        format!(
                            "server {server:?}, tool {:?}: {which} schema {error}; the tool is left out of the {} catalog",
                            item.raw_name,
                            options.profile.as_str()
                        ),
                    ));
                    continue;
                }
            };
            let (name, adjustment) = allocator.tool_name(&prefix, server, item.raw_name);
            if let Some(adjustment) = adjustment {
                diagnostics.push(adjustment_diagnostic(
                    server,
                    item.raw_name,
                    &name,
                    adjustment,
                ));
            }
            tools.push(CatalogTool {
                name,
                description: item.description,
                input_schema: prepared.input,
                profile: options.profile,
                origin: ToolOrigin {
                    server: server.to_owned(),
                    target: item.target,
                },
                original_schema: item.original,
                normalized_schema: prepared.normalized,
                #[cfg(feature = "validation")]
                validator: OnceLock::new(),
                #[cfg(feature = "validation")]
                output_validator: OnceLock::new(),
            });
        }
    }

    cache.listings.retain(|key, _| used.contains(key));
    tools.sort_by(|a, b| a.name.cmp(&b.name));
    let by_name = tools
        .iter()
        .enumerate()
        .map(|(i, tool)| (tool.name.clone(), i))
        .collect();
    diagnostics.sort();
    let mut catalog = Catalog {
        tools,
        by_name,
        diagnostics,
        filtered,
        cut,
        servers: seen_servers.into_iter().map(str::to_owned).collect(),
        unavailable: BTreeSet::new(),
        withheld: BTreeSet::new(),
        profile: options.profile,
        style: options.style,
        deferred: BTreeSet::new(),
        search: None,
        budget_tokens: None,
    };
    if let Some(budget) = &options.budget {
        catalog.apply_budget(budget);
    }
    catalog
}

/// The tools of one server that pass its filter, deduplicated, plus its
/// utility tools.
fn pending_tools<'a>(
    listing: &'a ServerTools,
    options: &MaterializeOptions,
    diagnostics: &mut Vec<CatalogDiagnostic>,
    filtered: &mut BTreeMap<String, usize>,
) -> Vec<Pending<'a>> {
    let server = listing.server.as_str();
    let mut pending = Vec::with_capacity(listing.tools.len());
    let mut raw_names = BTreeSet::new();
    let mut hidden = 0usize;
    for (index, tool) in listing.tools.iter().enumerate() {
        if !raw_names.insert(tool.name.as_str()) {
            diagnostics.push(CatalogDiagnostic::tool(
                Level::Warning,
                server,
                &tool.name,
                format!(
                    "tool {:?} is listed twice; the first entry is used",
                    tool.name
                ),
            ));
            continue;
        }
        if !filter::passes(&listing.filter, &tool.name) {
            hidden += 1;
            continue;
        }
        if let Some(problem) = refused_tool(server, tool) {
            diagnostics.push(CatalogDiagnostic::tool(
                Level::Error,
                server,
                &tool.name,
                problem,
            ));
            continue;
        }
        if matches!(tool.input_schema, Value::Null | Value::Bool(true)) {
            diagnostics.push(CatalogDiagnostic::tool(
                Level::Warning,
                server,
                &tool.name,
                format!(
                    "server {server:?}, tool {:?}: no input schema (or `true`); its arguments are read as any object",
                    tool.name
                ),
            ));
        }
        let limit = listing
            .description_limit
            .map_or(options.description_limit, NonZeroUsize::get);
        let described = cut_description(tool.description.as_deref(), &tool.name, server, limit);
        if let Some((original, kept)) = described.cut {
            diagnostics.push(CatalogDiagnostic::tool(
                Level::Info,
                server,
                &tool.name,
                format!(
                    "server {server:?}, tool {:?}: description cut from {original} to {kept} characters (limit {limit})",
                    tool.name
                ),
            ));
        }
        pending.push(Pending {
            raw_name: &tool.name,
            description: described.text,
            cut: described.cut.is_some(),
            original: SharedSchema::Listed {
                tools: Arc::clone(&listing.tools),
                index,
            },
            target: ToolTarget::Tool {
                name: tool.name.clone(),
            },
        });
    }
    if options.utility_tools {
        for utility in UtilityTool::for_features(listing.features) {
            let raw = utility.raw_name();
            if raw_names.contains(raw) {
                diagnostics.push(CatalogDiagnostic::tool(
                    Level::Info,
                    server,
                    raw,
                    format!("the server's own tool {raw:?} replaces the {raw} utility"),
                ));
                continue;
            }
            if !filter::passes(&listing.filter, raw) {
                hidden += 1;
                continue;
            }
            pending.push(Pending {
                raw_name: raw,
                description: utility.description(server),
                cut: false,
                original: SharedSchema::Own(Arc::new(utility.input_schema(options.profile))),
                target: ToolTarget::Utility { utility },
            });
        }
    }
    if hidden > 0 {
        filtered.insert(server.to_owned(), hidden);
        diagnostics.push(CatalogDiagnostic::server(
            Level::Info,
            server,
            format!("toolFilter hid {hidden} tool(s)"),
        ));
    }
    pending
}

/// Why a listed tool cannot be offered at all, before its schema is read.
fn refused_tool(server: &str, tool: &Tool) -> Option<String> {
    let name = tool.name.as_str();
    if name.is_empty() {
        return Some(format!(
            "server {server:?}, tool \"\": the tool has an empty name; it is left out"
        ));
    }
    if name.len() > MAX_RAW_TOOL_NAME_BYTES {
        let start: String = name.chars().take(32).collect();
        return Some(format!(
            "server {server:?}, tool {name:?}: the name is {} bytes, over the limit of {MAX_RAW_TOOL_NAME_BYTES} (starts {start:?}); the tool is left out",
            name.len()
        ));
    }
    let kind = match &tool.input_schema {
        Value::Null | Value::Bool(_) | Value::Object(_) => return None,
        Value::Array(_) => "a list",
        Value::String(_) => "a string",
        Value::Number(_) => "a number",
    };
    Some(format!(
        "server {server:?}, tool {name:?}: input schema is {kind}, not a JSON Schema object; the tool is left out"
    ))
}

/// Makes a listing safe to keep and drop: every value of each tool is cut
/// to at most `max_depth + 1` levels (without recursion). A schema that
/// was deeper still nests deeper than `max_depth`, so materialising
/// leaves its tool out all the same; what the cut removed would only have
/// overflowed the stack when dropped.
pub fn defuse_listing(tools: &mut [Tool], max_depth: usize) {
    for tool in tools {
        deep::cut_below(&mut tool.input_schema, max_depth + 1);
        for value in [&mut tool.output_schema, &mut tool.annotations]
            .into_iter()
            .flatten()
        {
            deep::cut_below(value, max_depth + 1);
        }
    }
}

fn adjustment_diagnostic(
    server: &str,
    raw: &str,
    name: &str,
    adjustment: NameAdjustment,
) -> CatalogDiagnostic {
    let (level, message) = match adjustment {
        NameAdjustment::Shortened => (
            Level::Info,
            format!("name shortened to 64 characters: {name:?}"),
        ),
        NameAdjustment::ReservedCollision { wanted } => (
            Level::Warning,
            format!("{wanted:?} is a reserved tool name; renamed to {name:?}"),
        ),
        NameAdjustment::Collision { wanted } => (
            Level::Warning,
            format!("{wanted:?} is already taken by another tool; renamed to {name:?}"),
        ),
    };
    CatalogDiagnostic::tool(level, server, raw, message)
}

#[cfg(test)]
mod tests {
    use mcp_config::ToolFilter;
    use serde_json::json;

    use super::*;
    use crate::catalog::ServerFeatures;

    /// `description` of `length` characters ("ab…" repeated) cut at
    /// `limit`: the text's length, whether it ends with the note, and the
    /// `(original, kept)` lengths reported.
    fn check(
        length: usize,
        limit: usize,
        expect_chars: usize,
        note: bool,
        cut: Option<(usize, usize)>,
    ) {
        let text: String = "abcdefghij".chars().cycle().take(length).collect();
        let described = cut_description(Some(&text), "t", "s", limit);
        assert_eq!(described.cut, cut, "{length} at {limit}");
        assert_eq!(
            described.text.chars().count(),
            expect_chars,
            "{length} at {limit}: {}",
            described.text
        );
        assert!(
            described.text.chars().count() <= limit.max(1),
            "{length} at {limit}"
        );
        if let Some((original, kept)) = cut {
            let expected_note = format!("… [description cut at {kept} of {original} characters]");
            assert_eq!(
                described.text.ends_with(&expected_note),
                note,
                "{}",
                described.text
            );
            assert!(
                described.text.starts_with(&text[..kept]),
                "{}",
                described.text
            );
        }
    }

    #[test]
    fn descriptions_are_cut_with_a_note_within_the_limit() {
        check(10, 1024, 10, false, None);
        check(1024, 1024, 1024, false, None);
        // the note takes 45 characters with a three-digit kept count
        check(2781, 1024, 1024, true, Some((2781, 979)));
        check(1025, 1024, 1024, true, Some((1025, 979)));
        check(500, 100, 100, true, Some((500, 57)));
        // too small a limit for the note: `…` alone
        check(100, 20, 20, false, Some((100, 19)));
        check(100, 1, 1, false, Some((100, 0)));
        // characters, not bytes
        let wide: String = "é".repeat(300);
        let described = cut_description(Some(&wide), "t", "s", 100);
        assert_eq!(described.text.chars().count(), 100);
        assert_eq!(described.cut, Some((300, 57)));
        // empty descriptions get the fallback, never cut
        assert_eq!(
            cut_description(Some("  "), "t", "s", 3),
            Described {
                text: "Tool \"t\" of MCP server \"s\"".into(),
                cut: None
            }
        );
    }

    fn listing(server: &str, limit: Option<usize>) -> ServerTools {
        ServerTools {
            server: server.into(),
            tools: vec![Tool {
                name: "t".into(),
                title: None,
                description: Some("x".repeat(300)),
                input_schema: json!({"type": "object"}),
                output_schema: None,
                annotations: None,
                execution: None,
            }]
            .into(),
            filter: ToolFilter::default(),
            features: ServerFeatures::default(),
            description_limit: limit.and_then(NonZeroUsize::new),
        }
    }

    #[test]
    fn the_server_limit_wins_over_the_host_limit() {
        let options = MaterializeOptions {
            description_limit: 200,
            ..openclaw()
        };
        let catalog = materialize(
            &[
                listing("a", None),
                listing("b", Some(1000)),
                listing("c", Some(100)),
            ],
            &options,
        );
        let lengths: Vec<usize> = catalog
            .tools()
            .iter()
            .map(|t| t.description().chars().count())
            .collect();
        assert_eq!(lengths, [200, 300, 100]);
        assert_eq!(
            catalog.cut_descriptions(),
            &BTreeMap::from([("a".to_owned(), 1), ("c".to_owned(), 1)])
        );
        let infos: Vec<&str> = catalog
            .diagnostics()
            .iter()
            .filter(|d| d.level == Level::Info)
            .map(|d| d.message.as_str())
            .collect();
        assert_eq!(
            infos,
            [
                "server \"a\", tool \"t\": description cut from 300 to 156 characters (limit 200)",
                "server \"c\", tool \"t\": description cut from 300 to 57 characters (limit 100)",
            ]
        );
        let counts = catalog.counts();
        assert_eq!(
            (
                counts.servers,
                counts.tools,
                counts.descriptions_cut,
                counts.infos
            ),
            (3, 3, 2, 2)
        );
    }

    /// `arguments` for a tool whose schema is `schema`: the warnings, or
    /// the refusal's message.
    fn check_call(schema: Value, arguments: Value, expect: Result<&[&str], &str>) {
        let mut server = listing("s", None);
        server.tools = vec![Tool {
            input_schema: schema.clone(),
            ..server.tools[0].clone()
        }]
        .into();
        let catalog = materialize(&[server], &openclaw());
        let tool = &catalog.tools()[0];
        let got = tool
            .prepare_call(arguments.clone())
            .map(|prepared| prepared.warnings)
            .map_err(|error| error.to_string());
        match (got, expect) {
            (Ok(warnings), Ok(expect)) => assert_eq!(warnings, expect, "{schema} {arguments}"),
            (Err(error), Err(expect)) => {
                assert!(error.contains(expect), "{schema} {arguments}: {error}")
            }
            (got, expect) => panic!("{schema} {arguments}: {got:?}, not {expect:?}"),
        }
    }

    #[test]
    fn unknown_arguments_are_warned_on_or_refused() {
        let open = json!({"type": "object", "properties": {"a": {}, "b": {}}});
        check_call(open.clone(), json!({"a": 1}), Ok(&[]));
        check_call(
            open,
            json!({"a": 1, "x": 2}),
            Ok(&["argument `x` is not in the schema of tool `s__t`; it takes: a, b"]),
        );
        let closed =
            json!({"type": "object", "properties": {"a": {}}, "additionalProperties": false});
        check_call(
            closed.clone(),
            json!({"y": 1, "z": 1}),
            Err(
                "argument `y` (and 1 more) is not in the schema of tool `s__t`, which allows no other arguments; it takes: a",
            ),
        );
        check_call(
            json!({"type": "object", "additionalProperties": false}),
            json!({"q": 1}),
            Err("it takes no arguments"),
        );
        // a free-form schema says nothing
        check_call(json!({"type": "object"}), json!({"q": 1}), Ok(&[]));
        check_call(closed, json!({"a": 1}), Ok(&[]));
    }

    #[test]
    fn prompts_get_arguments_per_profile() {
        let check = |profile: ProviderProfile, kind: &str| {
            let schema = UtilityTool::PromptsGet.input_schema(profile);
            assert_eq!(
                schema["properties"]["arguments"]["type"], kind,
                "{profile:?}"
            );
            // the form shown survives the profile's rewrite
            let prepared =
                schema::prepare_for_calls(&schema, profile, &SchemaLimits::default()).unwrap();
            assert!(
                prepared.schema["properties"]["arguments"].is_object(),
                "{profile:?}"
            );
        };
        check(ProviderProfile::Generic, "object");
        check(ProviderProfile::Anthropic, "object");
        check(ProviderProfile::OpenAiStrict, "array");
        check(ProviderProfile::Gemini, "array");
    }

    /// These tests predate the `claw` default and are about other things
    /// than naming: they keep the `server__tool` names they were written for.
    fn openclaw() -> MaterializeOptions {
        MaterializeOptions::default().with_style(crate::NamingStyle::OpenClaw)
    }
}
