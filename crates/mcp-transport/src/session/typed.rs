//! Typed server→client requests: `roots/list`, `sampling/createMessage` and
//! `elicitation/create` as Rust structs (2026-07-28 schema, read by earlier
//! revisions' servers too), and a host handler whose capabilities follow
//! from what it implements.
//!
//! A host implements [`TypedClientHandler`] and, for each feature it has,
//! one small trait ([`RootsProvider`], [`SamplingHandler`],
//! [`ElicitationHandler`]) that it hands out from the matching accessor.
//! [`Typed`] adapts it to the untyped [`ClientHandler`] every session
//! takes, so server requests, multi-round-trip input requests and task
//! input all reach the same typed code; the capabilities it declares are
//! exactly the features handed out, so a host cannot declare one it does
//! not answer or answer one it did not declare. A request whose params do
//! not parse is answered `-32602 invalid params` before the host sees it.
//!
//! `Typed` is a wrapper, not a blanket `impl<T: TypedClientHandler>
//! ClientHandler for T`: such an impl would clash with every host's own
//! `ClientHandler` impl in other crates.

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value, json};

use super::ClientHandler;
use crate::error_codes;
use crate::message::ErrorObject;

/// One root the host lets servers work in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Root {
    /// A `file://` URI.
    pub uri: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// A name to show the user.
    pub name: Option<String>,
}

impl Root {
    /// A root at `uri` with no name.
    pub fn new(uri: impl Into<String>) -> Self {
        Root {
            uri: uri.into(),
            name: None,
        }
    }
}

/// The answer to `roots/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ListRootsResult {
    /// Every root, in the host's order.
    pub roots: Vec<Root>,
}

/// Who said a sampling message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The human side (or the server, sending a tool's result).
    User,
    /// The model.
    Assistant,
}

/// One content block of a sampling message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum SamplingContent {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image.
    Image {
        /// Base64 data.
        data: String,
        #[serde(rename = "mimeType")]
        /// Its media type.
        mime_type: String,
    },
    /// Audio.
    Audio {
        /// Base64 data.
        data: String,
        #[serde(rename = "mimeType")]
        /// Its media type.
        mime_type: String,
    },
    /// The model asks for a tool (only with `tools` in the request).
    ToolUse {
        /// The id the result names.
        id: String,
        /// The tool's name.
        name: String,
        /// The tool's arguments.
        input: Map<String, Value>,
    },
    /// A tool's answer, sent back by the server.
    ToolResult {
        #[serde(rename = "toolUseId")]
        /// The id of the `ToolUse` it answers.
        tool_use_id: String,
        /// MCP content blocks, as `tools/call` returns them.
        content: Vec<Value>,
        #[serde(
            rename = "structuredContent",
            default,
            skip_serializing_if = "Option::is_none"
        )]
        /// The tool's structured answer.
        structured_content: Option<Value>,
        #[serde(rename = "isError", default, skip_serializing_if = "Option::is_none")]
        /// Whether the tool failed.
        is_error: Option<bool>,
    },
}

/// One message of a sampling conversation. The wire form holds one block
/// or a list; this holds a list either way.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SamplingMessage {
    /// Who said it.
    pub role: Role,
    #[serde(deserialize_with = "one_or_many", serialize_with = "one_or_list")]
    /// What was said, in order.
    pub content: Vec<SamplingContent>,
}

/// Which context a server asks the host to add to a sampling prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum IncludeContext {
    /// No context.
    None,
    /// The asking server's context.
    ThisServer,
    /// Every server's context.
    AllServers,
}

/// The params of `sampling/createMessage`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CreateMessageParams {
    /// The conversation so far.
    pub messages: Vec<SamplingMessage>,
    /// The most tokens the answer may take.
    pub max_tokens: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// The system prompt the server would like.
    pub system_prompt: Option<String>,
    /// Hints and priorities for choosing a model, kept as sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_preferences: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// Context the server would like added.
    pub include_context: Option<IncludeContext>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// The sampling temperature the server would like.
    pub temperature: Option<f64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    /// Where the answer should stop.
    pub stop_sequences: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// Provider-specific settings, passed through.
    pub metadata: Option<Map<String, Value>>,
    /// Tool definitions the model may call, as `tools/list` gives them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Value>,
    /// `{"mode": "auto" | "required" | "none"}`, kept as sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<Value>,
}

