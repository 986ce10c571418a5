//! What a person browses on one server, outside the tool catalog: its
//! resources, resource templates and prompts, one resource read and one
//! prompt got. Each goes over the runtime's connection to that server
//! (connecting it first if needed, and only it), within the server's
//! request timeout, and counts in its backoff like a call. A server that
//! did not announce resources or prompts is not asked and lists none.

use std::collections::HashSet;

use serde_json::{Map, Value};

use crate::error::CatalogError;

use super::session::SessionRuntime;
use super::utility::within;

/// Pages one listing follows at most: a server that keeps answering with
/// new cursors is not followed for ever.
const MAX_PAGES: usize = 1000;

/// Items one listing keeps at most, over all its pages.
pub const MAX_LISTED_ITEMS: usize = 100_000;

/// Which paged list to read.
#[derive(Clone, Copy)]
enum Paged {
    Resources,
    Templates,
    Prompts,
}

impl Paged {
    fn method(self) -> &'static str {
        match self {
            Paged::Resources => "resources/list",
            Paged::Templates => "resources/templates/list",
            Paged::Prompts => "prompts/list",
        }
    }

    fn field(self) -> &'static str {
        match self {
            Paged::Resources => "resources",
            Paged::Templates => "resourceTemplates",
            Paged::Prompts => "prompts",
        }
    }
}

impl SessionRuntime {
    /// Every resource `server` lists (all pages, at most
    /// [`MAX_LISTED_ITEMS`]), each as the server sent it.
    pub async fn list_resources(&self, server: &str) -> Result<Vec<Value>, CatalogError> {
        self.paged(server, Paged::Resources).await
    }

    /// Every resource template `server` lists.
    pub async fn list_resource_templates(&self, server: &str) -> Result<Vec<Value>, CatalogError> {
        self.paged(server, Paged::Templates).await
    }

    /// Every prompt `server` lists.
    pub async fn list_prompts(&self, server: &str) -> Result<Vec<Value>, CatalogError> {
        self.paged(server, Paged::Prompts).await
    }

    /// `resources/read` of `uri` on `server`: the server's result.
    pub async fn read_resource(&self, server: &str, uri: &str) -> Result<Value, CatalogError> {
        let (connection, epoch, timeouts) = self.shared.connection_for_call(server).await?;
        let result = within(
            server,
            "resources/read",
            timeouts.request,
            connection.read_resource(uri),
        )
        .await;
        self.shared.record(server, epoch, result.is_ok());
        result
    }

    /// `prompts/get` of prompt `name` on `server` with `arguments`: the
    /// server's result.
    pub async fn get_prompt(
        &self,
        server: &str,
        name: &str,
        arguments: Map<String, Value>,
    ) -> Result<Value, CatalogError> {
        let (connection, epoch, timeouts) = self.shared.connection_for_call(server).await?;
        let result = within(
            server,
            "prompts/get",
            timeouts.request,
            connection.get_prompt(name, arguments),
        )
        .await;
        self.shared.record(server, epoch, result.is_ok());
        result
    }

    async fn paged(&self, server: &str, list: Paged) -> Result<Vec<Value>, CatalogError> {
        let (connection, epoch, timeouts) = self.shared.connection_for_call(server).await?;
        let features = connection.features();
        let announced = match list {
            Paged::Resources | Paged::Templates => features.resources,
            Paged::Prompts => features.prompts,
        };
        if !announced {
            return Ok(Vec::new());
        }
        let mut items = Vec::new();
        let mut cursor = None;
        let mut seen = HashSet::new();
        let outcome = async {
            for _ in 0..MAX_PAGES {
                let page = match list {
                    Paged::Resources => connection.list_resources(cursor.take()),
                    Paged::Templates => connection.list_resource_templates(cursor.take()),
                    Paged::Prompts => connection.list_prompts(cursor.take()),
                };
                let mut page = within(server, list.method(), timeouts.request, page).await?;
                let next = page
                    .get("nextCursor")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                if let Some(Value::Array(listed)) = page.get_mut(list.field()).map(Value::take) {
                    let room = MAX_LISTED_ITEMS.saturating_sub(items.len());
                    items.extend(listed.into_iter().take(room));
                }
                crate::deep::dispose(page);
                match next {
                    Some(next) if items.len() < MAX_LISTED_ITEMS && seen.insert(next.clone()) => {
                        cursor = Some(next);
                    }
                    _ => break,
                }
            }
            Ok::<_, CatalogError>(())
        }
        .await;
        self.shared.record(server, epoch, outcome.is_ok());
        outcome.map(|()| items)
    }
}
