//! One catalog build: every server connected and listed at once (each
//! within its timeouts, paused ones skipped), the listings materialised,
//! failures turned into diagnostics, and the result cached unless an
//! invalidation overtook it.

use std::sync::Arc;
use std::time::Instant;

use mcp_config::Level;
use mcp_transport::CacheScope;
use mcp_transport::Tool;

use crate::backoff::Paused;
use crate::catalog::{
    Catalog, CatalogDiagnostic, ServerFeatures, defuse_listing, materialize_among,
};
use crate::deep;
use crate::error::{CatalogError, Cause};
use crate::schema::MAX_JSON_DEPTH;

use super::browse::first_page;
use super::connection::Connection;
use super::reconcile::Retired;
use super::session::ServerOutcome;
use super::state::{CachedCatalog, Offered, RuntimeShared};
use super::utility::within;

impl RuntimeShared {
    pub(super) async fn build(
        self: Arc<Self>,
        generation: u64,
    ) -> Result<Arc<Catalog>, CatalogError> {
        let servers: Vec<String> = self.lock().slots.keys().cloned().collect();
        let result = Arc::clone(&self).build_of(&servers, true).await;

        let mut state = self.lock();
        if state
            .inflight
            .as_ref()
            .is_some_and(|(g, _)| *g == generation)
        {
            state.inflight = None;
        }
        if let Ok((catalog, retry_at)) = &result
            && state.generation == generation
            && !state.shut_down
        {
            let fresh_until = state
                .slots
                .values()
                .filter(|slot| slot.tools.is_some())
                .filter_map(|slot| slot.tools_fresh_until)
                .min();
            state.cached = Some(CachedCatalog {
                catalog: Arc::clone(catalog),
                retry_at: *retry_at,
                fresh_until,
            });
        }
        result.map(|(catalog, _)| catalog)
    }

    /// A catalog of `servers` (some or all of the slots), each connected
    /// and listed as needed, named as in a catalog of every slot; with
    /// when a server that failed may be tried again. With `withheld`, the
    /// notes on every held-back server are added; otherwise only those on
    /// the servers asked for.
    pub(super) async fn build_of(
        self: Arc<Self>,
        servers: &[String],
        withheld: bool,
    ) -> Result<(Arc<Catalog>, Option<Instant>), CatalogError> {
        let outcomes = futures::future::join_all(
            servers
                .iter()
                .map(|server| Arc::clone(&self).prepare(server)),
        )
        .await;

        let mut listings = Vec::new();
        let mut diagnostics = Vec::new();
        let mut retry_at: Option<Instant> = None;
        let mut required_failure = None;
        let mut unavailable = Vec::new();
        let now = self.clock.now();
        for (server, outcome) in servers.iter().zip(outcomes) {
            match outcome {
                Some(ServerOutcome::Ready(listing)) => {
                    let state = self.lock();
                    let rejected = state.slots.get(server).map(|slot| slot.rejected.as_slice());
                    let notes = state
                        .slots
                        .get(server)
                        .and_then(|slot| slot.offered.as_ref())
                        .map(|offered| offered.notes.as_slice());
                    diagnostics.extend(notes.unwrap_or_default().iter().cloned());
                    for tool in rejected.unwrap_or_default() {
                        diagnostics.push(CatalogDiagnostic::tool(
                            Level::Warning,
                            server,
                            &tool.name,
                            format!(
                                "server {server:?}, tool {:?}: {}; the tool is left out",
                                tool.name, tool.reason
                            ),
                        ));
                    }
                    drop(state);
                    listings.push(listing);
                }
                Some(ServerOutcome::Failed {
                    error,
                    pause,
                    paused_until,
                }) => {
                    let required = self
                        .lock()
                        .slots
                        .get(server)
                        .is_some_and(|slot| slot.config.required);
                    if required && required_failure.is_none() {
                        required_failure =
                            Some(CatalogError::required_server_failed(error.clone()));
                    }
                    unavailable.push(server.clone());
                    let at = paused_until.unwrap_or(now);
                    retry_at = Some(retry_at.map_or(at, |r| r.min(at)));
                    diagnostics.push(CatalogDiagnostic::server(
                        Level::Error,
                        server,
                        match pause {
                            Some(pause) => {
                                format!("server {server:?} is unavailable: {error}; {pause}")
                            }
                            None => format!("server {server:?} is unavailable: {error}"),
                        },
                    ));
                }
                // removed while the build ran
                None => {}
            }
        }

        if let Some(error) = required_failure {
            return Err(error);
        }
        let known: Vec<String> = self.lock().slots.keys().cloned().collect();
        let options = self.materialize_options();
        let mut catalog = {
            let mut cache = self.schemas.lock().unwrap_or_else(|e| e.into_inner());
            materialize_among(
                &listings,
                known.iter().map(String::as_str),
                &options,
                &mut cache,
            )
        };
        let withheld: Vec<CatalogDiagnostic> = self
            .lock()
            .withheld
            .iter()
            .filter(|note| withheld || servers.contains(&note.server))
            .cloned()
            .collect();
        catalog.note_servers(unavailable, withheld.iter().map(|d| d.server.clone()));
        diagnostics.extend(withheld);
        catalog.push_diagnostics(diagnostics);
        Ok((Arc::new(catalog), retry_at))
    }