/// The answer to `sampling/createMessage`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageResult {
    /// The model that answered.
    pub model: String,
    /// `assistant`, normally.
    pub role: Role,
    /// One block is sent as one (what servers before 2025-11-25 read).
    #[serde(deserialize_with = "one_or_many", serialize_with = "one_or_list")]
    pub content: Vec<SamplingContent>,
    /// `endTurn`, `stopSequence`, `maxTokens`, `toolUse` or the model's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
}

impl CreateMessageResult {
    /// An assistant answer of one text block from `model`, ending its turn.
    pub fn text(model: impl Into<String>, text: impl Into<String>) -> Self {
        CreateMessageResult {
            model: model.into(),
            role: Role::Assistant,
            content: vec![SamplingContent::Text { text: text.into() }],
            stop_reason: Some("endTurn".into()),
        }
    }
}

/// The params of `elicitation/create`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ElicitParams {
    /// Ask the user to fill a form (`mode` absent or `"form"`).
    Form {
        /// What to tell the user.
        message: String,
        /// A flat object schema of primitive properties, kept as sent.
        requested_schema: Value,
    },
    /// Send the user to a URL (`mode: "url"`).
    Url {
        /// What to tell the user.
        message: String,
        /// Where to send the user (show it; never open it unasked).
        url: String,
        /// The id the server's completion notice names.
        elicitation_id: Option<String>,
    },
}

impl<'de> Deserialize<'de> for ElicitParams {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Wire {
            #[serde(default)]
            mode: Option<String>,
            message: String,
            #[serde(default)]
            requested_schema: Option<Value>,
            #[serde(default)]
            url: Option<String>,
            #[serde(default)]
            elicitation_id: Option<String>,
        }
        let wire = Wire::deserialize(deserializer)?;
        match (wire.mode.as_deref(), wire.url, wire.requested_schema) {
            (None | Some("form"), _, Some(requested_schema)) => Ok(ElicitParams::Form {
                message: wire.message,
                requested_schema,
            }),
            (Some("url"), Some(url), _) => Ok(ElicitParams::Url {
                message: wire.message,
                url,
                elicitation_id: wire.elicitation_id,
            }),
            (None | Some("form"), _, None) => {
                Err(serde::de::Error::missing_field("requestedSchema"))
            }
            (Some("url"), None, _) => Err(serde::de::Error::missing_field("url")),
            (Some(other), _, _) => Err(serde::de::Error::unknown_variant(other, &["form", "url"])),
        }
    }
}

/// What the user did with an elicitation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElicitAction {
    /// The user answered.
    Accept,
    /// The user said no.
    Decline,
    /// The user dismissed the request.
    Cancel,
}

/// One answered form field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ElicitValue {
    /// A text field or a choice.
    String(String),
    /// A number field.
    Number(serde_json::Number),
    /// A yes/no field.
    Bool(bool),
    /// The choices of a multi-select field.
    Strings(Vec<String>),
}

/// The answer to `elicitation/create`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ElicitResult {
    /// What the user did.
    pub action: ElicitAction,
    /// The form's fields, with `accept` of a form only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<BTreeMap<String, ElicitValue>>,
}

impl ElicitResult {
    /// The user accepted with these field values (for a URL elicitation,
    /// none: use [`ElicitResult::action`]).
    pub fn accept(content: BTreeMap<String, ElicitValue>) -> Self {
        ElicitResult {
            action: ElicitAction::Accept,
            content: Some(content),
        }
    }

    /// An answer with no content (`decline`, `cancel`, or accepting a
    /// URL elicitation).
    pub fn action(action: ElicitAction) -> Self {
        ElicitResult {
            action,
            content: None,
        }
    }
}

/// Who is asking: the server whose session the request came on.
#[derive(Debug, Clone, Copy)]
pub struct RequestContext<'a> {
    /// The server's configured name; empty when the session was not told.
    pub server: &'a str,
}

/// The host's roots.
#[async_trait]
pub trait RootsProvider: Send + Sync {
    /// `roots/list`.
    async fn list_roots(&self, context: RequestContext<'_>)
    -> Result<ListRootsResult, ErrorObject>;

    /// Whether the host sends `notifications/roots/list_changed`.
    fn announces_changes(&self) -> bool {
        false
    }
}

/// The host's model, lent to servers.
#[async_trait]
pub trait SamplingHandler: Send + Sync {
    /// `sampling/createMessage`. The host should let its user see and
    /// approve both the request and the answer.
    async fn create_message(
        &self,
        context: RequestContext<'_>,
        params: CreateMessageParams,
    ) -> Result<CreateMessageResult, ErrorObject>;

