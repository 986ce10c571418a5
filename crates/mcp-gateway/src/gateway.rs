//! [`Gateway`]: what one MCP server made of the user's servers answers.
//! Each request is answered over the runtime's shared upstream sessions:
//! tools as the catalog names them, resources and templates with wrapped
//! URIs, prompts with prefixed names, completions and subscriptions
//! routed to the owner. No request fails the gateway; an upstream failure
//! is the answer to the request that met it (a tool's, as an error
//! result the model reads).

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use futures::future::join_all;
use mcp_catalog::{
    Catalog, CatalogError, CatalogErrorKind, CatalogTool, CatalogUpdates, ModelBlock, ModelResult,
    SEARCH_TOOLS_NAME, SessionRuntime, sessions::InputRounds,
};
use mcp_config::Level;
use mcp_transport::error_codes::{
    INTERNAL_ERROR, INVALID_PARAMS, MISSING_REQUIRED_CLIENT_CAPABILITY,
};
use mcp_transport::param_headers::ParamHeaders;
use mcp_transport::types::{REQUEST_STATED_META, TASKS_EXTENSION, states_tasks};
use mcp_transport::{ErrorObject, ProgressCallback, TransportErrorKind};
use serde_json::{Map, Value, json};
use tokio::sync::broadcast;

use crate::held::{HeldCalls, Running};
use crate::names::Naming;
use crate::relay::{self, Asker, Relay, ResourceUpdate};

/// What the gateway calls itself in `initialize` and `server/discover`.
pub const GATEWAY_NAME: &str = "mcp-gateway";

/// One MCP server over a [`SessionRuntime`]: every downstream client is
/// answered through the same upstream sessions.
#[derive(Debug)]
pub struct Gateway {
    runtime: Arc<SessionRuntime>,
    naming: Naming,
    version: String,
    relay: Arc<Relay>,
    /// Who follows each resource, by server and the server's own URI:
    /// the server is subscribed once, while anyone follows it.
    followers: Mutex<HashMap<(String, String), HashSet<Follower>>>,
    next_follower: AtomicU64,
    /// Calls held for a 2026-07-28 client's retry.
    held: HeldCalls,
    /// The last catalog whose diagnostics were logged.
    reported: Mutex<Weak<Catalog>>,
    /// The catalog's versions, to know when prompt names may have moved.
    updates: CatalogUpdates,
    /// Where each downstream prompt name leads, as of a catalog version:
    /// a `prompts/get` needs no listing of every server while the catalog
    /// stands.
    prompt_routes: Mutex<Option<(u64, Vec<PromptRoute>)>>,
}

/// One follower of resources: a downstream `initialize` session, or one
/// `subscriptions/listen` at 2026-07-28.
pub type Follower = u64;

/// A request's answer: its result, or the JSON-RPC error that refuses it.
pub type Answer = Result<Value, ErrorObject>;

impl Gateway {
    /// A gateway over `runtime`, naming what it serves by `naming`. The
    /// runtime should materialise without utility tools (the gateway
    /// serves resources and prompts as themselves).
    pub fn new(runtime: Arc<SessionRuntime>, naming: Naming) -> Self {
        Gateway {
            updates: runtime.subscribe(),
            runtime,
            naming,
            version: env!("CARGO_PKG_VERSION").to_owned(),
            relay: Relay::new(),
            followers: Mutex::default(),
            next_follower: AtomicU64::new(0),
            held: HeldCalls::default(),
            reported: Mutex::new(Weak::new()),
            prompt_routes: Mutex::new(None),
        }
    }

    /// The same gateway, relaying what its servers ask through `relay`,
    /// whose [`Relay::handler`] the runtime's connector answers them with.
    pub fn with_relay(mut self, relay: Arc<Relay>) -> Self {
        self.relay = relay;
        self
    }

    /// The runtime behind the gateway.
    pub fn runtime(&self) -> &Arc<SessionRuntime> {
        &self.runtime
    }

    /// The gateway's `serverInfo`.
    pub fn server_info(&self) -> Value {
        json!({"name": GATEWAY_NAME, "version": self.version})
    }

