//! The build itself: every server's listing, filtered, named and with
//! its schema prepared for the provider, becomes one [`Catalog`]. Pure and
//! order-independent; [`SchemaCache`] lets a rebuild reuse the prepared
//! schemas of listings that did not change.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::num::NonZeroUsize;
use std::sync::Arc;
#[cfg(feature = "validation")]
use std::sync::OnceLock;

use mcp_config::Level;
use mcp_transport::Tool;
use serde_json::Value;

use super::intern;
use super::{
    Catalog, CatalogDiagnostic, CatalogTool, MAX_RAW_TOOL_NAME_BYTES, MaterializeOptions,
    ServerInstructions, ServerTools,
};
use crate::error::CatalogError;
use crate::naming::{NameAdjustment, NameAllocator, ServerPrefix};
use crate::schema::{self, ProviderProfile, SchemaLimits};
use crate::tool::{SharedSchema, ToolOrigin, ToolParts, ToolTarget, UtilityTool};
use crate::{deep, filter};

/// Trims a description and cuts it to `max_chars` characters, ending a
/// cut one with a note saying so; an empty one gets a fallback naming the
/// server.
pub fn describe(description: Option<&str>, tool: &str, server: &str, max_chars: usize) -> String {
    cut_description(description, tool, server, max_chars)
        .text
        .into_owned()
}

/// A description as the model gets it, and how much of it was kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Described<'a> {
    /// Borrowed from the listing when only trimmed, as most are.
    pub(super) text: Cow<'a, str>,
    /// `(original, kept)` lengths in characters, when it was cut.
    pub(super) cut: Option<(usize, usize)>,
}

/// The shortest limit that still leaves room for the note after some of
/// the text; below it a cut description ends with `…` alone.
const MIN_CHARS_WITH_NOTE: usize = 64;

/// [`describe`], saying whether and where it cut. The whole text, note
/// included, stays within `max_chars` (providers refuse longer ones).
pub(super) fn cut_description<'a>(
    description: Option<&'a str>,
    tool: &str,
    server: &str,
    max_chars: usize,
) -> Described<'a> {
    let trimmed = description.map(str::trim).unwrap_or("");
    if trimmed.is_empty() {
        return Described {
            text: format!("Tool \"{tool}\" of MCP server \"{server}\"").into(),
            cut: None,
        };
    }
    cut_to(trimmed, max_chars, "description")
}

