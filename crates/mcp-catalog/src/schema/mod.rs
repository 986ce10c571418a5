//! Input schema normalisation (REFERENCE §3.4) and provider profiles.
//!
//! [`normalize`] turns whatever a server sent into a plain draft 2020-12
//! schema that validators and models read the same way. A
//! [`ProviderProfile`] then rewrites it into the subset one provider
//! accepts. A rewrite that would change what arguments mean is refused with
//! a [`CatalogError`] of kind `Schema`: the tool is left out and reported rather than sent
//! broken. Rewrites that only relax a constraint are allowed, because
//! arguments are still validated against the server's own schema before a
//! call.
//!
//! JSON Schema 2020-12 (SEP-2106) as the specification asks of a
//! client: the `generic` profile passes the server's keywords through
//! (`$schema`, `$defs`, `$anchor`, `allOf`/`anyOf`, `if`/`then`/`else`, …);
//! a `$ref` resolves inside the schema only (a pointer, an anchor, or
//! either written after the root's own `$id`), and one that does not
//! (another document, a network or file URI) refuses the tool instead of
//! being fetched or read as permissive; the validator itself never
//! fetches (`compile`); and what composition keywords apply to one
//! value through references is bounded ([`check_composition`]). A tool's
//! `outputSchema` is vetted the same way ([`check_output_schema`]).
//!
//! One file per step: `limits` caps what is read at all,
//! `normalize` and `check` make and vet the normal form, `anthropic`,
//! `openai` and `gemini` rewrite it per provider (`subset` holds the
//! refusals the last two share), and `args` undoes on a call what the
//! strict rewrite made the model send. This file holds the vocabulary they
//! share (keywords, pointers, errors) and the entry points.

mod anthropic;
mod args;
mod check;
mod gemini;
mod limits;
mod normalize;
mod openai;
mod subset;

use std::borrow::Cow;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::error::CatalogError;

#[cfg(not(feature = "validation"))]
pub(crate) use self::args::cheap_violation;
pub use self::args::{UnknownArguments, strip_optional_nulls, unknown_arguments};
pub use self::check::{check_composition, check_output_schema, check_ref_cycles};
pub use self::gemini::GEMINI_KEYWORDS;
pub use self::limits::{MAX_DEPTH, MAX_JSON_DEPTH, SchemaLimits, check_limits};
pub use self::normalize::normalize;
use self::normalize::normalize_tracking_moves;
pub use self::openai::OPENAI_KEYWORDS;

use self::anthropic::flatten_top_level;
use self::check::{check, check_generic_top, contains_ref, has_non_pointer_ref, pointer_refs};
use self::gemini::{gemini, inline_refs};
use self::limits::Budget;
use self::normalize::is_normal;
use self::openai::{definitions, openai_limits, openai_strict};

/// The schema dialect a provider accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum ProviderProfile {
    /// The normalised schema, for providers and validators that take JSON
    /// Schema as is.
    #[default]
    Generic,
    /// Anthropic: the top level is one object schema, no top-level
    /// `anyOf`/`oneOf`/`allOf`.
    Anthropic,
    /// OpenAI function calling with `strict: true`: every object closed
    /// with `additionalProperties: false`, every property required (optional
    /// ones become nullable), only the supported keywords.
    OpenAiStrict,
    /// Gemini function declarations: an OpenAPI 3.0 subset without `$ref`.
    Gemini,
}

impl ProviderProfile {
    /// Every profile, in a fixed order.
    pub const ALL: [ProviderProfile; 4] = [
        ProviderProfile::Generic,
        ProviderProfile::Anthropic,
        ProviderProfile::OpenAiStrict,
        ProviderProfile::Gemini,
    ];

    /// Parses `generic`, `anthropic`, `openai-strict` or `gemini`.
    pub fn parse(text: &str) -> Option<ProviderProfile> {
        match text {
            "generic" => Some(ProviderProfile::Generic),
            "anthropic" => Some(ProviderProfile::Anthropic),
            "openai-strict" => Some(ProviderProfile::OpenAiStrict),
            "gemini" => Some(ProviderProfile::Gemini),
            _ => None,
        }
    }