    /// What the gateway offers, whatever its servers do: a server without
    /// resources or prompts lists none. A `modern` (2026-07-28) client is
    /// offered the tasks extension too: a call its request states takes
    /// tasks may come back as a server's task, which `tasks/get`,
    /// `tasks/update` and `tasks/cancel` reach through the gateway (a
    /// server that starts none answers every call in place, which the
    /// extension allows). Older clients get every call's result in place.
    pub fn capabilities(&self, modern: bool) -> Value {
        let mut capabilities = json!({
            "tools": {"listChanged": true},
            "resources": {"listChanged": true, "subscribe": true},
            "prompts": {"listChanged": true},
            "completions": {},
            "logging": {},
        });
        if modern {
            capabilities["extensions"] = json!({ TASKS_EXTENSION: {} });
        }
        capabilities
    }

    /// The gateway's `instructions`: its servers', combined in catalog
    /// order, each cut at 2 KB (only servers already connected are known).
    pub async fn instructions(&self) -> Option<String> {
        let catalog = self.runtime.catalog().await.ok()?;
        catalog.combined_instructions()
    }

    /// Answers one request (everything but the handshake, which the
    /// downstream connection answers). `progress` receives the server's
    /// progress on a tool call; what a server asks while it works goes to
    /// `asker`, the client that sent the request.
    pub async fn answer(
        &self,
        method: &str,
        params: &Value,
        progress: Option<ProgressCallback>,
        asker: Option<Arc<dyn Asker>>,
    ) -> Answer {
        let scope = asker.clone();
        relay::on_behalf(scope, self.route(method, params, progress, asker)).await
    }

    async fn route(
        &self,
        method: &str,
        params: &Value,
        progress: Option<ProgressCallback>,
        asker: Option<Arc<dyn Asker>>,
    ) -> Answer {
        match method {
            "ping" => Ok(json!({})),
            "tools/list" => self.list_tools().await,
            "tools/call" => self.call_tool(params, progress, asker).await,
            "resources/list" => self.list_resources(Listed::Resources).await,
            "resources/templates/list" => self.list_resources(Listed::Templates).await,
            "resources/read" => self.read_resource(params, rounds(&asker)).await,
            "prompts/list" => self.list_prompts().await,
            "prompts/get" => self.get_prompt(params, rounds(&asker)).await,
            "completion/complete" => self.complete(params).await,
            "logging/setLevel" => self.set_level(params).await,
            "tasks/get" | "tasks/update" | "tasks/cancel" if rounds(&asker) => {
                self.task_request(method, params).await
            }
            other => Err(ErrorObject::method_not_found(other)),
        }
    }

    async fn catalog(&self) -> Result<Arc<Catalog>, ErrorObject> {
        let catalog = self
            .runtime
            .catalog()
            .await
            .map_err(|error| upstream(&error))?;
        self.report(&catalog);
        Ok(catalog)
    }

    /// What a new catalog left out (a server that did not start, a tool
    /// refused), logged once per catalog: a host's user reads why a tool
    /// is missing in the host's log of the gateway.
    fn report(&self, catalog: &Arc<Catalog>) {
        {
            let mut reported = self.reported.lock().unwrap_or_else(|e| e.into_inner());
            if std::ptr::eq(reported.as_ptr(), Arc::as_ptr(catalog)) {
                return;
            }
            *reported = Arc::downgrade(catalog);
        }
        for diagnostic in catalog.diagnostics() {
            if diagnostic.level == Level::Error {
                tracing::warn!(server = %diagnostic.server, "{}", diagnostic.message);
            }
        }
    }

    async fn list_tools(&self) -> Answer {
        let catalog = self.catalog().await?;
        let mut tools: Vec<Value> = self
            .served_tools(&catalog)
            .map(|(name, tool)| tool_entry(name, tool))
            .collect();
        // Past the runtime's token budget, the rest is found by search.
        if catalog.offers_search_tools()
            && let Some(search) = catalog.search_tool()
        {
            tools.push(search_entry(search));
        }
        Ok(json!({ "tools": tools }))
    }