/// `text` within `max_chars` characters, a note saying what was cut (the
/// `what` it names) included when there is room for one.
pub(super) fn cut_to<'a>(trimmed: &'a str, max_chars: usize, what: &str) -> Described<'a> {
    if trimmed.char_indices().nth(max_chars).is_none() {
        return Described {
            text: trimmed.into(),
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
    let note = |kept: usize| format!("… [{what} cut at {kept} of {original} characters]");
    if max_chars < MIN_CHARS_WITH_NOTE {
        let kept = head(max_chars.saturating_sub(1));
        let kept_chars = kept.chars().count();
        return Described {
            text: format!("{kept}…").into(),
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
        text: format!("{kept}{}", note(kept_chars)).into(),
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

/// A prepared schema as the interning table keeps it: independent of
/// which tool's schema it was made from, so every tool with the same
/// content gets it, pointing to its own listing where no rewrite applied.
#[derive(Debug, Clone)]
struct PreparedForms {
    input: Form,
    normalized: Option<Form>,
}

/// One prepared form: the schema as sent, or one made from it.
#[derive(Debug, Clone)]
enum Form {
    Original,
    Made(Arc<Value>),
}

impl Form {
    fn of(schema: Cow<'_, Value>) -> Form {
        match schema {
            Cow::Borrowed(_) => Form::Original,
            Cow::Owned(made) => Form::Made(Arc::new(made)),
        }
    }

    fn resolve(&self, original: &SharedSchema) -> SharedSchema {
        match self {
            Form::Original => original.clone(),
            Form::Made(made) => SharedSchema::Own(Arc::clone(made)),
        }
    }
}

impl PreparedForms {
    fn resolve(&self, original: &SharedSchema) -> PreparedSchema {
        PreparedSchema {
            input: self.input.resolve(original),
            normalized: self.normalized.as_ref().map(|form| form.resolve(original)),
        }
    }
}

/// Why a tool's schemas keep it out of the catalog.
#[derive(Debug, Clone)]
enum Refused {
    Input(CatalogError),
    Output(CatalogError),
}

fn prepare_input(
    original: &SharedSchema,
    profile: ProviderProfile,
    limits: &SchemaLimits,
) -> Result<PreparedForms, CatalogError> {
    let prepared = schema::prepare_for_calls(original.get(), profile, limits)?;
    Ok(PreparedForms {
        input: Form::of(prepared.schema),
        normalized: prepared.normalized.map(Form::of),
    })
}

/// How many distinct schemas one hash may file; past it a schema is
/// prepared without interning, so colliding inputs never cost a scan of
/// many candidates each.
const MAX_PER_HASH: usize = 8;

/// Input schemas prepared so far, by content ([`intern::content_hash`]):
/// each distinct schema is normalised and rewritten once, however many
/// tools of however many servers send it.
///
/// Each hash counts the cached listings that hold it. One no listing
/// holds any more is kept a while (a server that changes back, or
/// reconnects, finds its schemas), and dropped oldest first once such
/// hashes outnumber the held ones: a long-lived runtime whose servers
/// keep changing their tools frees a few schemas per rebuild, while they
/// are still warm, rather than thousands at once.
#[derive(Debug, Default)]
struct Inputs {
    by_hash: HashMap<u64, Bucket>,
    /// Hashes in the order no listing held them any more, oldest first.
    /// One may be named twice, or be held again: [`Inputs::evict`] skips
    /// those.
    unheld: VecDeque<u64>,
    /// How many buckets no listing holds.
    unheld_buckets: usize,
}

#[derive(Debug, Default)]
struct Bucket {
    entries: Vec<InternedInput>,
    /// How many times cached listings hold this hash
    /// ([`CachedListing::hashes`]).
    holders: usize,
}

#[derive(Debug)]
struct InternedInput {
    /// The schema it was made from, to confirm a hash match.
    original: SharedSchema,
    prepared: Result<PreparedForms, CatalogError>,
}

impl Inputs {
    /// `original` prepared for `profile`, made once per content; the
    /// second value is the content hash it is filed under.
    fn prepare(
        &mut self,
        original: &SharedSchema,
        profile: ProviderProfile,
        limits: &SchemaLimits,
    ) -> (Result<PreparedSchema, CatalogError>, u64) {
        let hash = intern::content_hash(original.get());
        let bucket = self.by_hash.entry(hash).or_default();
        // The caller records the hash in its listing: held from now on.
        if bucket.holders == 0 && !bucket.entries.is_empty() {
            self.unheld_buckets = self.unheld_buckets.saturating_sub(1);
        }
        bucket.holders += 1;
        let entries = &mut bucket.entries;
        let found = entries
            .iter()
            .position(|entry| intern::same_content(entry.original.get(), original.get()));
        let at = match found {
            Some(at) => at,
            // Schemas made to collide are prepared without the table.
            None if entries.len() >= MAX_PER_HASH => {
                let prepared = prepare_input(original, profile, limits);
                return (prepared.map(|forms| forms.resolve(original)), hash);
            }
            None => {
                entries.push(InternedInput {
                    original: original.clone(),
                    prepared: prepare_input(original, profile, limits),
                });
                entries.len() - 1
            }
        };
        let resolved = match &entries[at].prepared {
            Ok(forms) => Ok(forms.resolve(original)),
            Err(error) => Err(error.clone()),
        };
        (resolved, hash)
    }

    /// Lets go of the hashes a dropped listing held.
    fn release(&mut self, hashes: &[u64]) {
        for hash in hashes {
            if let Some(bucket) = self.by_hash.get_mut(hash)
                && bucket.holders > 0
            {
                bucket.holders -= 1;
                if bucket.holders == 0 {
                    self.unheld_buckets += 1;
                    self.unheld.push_back(*hash);
                }
            }
        }
    }

    /// Drops the buckets no listing has held for longest, until at most
    /// as many are unheld as held (and 64 more).
    fn evict(&mut self) {
        let held = self.by_hash.len().saturating_sub(self.unheld_buckets);
        while self.unheld_buckets > held + 64 {
            let Some(hash) = self.unheld.pop_front() else {
                break;
            };
            if self.by_hash.get(&hash).is_some_and(|b| b.holders == 0) {
                self.by_hash.remove(&hash);
                self.unheld_buckets = self.unheld_buckets.saturating_sub(1);
            }
        }
        // Buckets held and let go again leave stale names behind.
        if self.unheld.len() > 2 * self.unheld_buckets + 64 {
            let by_hash = &self.by_hash;
            let mut named = HashSet::new();
            // Newest first, so a bucket keeps the place of its last release.
            let mut kept: Vec<u64> = self
                .unheld
                .iter()
                .rev()
                .filter(|hash| {
                    by_hash.get(*hash).is_some_and(|b| b.holders == 0) && named.insert(**hash)
                })
                .copied()
                .collect();
            kept.reverse();
            self.unheld = kept.into();
        }
    }
}

/// Output schemas vetted so far, by content. Only those that passed are
/// kept (a copy of each; most tools have none): a refused one may be too
/// deep to copy, and is vetted again on the next build.
#[derive(Debug, Default)]
struct Outputs {
    passed: HashMap<u64, Vec<Value>>,
}

impl Outputs {
    fn check(&mut self, output: &Value, limits: &SchemaLimits) -> Result<(), CatalogError> {
        let hash = intern::content_hash(output);
        if let Some(entries) = self.passed.get(&hash)
            && entries
                .iter()
                .any(|entry| intern::same_content(entry, output))
        {
            return Ok(());
        }
        schema::check_output_schema(output, limits)?;
        self.passed.entry(hash).or_default().push(output.clone());
        Ok(())
    }
}

/// One tool waiting for its name.
struct Pending<'a> {
    raw_name: &'a str,
    description: Cow<'a, str>,
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

/// What earlier builds made, for a rebuild to reuse: every distinct input
/// schema prepared for the profile (by content), and per server the
/// listing it was made from with its prepared schemas and its finished
/// tools. A listing is the same when it is the same shared allocation (the
/// runtime keeps a server's listing until `list_changed`); a rebuild then
/// takes that server's tools as they were (when nothing about their names
/// changed), and prepares only the schemas it has not seen.
#[derive(Debug, Default)]
pub struct SchemaCache {
    /// What the prepared schemas were made for: a change empties the cache.
    schemas_for: Option<(ProviderProfile, SchemaLimits)>,
    /// What the finished tools were made with besides that.
    tools_for: Option<ToolOptions>,
    inputs: Inputs,
    outputs: Outputs,
    /// By server name.
    listings: HashMap<String, CachedListing>,
}

/// The options a server's finished tools depend on, besides the schema
/// ones.
#[derive(Debug, Clone, PartialEq)]
struct ToolOptions {
    style: crate::NamingStyle,
    reserved_names: BTreeSet<String>,
    description_limit: usize,
    utility_tools: bool,
}

impl ToolOptions {
    fn of(options: &MaterializeOptions) -> Self {
        ToolOptions {
            style: options.style,
            reserved_names: options.reserved_names.clone(),
            description_limit: options.description_limit,
            utility_tools: options.utility_tools,
        }
    }

    fn matches(&self, options: &MaterializeOptions) -> bool {
        self.style == options.style
            && self.reserved_names == options.reserved_names
            && self.description_limit == options.description_limit
            && self.utility_tools == options.utility_tools
    }
}

#[derive(Debug)]
struct CachedListing {
    /// Keeps the allocation (and so its address) alive.
    tools: Arc<[Tool]>,
    prepared: Vec<Option<Result<PreparedSchema, Refused>>>,
    /// The content hashes of the schemas prepared for it: each holds its
    /// entries of [`Inputs`].
    hashes: Vec<u64>,
    /// The server's finished tools from the last build that made them.
    built: Option<ServerBuild>,
}

/// One server's share of a catalog.
#[derive(Debug)]
struct ServerBuild {
    /// What of the listing and its settings it was made from.
    key: ServerKey,
    /// Sorted by raw name.
    tools: Vec<CatalogTool>,
    diagnostics: Vec<CatalogDiagnostic>,
    /// Tools `toolFilter` hid.
    hidden: usize,
    /// Descriptions cut.
    cut: usize,
    /// Whether a name was changed to avoid another's: then its names
    /// depend on the other servers, and a rebuild names them again.
    collided: bool,
}

/// The settings of a listing its tools depend on.
#[derive(Debug, Clone, PartialEq)]
struct ServerKey {
    prefix: String,
    filter: mcp_config::ToolFilter,
    features: super::ServerFeatures,
    description_limit: Option<NonZeroUsize>,
}

/// The cache entry for `listing`, fresh when its tools are not the ones
/// cached; the hashes the entry it replaces held go to `released`.
fn cached_listing<'c>(
    listings: &'c mut HashMap<String, CachedListing>,
    listing: &ServerTools,
    released: &mut Vec<u64>,
) -> &'c mut CachedListing {
    let fresh = || CachedListing {
        tools: Arc::clone(&listing.tools),
        prepared: vec![None; listing.tools.len()],
        hashes: Vec::new(),
        built: None,
    };
    let entry = listings.entry(listing.server.clone()).or_insert_with(fresh);
    if !Arc::ptr_eq(&entry.tools, &listing.tools) {
        let mut replaced = std::mem::replace(entry, fresh());
        released.append(&mut replaced.hashes);
    }
    entry
}

impl SchemaCache {
    /// Empties what `options` makes stale.
    fn refresh(&mut self, options: &MaterializeOptions) {
        let schemas_for = Some((options.profile, options.schema_limits));
        if self.schemas_for != schemas_for {
            *self = SchemaCache {
                schemas_for,
                ..SchemaCache::default()
            };
        }
        if !self.tools_for.as_ref().is_some_and(|t| t.matches(options)) {
            self.tools_for = Some(ToolOptions::of(options));
            for listing in self.listings.values_mut() {
                listing.built = None;
            }
        }
    }

    /// Lets go of what the listings dropped by this build held, and drops
    /// what has not been held for longest: a long-lived runtime whose
    /// servers keep changing their tools does not keep every schema it
    /// ever saw.
    fn compact(&mut self, released: &[u64]) {
        self.inputs.release(released);
        self.inputs.evict();
        let live: usize = self.listings.values().map(|l| l.tools.len() + 4).sum();
        if self.outputs.passed.len() > 2 * live + 64 {
            self.outputs.passed.clear();
        }
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
    cache.refresh(options);
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
    let total: usize = order.iter().map(|listing| listing.tools.len()).sum();
    allocator.reserve(total);
    let mut tools = Vec::with_capacity(total);
    let mut diagnostics = Vec::new();
    let mut filtered = BTreeMap::new();
    let mut cut = BTreeMap::new();
    let mut seen_servers = BTreeSet::new();
    let mut instructions = Vec::new();
    // The hashes of listings this build drops.
    let mut released: Vec<u64> = Vec::new();

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

        instructions.extend(ServerInstructions::of(
            server,
            listing.instructions.as_ref(),
        ));
        let key = ServerKey {
            prefix,
            filter: listing.filter.clone(),
            features: listing.features,
            description_limit: listing.description_limit,
        };
        let cached = cached_listing(&mut cache.listings, listing, &mut released);
        let reusable = cached.built.as_ref().is_some_and(|built| {
            built.key == key
                && !built.collided
                && allocator.claim(built.tools.iter().map(CatalogTool::shared_name))
        });
        if !reusable {
            let mut schemas = Schemas {
                cached,
                inputs: &mut cache.inputs,
                outputs: &mut cache.outputs,
                options,
            };
            let built = build_server(listing, key, options, &mut allocator, &mut schemas);
            cached.built = Some(built);
        }
        let Some(built) = &cached.built else {
            continue;
        };
        tools.extend(built.tools.iter().map(CatalogTool::share));
        diagnostics.extend(built.diagnostics.iter().cloned());
        if built.hidden > 0 {
            filtered.insert(server.to_owned(), built.hidden);
        }
        if built.cut > 0 {
            cut.insert(server.to_owned(), built.cut);
        }
    }

    cache.listings.retain(|server, listing| {
        let seen = seen_servers.contains(server.as_str());
        if !seen {
            released.append(&mut listing.hashes);
        }
        seen
    });
    // Only now: a listing that replaced another holds what they share.
    cache.compact(&released);
    // Each server's run is already sorted, and the runs mostly follow
    // each other: the sort is close to linear. Names are unique (the
    // server breaks a tie all the same), so an unstable sort orders them
    // as a stable one would, without a scratch copy of the catalog.
    tools.sort_unstable_by(|a, b| {
        a.name()
            .cmp(b.name())
            .then_with(|| a.origin().server.cmp(&b.origin().server))
    });
    diagnostics.sort();
    let mut catalog = Catalog {
        tools,
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
        instructions,
    };
    if let Some(budget) = &options.budget {
        catalog.apply_budget(budget);
    }
    catalog
}

/// Where one server's build gets its prepared schemas from.
struct Schemas<'c> {
    cached: &'c mut CachedListing,
    inputs: &'c mut Inputs,
    outputs: &'c mut Outputs,
    options: &'c MaterializeOptions,
}

impl Schemas<'_> {
    /// `original` prepared for the profile, and its tool's output schema
    /// vetted: from the listing's cache, else from the interning tables.
    fn prepare(&mut self, original: &SharedSchema) -> Result<PreparedSchema, Refused> {
        let index = match original {
            SharedSchema::Listed { index, .. } => Some(*index),
            SharedSchema::Own(_) => None,
        };
        if let Some(done) = index.and_then(|index| self.cached.prepared.get(index)?.as_ref()) {
            return done.clone();
        }
        let limits = &self.options.schema_limits;
        let (prepared, hash) = self.inputs.prepare(original, self.options.profile, limits);
        let prepared = prepared.map_err(Refused::Input).and_then(|prepared| {
            if let SharedSchema::Listed { tools, index } = original
                && let Some(output) = tools.get(*index).and_then(|t| t.output_schema.as_ref())
            {
                self.outputs
                    .check(output, limits)
                    .map_err(Refused::Output)?;
            }
            Ok(prepared)
        });
        self.cached.hashes.push(hash);
        if let Some(slot) = index.and_then(|index| self.cached.prepared.get_mut(index)) {
            *slot = Some(prepared.clone());
        }
        prepared
    }
}

