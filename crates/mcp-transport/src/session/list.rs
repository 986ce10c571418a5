//! Pagination: following `nextCursor` through every page of a list, within
//! the session's [`ListLimits`], and counting a page's size without
//! serialising it again.
//!
//! A page is read through [`PageSeed`]: its entries are first taken as
//! borrowed slices of the answer's text (`&RawValue`, or the values a
//! transport already decoded), counted against what is left of the item
//! cap, and only then decoded one by one. Every entry counts, valid or
//! not, so a page past the cap is refused before any of its values is
//! built, whatever it holds. An entry that does not decode is left out and
//! described in one [`ListingNote::InvalidEntries`] per listing (the first
//! few, then a count), logged once.
//!
//! The lists other than `tools/list` are optional for a server; a server
//! answering one with `-32601` (method not found) lists nothing, with a
//! [`ListingNote::Unimplemented`] for the host to show
//! ([`TransportError::is_unimplemented_listing`]).

use std::cell::Cell;
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::marker::PhantomData;
use std::time::Duration;

use serde::Deserialize;
use serde::de::{
    self, DeserializeOwned, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor,
};
use serde_json::value::RawValue;
use serde_json::{Value, json};

use crate::error::{TransportError, TransportErrorKind};
use crate::lock;
use crate::protocol::{Prompt, Resource, ResourceTemplate, Tool};

use super::pending::Body;
use super::{CallOptions, ClientSession, RejectedTool};

/// The listing methods a server may leave unimplemented: everything it
/// offers besides tools. A server that announces tools and cannot list
/// them is broken, and its listing fails.
const OPTIONAL_LISTINGS: [&str; 3] = ["resources/list", "resources/templates/list", "prompts/list"];

/// How many invalid entries a [`ListingNote::InvalidEntries`] describes
/// one by one; the rest are only counted.
pub const INVALID_ENTRIES_SHOWN: usize = 3;

/// Longest reason kept for one invalid entry, in bytes: a decoding error
/// may quote a string of the entry, which can be megabytes long.
const MAX_REASON_BYTES: usize = 200;

/// A whole listing, with what the server said about caching it
/// (2026-07-28 `ttlMs`/`cacheScope`; older servers say nothing).
#[derive(Debug, Clone, PartialEq)]
pub struct Listing<T> {
    /// Every item, over every page.
    pub items: Vec<T>,
    /// How long the listing stays fresh: the smallest `ttlMs` of its
    /// pages, `None` when no page had one.
    pub ttl: Option<Duration>,
    /// Who may share the listing.
    pub scope: CacheScope,
    /// What the host may show besides the items: entries left out, a
    /// method the server does not implement.
    pub notes: Vec<ListingNote>,
}

impl<T> Listing<T> {
    /// `items` with no caching hints (private, no TTL) and no notes.
    pub fn of(items: Vec<T>) -> Self {
        Listing {
            items,
            ttl: None,
            scope: CacheScope::Private,
            notes: Vec::new(),
        }
    }
}

/// Whether a listing may be shared beyond the authorization context that
/// fetched it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CacheScope {
    /// Holds nothing user-specific: any client or cache may share it.
    Public,
    /// Only for the credentials that fetched it (also the reading when the
    /// server said nothing, the safe default).
    Private,
}

/// Something a listing says besides its items, for the host to show.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ListingNote {
    /// The server answered an optional listing method with `-32601`
    /// (method not found): it lists nothing of that kind.
    Unimplemented {
        /// The method (`resources/templates/list`, ...).
        method: String,
        /// The server's message.
        message: String,
    },
    /// Entries that are not valid items were left out.
    InvalidEntries {
        /// The method whose pages held them.
        method: String,
        /// How many, over every page.
        count: usize,
        /// The first [`INVALID_ENTRIES_SHOWN`], with why.
        first: Vec<InvalidEntry>,
    },
}

/// One entry a listing left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidEntry {
    /// Its position among every entry of the listing, from 0.
    pub index: usize,
    /// Why it did not decode (cut at a couple of hundred bytes).
    pub reason: String,
}

impl fmt::Display for ListingNote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ListingNote::Unimplemented { method, message } => {
                write!(f, "{method} is not implemented ({message}): nothing listed")
            }
            ListingNote::InvalidEntries {
                method,
                count,
                first,
            } => {
                write!(f, "left out {count} invalid {method} entries: ")?;
                for (n, entry) in first.iter().enumerate() {
                    let sep = if n == 0 { "" } else { "; " };
                    write!(f, "{sep}entry {}: {}", entry.index, entry.reason)?;
                }
                if *count > first.len() {
                    write!(f, "; and {} more", count - first.len())?;
                }
                Ok(())
            }
        }
    }
}