    /// The tools a downstream client sees, each with the name it sees:
    /// the catalog's, or with passthrough the server's own (where two
    /// servers share one, the first server in name order keeps it).
    fn served_tools<'c>(
        &self,
        catalog: &'c Catalog,
    ) -> impl Iterator<Item = (&'c str, &'c CatalogTool)> + 'c {
        let passthrough = self.naming.is_passthrough();
        let mut tools: Vec<(&str, &CatalogTool)> = catalog
            .loaded_tools()
            .map(|tool| match passthrough {
                true => (tool.origin().target.raw_name(), tool),
                false => (tool.name(), tool),
            })
            .collect();
        if passthrough {
            tools.sort_by(|(a, x), (b, y)| {
                a.cmp(b)
                    .then_with(|| x.origin().server.cmp(&y.origin().server))
            });
            tools.dedup_by(|(a, _), (b, _)| a == b);
        }
        tools.into_iter()
    }

    /// The tool a downstream client calls `name`.
    fn served_tool<'c>(&self, catalog: &'c Catalog, name: &str) -> Option<&'c CatalogTool> {
        match self.naming.is_passthrough() {
            false => catalog.get(name),
            // The tool `served_tools` lists under `name`: of the servers
            // that have one, the first in name order.
            true => catalog
                .loaded_tools()
                .filter(|tool| tool.origin().target.raw_name() == name)
                .min_by(|a, b| a.origin().server.cmp(&b.origin().server)),
        }
    }

    async fn call_tool(
        &self,
        params: &Value,
        progress: Option<ProgressCallback>,
        asker: Option<Arc<dyn Asker>>,
    ) -> Answer {
        let name = params
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| invalid("tools/call needs a tool name"))?;
        let arguments = params
            .get("arguments")
            .cloned()
            .unwrap_or_else(|| json!({}));
        if rounds(&asker) && HeldCalls::is_retry(params) {
            return self.held.resume(params).await;
        }
        let catalog = self.runtime.offered_catalog().await;
        if name == SEARCH_TOOLS_NAME
            && let Ok(catalog) = &catalog
            && catalog.get(name).is_none()
            && catalog.offers_search_tools()
        {
            // The runtime answers it and loads what it found; the catalog
            // changes, and every client hears the list changed.
            return match self.runtime.call(name, arguments).await {
                Ok(found) => Ok(model_result(&found)),
                Err(error) => Ok(tool_error(&error)),
            };
        }
        let tool = match &catalog {
            Ok(catalog) => self.served_tool(catalog, name),
            Err(error) => return Err(upstream(error)),
        };
        let Some(tool) = tool else {
            return Err(invalid(format!("unknown tool: {name}")));
        };
        let hand_back = rounds(&asker);
        // What goes up beside the name and arguments: a retry's members
        // (a client that answers the rounds itself) and what the client
        // stated for this request.
        let Value::Object(mut members) = forwarded(params) else {
            return Err(invalid("tools/call takes an object"));
        };
        let members: Map<String, Value> = ["inputResponses", "requestState", "_meta"]
            .into_iter()
            .filter_map(|key| Some((key.to_owned(), members.remove(key)?)))
            .collect();
        let rounds = match hand_back {
            true => InputRounds::HandedBack,
            false => InputRounds::Answered,
        };
        let call = {
            let (runtime, relay, naming) = (
                Arc::clone(&self.runtime),
                Arc::clone(&self.relay),
                self.naming,
            );
            let tool = tool.clone();
            move |client: Option<Arc<dyn Asker>>| async move {
                let server = tool.origin().server.as_str();
                // A request the server sends on its own while the call
                // runs is routed to this client.
                let _in_flight = client.clone().map(|client| relay.in_flight(server, client));
                let called = relay::on_behalf(
                    client,
                    runtime.call_tool_relayed(&tool, arguments, members, rounds, progress),
                )
                .await;
                match called {
                    Ok(mut result) => {
                        match result.get("resultType").and_then(Value::as_str) {
                            Some("task") => naming.wrap_task(server, &mut result),
                            _ => naming.wrap_content_uris(server, &mut result),
                        }
                        Ok(result)
                    }
                    // Arguments the server's schema refuses, a server that
                    // is down or paused: the model reads why and may try
                    // again.
                    Err(error) => match error.transport_error().map(|error| error.kind()) {
                        Some(TransportErrorKind::Rpc { .. }) => Err(upstream(&error)),
                        _ => Ok(tool_error(&error)),
                    },
                }
            }
        };
        match asker {
            // A 2026-07-28 client: an older server's own question holds the
            // call for the client's retry (see `held`).
            Some(client) if hand_back => {
                let running = Running::start(client, |holding| call(Some(holding)));
                self.held.drive(running).await
            }
            client => call(client).await,
        }
    }

    async fn list_resources(&self, listed: Listed) -> Answer {
        let servers = self.runtime.servers();
        let pages = join_all(servers.iter().map(|server| async move {
            let browsed = match listed {
                Listed::Resources => self.runtime.list_resources(server).await,
                Listed::Templates => self.runtime.list_resource_templates(server).await,
            };
            (server, browsed)
        }))
        .await;
        let (field, key) = listed.members();
        let mut items = Vec::new();
        for (server, browsed) in pages {
            let browsed = match browsed {
                Ok(browsed) => browsed,
                Err(error) => {
                    tracing::warn!(server = %server, %error, "listing {field} failed");
                    continue;
                }
            };
            for mut item in browsed.items {
                if let Some(Value::String(uri)) = item.get_mut(key) {
                    *uri = self.naming.wrap_uri(server, uri);
                }
                items.push(item);
            }
        }
        Ok(json!({ field: items }))
    }

    /// The server a downstream URI leads to, and that server's own URI.
    async fn owner_of(&self, uri: &str) -> Result<(String, String), ErrorObject> {
        if let Some((server, inner)) = self.naming.unwrap_uri(uri) {
            return Ok((server, inner.to_owned()));
        }
        if !self.naming.is_passthrough() {
            return Err(invalid(format!("unknown resource: {uri}")));
        }
        let servers = self.runtime.servers();
        if let [only] = servers.as_slice() {
            return Ok((only.clone(), uri.to_owned()));
        }
        // The server that lists the URI; else (a URI of a template, or
        // one no server has) the one server that lists any resource or
        // template, which answers for it as it would without the gateway.
        let mut offering = Vec::new();
        for server in servers {
            let listed = self.runtime.list_resources(&server).await;
            let listed = listed.map(|browsed| browsed.items).unwrap_or_default();
            if listed
                .iter()
                .any(|item| item.get("uri").and_then(Value::as_str) == Some(uri))
            {
                return Ok((server, uri.to_owned()));
            }
            let offers = !listed.is_empty()
                || self
                    .runtime
                    .list_resource_templates(&server)
                    .await
                    .is_ok_and(|browsed| !browsed.items.is_empty());
            if offers {
                offering.push(server);
            }
        }
        match offering.as_slice() {
            [only] => Ok((only.clone(), uri.to_owned())),
            _ => Err(invalid(format!("unknown resource: {uri}"))),
        }
    }

    async fn read_resource(&self, params: &Value, hand_back: bool) -> Answer {
        let uri = params
            .get("uri")
            .and_then(Value::as_str)
            .ok_or_else(|| invalid("resources/read needs a uri"))?;
        let (server, inner) = self.owner_of(uri).await?;
        let read = match hand_back {
            true => {
                let mut params = forwarded(params);
                params["uri"] = Value::String(inner);
                self.runtime
                    .request_handing_back(&server, "resources/read", params)
                    .await
            }
            false => self.runtime.read_resource(&server, &inner).await,
        };
        let mut result = read.map_err(|error| upstream(&error))?;
        if let Some(Value::Array(contents)) = result.get_mut("contents") {
            for content in contents {
                if let Some(Value::String(uri)) = content.get_mut("uri") {
                    *uri = self.naming.wrap_uri(&server, uri);
                }
            }
        }
        Ok(result)
    }

    /// `tasks/get`, `tasks/update` or `tasks/cancel` of a task a server
    /// started for a call through the gateway, sent to that server (the
    /// wrapped id names it) with what the client stated for the request.
    /// A request that does not state the tasks extension is refused as
    /// the extension says (-32021), before its id is read; an id no
    /// server of the gateway's could have given is an unknown task.
    async fn task_request(&self, method: &str, params: &Value) -> Answer {
        if !states_tasks(params) {
            return Err(ErrorObject {
                code: MISSING_REQUIRED_CLIENT_CAPABILITY,
                message: format!(
                    "{method} needs the {TASKS_EXTENSION} extension in the request's client capabilities"
                ),
                data: Some(json!({
                    "requiredCapabilities": {"extensions": { TASKS_EXTENSION: {} }}
                })),
            });
        }
        let id = params
            .get("taskId")
            .and_then(Value::as_str)
            .ok_or_else(|| invalid(format!("{method} needs a taskId")))?;
        let Some((server, inner)) = self
            .naming
            .unwrap_task_id(id)
            .filter(|(server, _)| self.runtime.servers().contains(server))
        else {
            return Err(invalid(format!("unknown task: {id}")));
        };
        let mut params = forwarded(params);
        params["taskId"] = Value::String(inner.to_owned());
        let mut result = self
            .runtime
            .request(&server, method, params)
            .await
            .map_err(|error| upstream(&error))?;
        self.naming.wrap_task(&server, &mut result);
        Ok(result)
    }

    /// The `x-mcp-header` annotations of the tool a `tools/call` with
    /// `params` names, as the gateway lists it (a tool it does not know,
    /// or one without annotations: none).
    pub async fn param_headers(&self, params: Option<&Value>) -> Option<ParamHeaders> {
        let name = params?.get("name")?.as_str()?;
        let catalog = self.runtime.offered_catalog().await.ok()?;
        let schema = &self.served_tool(&catalog, name)?.listed()?.input_schema;
        ParamHeaders::from_input_schema(schema).ok().flatten()
    }

    /// A new follower of resources, following none yet.
    pub fn follower(&self) -> Follower {
        self.next_follower.fetch_add(1, Ordering::Relaxed)
    }

    fn followers(&self) -> MutexGuard<'_, HashMap<(String, String), HashSet<Follower>>> {
        self.followers.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `follower` follows the resource `uri` (as served): its server is
    /// subscribed unless someone follows it already. The server's refusal
    /// is the answer, and nothing is followed then.
    pub async fn follow(&self, follower: Follower, uri: &str) -> Answer {
        let (server, inner) = self.owner_of(uri).await?;
        let key = (server, inner);
        let first = {
            let mut followers = self.followers();
            let followed = followers.entry(key.clone()).or_default();
            followed.insert(follower);
            followed.len() == 1
        };
        if first {
            let subscribed = self
                .runtime
                .request(&key.0, "resources/subscribe", json!({"uri": key.1}))
                .await;
            if let Err(error) = subscribed {
                self.drop_follower(follower, &key);
                return Err(upstream(&error));
            }
        }
        Ok(json!({}))
    }

    /// `follower` no longer follows `uri`; its server is unsubscribed once
    /// no one does.
    pub async fn unfollow(&self, follower: Follower, uri: &str) -> Answer {
        let (server, inner) = self.owner_of(uri).await?;
        let key = (server, inner);
        if self.drop_follower(follower, &key) {
            self.unsubscribe(&key).await;
        }
        Ok(json!({}))
    }

    /// Forgets `follower` (its client left, or its listen ended): every
    /// resource only it followed is unsubscribed, in the background.
    pub fn forget(self: &Arc<Self>, follower: Follower) {
        let keys: Vec<(String, String)> = self
            .followers()
            .iter()
            .filter(|(_, followed)| followed.contains(&follower))
            .map(|(key, _)| key.clone())
            .collect();
        let unfollowed: Vec<(String, String)> = keys
            .into_iter()
            .filter(|key| self.drop_follower(follower, key))
            .collect();
        if unfollowed.is_empty() {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let gateway = Arc::clone(self);
        runtime.spawn(async move {
            for key in unfollowed {
                gateway.unsubscribe(&key).await;
            }
        });
    }

    /// Takes `follower` off `key`; whether no one follows it now.
    fn drop_follower(&self, follower: Follower, key: &(String, String)) -> bool {
        let mut followers = self.followers();
        let Some(followed) = followers.get_mut(key) else {
            return false;
        };
        if !followed.remove(&follower) || !followed.is_empty() {
            return false;
        }
        followers.remove(key);
        true
    }

    async fn unsubscribe(&self, (server, uri): &(String, String)) {
        let params = json!({"uri": uri});
        if let Err(error) = self
            .runtime
            .request(server, "resources/unsubscribe", params)
            .await
        {
            tracing::debug!(server = %server, %error, "unsubscribing failed");
        }
    }

    /// The URI a follower is told changed, when `follower` follows the
    /// resource `uri` of `server`.
    pub fn followed(&self, follower: Follower, server: &str, uri: &str) -> Option<String> {
        let key = (server.to_owned(), uri.to_owned());
        self.followers()
            .get(&key)
            .is_some_and(|followed| followed.contains(&follower))
            .then(|| self.naming.wrap_uri(server, uri))
    }

    /// Every resource update the gateway's servers send from now on.
    pub fn resource_updates(&self) -> broadcast::Receiver<ResourceUpdate> {
        self.relay.resource_updates()
    }

    /// Every prompt, named for downstream, with the server and raw name
    /// it stands for and the server's entry (renamed).
    async fn prompts(&self) -> Vec<NamedPrompt> {
        let servers = self.runtime.servers();
        let listed = join_all(
            servers
                .iter()
                .map(|server| async move { (server, self.runtime.list_prompts(server).await) }),
        )
        .await;
        let mut entries = std::collections::BTreeMap::new();
        for (server, browsed) in listed {
            let browsed = match browsed {
                Ok(browsed) => browsed,
                Err(error) => {
                    tracing::warn!(server = %server, %error, "listing prompts failed");
                    continue;
                }
            };
            for item in browsed.items {
                if let Some(name) = item.get("name").and_then(Value::as_str) {
                    entries.insert((server.clone(), name.to_owned()), item);
                }
            }
        }
        let keys: Vec<(String, String)> = entries.keys().cloned().collect();
        self.naming
            .prompt_names(&keys)
            .into_iter()
            .filter_map(|(name, server, raw)| {
                let mut entry = entries.remove(&(server.clone(), raw.clone()))?;
                entry["name"] = Value::String(name.clone());
                Some(NamedPrompt {
                    name,
                    server,
                    raw,
                    entry,
                })
            })
            .collect()
    }

    async fn list_prompts(&self) -> Answer {
        let prompts: Vec<Value> = self
            .prompts()
            .await
            .into_iter()
            .map(|prompt| prompt.entry)
            .collect();
        Ok(json!({ "prompts": prompts }))
    }

    /// The server and raw name behind a downstream prompt name.
    async fn prompt_owner(&self, name: &str) -> Result<(String, String), ErrorObject> {
        if self.naming.is_passthrough()
            && let [only] = self.runtime.servers().as_slice()
        {
            return Ok((only.clone(), name.to_owned()));
        }
        let version = self.updates.version();
        let found = |routes: &[PromptRoute]| {
            routes
                .iter()
                .find(|route| route.name == name)
                .map(|route| (route.server.clone(), route.raw.clone()))
        };
        let known = self.prompt_routes().as_ref().and_then(|(at, routes)| {
            // Names made before the catalog last changed may name others.
            (*at == version).then(|| found(routes)).flatten()
        });
        if let Some(owner) = known {
            return Ok(owner);
        }
        // Not known, or known from an older catalog: list again (a server
        // that says nothing of its changes may have added the prompt).
        let routes: Vec<PromptRoute> = self
            .prompts()
            .await
            .into_iter()
            .map(|prompt| PromptRoute {
                name: prompt.name,
                server: prompt.server,
                raw: prompt.raw,
            })
            .collect();
        let owner = found(&routes);
        *self.prompt_routes() = Some((version, routes));
        owner.ok_or_else(|| invalid(format!("unknown prompt: {name}")))
    }

    fn prompt_routes(&self) -> MutexGuard<'_, Option<(u64, Vec<PromptRoute>)>> {
        self.prompt_routes.lock().unwrap_or_else(|e| e.into_inner())
    }

    async fn get_prompt(&self, params: &Value, hand_back: bool) -> Answer {
        let name = params
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| invalid("prompts/get needs a prompt name"))?;
        let (server, raw) = self.prompt_owner(name).await?;
        if hand_back {
            // The client answers the server's input rounds itself.
            let mut params = forwarded(params);
            params["name"] = Value::String(raw);
            let mut result = self
                .runtime
                .request_handing_back(&server, "prompts/get", params)
                .await
                .map_err(|error| upstream(&error))?;
            self.naming.wrap_content_uris(&server, &mut result);
            return Ok(result);
        }
        let arguments = match params.get("arguments") {
            Some(Value::Object(arguments)) => arguments.clone(),
            _ => Map::new(),
        };
        let mut result = self
            .runtime
            .get_prompt(&server, &raw, arguments)
            .await
            .map_err(|error| upstream(&error))?;
        self.naming.wrap_content_uris(&server, &mut result);
        Ok(result)
    }

    async fn complete(&self, params: &Value) -> Answer {
        let mut params = forwarded(params);
        let reference = params
            .get("ref")
            .ok_or_else(|| invalid("completion/complete needs a ref"))?;
        let server = match reference.get("type").and_then(Value::as_str) {
            Some("ref/prompt") => {
                let name = reference
                    .get("name")
                    .and_then(Value::as_str)
                    .ok_or_else(|| invalid("a prompt ref needs a name"))?;
                let (server, raw) = self.prompt_owner(name).await?;
                params["ref"]["name"] = Value::String(raw);
                server
            }
            Some("ref/resource") => {
                let uri = reference
                    .get("uri")
                    .and_then(Value::as_str)
                    .ok_or_else(|| invalid("a resource ref needs a uri"))?;
                let (server, inner) = self.owner_of(uri).await?;
                params["ref"]["uri"] = Value::String(inner);
                server
            }
            _ => return Err(invalid("unknown completion ref type")),
        };
        self.runtime
            .request(&server, "completion/complete", params)
            .await
            .map_err(|error| upstream(&error))
    }

    /// Every server gets the level; the answer is empty whatever they say.
    async fn set_level(&self, params: &Value) -> Answer {
        let servers = self.runtime.servers();
        join_all(servers.iter().map(|server| {
            self.runtime
                .request(server, "logging/setLevel", params.clone())
        }))
        .await;
        Ok(json!({}))
    }
}