    /// Connects a server if needed, lists its tools if needed and, at the
    /// same time, checks whether it lists any resources or prompts if that
    /// is not known yet. `None` when the server was removed meanwhile.
    async fn prepare(self: Arc<Self>, server: &str) -> Option<ServerOutcome> {
        let (config, config_hash, epoch, connection, tools, tools_epoch, offered, offered_epoch) = {
            let now = self.clock.now();
            let mut state = self.lock();
            let slot = state.slots.get_mut(server)?;
            if slot.tools_fresh_until.is_some_and(|at| now >= at) {
                // Its TTL ran out: this server is listed again.
                slot.tools = None;
                slot.tools_fresh_until = None;
            }
            if let (Some(_), Some(tools), Some(offered)) =
                (&slot.connection, &slot.tools, &slot.offered)
            {
                return Some(ServerOutcome::Ready(slot.listing(offered.features, tools)));
            }
            if let Err(paused) = slot.backoff.admit(now, self.options.backoff) {
                let until = slot.backoff.paused_until(now).unwrap_or(paused.until);
                return Some(ServerOutcome::Failed {
                    error: self.paused_error(server, paused),
                    pause: None,
                    paused_until: Some(until),
                });
            }
            slot.waiting_since.get_or_insert(now);
            (
                slot.config.clone(),
                slot.config_hash.clone(),
                slot.epoch,
                slot.connection.clone(),
                slot.tools.clone(),
                slot.tools_epoch,
                slot.offered.clone(),
                slot.offered_epoch,
            )
        };
        let _waiting = Waiting {
            runtime: &self,
            server,
        };

        let connection = match connection {
            Some(connection) => connection,
            None => match self.connect(&config, epoch).await {
                Ok(connection) => connection,
                Err(error) => return Some(self.failed(server, error)),
            },
        };

        let tools = async {
            match tools {
                Some(tools) => Ok(tools),
                None => {
                    self.list_and_keep(
                        server,
                        &config,
                        &config_hash,
                        &connection,
                        epoch,
                        tools_epoch,
                    )
                    .await
                }
            }
        };
        let offered = async {
            match offered {
                Some(offered) => offered,
                None => {
                    let offered = self
                        .check_offered(server, &config, connection.as_ref())
                        .await;
                    let mut state = self.lock();
                    if let Some(slot) = state.slots.get_mut(server)
                        && slot.epoch == epoch
                        && slot.offered_epoch == offered_epoch
                    {
                        slot.offered = Some(offered.clone());
                    }
                    offered
                }
            }
        };
        let (tools, offered) = futures::join!(tools, offered);
        let tools = match tools {
            Ok(tools) => tools,
            Err(error) => return Some(self.failed(server, error)),
        };
        self.record(server, epoch, true);
        let state = self.lock();
        let slot = state.slots.get(server)?;
        Some(ServerOutcome::Ready(slot.listing(offered.features, &tools)))
    }

    /// Lists the server's tools (or takes another session's public
    /// listing) and keeps them in its slot. A failed listing retires the
    /// connection and counts as a failure.
    async fn list_and_keep(
        &self,
        server: &str,
        config: &mcp_config::ServerConfig,
        config_hash: &str,
        connection: &Arc<dyn Connection>,
        epoch: u64,
        tools_epoch: u64,
    ) -> Result<Arc<[Tool]>, CatalogError> {
        let shared = self.listings.fresh(server, config_hash, self.clock.now());
        let listed = match shared {
            // Another session's runtime listed this server and the server
            // said the listing is public.
            Some((tools, fresh_until)) => Ok((tools, Some(fresh_until), None, Vec::new())),
            None => self.list(server, config, connection.as_ref()).await.map(
                |(tools, fresh_until, scope)| {
                    (tools, fresh_until, Some(scope), connection.rejected_tools())
                },
            ),
        };
        match listed {
            Ok((tools, fresh_until, scope, rejected)) => {
                let mut state = self.lock();
                if let Some(slot) = state.slots.get_mut(server)
                    && slot.epoch == epoch
                    && slot.tools_epoch == tools_epoch
                {
                    slot.tools = Some(Arc::clone(&tools));
                    slot.tools_fresh_until = fresh_until;
                    slot.rejected = rejected;
                    if let Some(scope) = scope {
                        self.listings
                            .offer(server, config_hash, &tools, scope, fresh_until);
                    }
                }
                Ok(tools)
            }
            Err(error) => {
                // A failed listing often means a dead session: start over
                // with a fresh connection next time.
                let mut state = self.lock();
                if let Some(slot) = state.slots.get_mut(server)
                    && slot.epoch == epoch
                {
                    if let Some(old) = slot.connection.take() {
                        state.retired.push(Retired::now(old));
                    }
                    state.bump_epoch(server);
                }
                drop(state);
                self.record_failure_any_epoch(server);
                Err(error)
            }
        }
    }