    /// The name [`ProviderProfile::parse`] reads.
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderProfile::Generic => "generic",
            ProviderProfile::Anthropic => "anthropic",
            ProviderProfile::OpenAiStrict => "openai-strict",
            ProviderProfile::Gemini => "gemini",
        }
    }
}

/// The names a schema's `required` lists (strings only, in order).
fn required_names(schema: &Value) -> Vec<String> {
    schema
        .as_object()
        .map(required_names_in)
        .unwrap_or_default()
}

/// [`required_names`] of a schema object.
fn required_names_in(map: &Map<String, Value>) -> Vec<String> {
    map.get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

fn schema_error(path: &str, reason: impl Into<String>) -> CatalogError {
    let path = if path.is_empty() { "/" } else { path };
    CatalogError::schema(path, reason)
}

/// Where a keyword keeps its subschemas.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Keyword {
    /// name → subschema
    Map,
    /// one subschema (or, for `items`, a draft 4-7 tuple)
    Single,
    /// a list of subschemas
    List,
}

/// Where `key` keeps subschemas, if it is an applicator keyword. A
/// `match` rather than a list scan: it runs on every key of every schema
/// object, several times per build.
fn keyword(key: &str) -> Option<Keyword> {
    match key {
        "$defs" | "definitions" | "properties" | "patternProperties" | "dependentSchemas" => {
            Some(Keyword::Map)
        }
        "items"
        | "additionalItems"
        | "additionalProperties"
        | "contains"
        | "if"
        | "then"
        | "else"
        | "not"
        | "propertyNames"
        | "unevaluatedItems"
        | "unevaluatedProperties" => Some(Keyword::Single),
        "prefixItems" | "allOf" | "anyOf" | "oneOf" => Some(Keyword::List),
        _ => None,
    }
}

/// Calls `f` on every direct subschema of a schema object.
fn for_each_subschema(map: &mut Map<String, Value>, mut f: impl FnMut(&mut Value)) {
    for (key, value) in map.iter_mut() {
        match (keyword(key), value) {
            (Some(Keyword::Map), Value::Object(children)) => children.values_mut().for_each(&mut f),
            (Some(Keyword::Single), Value::Array(items)) => items.iter_mut().for_each(&mut f),
            (Some(Keyword::Single), child) => f(child),
            (Some(Keyword::List), Value::Array(children)) => children.iter_mut().for_each(&mut f),
            _ => {}
        }
    }
}

/// A JSON pointer built only when an error needs it.
#[derive(Clone, Copy)]
struct Path<'a> {
    parent: Option<&'a Path<'a>>,
    segment: Segment<'a>,
}

#[derive(Clone, Copy)]
enum Segment<'a> {
    Root,
    Key(&'a str),
    Index(usize),
}

impl<'a> Path<'a> {
    const ROOT: Path<'static> = Path {
        parent: None,
        segment: Segment::Root,
    };

    fn key(&'a self, key: &'a str) -> Path<'a> {
        Path {
            parent: Some(self),
            segment: Segment::Key(key),
        }
    }

    fn index(&'a self, index: usize) -> Path<'a> {
        Path {
            parent: Some(self),
            segment: Segment::Index(index),
        }
    }

    fn render(&self) -> String {
        let mut segments = Vec::new();
        let mut node = Some(self);
        while let Some(current) = node {
            segments.push(current.segment);
            node = current.parent;
        }
        let mut out = String::new();
        push_segments(&mut out, segments.into_iter().rev());
        out
    }
}

/// Appends `segments`, root first, to the JSON pointer `out`.
fn push_segments<'a>(out: &mut String, segments: impl Iterator<Item = Segment<'a>>) {
    for segment in segments {
        match segment {
            Segment::Root => {}
            Segment::Key(key) => {
                out.push('/');
                out.push_str(&escape_pointer(key));
            }
            Segment::Index(index) => {
                out.push('/');
                out.push_str(&index.to_string());
            }
        }
    }
}

/// Rewrites a normalised schema for `profile`, within the default
/// [`SchemaLimits`].
pub fn for_profile(normalized: &Value, profile: ProviderProfile) -> Result<Value, CatalogError> {
    let limits = SchemaLimits::default();
    check_limits(normalized, &limits)?;
    for_profile_owned(normalized.clone(), profile, &limits)
}