/// A prompt as a downstream client sees it.
/// Where a downstream prompt name leads: the server and its own name.
#[derive(Debug)]
struct PromptRoute {
    name: String,
    server: String,
    raw: String,
}

struct NamedPrompt {
    name: String,
    server: String,
    raw: String,
    entry: Value,
}

/// A downstream request's parameters as they go upstream: its `_meta`
/// keeps only what the client stated for this request (its capabilities
/// and log level, which the upstream session then sends instead of its
/// own; see the transport's request `_meta`), never the client's revision,
/// identity or progress token, which are the upstream session's to set.
fn forwarded(params: &Value) -> Value {
    let mut params = params.clone();
    if let Value::Object(members) = &mut params {
        let stated: Map<String, Value> = members
            .get("_meta")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .filter(|(key, _)| REQUEST_STATED_META.contains(&key.as_str()))
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect();
        match stated.is_empty() {
            true => members.remove("_meta"),
            false => members.insert("_meta".to_owned(), Value::Object(stated)),
        };
    }
    params
}

/// Whether the client takes the servers' input rounds as results.
fn rounds(asker: &Option<Arc<dyn Asker>>) -> bool {
    asker
        .as_ref()
        .is_some_and(|asker| asker.takes_input_rounds())
}

/// Which resource listing.
#[derive(Debug, Clone, Copy)]
enum Listed {
    Resources,
    Templates,
}