    /// Whether the server lists at least one resource (or resource
    /// template) and at least one prompt, for each capability it
    /// announced: the first page of each list tells, within the request
    /// timeout, and the lists run at once. A server announcing neither,
    /// or a host without utility tools, is asked nothing.
    async fn check_offered(
        &self,
        server: &str,
        config: &mcp_config::ServerConfig,
        connection: &dyn Connection,
    ) -> Offered {
        let announced = connection.features();
        if !self.options.materialize.utility_tools {
            return Offered::default();
        }
        let timeout = config.timeouts.request;
        let resources = async {
            if !announced.resources {
                return Ok(false);
            }
            let page = within(
                server,
                "resources/list",
                timeout,
                connection.list_resources(None),
            )
            .await;
            if first_page(page)?.is_ok_and(|page| lists_any(page, "resources")) {
                return Ok(true);
            }
            let templates = within(
                server,
                "resources/templates/list",
                timeout,
                connection.list_resource_templates(None),
            )
            .await;
            Ok(first_page(templates)?.is_ok_and(|page| lists_any(page, "resourceTemplates")))
        };
        let prompts = async {
            if !announced.prompts {
                return Ok(false);
            }
            let page = within(
                server,
                "prompts/list",
                timeout,
                connection.list_prompts(None),
            )
            .await;
            Ok::<_, CatalogError>(first_page(page)?.is_ok_and(|page| lists_any(page, "prompts")))
        };
        let (resources, prompts) = futures::join!(resources, prompts);
        let mut notes = Vec::new();
        let mut found = |announced: bool,
                         listed: Result<bool, CatalogError>,
                         what: &str,
                         tools: &str| {
            match listed {
                Ok(true) => true,
                Ok(false) => {
                    if announced {
                        notes.push(CatalogDiagnostic::server(
                            Level::Info,
                            server,
                            format!(
                                "server {server:?} announces {what} but lists none; it gets no {tools} tools"
                            ),
                        ));
                    }
                    false
                }
                Err(error) => {
                    notes.push(CatalogDiagnostic::server(
                        Level::Warning,
                        server,
                        format!(
                            "server {server:?} announces {what}, but listing them failed: {error}; it gets no {tools} tools"
                        ),
                    ));
                    false
                }
            }
        };
        let features = ServerFeatures {
            resources: found(
                announced.resources,
                resources,
                "resources",
                "resources_list/resources_read",
            ),
            prompts: found(
                announced.prompts,
                prompts,
                "prompts",
                "prompts_list/prompts_get",
            ),
        };
        Offered { features, notes }
    }

    /// Lists the server's tools within its request timeout, made safe to
    /// keep; with when the listing stops being fresh and who may share
    /// it.
    async fn list(
        &self,
        server: &str,
        config: &mcp_config::ServerConfig,
        connection: &dyn Connection,
    ) -> Result<(Arc<[Tool]>, Option<Instant>, CacheScope), CatalogError> {
        let timeout = config.timeouts.request;
        let listing = match tokio::time::timeout(timeout, connection.list_tools_listing()).await {
            Ok(result) => result?,
            Err(_) => {
                return Err(CatalogError::request(
                    server,
                    "tools/list",
                    Cause::TimedOut(timeout),
                ));
            }
        };
        // The TTL counts from when the listing arrived.
        let fresh_until = listing
            .ttl
            .map(|ttl| mcp_transport::time::later(self.clock.now(), ttl));
        let mut tools = listing.items;
        let max_depth = self
            .options
            .materialize
            .schema_limits
            .max_depth
            .min(MAX_JSON_DEPTH);
        defuse_listing(&mut tools, max_depth);
        Ok((Arc::from(tools), fresh_until, listing.scope))
    }

    fn failed(&self, server: &str, error: CatalogError) -> ServerOutcome {
        let now = self.clock.now();
        let state = self.lock();
        let slot = state.slots.get(server);
        let paused_until = slot.and_then(|slot| slot.backoff.paused_until(now));
        let pause = match (paused_until, slot) {
            (Some(until), Some(slot)) => Some(self.paused_error(
                server,
                Paused {
                    until,
                    failures: slot.backoff.failures(),
                },
            )),
            _ => None,
        };
        ServerOutcome::Failed {
            error,
            pause,
            paused_until,
        }
    }
}

/// While it lives, its server counts as waited on (see
/// [`crate::SessionRuntime::waiting`]); dropped on every way out of a
/// preparation, cancellation included.
struct Waiting<'a> {
    runtime: &'a RuntimeShared,
    server: &'a str,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if let Some(slot) = self.runtime.lock().slots.get_mut(self.server) {
            slot.waiting_since = None;
        }
    }
}

/// Whether a list page holds at least one item in `field`, or says more
/// pages follow. The page is dropped without recursion.
fn lists_any(page: serde_json::Value, field: &str) -> bool {
    let any = page
        .get(field)
        .and_then(serde_json::Value::as_array)
        .is_some_and(|items| !items.is_empty())
        || page
            .get("nextCursor")
            .and_then(serde_json::Value::as_str)
            .is_some_and(|cursor| !cursor.is_empty());
    deep::dispose(page);
    any
}