    /// Whether requests may carry `tools` (declared as `sampling.tools`).
    fn supports_tools(&self) -> bool {
        false
    }

    /// Whether `includeContext` other than `none` is honoured (declared
    /// as `sampling.context`).
    fn supports_context(&self) -> bool {
        false
    }
}

/// The host's user, asked for input.
#[async_trait]
pub trait ElicitationHandler: Send + Sync {
    /// `elicitation/create`, of a mode this handler declared.
    async fn elicit(
        &self,
        context: RequestContext<'_>,
        params: ElicitParams,
    ) -> Result<ElicitResult, ErrorObject>;

    /// Whether form elicitation is offered (the default).
    fn supports_form(&self) -> bool {
        true
    }

    /// Whether URL elicitation is offered.
    fn supports_url(&self) -> bool {
        false
    }
}

/// A host's answers to server requests, typed. Each accessor hands out the
/// feature's handler (usually `Some(self)`) or `None`, the default; the
/// capabilities [`Typed`] declares follow from them.
pub trait TypedClientHandler: Send + Sync + 'static {
    /// The host's roots, if it offers them (declared as `roots`).
    fn roots(&self) -> Option<&dyn RootsProvider> {
        None
    }

    /// The host's model, if it lends it (declared as `sampling`).
    fn sampling(&self) -> Option<&dyn SamplingHandler> {
        None
    }

    /// The host's user prompts, if it asks (declared as `elicitation`).
    fn elicitation(&self) -> Option<&dyn ElicitationHandler> {
        None
    }

    /// The answer to a server that asks for a feature the host did not
    /// hand out (so never declared), such as `sampling/createMessage`:
    /// `-32601` by default. A host may refuse in its own words instead, or
    /// tell its user a server asked.
    fn refuse(&self, context: RequestContext<'_>, method: &str) -> ErrorObject {
        let _ = context;
        ErrorObject::method_not_found(method)
    }
}

/// A [`TypedClientHandler`] as the [`ClientHandler`] a session takes.
pub struct Typed<H> {
    handler: Arc<H>,
    server: String,
}

impl<H: TypedClientHandler> Typed<H> {
    /// Adapts `handler`; [`Typed::shared`] gives it as a session option.
    pub fn new(handler: H) -> Self {
        Typed::from_arc(Arc::new(handler))
    }

    /// Adapts a handler the host also keeps.
    pub fn from_arc(handler: Arc<H>) -> Self {
        Typed {
            handler,
            server: String::new(),
        }
    }

    /// The adapter as `SessionOptions::handler` takes it.
    pub fn shared(handler: H) -> Arc<dyn ClientHandler> {
        Arc::new(Typed::new(handler))
    }

    fn context(&self) -> RequestContext<'_> {
        RequestContext {
            server: &self.server,
        }
    }
}

impl<H> std::fmt::Debug for Typed<H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Typed")
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

/// The request's params as `T`, or `-32602` saying why not.
fn parse<T: DeserializeOwned>(method: &str, params: Option<Value>) -> Result<T, ErrorObject> {
    serde_json::from_value(params.unwrap_or_else(|| json!({}))).map_err(|error| {
        ErrorObject::new(
            error_codes::INVALID_PARAMS,
            format!("invalid params of {method}: {error}"),
        )
    })
}

/// The host's answer as JSON (it cannot fail for these types; an error
/// is still an answer, not a panic).
fn answer<T: Serialize>(result: Result<T, ErrorObject>) -> Result<Value, ErrorObject> {
    serde_json::to_value(result?).map_err(|error| {
        ErrorObject::new(
            error_codes::INTERNAL_ERROR,
            format!("unwritable answer: {error}"),
        )
    })
}