impl Listed {
    /// The result's list member and the URI member of each item.
    fn members(self) -> (&'static str, &'static str) {
        match self {
            Listed::Resources => ("resources", "uri"),
            Listed::Templates => ("resourceTemplates", "uriTemplate"),
        }
    }
}

/// A `tools/list` entry: the server's definition under the name served.
fn tool_entry(name: &str, tool: &CatalogTool) -> Value {
    let mut entry = match tool.listed().map(serde_json::to_value) {
        Some(Ok(Value::Object(entry))) => entry,
        _ => {
            let mut entry = Map::new();
            entry.insert("description".into(), Value::from(tool.description()));
            entry.insert("inputSchema".into(), tool.input_schema().clone());
            entry
        }
    };
    entry.insert("name".into(), Value::from(name));
    Value::Object(entry)
}

/// The catalog's `search_tools` definition as a `tools/list` entry.
fn search_entry(definition: &Value) -> Value {
    let schema = definition
        .get("input_schema")
        .or_else(|| definition.get("parameters"))
        .cloned()
        .unwrap_or_else(|| json!({"type": "object"}));
    json!({
        "name": SEARCH_TOOLS_NAME,
        "description": definition.get("description").cloned().unwrap_or(Value::Null),
        "inputSchema": schema,
    })
}