impl ListingNote {
    /// The note for a listing that failed with `error`, when the failure
    /// is only that the server does not implement an optional listing
    /// ([`TransportError::is_unimplemented_listing`]): the listing is then
    /// empty, not failed.
    pub fn unimplemented(error: &TransportError) -> Option<ListingNote> {
        match error.kind() {
            TransportErrorKind::Rpc {
                method, message, ..
            } if error.is_unimplemented_listing() => Some(ListingNote::Unimplemented {
                method: method.clone(),
                message: message.clone(),
            }),
            _ => None,
        }
    }
}

impl TransportError {
    /// Whether the server answered an optional listing method (every list
    /// but `tools/list`) with `-32601` method not found: the one rule by
    /// which such a listing is empty instead of failed, for the session's
    /// listings and for hosts that page through one themselves.
    pub fn is_unimplemented_listing(&self) -> bool {
        matches!(self.kind(), TransportErrorKind::Rpc { method, code, .. }
            if *code == crate::error_codes::METHOD_NOT_FOUND && OPTIONAL_LISTINGS.contains(&method.as_str()))
    }
}

/// The invalid entries of one listing: the first few kept, the rest
/// counted.
#[derive(Default)]
struct Invalid {
    count: usize,
    first: Vec<InvalidEntry>,
}

impl Invalid {
    fn push(&mut self, index: usize, reason: &dyn fmt::Display) {
        self.count += 1;
        if self.first.len() < INVALID_ENTRIES_SHOWN {
            let mut reason = reason.to_string();
            if reason.len() > MAX_REASON_BYTES {
                let mut cut = MAX_REASON_BYTES;
                while !reason.is_char_boundary(cut) {
                    cut -= 1;
                }
                reason.truncate(cut);
                reason.push('…');
            }
            self.first.push(InvalidEntry { index, reason });
        }
    }

    /// The note, logged once, when there is anything to say.
    fn note(self, server: &str, method: &str) -> Option<ListingNote> {
        if self.count == 0 {
            return None;
        }
        let note = ListingNote::InvalidEntries {
            method: method.to_owned(),
            count: self.count,
            first: self.first,
        };
        tracing::warn!(server = %server, "{note}");
        Some(note)
    }
}

impl ClientSession {
    /// Every tool with its caching hints. At 2026-07-28 over HTTP a tool
    /// whose `x-mcp-header` annotations are invalid is left out (see
    /// [`ClientSession::rejected_tools`]).
    pub async fn list_tools_listing(&self) -> Result<Listing<Tool>, TransportError> {
        let mut listing: Listing<Tool> = self.list_all("tools/list", "tools", "tools").await?;
        let (Some(table), true) = (&self.shared.tool_headers, self.is_modern()) else {
            return Ok(listing);
        };
        let mut headers = HashMap::new();
        let mut repeat_safe = HashSet::new();
        let mut rejected = Vec::new();
        listing.items.retain(|tool| {
            match crate::param_headers::ParamHeaders::from_input_schema(&tool.input_schema) {
                Ok(found) => {
                    if let Some(found) = found {
                        headers.insert(tool.name.clone(), found);
                    }
                    if crate::param_headers::tool_is_repeat_safe(tool.annotations.as_ref()) {
                        repeat_safe.insert(tool.name.clone());
                    }
                    true
                }
                Err(reason) => {
                    rejected.push(RejectedTool {
                        name: tool.name.clone(),
                        reason,
                    });
                    false
                }
            }
        });
        if !rejected.is_empty() {
            let shown: Vec<String> = rejected
                .iter()
                .take(INVALID_ENTRIES_SHOWN)
                .map(|tool| format!("{:?}: {}", tool.name, tool.reason))
                .collect();
            let more = rejected.len() - shown.len();
            tracing::warn!(
                server = %self.shared.server,
                count = rejected.len(),
                "tools left out: {}{}",
                shown.join("; "),
                if more > 0 { format!("; and {more} more") } else { String::new() }
            );
        }
        table.replace(headers);
        table.replace_repeat_safe(repeat_safe);
        *lock(&self.shared.rejected) = rejected;
        Ok(listing)
    }

    /// Every resource with its caching hints.
    pub async fn list_resources_listing(&self) -> Result<Listing<Resource>, TransportError> {
        self.list_all("resources/list", "resources", "resources")
            .await
    }

    /// Every resource template with its caching hints.
    pub async fn list_resource_templates_listing(
        &self,
    ) -> Result<Listing<ResourceTemplate>, TransportError> {
        self.list_all("resources/templates/list", "resourceTemplates", "resources")
            .await
    }

