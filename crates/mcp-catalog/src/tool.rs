//! One materialised tool: its name, description and schema for the
//! provider, where it leads ([`ToolOrigin`]), and the per-call work of
//! turning the model's arguments into the server's. Also the utility tools
//! a server with resources or prompts gets.

use std::sync::Arc;
#[cfg(feature = "validation")]
use std::sync::OnceLock;

use mcp_transport::{CallToolResult, Tool};
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use serde_json::{Value, json};

use crate::deep;
use crate::error::CatalogError;
use crate::schema::{self, ProviderProfile};

/// How deep the arguments of a call may nest. The model's arguments are
/// validated against a schema by code that recurses per level.
pub const MAX_ARGUMENT_DEPTH: usize = schema::MAX_JSON_DEPTH;

/// The utility tools a server with resources or prompts gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum UtilityTool {
    /// Lists the server's resources and resource templates.
    ResourcesList,
    /// Reads one resource by uri.
    ResourcesRead,
    /// Lists the server's prompts.
    PromptsList,
    /// Renders one prompt with its arguments.
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

    pub(super) fn description(self, server: &str) -> String {
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

    /// The utility's input schema for `profile`. `prompts_get` takes its
    /// arguments as an object of strings (what `prompts/get` sends) where
    /// the profile can say so; `openai-strict` cannot express an object
    /// with free-form keys, and `gemini` drops `additionalProperties` and
    /// refuses an object without properties, so those two get a list of
    /// name/value pairs instead. Arguments are checked against the form the
    /// profile shows.
    pub(super) fn input_schema(self, profile: ProviderProfile) -> Value {
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
            UtilityTool::PromptsGet => {
                let arguments = match profile {
                    ProviderProfile::OpenAiStrict | ProviderProfile::Gemini => json!({
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
                    }),
                    ProviderProfile::Generic | ProviderProfile::Anthropic => json!({
                        "type": "object",
                        "description": "The prompt's arguments, by name (see prompts_list)",
                        "additionalProperties": { "type": "string" }
                    }),
                };
                json!({
                    "type": "object",
                    "properties": {
                        "name": { "type": "string", "description": "The prompt's name" },
                        "arguments": arguments
                    },
                    "required": ["name"]
                })
            }
        }
    }

    pub(super) fn for_features(features: ServerFeatures) -> Vec<UtilityTool> {
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

/// Arguments ready for the server, and what was worth a warning on the
/// way (see [`CatalogTool::prepare_call`]).
#[derive(Debug, Clone, PartialEq)]
pub struct PreparedArguments {
    /// The arguments to send: the model's, with the `null`s of optional
    /// parameters the strict profile made nullable taken out.
    pub arguments: Value,
    /// One line per top-level argument the server's schema does not
    /// describe (the server may ignore it).
    pub warnings: Vec<String>,
}

/// What a materialised tool calls.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ToolTarget {
    /// A server tool, by its raw name.
    Tool {
        /// The name the server listed the tool under.
        name: String,
    },
    /// A resources or prompts utility.
    Utility {
        /// Which utility.
        utility: UtilityTool,
    },
}

impl ToolTarget {
    /// The name on the server's side: the raw tool name, or the
    /// utility's fixed name ([`UtilityTool::raw_name`]).
    pub fn raw_name(&self) -> &str {
        match self {
            ToolTarget::Tool { name } => name,
            ToolTarget::Utility { utility } => utility.raw_name(),
        }
    }
}

/// Where a materialised tool leads: the server and what to call there.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct ToolOrigin {
    /// The configured name of the server the tool belongs to.
    pub server: String,
    /// What the tool calls on that server.
    pub target: ToolTarget,
}

/// One tool as a model sees it. Serialises to exactly what a host sends
/// for its provider profile: `{name, description, input_schema}` for
/// `generic` and `anthropic`, `{type: "function", name, description,
/// parameters, strict: true}` for `openai-strict`, and `{name,
/// description, parameters}` for `gemini`.
pub struct CatalogTool {
    /// Behind one pointer, so a catalog is an array of pointers and a
    /// rebuild that keeps a server's tools shares each with one count.
    parts: Arc<ToolParts>,
}