/// A result the runtime made for the model, as a `tools/call` result.
fn model_result(result: &ModelResult) -> Value {
    let content: Vec<Value> = result
        .content
        .iter()
        .filter_map(|block| match block {
            ModelBlock::Text { text } => Some(json!({"type": "text", "text": text})),
            ModelBlock::Image { data, mime_type } => {
                Some(json!({"type": "image", "data": data, "mimeType": mime_type}))
            }
            // A block kind this gateway does not know yet is left out.
            _ => None,
        })
        .collect();
    json!({"content": content, "isError": result.is_error()})
}

/// A tool call that did not reach the tool, as the result the model reads.
fn tool_error(error: &CatalogError) -> Value {
    let text = match error.kind() {
        CatalogErrorKind::InvalidArguments { .. } => format!("invalid arguments: {error}"),
        _ => error.to_string(),
    };
    json!({"content": [{"type": "text", "text": text}], "isError": true})
}

fn invalid(message: impl Into<String>) -> ErrorObject {
    ErrorObject::new(INVALID_PARAMS, message)
}

/// An upstream failure as the JSON-RPC error of the request that met it:
/// the server's own error when it sent one, else an internal error
/// naming the server and what failed.
fn upstream(error: &CatalogError) -> ErrorObject {
    match error.transport_error().map(|error| error.kind()) {
        Some(TransportErrorKind::Rpc {
            code,
            message,
            data,
            ..
        }) => ErrorObject {
            code: *code,
            message: message.clone(),
            data: data.as_deref().cloned(),
        },
        _ => ErrorObject::new(INTERNAL_ERROR, error.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_transport::types::{
        META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_LOG_LEVEL, META_PROTOCOL_VERSION,
    };

    fn check(params: Value, upstream: Value) {
        assert_eq!(forwarded(&params), upstream, "{params}");
    }

    #[test]
    fn a_request_goes_upstream_with_what_its_client_stated_for_it() {
        // capabilities and log level go on; revision, identity and the
        // progress token are the upstream session's
        check(
            json!({"name": "t", "_meta": {
                META_PROTOCOL_VERSION: "2026-07-28",
                META_CLIENT_INFO: {"name": "host", "version": "1"},
                META_CLIENT_CAPABILITIES: {"elicitation": {}},
                META_LOG_LEVEL: "warning",
                "progressToken": 7,
            }}),
            json!({"name": "t", "_meta": {
                META_CLIENT_CAPABILITIES: {"elicitation": {}},
                META_LOG_LEVEL: "warning",
            }}),
        );
        // a client that states nothing (any revision before 2026-07-28)
        check(
            json!({"uri": "u", "_meta": {"progressToken": "p"}}),
            json!({"uri": "u"}),
        );
        check(json!({"uri": "u"}), json!({"uri": "u"}));
        check(json!({"uri": "u", "_meta": 3}), json!({"uri": "u"}));
        check(json!([1]), json!([1]));
    }
}