fn for_profile_owned(
    normalized: Value,
    profile: ProviderProfile,
    limits: &SchemaLimits,
) -> Result<Value, CatalogError> {
    let mut normalized = normalized;
    check(&normalized, limits)?;
    if profile != ProviderProfile::Generic {
        // The rewrites follow pointers only; the generic profile keeps
        // the server's references as written.
        pointer_refs(&mut normalized);
    }
    match profile {
        ProviderProfile::Generic => {
            check_generic_top(&normalized)?;
            Ok(normalized)
        }
        ProviderProfile::Anthropic => flatten_top_level(normalized),
        ProviderProfile::OpenAiStrict => {
            let mut flat = flatten_top_level(normalized)?;
            let defs = definitions(&flat);
            let mut budget = Budget::new(limits.max_nodes);
            openai_strict(&mut flat, &defs, &Path::ROOT, 0, &mut budget)?;
            openai_limits(&flat)?;
            Ok(flat)
        }
        ProviderProfile::Gemini => {
            let flat = flatten_top_level(normalized)?;
            let mut inlined = if contains_ref(&flat, 0) {
                let mut budget = Budget::new(limits.max_nodes);
                inline_refs(&flat, &flat, &Path::ROOT, &mut Vec::new(), 0, &mut budget)?
            } else {
                flat
            };
            gemini(&mut inlined, &Path::ROOT, 0)?;
            Ok(inlined)
        }
    }
}

/// Normalises `schema` and rewrites it for `profile`.
pub fn prepare(schema: &Value, profile: ProviderProfile) -> Result<Value, CatalogError> {
    prepare_shared(schema, profile).map(Cow::into_owned)
}

/// [`prepare`], borrowing `schema` when it already is the result: a
/// schema that is already normal needs no copy for the `generic` profile.
/// Whether it is normal is found by a read-only pass, far cheaper than
/// the deep copy it saves.
pub fn prepare_shared(
    schema: &Value,
    profile: ProviderProfile,
) -> Result<Cow<'_, Value>, CatalogError> {
    prepare_shared_with(schema, profile, &SchemaLimits::default())
}

/// [`prepare_shared`] within `limits`. The limits are checked first,
/// without recursion, on the schema as sent and on its normal form; the
/// reference cycle check runs on both as well.
pub fn prepare_shared_with<'s>(
    schema: &'s Value,
    profile: ProviderProfile,
    limits: &SchemaLimits,
) -> Result<Cow<'s, Value>, CatalogError> {
    prepare_inner(schema, profile, limits, false).map(|prepared| prepared.schema)
}

/// A schema prepared for a profile, with what a call through it needs.
#[derive(Debug)]
pub(crate) struct Prepared<'s> {
    /// What the model sees, as [`prepare_shared_with`] returns it.
    pub(crate) schema: Cow<'s, Value>,
    /// The normal form of the schema as sent, for `openai-strict` only:
    /// every call strips optional `null`s along it, and making it once
    /// here saves normalising the schema again on each call. Borrowed when
    /// the schema already is normal.
    pub(crate) normalized: Option<Cow<'s, Value>>,
}

/// [`prepare_shared_with`], keeping the normal form for the profiles
/// whose calls need it.
pub(crate) fn prepare_for_calls<'s>(
    schema: &'s Value,
    profile: ProviderProfile,
    limits: &SchemaLimits,
) -> Result<Prepared<'s>, CatalogError> {
    prepare_inner(
        schema,
        profile,
        limits,
        profile == ProviderProfile::OpenAiStrict,
    )
}

