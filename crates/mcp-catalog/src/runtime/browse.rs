//! What a person browses on one server, outside the tool catalog: its
//! resources, resource templates and prompts, one resource read and one
//! prompt got. Each goes over the runtime's connection to that server
//! (connecting it first if needed, and only it), within the server's
//! request timeout, and counts in its backoff like a call. A server that
//! did not announce resources or prompts is not asked and lists none, and
//! one that does not implement a listing (`-32601`, most often for
//! resource templates) lists none of it, with a note
//! ([`mcp_transport::types::ListingNote::unimplemented`] decides).

use std::collections::HashSet;

use mcp_transport::types::ListingNote;
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

/// One listing a person browses: its items as the server sent them, and
/// what to show beside them.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Browsed {
    /// Every item, over every page.
    pub items: Vec<Value>,
    /// Notes for the person: the server does not implement the listing.
    pub notes: Vec<ListingNote>,
}

/// A listing's first page, or `None` when the server does not implement
/// the (optional) listing: the one place the catalog reads a failed page
/// as an empty listing.
pub(super) fn first_page(
    page: Result<Value, CatalogError>,
) -> Result<Result<Value, ListingNote>, CatalogError> {
    match page {
        Ok(page) => Ok(Ok(page)),
        Err(error) => match error.transport_error().and_then(ListingNote::unimplemented) {
            Some(note) => Ok(Err(note)),
            None => Err(error),
        },
    }
}

impl SessionRuntime {
    /// Every resource `server` lists (all pages, at most
    /// [`MAX_LISTED_ITEMS`]), each as the server sent it.
    pub async fn list_resources(&self, server: &str) -> Result<Browsed, CatalogError> {
        self.paged(server, Paged::Resources).await
    }

    /// Every resource template `server` lists.
    pub async fn list_resource_templates(&self, server: &str) -> Result<Browsed, CatalogError> {
        self.paged(server, Paged::Templates).await
    }

    /// Every prompt `server` lists.
    pub async fn list_prompts(&self, server: &str) -> Result<Browsed, CatalogError> {
        self.paged(server, Paged::Prompts).await
    }

    /// `resources/read` of `uri` on `server`: the server's result.
    pub async fn read_resource(&self, server: &str, uri: &str) -> Result<Value, CatalogError> {
        let call = self.shared.connection_for_call(server).await?;
        let (connection, epoch, timeouts) = (&call.connection, call.epoch, call.timeouts);
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
        let call = self.shared.connection_for_call(server).await?;
        let (connection, epoch, timeouts) = (&call.connection, call.epoch, call.timeouts);
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

    /// Any other request to `server` (`completion/complete`,
    /// `logging/setLevel`, `resources/subscribe`, …) within its request
    /// timeout: the server's result.
    pub async fn request(
        &self,
        server: &str,
        method: &str,
        params: Value,
    ) -> Result<Value, CatalogError> {
        self.request_rounds(server, method, params, false).await
    }

    /// [`SessionRuntime::request`] with an `input_required` result handed
    /// back as the answer, for a host that passes the rounds on to its own
    /// client (`prompts/get`, `resources/read` with a retry's members in
    /// `params`).
    pub async fn request_handing_back(
        &self,
        server: &str,
        method: &str,
        params: Value,
    ) -> Result<Value, CatalogError> {
        self.request_rounds(server, method, params, true).await
    }

    async fn request_rounds(
        &self,
        server: &str,
        method: &str,
        params: Value,
        hand_back: bool,
    ) -> Result<Value, CatalogError> {
        let call = self.shared.connection_for_call(server).await?;
        let sent = async {
            match hand_back {
                true => call.connection.request_handing_back(method, params).await,
                false => call.connection.request(method, params).await,
            }
        };
        let result = within(server, method, call.timeouts.request, sent).await;
        self.shared.record(server, call.epoch, result.is_ok());
        result
    }

    /// The servers this runtime may start, in name order (held-back ones
    /// not included).
    pub fn servers(&self) -> Vec<String> {
        self.shared.lock().slots.keys().cloned().collect()
    }

    async fn paged(&self, server: &str, list: Paged) -> Result<Browsed, CatalogError> {
        let call = self.shared.connection_for_call(server).await?;
        let (connection, epoch, timeouts) = (&call.connection, call.epoch, call.timeouts);
        let features = connection.features();
        let announced = match list {
            Paged::Resources | Paged::Templates => features.resources,
            Paged::Prompts => features.prompts,
        };
        let mut browsed = Browsed::default();
        if !announced {
            return Ok(browsed);
        }
        let items = &mut browsed.items;
        let mut cursor = None;
        let mut seen = HashSet::new();
        let outcome = async {
            for number in 0..MAX_PAGES {
                let page = match list {
                    Paged::Resources => connection.list_resources(cursor.take()),
                    Paged::Templates => connection.list_resource_templates(cursor.take()),
                    Paged::Prompts => connection.list_prompts(cursor.take()),
                };
                let page = within(server, list.method(), timeouts.request, page).await;
                let mut page = match page {
                    Ok(page) => page,
                    Err(error) if number > 0 => return Err(error),
                    Err(error) => match first_page(Err(error))? {
                        Ok(page) => page,
                        Err(note) => return Ok(Some(note)),
                    },
                };
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
            Ok::<_, CatalogError>(None)
        }
        .await;
        self.shared.record(server, epoch, outcome.is_ok());
        let note = outcome?;
        browsed.notes.extend(note);
        Ok(browsed)
    }
}
