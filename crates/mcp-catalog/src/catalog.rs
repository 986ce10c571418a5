//! Materialisation: the tool lists of every server become one flat,
//! sorted catalog a host hands to a model.
//!
//! The function is pure ([`materialize`]); the runtime calls it with the
//! listings it collected. Its output depends only on its input set, never
//! on the order servers answered in, so the catalog's bytes stay the same
//! from one turn to the next and a provider's prompt cache stays warm.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, OnceLock};

use mcp_config::{Level, ToolFilter};
use mcp_transport::protocol::Tool;
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};
use serde_json::{Value, json};

use crate::error::CatalogError;
use crate::naming::{NameAdjustment, NameAllocator, NamingStyle, ServerPrefix};
use crate::schema::{self, ProviderProfile, SchemaLimits};
use crate::{deep, filter};

/// Default cap on a tool description, in characters (OpenAI's limit).
pub const DEFAULT_MAX_DESCRIPTION_CHARS: usize = 1024;

/// Longest raw tool name accepted, in bytes. MCP asks for at most 128
/// characters; longer names still work (the model sees a shortened one),
/// but a name this long is no tool's.
pub const MAX_RAW_TOOL_NAME_BYTES: usize = 1024;

/// How deep the arguments of a call may nest. The model's arguments are
/// validated against a schema by code that recurses per level.
pub const MAX_ARGUMENT_DEPTH: usize = schema::MAX_JSON_DEPTH;

/// What a server offers besides tools (from its `initialize` capabilities).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
pub struct ServerFeatures {
    pub resources: bool,
    pub prompts: bool,
}

impl ServerFeatures {
    /// Reads the `resources` and `prompts` capabilities of an `initialize`
    /// answer.
    pub fn from_capabilities(capabilities: &Value) -> Self {
        let present = |key: &str| capabilities.get(key).is_some_and(|v| !v.is_null());
        ServerFeatures {
            resources: present("resources"),
            prompts: present("prompts"),
        }
    }
}

/// One server's answer to `tools/list`, with the settings that shape it.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerTools {
    /// The configured server name.
    pub server: String,
    /// Shared, so the catalog refers to the schemas instead of copying.
    pub tools: Arc<[Tool]>,
    pub filter: ToolFilter,
    pub features: ServerFeatures,
}

/// Settings of materialisation, chosen by the host.
#[derive(Debug, Clone, PartialEq)]
pub struct MaterializeOptions {
    pub style: NamingStyle,
    pub profile: ProviderProfile,
    /// Names of the host's native tools; MCP tools never take them.
    pub reserved_names: BTreeSet<String>,
    /// Longer descriptions are cut to this many characters.
    pub max_description_chars: usize,
    /// Whether servers with resources or prompts get utility tools.
    pub utility_tools: bool,
    /// Caps on each tool's input schema; a tool over one is left out.
    pub schema_limits: SchemaLimits,
}

impl Default for MaterializeOptions {
    fn default() -> Self {
        MaterializeOptions {
            style: NamingStyle::default(),
            profile: ProviderProfile::default(),
            reserved_names: BTreeSet::new(),
            max_description_chars: DEFAULT_MAX_DESCRIPTION_CHARS,
            utility_tools: true,
            schema_limits: SchemaLimits::default(),
        }
    }
}

/// The utility tools a server with resources or prompts gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum UtilityTool {
    ResourcesList,
    ResourcesRead,
    PromptsList,
    PromptsGet,
}