    /// Every prompt with its caching hints.
    pub async fn list_prompts_listing(&self) -> Result<Listing<Prompt>, TransportError> {
        self.list_all("prompts/list", "prompts", "prompts").await
    }

    /// Follows `nextCursor` until the last page, refusing a repeated cursor
    /// and stopping with an error past any [`ListLimits`] cap.
    pub(super) async fn list_all<T: DeserializeOwned>(
        &self,
        method: &str,
        field: &str,
        capability: &str,
    ) -> Result<Listing<T>, TransportError> {
        if self.shared.options.respect_capabilities && !self.has_capability(capability) {
            return Ok(Listing::of(Vec::new()));
        }
        let mut ttl: Option<Duration> = None;
        let mut public = true;
        let mut said_scope = false;
        let limits = self.shared.options.list_limits;
        let mut items = Vec::new();
        let mut invalid = Invalid::default();
        // Every entry the server sent, valid or not: the item cap counts
        // these, so invalid entries cannot make a listing unbounded.
        let mut entries = 0usize;
        let mut seen = HashSet::new();
        let mut cursor: Option<String> = None;
        let mut bytes = 0usize;
        for page in 1.. {
            if page > limits.max_pages {
                return Err(
                    self.limit_error(method, format!("more than {} pages", limits.max_pages))
                );
            }
            let params = cursor.take().map(|cursor| json!({ "cursor": cursor }));
            // Each page is a request of its own, with the method's deadline.
            let options = CallOptions::default();
            let mut deadline = self.shared.deadline(method, &options);
            let body = match self
                .shared
                .request_body(method, params.into(), &options, &mut deadline)
                .await
            {
                Ok(body) => body,
                Err(error) => {
                    let note = ListingNote::unimplemented(&error).filter(|_| page == 1);
                    let Some(note) = note else {
                        return Err(error);
                    };
                    tracing::debug!(server = %self.shared.server, "{note}");
                    let mut listing = Listing::of(Vec::new());
                    listing.notes.push(note);
                    return Ok(listing);
                }
            };
            bytes += match &body {
                Body::Raw(raw) => raw.get().len(),
                Body::Value(value) => json_size(value),
            };
            if bytes > limits.max_bytes {
                return Err(self.limit_error(
                    method,
                    format!("more than {} bytes of results", limits.max_bytes),
                ));
            }
            let room = limits.max_items.saturating_sub(entries);
            let mut take = |index: usize, item: Result<T, String>| match item {
                Ok(item) => items.push(item),
                Err(reason) => invalid.push(entries + index, &reason),
            };
            let top = match body {
                Body::Raw(raw) => self.read_page::<&RawValue, T>(
                    method,
                    field,
                    room,
                    |seed| crate::codec::decode_result_seed(raw.get(), seed),
                    &mut take,
                ),
                Body::Value(value) => self.read_page::<Value, T>(
                    method,
                    field,
                    room,
                    |seed| {
                        seed.deserialize(value)
                            .map_err(crate::codec::ResultError::Invalid)
                    },
                    &mut take,
                ),
            }?;
            entries += top.entries;
            if let Some(ms) = top.ttl_ms {
                let page = Duration::from_millis(ms);
                ttl = Some(ttl.map_or(page, |t| t.min(page)));
            }
            match top.cache_scope.as_deref() {
                Some("public") => said_scope = true,
                Some(_) => {
                    said_scope = true;
                    public = false;
                }
                None => public = false,
            }
            match top.next_cursor {
                Some(next) if !next.is_empty() => {
                    if !seen.insert(next.clone()) {
                        return Err(self
                            .limit_error(method, format!("server repeated the cursor {next:?}")));
                    }
                    cursor = Some(next);
                }
                _ => break,
            }
        }
        let scope = if public && said_scope {
            CacheScope::Public
        } else {
            CacheScope::Private
        };
        let notes = invalid
            .note(&self.shared.server, method)
            .into_iter()
            .collect();
        Ok(Listing {
            items,
            ttl,
            scope,
            notes,
        })
    }