impl std::fmt::Debug for CatalogTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts = &self.parts;
        let mut tool = f.debug_struct("CatalogTool");
        tool.field("name", &parts.name)
            .field("description", &parts.description)
            .field("input_schema", &parts.input_schema)
            .field("profile", &parts.profile)
            .field("origin", &parts.origin)
            .field("original_schema", &parts.original_schema)
            .field("normalized_schema", &parts.normalized_schema);
        #[cfg(feature = "validation")]
        tool.field("validator", &parts.validator)
            .field("output_validator", &parts.output_validator);
        tool.finish()
    }
}

/// What a [`CatalogTool`] holds.
pub(super) struct ToolParts {
    /// Shared with the builder's taken-name set; like `description` and
    /// `origin`, shared by a `Clone` too, which copies no text.
    pub(super) name: Arc<str>,
    pub(super) description: Arc<str>,
    /// Shared with the runtime's schema cache, so a rebuild that reuses it
    /// copies nothing; a schema no rewrite changed is the server's own.
    pub(super) input_schema: SharedSchema,
    pub(super) profile: ProviderProfile,
    pub(super) origin: Arc<ToolOrigin>,
    /// The schema the server sent; arguments are validated against it.
    pub(super) original_schema: SharedSchema,
    /// Its normal form, made at materialisation for `openai-strict` (and
    /// `None` for every other profile): each call strips the optional
    /// `null`s strict mode makes the model send along it.
    pub(super) normalized_schema: Option<SharedSchema>,
    /// Compiled on first call; `None` when the server's schema does not
    /// compile (the server then validates alone).
    #[cfg(feature = "validation")]
    pub(super) validator: OnceLock<Option<Arc<jsonschema::Validator>>>,
    /// The tool's `outputSchema`, compiled on the first result checked
    /// against it; `Err` when it does not compile.
    #[cfg(feature = "validation")]
    pub(super) output_validator: OnceLock<Result<Arc<jsonschema::Validator>, String>>,
}

impl CatalogTool {
    /// The name the model calls.
    pub fn name(&self) -> &str {
        &self.parts.name
    }

    /// The description, trimmed and cut.
    pub fn description(&self) -> &str {
        &self.parts.description
    }

    /// The input schema for this catalog's provider profile.
    pub fn input_schema(&self) -> &Value {
        self.parts.input_schema.get()
    }

    /// The server and the raw tool this name maps back to.
    pub fn origin(&self) -> &ToolOrigin {
        &self.parts.origin
    }

    /// The server's own schema, as sent.
    pub fn original_schema(&self) -> &Value {
        self.parts.original_schema.get()
    }

    /// Turns the model's arguments into the server's: `null` for an
    /// optional property (what strict mode makes the model send) is
    /// dropped, and a missing argument object becomes `{}`; then validates
    /// them against the server's schema. See
    /// [`CatalogTool::prepare_call`] for the warnings on the way.
    pub fn prepare_arguments(&self, arguments: Value) -> Result<Value, CatalogError> {
        self.prepare_call(arguments)
            .map(|prepared| prepared.arguments)
    }

    /// [`CatalogTool::prepare_arguments`], with a warning for each
    /// top-level argument the server's schema does not describe. When the
    /// schema closes the object (`additionalProperties: false`), such an
    /// argument is refused instead, naming it and the arguments the tool
    /// takes.
    pub fn prepare_call(&self, arguments: Value) -> Result<PreparedArguments, CatalogError> {
        let arguments = self.adjusted_arguments(arguments)?;
        let mut warnings = Vec::new();
        if let Some(unknown) =
            schema::unknown_arguments(self.parts.original_schema.get(), &arguments)
        {
            let takes = match unknown.known.as_slice() {
                [] => "it takes no arguments".to_owned(),
                known => format!("it takes: {}", known.join(", ")),
            };
            if unknown.closed {
                let name = &unknown.names[0];
                let others = match unknown.names.len() {
                    1 => String::new(),
                    n => format!(" (and {} more)", n - 1),
                };
                return Err(CatalogError::invalid_arguments(
                    &*self.parts.name,
                    format!("/{}", name.replace('~', "~0").replace('/', "~1")),
                    format!(
                        "argument `{name}`{others} is not in the schema of tool `{}`, which allows no other arguments; {takes}",
                        self.parts.name
                    ),
                ));
            }
            for name in &unknown.names {
                warnings.push(format!(
                    "argument `{name}` is not in the schema of tool `{}`; {takes}",
                    self.parts.name
                ));
            }
        }
        self.validate(&arguments)?;
        Ok(PreparedArguments {
            arguments,
            warnings,
        })
    }