impl UtilityTool {
    /// The raw name, matched by `toolFilter` like any tool name.
    pub fn raw_name(self) -> &'static str {
        match self {
            UtilityTool::ResourcesList => "resources_list",
            UtilityTool::ResourcesRead => "resources_read",
            UtilityTool::PromptsList => "prompts_list",
            UtilityTool::PromptsGet => "prompts_get",
        }
    }

    fn description(self, server: &str) -> String {
        match self {
            UtilityTool::ResourcesList => {
                format!("List the resources of MCP server \"{server}\" (uri, name, description).")
            }
            UtilityTool::ResourcesRead => {
                format!("Read one resource of MCP server \"{server}\" by its uri.")
            }
            UtilityTool::PromptsList => {
                format!("List the prompts of MCP server \"{server}\" and their arguments.")
            }
            UtilityTool::PromptsGet => {
                format!("Get one prompt of MCP server \"{server}\" filled in with arguments.")
            }
        }
    }

    fn input_schema(self) -> Value {
        let cursor = json!({
            "type": "string",
            "description": "Cursor from a previous page; leave out for the first page"
        });
        match self {
            UtilityTool::ResourcesList | UtilityTool::PromptsList => json!({
                "type": "object",
                "properties": { "cursor": cursor }
            }),
            UtilityTool::ResourcesRead => json!({
                "type": "object",
                "properties": {
                    "uri": { "type": "string", "description": "The resource's uri" }
                },
                "required": ["uri"]
            }),
            // Arguments as name/value pairs rather than a free-form map:
            // every provider profile can express a list of objects.
            UtilityTool::PromptsGet => json!({
                "type": "object",
                "properties": {
                    "name": { "type": "string", "description": "The prompt's name" },
                    "arguments": {
                        "type": "array",
                        "description": "The prompt's arguments",
                        "items": {
                            "type": "object",
                            "properties": {
                                "name": { "type": "string" },
                                "value": { "type": "string" }
                            },
                            "required": ["name", "value"]
                        }
                    }
                },
                "required": ["name"]
            }),
        }
    }

    fn for_features(features: ServerFeatures) -> Vec<UtilityTool> {
        let mut tools = Vec::new();
        if features.resources {
            tools.extend([UtilityTool::ResourcesList, UtilityTool::ResourcesRead]);
        }
        if features.prompts {
            tools.extend([UtilityTool::PromptsList, UtilityTool::PromptsGet]);
        }
        tools
    }
}

/// What a materialised tool calls.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ToolTarget {
    /// A server tool, by its raw name.
    Tool { name: String },
    /// A resources or prompts utility.
    Utility { utility: UtilityTool },
}

/// Where a materialised tool leads: the server and what to call there.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct ToolOrigin {
    pub server: String,
    pub target: ToolTarget,
}

/// One tool as a model sees it. Serialises to exactly what a host sends
/// for its provider profile: `{name, description, input_schema}` for
/// `generic` and `anthropic`, `{type: "function", name, description,
/// parameters, strict: true}` for `openai-strict`, and `{name,
/// description, parameters}` for `gemini`.
#[derive(Debug)]
pub struct CatalogTool {
    name: String,
    description: String,
    /// Shared with the runtime's schema cache, so a rebuild that reuses it
    /// copies nothing; a schema no rewrite changed is the server's own.
    input_schema: SharedSchema,
    profile: ProviderProfile,
    origin: ToolOrigin,
    /// The schema the server sent; arguments are validated against it.
    original_schema: SharedSchema,
    /// Compiled on first call; `None` when the server's schema does not
    /// compile (the server then validates alone).
    validator: OnceLock<Option<Arc<jsonschema::Validator>>>,
}

impl CatalogTool {
    /// The name the model calls.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The description, trimmed and cut.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The input schema for this catalog's provider profile.
    pub fn input_schema(&self) -> &Value {
        self.input_schema.get()
    }

    /// The server and the raw tool this name maps back to.
    pub fn origin(&self) -> &ToolOrigin {
        &self.origin
    }

    /// The server's own schema, as sent.
    pub fn original_schema(&self) -> &Value {
        self.original_schema.get()
    }

    /// Turns the model's arguments into the server's: `null` for an
    /// optional property (what strict mode makes the model send) is
    /// dropped, and a missing argument object becomes `{}`; then validates
    /// them against the server's schema.
    pub fn prepare_arguments(&self, arguments: Value) -> Result<Value, CatalogError> {
        if deep::exceeds_depth(&arguments, MAX_ARGUMENT_DEPTH) {
            deep::dispose(arguments);
            return Err(self.too_deep());
        }
        let mut arguments = match arguments {
            Value::Null => json!({}),
            other => other,
        };
        if self.profile == ProviderProfile::OpenAiStrict {
            let normalized = schema::normalize(self.original_schema.get());
            schema::strip_optional_nulls(&normalized, &mut arguments);
        }
        self.validate(&arguments)?;
        Ok(arguments)
    }

    /// Validates arguments against the server's schema, naming the failing
    /// path.
    pub fn validate(&self, arguments: &Value) -> Result<(), CatalogError> {
        if deep::exceeds_depth(arguments, MAX_ARGUMENT_DEPTH) {
            return Err(self.too_deep());
        }
        let validator = self.validator.get_or_init(|| {
            match jsonschema::validator_for(self.original_schema.get()) {
                Ok(validator) => Some(Arc::new(validator)),
                Err(error) => {
                    tracing::warn!(tool = %self.name, %error, "input schema does not compile; arguments go unchecked");
                    None
                }
            }
        });
        let Some(validator) = validator else {
            return Ok(());
        };
        if let Some(error) = validator.iter_errors(arguments).next() {
            let path = error.instance_path.to_string();
            let path = if path.is_empty() {
                "/".to_owned()
            } else {
                path
            };
            return Err(CatalogError::invalid_arguments(
                self.name.clone(),
                path,
                error.to_string(),
            ));
        }
        Ok(())
    }
}