    /// Reads one page through `decode` (which runs a [`PageSeed`] over
    /// the page as it arrived), handing each entry's decoding to `take`
    /// with its position in the page; past `room` entries the page is
    /// refused before any entry is decoded.
    fn read_page<'de, E: PageEntry<'de>, T: DeserializeOwned>(
        &self,
        method: &str,
        field: &str,
        room: usize,
        decode: impl FnOnce(PageSeed<'_, E>) -> Result<PageTop<E>, crate::codec::ResultError>,
        take: &mut impl FnMut(usize, Result<T, String>),
    ) -> Result<PageRead, TransportError> {
        let over = Cell::new(false);
        let top = decode(PageSeed {
            field,
            room,
            over: &over,
            entry: PhantomData,
        });
        let top = match top {
            Ok(top) => top,
            Err(_) if over.get() => {
                let max = self.shared.options.list_limits.max_items;
                return Err(self.limit_error(method, format!("more than {max} items")));
            }
            Err(crate::codec::ResultError::Refused(kind)) => {
                return Err(self
                    .shared
                    .answer_error(method, crate::codec::undecodable_error(&kind)));
            }
            Err(crate::codec::ResultError::Invalid(e)) => {
                return Err(TransportError::protocol(
                    &*self.shared.server,
                    format!("invalid {method} result: {e}"),
                )
                .with_source(e));
            }
        };
        let Some(entries) = top.entries else {
            return Err(self.limit_error(method, format!("result has no {field:?} array")));
        };
        let count = entries.len();
        for (index, entry) in entries.into_iter().enumerate() {
            take(index, entry.decode());
        }
        Ok(PageRead {
            entries: count,
            ttl_ms: top.ttl_ms,
            cache_scope: top.cache_scope,
            next_cursor: top.next_cursor,
        })
    }
}

/// One entry of a page as the page reader keeps it before decoding: a
/// slice of the answer's text, or a value a transport already decoded.
trait PageEntry<'de>: Deserialize<'de> {
    /// The entry as an item, or why it is not one.
    fn decode<T: DeserializeOwned>(self) -> Result<T, String>;
    /// A member read leniently: `None` when it is not of type `V`.
    fn read<V: DeserializeOwned>(&self) -> Option<V>;
}

impl<'de> PageEntry<'de> for &'de RawValue {
    fn decode<T: DeserializeOwned>(self) -> Result<T, String> {
        crate::codec::decode_result(self.get()).map_err(|error| match error {
            crate::codec::ResultError::Refused(kind) => kind.to_string(),
            // A position counts from the entry's start, not the answer's:
            // it would only tell entries of one kind apart.
            crate::codec::ResultError::Invalid(e) => {
                let text = e.to_string();
                match text.rsplit_once(" at line ") {
                    Some((reason, _)) if e.line() > 0 => reason.to_owned(),
                    _ => text,
                }
            }
        })
    }

    fn read<V: DeserializeOwned>(&self) -> Option<V> {
        // A value of another type fails at its first byte, however deep.
        serde_json::from_str(self.get()).ok()
    }
}

impl PageEntry<'_> for Value {
    fn decode<T: DeserializeOwned>(self) -> Result<T, String> {
        crate::depth::from_value(self).map_err(|e| e.to_string())
    }

    fn read<V: DeserializeOwned>(&self) -> Option<V> {
        match self {
            Value::Number(_) | Value::String(_) => V::deserialize(self).ok(),
            _ => None,
        }
    }
}

/// What a page said, once its entries are decoded: how many there were,
/// and the members pagination and caching read.
struct PageRead {
    entries: usize,
    ttl_ms: Option<u64>,
    cache_scope: Option<String>,
    next_cursor: Option<String>,
}

/// The top of a page as read: its entries still undecoded, and the
/// members pagination and caching read.
struct PageTop<E> {
    entries: Option<Vec<E>>,
    ttl_ms: Option<u64>,
    cache_scope: Option<String>,
    next_cursor: Option<String>,
}

/// Reads a page's top level: the entries of `field` kept as `E` (at most
/// `room`; one more sets `over` and stops the read), `ttlMs`,
/// `cacheScope` and `nextCursor` read leniently (another type counts as
/// absent), every other member skipped. A repeated member counts as its
/// last occurrence, as it would in a decoded object.
struct PageSeed<'a, E> {
    field: &'a str,
    room: usize,
    over: &'a Cell<bool>,
    entry: PhantomData<E>,
}

impl<'de, E: PageEntry<'de>> DeserializeSeed<'de> for PageSeed<'_, E> {
    type Value = PageTop<E>;

    fn deserialize<D: de::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de, E: PageEntry<'de>> Visitor<'de> for PageSeed<'_, E> {
    type Value = PageTop<E>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list result object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut top = PageTop {
            entries: None,
            ttl_ms: None,
            cache_scope: None,
            next_cursor: None,
        };
        while let Some(member) = map.next_key_seed(MemberSeed { field: self.field })? {
            match member {
                Member::Entries => {
                    top.entries = Some(map.next_value_seed(EntriesSeed {
                        room: self.room,
                        over: self.over,
                        entry: PhantomData::<E>,
                    })?);
                }
                Member::TtlMs => top.ttl_ms = map.next_value::<E>()?.read(),
                Member::CacheScope => top.cache_scope = map.next_value::<E>()?.read(),
                Member::NextCursor => top.next_cursor = map.next_value::<E>()?.read(),
                Member::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(top)
    }
}

/// The members of a page the reader keeps.
enum Member {
    Entries,
    TtlMs,
    CacheScope,
    NextCursor,
    Other,
}

/// Names a page member without allocating its key.
struct MemberSeed<'a> {
    field: &'a str,
}