fn prepare_inner<'s>(
    schema: &'s Value,
    profile: ProviderProfile,
    limits: &SchemaLimits,
    keep_normal: bool,
) -> Result<Prepared<'s>, CatalogError> {
    check_limits(schema, limits)?;
    // Within the limits `normalize` reads the whole schema, so a schema it
    // would leave unchanged can stand for its own normal form.
    let already_normal = (profile == ProviderProfile::Generic || keep_normal) && is_normal(schema);
    // Calls are validated against the schema as sent: its references must
    // not loop or fan out either. The checks of the normal form answer
    // that too unless normalising moved a subschema (see
    // `normalize_tracking_moves`).
    let check_as_sent;
    let prepared = if profile == ProviderProfile::Generic && already_normal {
        check(schema, limits)?;
        check_generic_top(schema)?;
        check_as_sent = false;
        Prepared {
            schema: Cow::Borrowed(schema),
            normalized: keep_normal.then_some(Cow::Borrowed(schema)),
        }
    } else {
        // Normalising may add levels (a type list becomes `anyOf`).
        let (normalized, moved) = normalize_tracking_moves(schema);
        check_as_sent = moved;
        check_limits(&normalized, limits)?;
        let kept = match (keep_normal, already_normal) {
            (false, _) => None,
            (true, true) => Some(Cow::Borrowed(schema)),
            (true, false) => Some(Cow::Owned(normalized.clone())),
        };
        // Calls follow the kept form by pointer, like the rewrites.
        let kept = kept.map(|kept| {
            if has_non_pointer_ref(&kept) {
                let mut owned = kept.into_owned();
                pointer_refs(&mut owned);
                Cow::Owned(owned)
            } else {
                kept
            }
        });
        Prepared {
            schema: Cow::Owned(for_profile_owned(normalized, profile, limits)?),
            normalized: kept,
        }
    };
    if check_as_sent {
        check_composition(schema, limits)?;
    }
    Ok(prepared)
}

/// Resolves a same-document `$ref` that is a JSON pointer (`#`,
/// `#/$defs/…`, `#/definitions/…`, or the same written after the root's
/// own `$id`). The pointer is percent-decoded first, as a URI fragment
/// must be. Anything else (an anchor, another document, a url) is
/// `None` here; anchors are resolved by the checks, and the provider
/// rewrites see references already turned into pointers
/// ([`check::pointer_refs`]).
fn resolve_local<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let fragment = same_document_fragment(root, reference)?;
    if fragment.is_empty() {
        return Some(root);
    }
    if !fragment.starts_with('/') {
        return None;
    }
    root.pointer(&percent_decode(fragment)?)
}

/// The fragment of a reference into this document, without its `#`: a
/// reference that starts with `#`, or one that names the root's absolute
/// `$id` (with or without a fragment). `None` for every other document,
/// which is never fetched (SEP-2106).
fn same_document_fragment<'r>(root: &Value, reference: &'r str) -> Option<&'r str> {
    if let Some(fragment) = reference.strip_prefix('#') {
        return Some(fragment);
    }
    let id = root.get("$id").and_then(Value::as_str)?;
    let base = id.split('#').next().unwrap_or(id);
    if base.is_empty() || !base.contains(':') {
        // Only an absolute `$id` names this document unambiguously.
        return None;
    }
    let rest = reference.strip_prefix(base)?;
    if rest.is_empty() {
        Some("")
    } else {
        rest.strip_prefix('#')
    }
}

/// A URI fragment with its `%XX` escapes decoded; `None` when an escape is
/// malformed or the bytes are not UTF-8.
fn percent_decode(fragment: &str) -> Option<Cow<'_, str>> {
    if !fragment.contains('%') {
        return Some(Cow::Borrowed(fragment));
    }
    let bytes = fragment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = fragment.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok().map(Cow::Owned)
}

/// A retriever that fetches nothing. The validator asks it for every
/// reference outside the schema and for an unknown `$schema` dialect;
/// refusing here keeps a network or file URI from ever being read
/// (SEP-2106), whatever features of `jsonschema` another crate of the
/// build turns on.
#[cfg(feature = "validation")]
struct NoFetch;

#[cfg(feature = "validation")]
impl jsonschema::Retrieve for NoFetch {
    fn retrieve(
        &self,
        uri: &jsonschema::Uri<String>,
    ) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        Err(format!(
            "{} is outside the schema and is never fetched",
            uri.as_str()
        )
        .into())
    }
}

/// Compiles `schema` into a validator that resolves references inside the
/// schema only (see [`NoFetch`]). Validation stops at the first error.
#[cfg(feature = "validation")]
pub(crate) fn compile(schema: &Value) -> Result<jsonschema::Validator, String> {
    jsonschema::options()
        .with_retriever(NoFetch)
        .build(schema)
        .map_err(|error| error.to_string())
}

fn escape_pointer(segment: &str) -> std::borrow::Cow<'_, str> {
    if segment.contains(['~', '/']) {
        segment.replace('~', "~0").replace('/', "~1").into()
    } else {
        segment.into()
    }
}