    /// The model's arguments as the server expects them, not yet checked.
    fn adjusted_arguments(&self, arguments: Value) -> Result<Value, CatalogError> {
        if deep::exceeds_depth(&arguments, MAX_ARGUMENT_DEPTH) {
            deep::dispose(arguments);
            return Err(self.too_deep());
        }
        let mut arguments = match arguments {
            Value::Null => json!({}),
            other => other,
        };
        if self.parts.profile == ProviderProfile::OpenAiStrict
            && let Some(normalized) = &self.parts.normalized_schema
        {
            schema::strip_optional_nulls(normalized.get(), &mut arguments);
        }
        Ok(arguments)
    }

    /// Validates arguments against the server's schema, naming the failing
    /// path. Without the `validation` feature (no JSON Schema validator in
    /// the build) only the cheap checks run: the nesting depth, an object
    /// where the schema's top level asks for one, and every top-level
    /// `required` name present; the rest is left to the server
    /// ([`crate::FULL_VALIDATION`] tells which build this is).
    pub fn validate(&self, arguments: &Value) -> Result<(), CatalogError> {
        if deep::exceeds_depth(arguments, MAX_ARGUMENT_DEPTH) {
            return Err(self.too_deep());
        }
        #[cfg(not(feature = "validation"))]
        return schema::cheap_violation(self.parts.original_schema.get(), arguments).map_err(
            |(path, message)| CatalogError::invalid_arguments(&*self.parts.name, path, message),
        );
        #[cfg(feature = "validation")]
        self.validate_fully(arguments)
    }

    /// The JSON Schema validation of [`CatalogTool::validate`].
    #[cfg(feature = "validation")]
    fn validate_fully(&self, arguments: &Value) -> Result<(), CatalogError> {
        let validator = self.parts.validator.get_or_init(|| {
            match schema::compile(self.parts.original_schema.get()) {
                Ok(validator) => Some(Arc::new(validator)),
                Err(error) => {
                    tracing::warn!(tool = %self.parts.name, %error, "input schema does not compile; arguments go unchecked");
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
                &*self.parts.name,
                path,
                error.to_string(),
            ));
        }
        Ok(())
    }
}

impl CatalogTool {
    /// The tool's definition as its server listed it (`None` for a
    /// utility tool, which the catalog makes).
    pub fn listed(&self) -> Option<&Tool> {
        match &self.parts.original_schema {
            SharedSchema::Listed { tools, index } => tools.get(*index),
            SharedSchema::Own(_) => None,
        }
    }

    /// The server's `outputSchema` for this tool, if it sent one (utility
    /// tools have none).
    pub fn output_schema(&self) -> Option<&Value> {
        match &self.parts.original_schema {
            SharedSchema::Listed { tools, index } => tools[*index].output_schema.as_ref(),
            SharedSchema::Own(_) => None,
        }
    }

    /// Checks a successful result against the tool's `outputSchema`, as
    /// the specification asks clients to: `structuredContent` of any JSON
    /// type must conform. A result without it is read as `null`, so a
    /// schema that accepts `null` accepts it (the transport reads a sent
    /// `null` as absent). `None` when the result conforms, the tool has
    /// no output schema or the result is an error; otherwise why not,
    /// naming server and tool. Without the `validation` feature results
    /// are not checked and this is always `None` (see
    /// [`crate::FULL_VALIDATION`]).
    #[cfg_attr(not(feature = "validation"), allow(unused_variables))]
    pub fn check_output(&self, result: &CallToolResult) -> Option<String> {
        #[cfg(not(feature = "validation"))]
        return None;
        #[cfg(feature = "validation")]
        self.check_output_fully(result)
    }