#[async_trait]
impl<H: TypedClientHandler> ClientHandler for Typed<H> {
    fn capabilities(&self) -> Value {
        let mut capabilities = Map::new();
        if let Some(roots) = self.handler.roots() {
            let settings = if roots.announces_changes() {
                json!({"listChanged": true})
            } else {
                json!({})
            };
            capabilities.insert("roots".into(), settings);
        }
        if let Some(sampling) = self.handler.sampling() {
            let mut settings = Map::new();
            if sampling.supports_context() {
                settings.insert("context".into(), json!({}));
            }
            if sampling.supports_tools() {
                settings.insert("tools".into(), json!({}));
            }
            capabilities.insert("sampling".into(), Value::Object(settings));
        }
        if let Some(elicitation) = self.handler.elicitation() {
            let mut settings = Map::new();
            if elicitation.supports_form() {
                settings.insert("form".into(), json!({}));
            }
            if elicitation.supports_url() {
                settings.insert("url".into(), json!({}));
            }
            // A handler offering neither mode declares nothing.
            if !settings.is_empty() {
                capabilities.insert("elicitation".into(), Value::Object(settings));
            }
        }
        Value::Object(capabilities)
    }

    fn for_server(&self, server: &str) -> Option<Arc<dyn ClientHandler>> {
        Some(Arc::new(Typed {
            handler: Arc::clone(&self.handler),
            server: server.to_owned(),
        }))
    }

    async fn list_roots(&self, _params: Option<Value>) -> Result<Value, ErrorObject> {
        let Some(roots) = self.handler.roots() else {
            return Err(self.handler.refuse(self.context(), "roots/list"));
        };
        answer(roots.list_roots(self.context()).await)
    }

    async fn create_message(&self, params: Option<Value>) -> Result<Value, ErrorObject> {
        let Some(sampling) = self.handler.sampling() else {
            return Err(self
                .handler
                .refuse(self.context(), "sampling/createMessage"));
        };
        let params: CreateMessageParams = parse("sampling/createMessage", params)?;
        if !params.tools.is_empty() && !sampling.supports_tools() {
            return Err(ErrorObject::new(
                error_codes::INVALID_PARAMS,
                "sampling with tools was not declared",
            ));
        }
        answer(sampling.create_message(self.context(), params).await)
    }

    async fn elicit(&self, params: Option<Value>) -> Result<Value, ErrorObject> {
        let Some(elicitation) = self.handler.elicitation() else {
            return Err(self.handler.refuse(self.context(), "elicitation/create"));
        };
        let params: ElicitParams = parse("elicitation/create", params)?;
        let declared = match &params {
            ElicitParams::Form { .. } => elicitation.supports_form(),
            ElicitParams::Url { .. } => elicitation.supports_url(),
        };
        if !declared {
            return Err(ErrorObject::new(
                error_codes::INVALID_PARAMS,
                "elicitation mode was not declared",
            ));
        }
        answer(elicitation.elicit(self.context(), params).await)
    }
}

fn one_or_many<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<SamplingContent>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        Many(Vec<SamplingContent>),
        One(SamplingContent),
    }
    Ok(match OneOrMany::deserialize(deserializer)? {
        OneOrMany::Many(blocks) => blocks,
        OneOrMany::One(block) => vec![block],
    })
}