/// One server's tools, named, described and with their schemas prepared,
/// with what happened to them.
fn build_server(
    listing: &ServerTools,
    key: ServerKey,
    options: &MaterializeOptions,
    allocator: &mut NameAllocator,
    schemas: &mut Schemas<'_>,
) -> ServerBuild {
    let server = listing.server.as_str();
    let mut diagnostics = Vec::new();
    let (mut pending, hidden) = pending_tools(listing, options, &mut diagnostics);
    let cut = pending.iter().filter(|item| item.cut).count();
    pending.sort_by(|a, b| a.raw_name.cmp(b.raw_name));
    let mut tools = Vec::with_capacity(pending.len());
    let mut collided = false;
    for item in pending {
        let prepared = match schemas.prepare(&item.original) {
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
        let (name, adjustment) = allocator.shared_tool_name(&key.prefix, server, item.raw_name);
        if let Some(adjustment) = adjustment {
            collided |= !matches!(adjustment, NameAdjustment::Shortened);
            diagnostics.push(adjustment_diagnostic(
                server,
                item.raw_name,
                &name,
                adjustment,
            ));
        }
        tools.push(CatalogTool::new(ToolParts {
            name,
            description: item.description.into(),
            input_schema: prepared.input,
            profile: options.profile,
            origin: Arc::new(ToolOrigin {
                server: server.to_owned(),
                target: item.target,
            }),
            original_schema: item.original,
            normalized_schema: prepared.normalized,
            #[cfg(feature = "validation")]
            validator: OnceLock::new(),
            #[cfg(feature = "validation")]
            output_validator: OnceLock::new(),
        }));
    }
    ServerBuild {
        key,
        tools,
        diagnostics,
        hidden,
        cut,
        collided,
    }
}

/// The tools of one server that pass its filter, deduplicated, plus its
/// utility tools.
fn pending_tools<'a>(
    listing: &'a ServerTools,
    options: &MaterializeOptions,
    diagnostics: &mut Vec<CatalogDiagnostic>,
) -> (Vec<Pending<'a>>, usize) {
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
                description: utility.description(server).into(),
                cut: false,
                original: SharedSchema::Own(Arc::new(utility.input_schema(options.profile))),
                target: ToolTarget::Utility { utility },
            });
        }
    }
    if hidden > 0 {
        diagnostics.push(CatalogDiagnostic::server(
            Level::Info,
            server,
            format!("toolFilter hid {hidden} tool(s)"),
        ));
    }
    (pending, hidden)
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
            instructions: None,
        }
    }

    /// A listing of `server` with one tool per number, each with a
    /// schema of its own.
    fn numbered(server: &str, numbers: std::ops::Range<usize>) -> ServerTools {
        ServerTools {
            server: server.into(),
            tools: numbers
                .map(|n| Tool {
                    name: format!("t{n}"),
                    title: None,
                    description: None,
                    input_schema: json!({"type": "object", "properties": {"n": {"const": n}}}),
                    output_schema: None,
                    annotations: None,
                    execution: None,
                })
                .collect::<Vec<_>>()
                .into(),
            filter: ToolFilter::default(),
            features: ServerFeatures::default(),
            description_limit: None,
            instructions: None,
        }
    }

    fn interned(cache: &SchemaCache, schema: &Value) -> bool {
        cache
            .inputs
            .by_hash
            .get(&intern::content_hash(schema))
            .is_some_and(|bucket| !bucket.entries.is_empty())
    }

    #[test]
    fn schemas_no_listing_holds_are_kept_a_while_then_dropped_oldest_first() {
        let options = MaterializeOptions::default();
        let mut cache = SchemaCache::default();
        let steady = numbered("steady", 0..100);
        let held = 100 + 10;
        for round in 1..=200 {
            let start = 1000 * round;
            let catalog = materialize_cached(
                &[steady.clone(), numbered("changing", start..start + 10)],
                &options,
                &mut cache,
            );
            assert_eq!(catalog.tools.len(), 110);
            let Inputs {
                by_hash,
                unheld,
                unheld_buckets,
            } = &cache.inputs;
            let unheld_now = by_hash.values().filter(|b| b.holders == 0).count();
            assert_eq!(*unheld_buckets, unheld_now, "round {round}");
            assert!(
                by_hash.len() <= 2 * held + 64,
                "round {round}: {}",
                by_hash.len()
            );
            assert!(unheld.len() <= 2 * unheld_now + 64 + 10, "round {round}");
        }
        let kept = |round: usize| {
            interned(
                &cache,
                &json!({"type": "object", "properties": {"n": {"const": 1000 * round}}}),
            )
        };
        // The previous rounds' schemas wait for a server that changes back;
        // the first rounds' are gone; the steady server's stay.
        assert!(kept(199) && kept(195));
        assert!(!kept(1) && !kept(100));
        assert!(interned(&cache, &steady.tools[0].input_schema));
        // A server that leaves lets go of its schemas too.
        materialize_cached(&[numbered("changing", 5..15)], &options, &mut cache);
        for _ in 0..20 {
            materialize_cached(&[numbered("changing", 5..15)], &options, &mut cache);
        }
        assert!(interned(
            &cache,
            &numbered("changing", 5..6).tools[0].input_schema
        ));
        assert!(cache.inputs.by_hash.len() <= 2 * 10 + 64);
        // Let go of last, so dropped last.
        assert!(!interned(&cache, &steady.tools[0].input_schema));
        assert!(interned(&cache, &steady.tools[99].input_schema));
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