impl CatalogTool {
    fn too_deep(&self) -> CatalogError {
        CatalogError::invalid_arguments(
            self.name.clone(),
            "/",
            format!("the arguments nest deeper than {MAX_ARGUMENT_DEPTH} levels"),
        )
    }
}

impl Clone for CatalogTool {
    fn clone(&self) -> Self {
        CatalogTool {
            name: self.name.clone(),
            description: self.description.clone(),
            input_schema: self.input_schema.clone(),
            profile: self.profile,
            origin: self.origin.clone(),
            original_schema: self.original_schema.clone(),
            validator: OnceLock::new(),
        }
    }
}

impl PartialEq for CatalogTool {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
            && self.description == other.description
            && self.input_schema.get() == other.input_schema.get()
            && self.profile == other.profile
            && self.origin == other.origin
    }
}

impl Serialize for CatalogTool {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.profile {
            ProviderProfile::Generic | ProviderProfile::Anthropic => {
                let mut map = serializer.serialize_map(Some(3))?;
                map.serialize_entry("name", &self.name)?;
                map.serialize_entry("description", &self.description)?;
                map.serialize_entry("input_schema", self.input_schema.get())?;
                map.end()
            }
            ProviderProfile::OpenAiStrict => {
                let mut map = serializer.serialize_map(Some(5))?;
                map.serialize_entry("type", "function")?;
                map.serialize_entry("name", &self.name)?;
                map.serialize_entry("description", &self.description)?;
                map.serialize_entry("parameters", self.input_schema.get())?;
                map.serialize_entry("strict", &true)?;
                map.end()
            }
            ProviderProfile::Gemini => {
                let mut map = serializer.serialize_map(Some(3))?;
                map.serialize_entry("name", &self.name)?;
                map.serialize_entry("description", &self.description)?;
                map.serialize_entry("parameters", self.input_schema.get())?;
                map.end()
            }
        }
    }
}

/// Something a host should know about the catalog: a renamed or left-out
/// tool, a server that failed, a filter at work. Never silent.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct CatalogDiagnostic {
    pub server: String,
    /// The raw tool name, when the diagnostic is about one tool.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    pub level: Level,
    pub message: String,
}

impl CatalogDiagnostic {
    pub(crate) fn server(level: Level, server: &str, message: String) -> Self {
        CatalogDiagnostic {
            server: server.to_owned(),
            tool: None,
            level,
            message,
        }
    }

    fn tool(level: Level, server: &str, tool: &str, message: String) -> Self {
        CatalogDiagnostic {
            server: server.to_owned(),
            tool: Some(tool.to_owned()),
            level,
            message,
        }
    }
}

/// The materialised catalog: tools sorted by name, plus what happened on
/// the way. Serialises to the list of tools a host sends a model; see
/// [`Catalog::report`] for the diagnostics too.
#[derive(Debug, Clone)]
pub struct Catalog {
    tools: Vec<CatalogTool>,
    by_name: HashMap<String, usize>,
    diagnostics: Vec<CatalogDiagnostic>,
    filtered: BTreeMap<String, usize>,
    profile: ProviderProfile,
    style: NamingStyle,
}

impl Catalog {
    /// Tools in name order.
    pub fn tools(&self) -> &[CatalogTool] {
        &self.tools
    }

    /// A tool by the name the model used.
    pub fn get(&self, name: &str) -> Option<&CatalogTool> {
        self.by_name.get(name).map(|&i| &self.tools[i])
    }

    /// Diagnostics in a fixed order (server, tool, level, message).
    pub fn diagnostics(&self) -> &[CatalogDiagnostic] {
        &self.diagnostics
    }

    /// How many tools `toolFilter` hid, per server (servers with none left
    /// out).
    pub fn filtered(&self) -> &BTreeMap<String, usize> {
        &self.filtered
    }

    /// The provider profile the schemas were written for.
    pub fn profile(&self) -> ProviderProfile {
        self.profile
    }

    /// The naming style of the tool names.
    pub fn style(&self) -> NamingStyle {
        self.style
    }