fn one_or_list<S: Serializer>(
    content: &[SamplingContent],
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match content {
        [one] => one.serialize(serializer),
        many => many.serialize(serializer),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// A host with every feature; `url` and `tools` say which extras.
    struct Host {
        url: bool,
        tools: bool,
    }

    #[async_trait]
    impl RootsProvider for Host {
        async fn list_roots(
            &self,
            context: RequestContext<'_>,
        ) -> Result<ListRootsResult, ErrorObject> {
            Ok(ListRootsResult {
                roots: vec![Root {
                    uri: "file:///work".into(),
                    name: Some(format!("for {}", context.server)),
                }],
            })
        }
    }

    #[async_trait]
    impl SamplingHandler for Host {
        async fn create_message(
            &self,
            _context: RequestContext<'_>,
            params: CreateMessageParams,
        ) -> Result<CreateMessageResult, ErrorObject> {
            let said = params
                .messages
                .iter()
                .flat_map(|m| &m.content)
                .filter_map(|c| match c {
                    SamplingContent::Text { text } => Some(text.as_str()),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join(" ");
            Ok(CreateMessageResult::text(
                "test-model",
                format!("{said} ({})", params.max_tokens),
            ))
        }

        fn supports_tools(&self) -> bool {
            self.tools
        }
    }

    #[async_trait]
    impl ElicitationHandler for Host {
        async fn elicit(
            &self,
            _context: RequestContext<'_>,
            params: ElicitParams,
        ) -> Result<ElicitResult, ErrorObject> {
            Ok(match params {
                ElicitParams::Form { .. } => ElicitResult::accept(BTreeMap::from([
                    ("name".to_owned(), ElicitValue::String("Ada".into())),
                    ("tags".to_owned(), ElicitValue::Strings(vec!["a".into()])),
                ])),
                ElicitParams::Url { .. } => ElicitResult::action(ElicitAction::Decline),
            })
        }

        fn supports_url(&self) -> bool {
            self.url
        }
    }

    impl TypedClientHandler for Host {
        fn roots(&self) -> Option<&dyn RootsProvider> {
            Some(self)
        }
        fn sampling(&self) -> Option<&dyn SamplingHandler> {
            Some(self)
        }
        fn elicitation(&self) -> Option<&dyn ElicitationHandler> {
            Some(self)
        }
    }

    /// A host that only elicits forms.
    struct FormsOnly;

    impl TypedClientHandler for FormsOnly {
        fn elicitation(&self) -> Option<&dyn ElicitationHandler> {
            Some(&Host {
                url: false,
                tools: false,
            })
        }
    }

    /// Sends `method` with `params` to the adapter of `handler` (for the
    /// server `s1`) and compares the answer, or the error code.
    async fn check(
        handler: impl TypedClientHandler,
        method: &str,
        params: Value,
        expect: Result<Value, i64>,
    ) {
        let typed = Typed::new(handler).for_server("s1").unwrap();
        let got = typed
            .handle_request(method, Some(params.clone()))
            .await
            .map_err(|e| e.code);
        assert_eq!(got, expect, "{method} {params}");
    }

    fn host() -> Host {
        Host {
            url: false,
            tools: false,
        }
    }

    /// A host with no features that refuses sampling in its own words.
    struct Refusing;

    impl TypedClientHandler for Refusing {
        fn refuse(&self, context: RequestContext<'_>, method: &str) -> ErrorObject {
            match method {
                "sampling/createMessage" => ErrorObject::new(-1, context.server),
                _ => ErrorObject::method_not_found(method),
            }
        }
    }

    #[tokio::test]
    async fn an_undeclared_feature_is_refused_as_the_host_says() {
        let typed = Typed::new(Refusing).for_server("s1").unwrap();
        assert_eq!(typed.capabilities(), json!({}));
        let refused = typed
            .handle_request("sampling/createMessage", Some(json!({"messages": []})))
            .await;
        assert_eq!(refused, Err(ErrorObject::new(-1, "s1")));
        check(
            Refusing,
            "roots/list",
            json!({}),
            Err(error_codes::METHOD_NOT_FOUND),
        )
        .await;
        check(
            Refusing,
            "elicitation/create",
            form(),
            Err(error_codes::METHOD_NOT_FOUND),
        )
        .await;
    }

    #[tokio::test]
    async fn typed_requests_and_answers() {
        check(
            host(),
            "roots/list",
            json!({}),
            Ok(json!({"roots": [{"uri": "file:///work", "name": "for s1"}]})),
        )
        .await;
        check(
            host(),
            "sampling/createMessage",
            json!({
                "messages": [
                    {"role": "user", "content": {"type": "text", "text": "hi", "annotations": {}}},
                    {"role": "user", "content": [{"type": "text", "text": "there"}], "_meta": {}},
                ],
                "maxTokens": 10,
                "modelPreferences": {"hints": [{"name": "claude"}]},
            }),
            Ok(json!({
                "model": "test-model",
                "role": "assistant",
                "content": {"type": "text", "text": "hi there (10)"},
                "stopReason": "endTurn",
            })),
        )
        .await;
        let form = json!({
            "message": "who?",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
        });
        check(
            host(),
            "elicitation/create",
            form.clone(),
            Ok(json!({"action": "accept", "content": {"name": "Ada", "tags": ["a"]}})),
        )
        .await;
        let mut form_mode = form.clone();
        form_mode["mode"] = json!("form");
        check(
            FormsOnly,
            "elicitation/create",
            form_mode,
            Ok(json!({"action": "accept", "content": {"name": "Ada", "tags": ["a"]}})),
        )
        .await;
        let url = json!({"mode": "url", "message": "sign in", "url": "https://example.test/x", "elicitationId": "e1"});
        check(
            Host {
                url: true,
                tools: false,
            },
            "elicitation/create",
            url.clone(),
            Ok(json!({"action": "decline"})),
        )
        .await;
        // a mode or feature the host did not declare
        check(host(), "elicitation/create", url, Err(-32602)).await;
        let with_tools = json!({"messages": [], "maxTokens": 5, "tools": [{"name": "t", "inputSchema": {"type": "object"}}]});
        check(
            host(),
            "sampling/createMessage",
            with_tools.clone(),
            Err(-32602),
        )
        .await;
        check(
            Host {
                url: false,
                tools: true,
            },
            "sampling/createMessage",
            with_tools,
            Ok(json!({"model": "test-model", "role": "assistant", "content": {"type": "text", "text": " (5)"}, "stopReason": "endTurn"})),
        )
        .await;
        check(FormsOnly, "roots/list", json!({}), Err(-32601)).await;
        check(FormsOnly, "sampling/createMessage", json!({}), Err(-32601)).await;
        // params that do not parse never reach the host
        check(
            host(),
            "sampling/createMessage",
            json!({"messages": []}),
            Err(-32602),
        )
        .await;
        check(
            host(),
            "elicitation/create",
            json!({"message": "x"}),
            Err(-32602),
        )
        .await;
        check(
            host(),
            "elicitation/create",
            json!({"mode": "voice", "message": "x"}),
            Err(-32602),
        )
        .await;
        check(host(), "ping/other", json!({}), Err(-32601)).await;
    }

    /// A host with no feature at all.
    struct Nothing;
    impl TypedClientHandler for Nothing {}

    /// Neither elicitation mode.
    struct NoModes;
    #[async_trait]
    impl ElicitationHandler for NoModes {
        async fn elicit(
            &self,
            _context: RequestContext<'_>,
            _params: ElicitParams,
        ) -> Result<ElicitResult, ErrorObject> {
            Ok(ElicitResult::action(ElicitAction::Cancel))
        }
        fn supports_form(&self) -> bool {
            false
        }
    }
    impl TypedClientHandler for NoModes {
        fn elicitation(&self) -> Option<&dyn ElicitationHandler> {
            Some(self)
        }
    }

    fn check_capabilities(handler: impl TypedClientHandler, expect: Value) {
        assert_eq!(Typed::new(handler).capabilities(), expect);
    }

    #[test]
    fn capabilities_follow_what_the_host_implements() {
        check_capabilities(Nothing, json!({}));
        check_capabilities(FormsOnly, json!({"elicitation": {"form": {}}}));
        check_capabilities(NoModes, json!({}));
        check_capabilities(
            host(),
            json!({"roots": {}, "sampling": {}, "elicitation": {"form": {}}}),
        );
        check_capabilities(
            Host {
                url: true,
                tools: true,
            },
            json!({"roots": {}, "sampling": {"tools": {}}, "elicitation": {"form": {}, "url": {}}}),
        );
    }

    #[test]
    fn sampling_results_keep_several_blocks_as_a_list() {
        let result = CreateMessageResult {
            model: "m".into(),
            role: Role::Assistant,
            content: vec![
                SamplingContent::Text { text: "a".into() },
                SamplingContent::ToolUse {
                    id: "c1".into(),
                    name: "t".into(),
                    input: Map::new(),
                },
            ],
            stop_reason: Some("toolUse".into()),
        };
        let wire = serde_json::to_value(&result).unwrap();
        assert_eq!(
            wire,
            json!({"model": "m", "role": "assistant", "stopReason": "toolUse", "content": [
                {"type": "text", "text": "a"},
                {"type": "tool_use", "id": "c1", "name": "t", "input": {}},
            ]})
        );
        assert_eq!(
            serde_json::from_value::<CreateMessageResult>(wire).unwrap(),
            result
        );
    }

    /// An elicitation request's parameters: one text field.
    fn form() -> Value {
        json!({
            "message": "who?",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}
        })
    }

    /// Sessions over an in-process server, so only with the `sdk` kind.
    #[cfg(feature = "sdk")]
    mod over_a_session {
        use super::*;

        /// A server that needs a name to answer `tools/call`: a legacy one
        /// (answers `initialize`, refuses `server/discover`) asks with an
        /// `elicitation/create` request of its own; a 2026-07-28 one answers
        /// `input_required` and reads the retry's `inputResponses`. Keeps the
        /// client capabilities it was told.
        struct AskingServer {
            modern: bool,
            capabilities: std::sync::Mutex<Option<Value>>,
        }

        impl AskingServer {
            fn keep(&self, capabilities: &Value) {
                *self.capabilities.lock().unwrap() = Some(capabilities.clone());
            }

            /// The modern answer to `tools/call`.
            fn call(&self, params: &Value) -> Value {
                self.keep(&params["_meta"]["io.modelcontextprotocol/clientCapabilities"]);
                match params.get("inputResponses") {
                    Some(responses) => {
                        json!({"resultType": "complete", "answer": responses["who"]})
                    }
                    None => json!({
                        "resultType": "input_required",
                        "inputRequests": {"who": {"method": "elicitation/create", "params": form()}},
                        "requestState": "s1"
                    }),
                }
            }
        }

        #[async_trait]
        impl crate::sdk::SdkServer for AskingServer {
            async fn serve(self: Arc<Self>, mut connection: crate::sdk::SdkServerConnection) {
                use crate::message::{JsonRpcMessage, RequestId};
                while let Some(message) = connection.incoming.recv().await {
                    let JsonRpcMessage::Request(request) = message else {
                        continue;
                    };
                    let params = request.params.unwrap_or_default();
                    let reply = match (request.method.as_str(), self.modern) {
                        ("server/discover", false) => JsonRpcMessage::error(
                            Some(request.id),
                            ErrorObject::method_not_found("server/discover"),
                        ),
                        ("server/discover", true) => JsonRpcMessage::result(
                            request.id,
                            json!({
                                "resultType": "complete",
                                "supportedVersions": ["2026-07-28"],
                                "capabilities": {"tools": {}},
                                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "asking", "version": "1"}}
                            }),
                        ),
                        // A modern session never sends it: it would get a
                        // `tools/call` answer and fail.
                        ("initialize", false) => {
                            self.keep(&params["capabilities"]);
                            JsonRpcMessage::result(
                                request.id,
                                json!({
                                    "protocolVersion": "2025-11-25",
                                    "capabilities": {"tools": {}},
                                    "serverInfo": {"name": "asking", "version": "1"}
                                }),
                            )
                        }
                        (_, true) => JsonRpcMessage::result(request.id, self.call(&params)),
                        (_, false) => {
                            let ask = JsonRpcMessage::request(
                                RequestId::String("ask-1".into()),
                                "elicitation/create",
                                Some(form()),
                            );
                            if connection.outgoing.send(ask).await.is_err() {
                                return;
                            }
                            let answer = loop {
                                match connection.incoming.recv().await {
                                    Some(JsonRpcMessage::Response(response)) => {
                                        break response.outcome;
                                    }
                                    Some(_) => continue,
                                    None => return,
                                }
                            };
                            let answer =
                                answer.unwrap_or_else(|error| json!({"error": error.code}));
                            JsonRpcMessage::result(request.id, json!({"answer": answer}))
                        }
                    };
                    if connection.outgoing.send(reply).await.is_err() {
                        return;
                    }
                }
            }
        }

        /// Connects a session with the typed `host()` to an [`AskingServer`]
        /// and checks what it declared and how it answered.
        async fn check_session(modern: bool) {
            use crate::sdk::{SdkOptions, SdkServer, SdkTransport};
            use crate::session::{ClientSession, SessionOptions};

            let server = Arc::new(AskingServer {
                modern,
                capabilities: std::sync::Mutex::new(None),
            });
            let transport = SdkTransport::connect(
                "asking",
                Arc::clone(&server) as Arc<dyn SdkServer>,
                SdkOptions::default(),
            );
            let options = SessionOptions {
                handler: Some(Typed::shared(host())),
                ..SessionOptions::default()
            };
            let session = ClientSession::initialize(Box::new(transport), "asking", options)
                .await
                .unwrap();
            let answer = session
                .request("tools/call", Some(json!({"name": "t"})))
                .await
                .unwrap();
            assert_eq!(
                answer["answer"],
                json!({"action": "accept", "content": {"name": "Ada", "tags": ["a"]}}),
                "modern: {modern}"
            );
            let declared = server.capabilities.lock().unwrap().clone().unwrap();
            for (name, settings) in [
                ("roots", json!({})),
                ("sampling", json!({})),
                ("elicitation", json!({"form": {}})),
            ] {
                assert_eq!(declared[name], settings, "modern: {modern}, {declared}");
            }
        }

        #[tokio::test]
        async fn a_session_declares_and_serves_the_typed_handler() {
            // a server request (before 2026-07-28)
            check_session(false).await;
            // a multi-round-trip input request (2026-07-28)
            check_session(true).await;
        }
    }
}