    #[cfg(feature = "validation")]
    fn check_output_fully(&self, result: &CallToolResult) -> Option<String> {
        let schema = self.output_schema()?;
        if result.is_error {
            return None;
        }
        let ToolTarget::Tool { name } = &self.parts.origin.target else {
            return None;
        };
        let server = &self.parts.origin.server;
        let null = Value::Null;
        let structured = result.structured_content.as_ref().unwrap_or(&null);
        if deep::exceeds_depth(structured, MAX_ARGUMENT_DEPTH) {
            return Some(format!(
                "server {server:?}, tool {name:?}: structuredContent nests deeper than {MAX_ARGUMENT_DEPTH} levels and cannot be checked against the tool's outputSchema"
            ));
        }
        let validator = match self
            .parts
            .output_validator
            .get_or_init(|| schema::compile(schema).map(Arc::new))
        {
            Ok(validator) => validator,
            Err(error) => {
                return Some(format!(
                    "server {server:?}, tool {name:?}: the tool's outputSchema does not compile ({error}), so its structuredContent cannot be checked"
                ));
            }
        };
        let error = validator.iter_errors(structured).next()?;
        if result.structured_content.is_none() {
            return Some(format!(
                "server {server:?}, tool {name:?}: the result has no structuredContent, which the tool's outputSchema requires ({error})"
            ));
        }
        let path = error.instance_path.to_string();
        let at = if path.is_empty() { "/" } else { path.as_str() };
        Some(format!(
            "server {server:?}, tool {name:?}: structuredContent does not match the tool's outputSchema at {at}: {error}"
        ))
    }

    fn too_deep(&self) -> CatalogError {
        CatalogError::invalid_arguments(
            &*self.parts.name,
            "/",
            format!("the arguments nest deeper than {MAX_ARGUMENT_DEPTH} levels"),
        )
    }
}

impl Clone for CatalogTool {
    /// A copy of the tool whose validators are compiled anew on first use.
    fn clone(&self) -> Self {
        let parts = &self.parts;
        CatalogTool::new(ToolParts {
            name: parts.name.clone(),
            description: parts.description.clone(),
            input_schema: parts.input_schema.clone(),
            profile: parts.profile,
            origin: parts.origin.clone(),
            original_schema: parts.original_schema.clone(),
            normalized_schema: parts.normalized_schema.clone(),
            #[cfg(feature = "validation")]
            validator: OnceLock::new(),
            #[cfg(feature = "validation")]
            output_validator: OnceLock::new(),
        })
    }
}

impl CatalogTool {
    /// A copy sharing everything, compiled validators included: what a
    /// rebuild keeps of a server whose listing did not change. One
    /// reference count, however many parts a tool has.
    pub(super) fn share(&self) -> Self {
        CatalogTool {
            parts: Arc::clone(&self.parts),
        }
    }

    pub(super) fn new(parts: ToolParts) -> Self {
        CatalogTool {
            parts: Arc::new(parts),
        }
    }

    /// The tool's name as the catalog shares it.
    pub(super) fn shared_name(&self) -> &Arc<str> {
        &self.parts.name
    }
}

impl PartialEq for CatalogTool {
    fn eq(&self, other: &Self) -> bool {
        self.parts.name == other.parts.name
            && self.parts.description == other.parts.description
            && self.parts.input_schema.get() == other.parts.input_schema.get()
            && self.parts.profile == other.parts.profile
            && self.parts.origin == other.parts.origin
    }
}

impl Serialize for CatalogTool {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.definition(false).serialize(serializer)
    }
}

impl CatalogTool {
    /// The tool's definition as its profile writes it; with `deferred`
    /// (the anthropic profile only) it carries `defer_loading: true`.
    pub(crate) fn definition(&self, deferred: bool) -> Definition<'_> {
        Definition {
            profile: self.parts.profile,
            name: &self.parts.name,
            description: &self.parts.description,
            schema: self.parts.input_schema.get(),
            deferred,
        }
    }

    /// An estimate of the tokens this tool's definition costs a model:
    /// see [`estimate_tokens`].
    pub fn estimated_tokens(&self) -> usize {
        estimate_tokens(&self.definition(false))
    }
}