    /// Whether any diagnostic is an error: a tool or server left out, or a
    /// server whose tool prefix collided with another's.
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(|d| d.level == Level::Error)
    }

    /// Everything about the catalog in one serialisable value.
    pub fn report(&self) -> CatalogReport<'_> {
        CatalogReport {
            style: self.style,
            profile: self.profile,
            tools: &self.tools,
            origins: self
                .tools
                .iter()
                .map(|t| (t.name.as_str(), &t.origin))
                .collect(),
            filtered: &self.filtered,
            diagnostics: &self.diagnostics,
        }
    }

    pub(crate) fn push_diagnostics(&mut self, extra: impl IntoIterator<Item = CatalogDiagnostic>) {
        self.diagnostics.extend(extra);
        self.diagnostics.sort();
        self.diagnostics.dedup();
    }
}

impl Serialize for Catalog {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.tools.len()))?;
        for tool in &self.tools {
            seq.serialize_element(tool)?;
        }
        seq.end()
    }
}

/// [`Catalog`] with its diagnostics, for reports and snapshots.
#[derive(Debug, Serialize)]
pub struct CatalogReport<'a> {
    pub style: NamingStyle,
    pub profile: ProviderProfile,
    pub tools: &'a [CatalogTool],
    /// Name → (server, raw tool).
    pub origins: BTreeMap<&'a str, &'a ToolOrigin>,
    pub filtered: &'a BTreeMap<String, usize>,
    pub diagnostics: &'a [CatalogDiagnostic],
}

/// Trims a description and cuts it to `max_chars` characters; an empty one
/// gets a fallback naming the server.
pub fn describe(description: Option<&str>, tool: &str, server: &str, max_chars: usize) -> String {
    let trimmed = description.map(str::trim).unwrap_or("");
    if trimmed.is_empty() {
        return format!("Tool \"{tool}\" of MCP server \"{server}\"");
    }
    match trimmed.char_indices().nth(max_chars) {
        None => trimmed.to_owned(),
        Some(_) => {
            let keep = max_chars.saturating_sub(1);
            let end = trimmed
                .char_indices()
                .nth(keep)
                .map_or(trimmed.len(), |(i, _)| i);
            format!("{}…", trimmed[..end].trim_end())
        }
    }
}

/// Where a schema lives: in a server's listing, or made here.
#[derive(Clone)]
enum SharedSchema {
    /// In the server's listing, at this index.
    Listed { tools: Arc<[Tool]>, index: usize },
    /// Made here (utility tools, rewritten schemas).
    Own(Arc<Value>),
}

impl std::fmt::Debug for SharedSchema {
    /// The schema alone: the rest of the listing may hold tools whose
    /// schemas were left out for nesting too deep to print.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.get().fmt(f)
    }
}

impl SharedSchema {
    fn get(&self) -> &Value {
        match self {
            SharedSchema::Listed { tools, index } => &tools[*index].input_schema,
            SharedSchema::Own(schema) => schema,
        }
    }
}

/// Prepares `original` for `profile`, sharing it when no rewrite changes it.
fn prepare(
    original: &SharedSchema,
    profile: ProviderProfile,
    limits: &SchemaLimits,
) -> Result<SharedSchema, schema::SchemaError> {
    Ok(
        match schema::prepare_shared_with(original.get(), profile, limits)? {
            Cow::Borrowed(_) => original.clone(),
            Cow::Owned(prepared) => SharedSchema::Own(Arc::new(prepared)),
        },
    )
}

/// One tool waiting for its name.
struct Pending<'a> {
    raw_name: &'a str,
    description: String,
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
    prepared: Vec<Option<Result<SharedSchema, schema::SchemaError>>>,
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
    let mut tools = Vec::new();
    let mut diagnostics = Vec::new();
    let mut filtered = BTreeMap::new();
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
        let prefix = match allocator.server_prefix(server) {
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
            let input_schema = match prepared {
                Ok(schema) => schema,
                Err(error) => {
                    diagnostics.push(CatalogDiagnostic::tool(
                        Level::Error,
                        server,
                        item.raw_name,
                        format!(
                            "server {server:?}, tool {:?}: input schema {error}; the tool is left out of the {} catalog",
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
                input_schema,
                profile: options.profile,
                origin: ToolOrigin {
                    server: server.to_owned(),
                    target: item.target,
                },
                original_schema: item.original,
                validator: OnceLock::new(),
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
    Catalog {
        tools,
        by_name,
        diagnostics,
        filtered,
        profile: options.profile,
        style: options.style,
    }
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
        pending.push(Pending {
            raw_name: &tool.name,
            description: describe(
                tool.description.as_deref(),
                &tool.name,
                server,
                options.max_description_chars,
            ),
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
                original: SharedSchema::Own(Arc::new(utility.input_schema())),
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