impl<'de> DeserializeSeed<'de> for MemberSeed<'_> {
    type Value = Member;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Member, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl Visitor<'_> for MemberSeed<'_> {
    type Value = Member;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a member name")
    }

    fn visit_str<Er: de::Error>(self, key: &str) -> Result<Member, Er> {
        Ok(match key {
            key if key == self.field => Member::Entries,
            "ttlMs" => Member::TtlMs,
            "cacheScope" => Member::CacheScope,
            "nextCursor" => Member::NextCursor,
            _ => Member::Other,
        })
    }
}

/// A page's entries, at most `room` of them.
struct EntriesSeed<'a, E> {
    room: usize,
    over: &'a Cell<bool>,
    entry: PhantomData<E>,
}

impl<'de, E: PageEntry<'de>> DeserializeSeed<'de> for EntriesSeed<'_, E> {
    type Value = Vec<E>;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Vec<E>, D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de, E: PageEntry<'de>> Visitor<'de> for EntriesSeed<'_, E> {
    type Value = Vec<E>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of list entries")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<E>, A::Error> {
        let mut entries = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(self.room));
        while let Some(entry) = seq.next_element::<E>()? {
            if entries.len() == self.room {
                self.over.set(true);
                return Err(de::Error::custom("past the item cap"));
            }
            entries.push(entry);
        }
        Ok(entries)
    }
}

/// Length of `value` as compact JSON, counted by walking it: a page is
/// never serialised again. The walk keeps its own stack, so a deep value
/// cannot overflow the thread's.
fn json_size(value: &Value) -> usize {
    let mut size = 0;
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        size += match value {
            Value::Null | Value::Bool(true) => 4,
            Value::Bool(false) => 5,
            Value::Number(number) => display_len(number),
            Value::String(text) => string_size(text),
            Value::Array(items) => {
                stack.extend(items);
                // Brackets and commas.
                2 + items.len().saturating_sub(1)
            }
            Value::Object(map) => {
                for (key, value) in map {
                    // The key, and its colon.
                    size += string_size(key) + 1;
                    stack.push(value);
                }
                2 + map.len().saturating_sub(1)
            }
        };
    }
    size
}

/// Length of a JSON string literal as serde_json writes it: quotes, and
/// two bytes for `"`, `\\` and the short control escapes, six for other
/// control characters (`\u00XX`).
fn string_size(text: &str) -> usize {
    let escapes: usize = text
        .bytes()
        .map(|byte| match byte {
            b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 1,
            0..=0x1f => 5,
            _ => 0,
        })
        .sum();
    2 + text.len() + escapes
}

/// Length of a number's text (its `Display` is what serde_json writes),
/// without allocating it.
fn display_len(number: &serde_json::Number) -> usize {
    struct Count(usize);
    impl fmt::Write for Count {
        fn write_str(&mut self, text: &str) -> fmt::Result {
            self.0 += text.len();
            Ok(())
        }
    }
    let mut count = Count(0);
    let _ = fmt::Write::write_fmt(&mut count, format_args!("{number}"));
    count.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(value: Value) {
        let expect = serde_json::to_vec(&value).map_or(0, |bytes| bytes.len());
        assert_eq!(json_size(&value), expect, "{value}");
    }

    #[test]
    fn sizes_match_the_compact_serialisation() {
        check(json!(null));
        check(json!(true));
        check(json!(false));
        check(json!(0));
        check(json!(-1234567890123_i64));
        check(json!(u64::MAX));
        check(json!(1.5));
        check(json!(-0.000_012_5));
        check(json!(1e300));
        check(json!(""));
        check(json!("plain text, é, 日本"));
        check(json!(
            "quote \" backslash \\ tab \t nl \n cr \r bs \u{8} ff \u{c} nul \u{0} us \u{1f} del \u{7f}"
        ));
        check(json!([]));
        check(json!({}));
        check(json!([1, [2, [3, []]], {"a": {}}]));
        check(
            json!({"tools": [{"name": "echo", "inputSchema": {"type": "object"}}], "nextCursor": "c\"1"}),
        );
    }
}