/// One tool definition in the shape of a provider profile: the one place
/// that shape is written, for catalog tools and for `search_tools` alike.
pub(crate) struct Definition<'a> {
    pub(crate) profile: ProviderProfile,
    pub(crate) name: &'a str,
    pub(crate) description: &'a str,
    pub(crate) schema: &'a Value,
    /// Written as `defer_loading: true` under `anthropic`, which keeps the
    /// definition out of the model's context until its tool search finds
    /// it; the other profiles have no such field (their deferred tools are
    /// left out of the list instead).
    pub(crate) deferred: bool,
}

impl Serialize for Definition<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.profile {
            ProviderProfile::Generic | ProviderProfile::Anthropic => {
                let defer = self.deferred && self.profile == ProviderProfile::Anthropic;
                let mut map = serializer.serialize_map(Some(3 + usize::from(defer)))?;
                map.serialize_entry("name", self.name)?;
                map.serialize_entry("description", self.description)?;
                map.serialize_entry("input_schema", self.schema)?;
                if defer {
                    map.serialize_entry("defer_loading", &true)?;
                }
                map.end()
            }
            ProviderProfile::OpenAiStrict => {
                let mut map = serializer.serialize_map(Some(5))?;
                map.serialize_entry("type", "function")?;
                map.serialize_entry("name", self.name)?;
                map.serialize_entry("description", self.description)?;
                map.serialize_entry("parameters", self.schema)?;
                map.serialize_entry("strict", &true)?;
                map.end()
            }
            ProviderProfile::Gemini => {
                let mut map = serializer.serialize_map(Some(3))?;
                map.serialize_entry("name", self.name)?;
                map.serialize_entry("description", self.description)?;
                map.serialize_entry("parameters", self.schema)?;
                map.end()
            }
        }
    }
}

/// Where a schema lives: in a server's listing, or made here.
#[derive(Clone)]
pub(super) enum SharedSchema {
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
    pub(super) fn get(&self) -> &Value {
        match self {
            SharedSchema::Listed { tools, index } => &tools[*index].input_schema,
            SharedSchema::Own(schema) => schema,
        }
    }
}

/// What a server offers besides tools (from its `initialize` capabilities):
/// each one gets utility tools in the catalog when
/// [`MaterializeOptions::utility_tools`](crate::MaterializeOptions::utility_tools) is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
#[non_exhaustive]
pub struct ServerFeatures {
    /// The server lists and reads resources (`resources/list`,
    /// `resources/read`).
    pub resources: bool,
    /// The server lists and renders prompts (`prompts/list`,
    /// `prompts/get`).
    pub prompts: bool,
}

impl ServerFeatures {
    /// The same features, with resources offered or not.
    pub fn with_resources(mut self, resources: bool) -> Self {
        self.resources = resources;
        self
    }

    /// The same features, with prompts offered or not.
    pub fn with_prompts(mut self, prompts: bool) -> Self {
        self.prompts = prompts;
        self
    }

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

/// An estimate of the tokens `definition` costs a model: its bytes as
/// compact JSON divided by four, rounded up.
///
/// It is an estimate, not a count: providers do not publish their
/// tokenizers for offline use, and they differ. Four bytes a token is the
/// ratio OpenAI and Anthropic both give for English text; JSON's
/// punctuation and schema keywords tokenize at about that ratio too. It
/// errs neither way by much, costs one pass over the bytes, and gives the
/// same number on every machine, so a budget defers the same tools
/// everywhere. Providers add a fixed overhead per request for tool use
/// that no definition carries; leave room for it in the budget.
pub fn estimate_tokens(definition: &impl Serialize) -> usize {
    let mut counter = ByteCount(0);
    // Writing into a counter fails only where serialising fails (a map
    // with non-string keys), which no definition has.
    match serde_json::to_writer(&mut counter, definition) {
        Ok(()) => counter.0.div_ceil(4),
        Err(_) => 0,
    }
}

/// Counts bytes written, keeping none.
struct ByteCount(usize);

impl std::io::Write for ByteCount {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
