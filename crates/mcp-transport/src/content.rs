//! The content blocks of a tool result, typed where their shape is fixed.
//!
//! `tools/call` answers with blocks of five kinds (every revision from
//! 2024-11-05 to 2026-07-28 has the same): `text`, `image`, `audio`,
//! `resource_link` and `resource`. The first three have a fixed shape and
//! are nearly every block a tool returns, so they are read into
//! [`TextContent`] and [`MediaContent`].
//! Every other block stays JSON exactly as the server sent it
//! ([`ContentBlock::Other`]): resource blocks (whose members are open:
//! icons, sizes, nested contents), kinds a later revision may add, and a
//! text, image or audio block that lacks a member of its kind, has one of
//! the wrong type, or carries one its kind does not name. So reading a
//! block never rejects it and never loses a member: [`ContentBlock::to_value`]
//! gives back the JSON that was read (a typed block writes `type` first).
//!
//! Reading from text ([`Deserialize`]) and from a [`Value`]
//! ([`From<Value>`]) sort a block the same way.

use std::fmt;

use serde::de::value::SeqAccessDeserializer;
use serde::de::{self, IntoDeserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// One content block of a tool result.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ContentBlock {
    /// A `text` block.
    Text(TextContent),
    /// An `image` block.
    Image(MediaContent),
    /// An `audio` block.
    Audio(MediaContent),
    /// Any other block, as sent: `resource_link`, `resource`, a kind this
    /// client does not know, or a `text`, `image` or `audio` block that is
    /// not of its kind's shape (see the module docs).
    Other(Value),
}

/// A `text` block: `{"type": "text", "text": …}`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TextContent {
    /// The text.
    pub text: String,
    /// The block's `annotations` (`audience`, `priority`, `lastModified`).
    pub annotations: Option<Map<String, Value>>,
    /// The block's `_meta`.
    pub meta: Option<Map<String, Value>>,
}

/// An `image` or `audio` block: `{"type": …, "data": …, "mimeType": …}`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MediaContent {
    /// The bytes, base64-encoded as the server sent them.
    pub data: String,
    /// Their media type (`image/png`, `audio/wav`, …).
    pub mime_type: String,
    /// The block's `annotations`.
    pub annotations: Option<Map<String, Value>>,
    /// The block's `_meta`.
    pub meta: Option<Map<String, Value>>,
}

impl ContentBlock {
    /// A text block saying `text`.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text(TextContent {
            text: text.into(),
            ..TextContent::default()
        })
    }

    /// The block's `type`, when it has one that is a string.
    pub fn kind(&self) -> Option<&str> {
        match self {
            ContentBlock::Text(_) => Some(Kind::Text.name()),
            ContentBlock::Image(_) => Some(Kind::Image.name()),
            ContentBlock::Audio(_) => Some(Kind::Audio.name()),
            ContentBlock::Other(value) => value.get("type").and_then(Value::as_str),
        }
    }

    /// The text of a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentBlock::Text(text) => Some(&text.text),
            _ => None,
        }
    }

    /// The block as JSON.
    pub fn to_value(&self) -> Value {
        match self {
            ContentBlock::Other(value) => value.clone(),
            typed => typed.clone().into_value(),
        }
    }

    /// The block as JSON, moving its strings.
    pub fn into_value(self) -> Value {
        let (kind, members, annotations, meta) = match self {
            ContentBlock::Other(value) => return value,
            ContentBlock::Text(text) => (
                Kind::Text,
                vec![(Member::Text.name(), text.text)],
                text.annotations,
                text.meta,
            ),
            ContentBlock::Image(media) => media.into_parts(Kind::Image),
            ContentBlock::Audio(media) => media.into_parts(Kind::Audio),
        };
        let mut map = Map::new();
        map.insert(
            Member::Type.name().into(),
            Value::String(kind.name().into()),
        );
        for (name, text) in members {
            map.insert(name.into(), Value::String(text));
        }
        if let Some(annotations) = annotations {
            map.insert(
                Member::Annotations.name().into(),
                Value::Object(annotations),
            );
        }
        if let Some(meta) = meta {
            map.insert(Member::Meta.name().into(), Value::Object(meta));
        }
        Value::Object(map)
    }
}

/// A typed block's members, as [`ContentBlock::into_value`] writes them
/// (in the order and with the names the [`Serialize`] impl writes).
type Parts = (
    Kind,
    Vec<(&'static str, String)>,
    Option<Map<String, Value>>,
    Option<Map<String, Value>>,
);

impl MediaContent {
    fn into_parts(self, kind: Kind) -> Parts {
        (
            kind,
            vec![
                (Member::Data.name(), self.data),
                (Member::MimeType.name(), self.mime_type),
            ],
            self.annotations,
            self.meta,
        )
    }
}

impl From<Value> for ContentBlock {
    /// Sorts a block as reading it from text does; never recurses.
    fn from(value: Value) -> Self {
        let Value::Object(mut map) = value else {
            return ContentBlock::Other(value);
        };
        let kind = map
            .get("type")
            .and_then(Value::as_str)
            .and_then(Kind::named);
        match kind {
            Some(kind) if fits(kind, map.iter().map(|(name, v)| (Member::named(name), v))) => {
                typed(kind, |member| map.remove(member.name()))
            }
            _ => ContentBlock::Other(Value::Object(map)),
        }
    }
}

impl From<ContentBlock> for Value {
    fn from(block: ContentBlock) -> Self {
        block.into_value()
    }
}

impl From<TextContent> for ContentBlock {
    fn from(text: TextContent) -> Self {
        ContentBlock::Text(text)
    }
}

impl Serialize for ContentBlock {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ContentBlock::Other(value) => value.serialize(serializer),
            ContentBlock::Text(text) => write_typed(
                serializer,
                Kind::Text,
                &[(Member::Text.name(), &text.text)],
                &text.annotations,
                &text.meta,
            ),
            ContentBlock::Image(media) => write_media(serializer, Kind::Image, media),
            ContentBlock::Audio(media) => write_media(serializer, Kind::Audio, media),
        }
    }
}

fn write_media<S: Serializer>(
    serializer: S,
    kind: Kind,
    media: &MediaContent,
) -> Result<S::Ok, S::Error> {
    write_typed(
        serializer,
        kind,
        &[
            (Member::Data.name(), &media.data),
            (Member::MimeType.name(), &media.mime_type),
        ],
        &media.annotations,
        &media.meta,
    )
}

fn write_typed<S: Serializer>(
    serializer: S,
    kind: Kind,
    members: &[(&str, &String)],
    annotations: &Option<Map<String, Value>>,
    meta: &Option<Map<String, Value>>,
) -> Result<S::Ok, S::Error> {
    let len = 1 + members.len() + usize::from(annotations.is_some()) + usize::from(meta.is_some());
    let mut map = serializer.serialize_map(Some(len))?;
    map.serialize_entry(Member::Type.name(), kind.name())?;
    for (name, text) in members {
        map.serialize_entry(name, text)?;
    }
    if let Some(annotations) = annotations {
        map.serialize_entry(Member::Annotations.name(), annotations)?;
    }
    if let Some(meta) = meta {
        map.serialize_entry(Member::Meta.name(), meta)?;
    }
    map.end()
}

impl<'de> Deserialize<'de> for ContentBlock {
    /// One pass, sorting as [`From<Value>`] does: an object's members are
    /// read by name into a short list, so a typed block costs its strings
    /// and no map; any other block becomes the `Value` the same input reads
    /// as.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(BlockVisitor)
    }
}

/// Reads one block; every input but an object is handed to `Value`'s own
/// reading, so it is kept exactly as a `Value` would hold it.
struct BlockVisitor;

impl<'de> Visitor<'de> for BlockVisitor {
    type Value = ContentBlock;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a content block")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<ContentBlock, E> {
        Ok(kept(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<ContentBlock, E> {
        Ok(kept(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<ContentBlock, E> {
        Ok(kept(v))
    }

    // A non-finite number is `null`, as `Value` reads it.
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<ContentBlock, E> {
        Ok(kept(v))
    }

    // Only some formats give 128-bit integers; `Value` reads them its way.
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<ContentBlock, E> {
        Value::deserialize(v.into_deserializer()).map(ContentBlock::Other)
    }

    fn visit_u128<E: de::Error>(self, v: u128) -> Result<ContentBlock, E> {
        Value::deserialize(v.into_deserializer()).map(ContentBlock::Other)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<ContentBlock, E> {
        Ok(kept(v))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<ContentBlock, E> {
        Ok(kept(v))
    }

    fn visit_unit<E: de::Error>(self) -> Result<ContentBlock, E> {
        Ok(kept(Value::Null))
    }

    fn visit_none<E: de::Error>(self) -> Result<ContentBlock, E> {
        Ok(kept(Value::Null))
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<ContentBlock, D::Error> {
        ContentBlock::deserialize(deserializer)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<ContentBlock, A::Error> {
        Value::deserialize(SeqAccessDeserializer::new(seq)).map(ContentBlock::Other)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ContentBlock, A::Error> {
        let mut members: Vec<(Name, Value)> =
            Vec::with_capacity(map.size_hint().unwrap_or(4).min(8));
        // Each member a typed block may have, once: a name given twice
        // leaves the block to the map, which keeps the last value as
        // `Value` does.
        let mut seen = 0u8;
        let mut repeated = false;
        while let Some(name) = map.next_key::<Name>()? {
            if let Name::Member(member) = name {
                let bit = 1u8 << member as u8;
                repeated |= seen & bit != 0;
                seen |= bit;
            }
            members.push((name, map.next_value()?));
        }
        let kind = members
            .iter()
            .find_map(|(name, value)| match (name, value) {
                (Name::Member(Member::Type), Value::String(kind)) => Kind::named(kind),
                _ => None,
            });
        match kind {
            Some(kind)
                if !repeated && fits(kind, members.iter().map(|(name, v)| (name.member(), v))) =>
            {
                Ok(typed(kind, |wanted| {
                    let at = members
                        .iter()
                        .position(|(name, _)| name.member() == Some(wanted))?;
                    Some(members.swap_remove(at).1)
                }))
            }
            _ => {
                let mut object = Map::new();
                for (name, value) in members {
                    object.insert(name.into_string(), value);
                }
                // A member given twice is sorted on the map, holding the
                // last value, as reading a `Value` first would.
                Ok(ContentBlock::from(unwrap_number(object)))
            }
        }
    }
}

/// A block that is not an object, kept as the `Value` it reads as.
fn kept(value: impl Into<Value>) -> ContentBlock {
    ContentBlock::Other(value.into())
}

/// An object that is serde_json's private map for a number read with
/// `arbitrary_precision`, as the number `Value` reads it back into; any
/// other object unchanged.
fn unwrap_number(object: Map<String, Value>) -> Value {
    const NUMBER_TOKEN: &str = "$serde_json::private::Number";
    if object.len() == 1
        && let Some(Value::String(digits)) = object.get(NUMBER_TOKEN)
        && let Ok(number) = serde_json::from_str::<Value>(digits)
    {
        return number;
    }
    Value::Object(object)
}

/// A member's name: one a typed block may have, read without allocating,
/// or any other.
enum Name {
    Member(Member),
    Other(String),
}

impl Name {
    fn member(&self) -> Option<Member> {
        match self {
            Name::Member(member) => Some(*member),
            Name::Other(_) => None,
        }
    }

    fn into_string(self) -> String {
        match self {
            Name::Member(member) => member.name().to_owned(),
            Name::Other(name) => name,
        }
    }
}

impl<'de> Deserialize<'de> for Name {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct NameVisitor;
        impl Visitor<'_> for NameVisitor {
            type Value = Name;

            fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
                formatter.write_str("a member name")
            }

            fn visit_str<E: de::Error>(self, name: &str) -> Result<Name, E> {
                Ok(Member::named(name).map_or_else(|| Name::Other(name.to_owned()), Name::Member))
            }

            fn visit_string<E: de::Error>(self, name: String) -> Result<Name, E> {
                Ok(Member::named(&name).map_or(Name::Other(name), Name::Member))
            }
        }
        deserializer.deserialize_str(NameVisitor)
    }
}

/// The kinds read into a typed block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Image,
    Audio,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Text => "text",
            Kind::Image => "image",
            Kind::Audio => "audio",
        }
    }

    fn named(name: &str) -> Option<Kind> {
        match name {
            "text" => Some(Kind::Text),
            "image" => Some(Kind::Image),
            "audio" => Some(Kind::Audio),
            _ => None,
        }
    }

    /// The members a block of this kind must have.
    fn required(self) -> &'static [Member] {
        match self {
            Kind::Text => &[Member::Text],
            Kind::Image | Kind::Audio => &[Member::Data, Member::MimeType],
        }
    }
}

/// The members a typed block may have; the value is its slot's index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Member {
    Type,
    Text,
    Data,
    MimeType,
    Annotations,
    Meta,
}

impl Member {
    fn name(self) -> &'static str {
        match self {
            Member::Type => "type",
            Member::Text => "text",
            Member::Data => "data",
            Member::MimeType => "mimeType",
            Member::Annotations => "annotations",
            Member::Meta => "_meta",
        }
    }

    fn named(name: &str) -> Option<Member> {
        match name {
            "type" => Some(Member::Type),
            "text" => Some(Member::Text),
            "data" => Some(Member::Data),
            "mimeType" => Some(Member::MimeType),
            "annotations" => Some(Member::Annotations),
            "_meta" => Some(Member::Meta),
            _ => None,
        }
    }

    /// Whether a block of `kind` may carry this member holding `value`
    /// (its `type` was read as `kind` already).
    fn fits(self, kind: Kind, value: &Value) -> bool {
        match self {
            Member::Type => true,
            Member::Text => kind == Kind::Text && value.is_string(),
            Member::Data | Member::MimeType => kind != Kind::Text && value.is_string(),
            Member::Annotations | Member::Meta => value.is_object(),
        }
    }
}

/// Whether a block whose `type` is `kind` and whose other members are
/// `members` (`None`: a name no typed block has) is of its kind's shape.
fn fits<'a>(kind: Kind, members: impl Iterator<Item = (Option<Member>, &'a Value)>) -> bool {
    let mut present = 0usize;
    for (member, value) in members {
        match member {
            Some(member) if member.fits(kind, value) => {
                if kind.required().contains(&member) {
                    present += 1;
                }
            }
            _ => return false,
        }
    }
    present == kind.required().len()
}

/// The typed block of `kind` made of the members `take` gives up (they
/// [`fits`] the kind).
fn typed(kind: Kind, mut take: impl FnMut(Member) -> Option<Value>) -> ContentBlock {
    let string = |value: Option<Value>| match value {
        Some(Value::String(text)) => text,
        _ => String::new(),
    };
    let object = |value: Option<Value>| match value {
        Some(Value::Object(map)) => Some(map),
        _ => None,
    };
    let annotations = object(take(Member::Annotations));
    let meta = object(take(Member::Meta));
    match kind {
        Kind::Text => ContentBlock::Text(TextContent {
            text: string(take(Member::Text)),
            annotations,
            meta,
        }),
        Kind::Image | Kind::Audio => {
            let media = MediaContent {
                data: string(take(Member::Data)),
                mime_type: string(take(Member::MimeType)),
                annotations,
                meta,
            };
            if kind == Kind::Image {
                ContentBlock::Image(media)
            } else {
                ContentBlock::Audio(media)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    /// What a block is read as.
    #[derive(Debug, PartialEq)]
    enum Sorted {
        Text,
        Image,
        Audio,
        Other,
    }

    /// Reads `text` as a block from text and from its value, and checks
    /// both read the same, into `expect`, and write back the same JSON.
    fn check(text: &str, expect: Sorted) {
        let from_text: ContentBlock = serde_json::from_str(text).expect(text);
        let value: Value = serde_json::from_str(text).unwrap();
        assert_eq!(ContentBlock::from(value.clone()), from_text, "{text}");
        let sorted = match &from_text {
            ContentBlock::Text(_) => Sorted::Text,
            ContentBlock::Image(_) => Sorted::Image,
            ContentBlock::Audio(_) => Sorted::Audio,
            ContentBlock::Other(_) => Sorted::Other,
        };
        assert_eq!(sorted, expect, "{text}");
        assert_eq!(from_text.to_value(), value, "{text}");
        assert_eq!(serde_json::to_value(&from_text).unwrap(), value, "{text}");
        assert_eq!(from_text.clone().into_value(), value, "{text}");
        let kind = value.get("type").and_then(Value::as_str);
        assert_eq!(from_text.kind(), kind, "{text}");
    }

    #[test]
    fn blocks_of_a_fixed_shape_are_typed_and_every_other_is_kept_as_sent() {
        use Sorted::*;
        let rows = [
            (r#"{"type":"text","text":"hi"}"#, Text),
            (r#"{"text":"hi","type":"text"}"#, Text),
            (r#"{"type":"text","text":""}"#, Text),
            (
                r#"{"type":"text","text":"hi","annotations":{"audience":["user"],"priority":0.5},"_meta":{"k":[1]}}"#,
                Text,
            ),
            (r#"{"_meta":{},"text":"hi","type":"text"}"#, Text),
            (
                r#"{"type":"image","data":"aGk=","mimeType":"image/png"}"#,
                Image,
            ),
            (
                r#"{"mimeType":"image/png","type":"image","data":""}"#,
                Image,
            ),
            (
                r#"{"type":"audio","data":"aGk=","mimeType":"audio/wav","annotations":{}}"#,
                Audio,
            ),
            // Names and escapes as the parser reads them.
            (
                r#"{"t\u0079pe":"t\u0065xt","text":"a\"b\\c\u00e9\ud83d\ude00"}"#,
                Text,
            ),
            (r#"{"type":"text","text":"first","text":"last"}"#, Text),
            (r#"{"type":"image","type":"text","text":"x"}"#, Text),
            (
                r#"{"type":"text","type":"image","data":"d","mimeType":"m"}"#,
                Image,
            ),
            // Kinds kept as JSON.
            (
                r#"{"type":"resource_link","uri":"file:///a","name":"a"}"#,
                Other,
            ),
            (
                r#"{"type":"resource","resource":{"uri":"file:///a","text":"x"}}"#,
                Other,
            ),
            (r#"{"type":"hologram","text":"x"}"#, Other),
            (r#"{"type":"Text","text":"x"}"#, Other),
            (r#"{"text":"x"}"#, Other),
            (r#"{}"#, Other),
            // A typed kind not of its shape.
            (r#"{"type":"text"}"#, Other),
            (r#"{"type":"text","text":5}"#, Other),
            (r#"{"type":"text","text":null}"#, Other),
            (r#"{"type":"text","text":"x","extra":1}"#, Other),
            (r#"{"extra":1,"type":"text","text":"x"}"#, Other),
            (
                r#"{"type":"text","extra":{"deep":[1,{"a":null}]},"text":"x"}"#,
                Other,
            ),
            (r#"{"type":"text","text":"x","annotations":null}"#, Other),
            (r#"{"type":"text","text":"x","annotations":[]}"#, Other),
            (r#"{"type":"text","text":"x","_meta":"m"}"#, Other),
            (r#"{"type":"text","text":"x","data":"d"}"#, Other),
            (r#"{"type":"image","data":"d"}"#, Other),
            (r#"{"type":"image","data":"d","mimeType":7}"#, Other),
            (
                r#"{"type":"audio","data":"d","mimeType":"m","text":"t"}"#,
                Other,
            ),
            (r#"{"type":"text","text":"x","type":"image"}"#, Other),
            (r#"{"type":5,"text":"x"}"#, Other),
            (r#"{"type":null,"text":"x"}"#, Other),
            (r#"{"type":["text"],"text":"x"}"#, Other),
            (r#"{"type":{"text":1},"text":"x"}"#, Other),
            (r#"{"type":true,"text":"x"}"#, Other),
            (r#"{"type":-1.5e300,"text":"x"}"#, Other),
            (r#"{"type":18446744073709551615,"text":"x"}"#, Other),
            // Not an object at all.
            (r#""text""#, Other),
            (r#"5"#, Other),
            (r#"-5"#, Other),
            (r#"0.5"#, Other),
            (r#"null"#, Other),
            (r#"true"#, Other),
            (r#"["text","x"]"#, Other),
            (r#"18446744073709551615"#, Other),
            (r#""a\u0000b\u001b[2J""#, Other),
            (r#"[{"type":"text","text":"x"}]"#, Other),
        ];
        for (text, expect) in rows {
            check(text, expect);
        }
    }

    #[test]
    fn a_block_kept_as_json_keeps_its_members_and_their_order() {
        let text = r#"{"text":"x","z":1,"type":"text","a":{"b":2},"_meta":{}}"#;
        let block: ContentBlock = serde_json::from_str(text).unwrap();
        let ContentBlock::Other(Value::Object(map)) = &block else {
            panic!("{block:?}");
        };
        let names: Vec<&str> = map.keys().map(String::as_str).collect();
        let mut expect = vec!["text", "z", "type", "a", "_meta"];
        // Without `preserve_order` (a feature some crate in the build may
        // turn on) a map keeps its names sorted.
        let probe: Map<String, Value> =
            [("b".to_owned(), Value::Null), ("a".to_owned(), Value::Null)]
                .into_iter()
                .collect();
        if probe.keys().next().map(String::as_str) == Some("a") {
            expect.sort_unstable();
        }
        assert_eq!(names, expect);
        assert_eq!(
            block.to_value(),
            serde_json::from_str::<Value>(text).unwrap()
        );
    }

    const MEMBERS: [Member; 6] = [
        Member::Type,
        Member::Text,
        Member::Data,
        Member::MimeType,
        Member::Annotations,
        Member::Meta,
    ];

    #[test]
    fn every_member_is_found_by_its_name() {
        for member in MEMBERS {
            assert_eq!(Member::named(member.name()), Some(member));
        }
        assert_eq!(Member::named("Type"), None);
        assert_eq!(Member::named("meta"), None);
    }

    #[test]
    fn typed_blocks_are_written_type_first_with_what_they_carry() {
        let text = ContentBlock::text("hi");
        assert_eq!(
            serde_json::to_string(&text).unwrap(),
            r#"{"type":"text","text":"hi"}"#
        );
        assert_eq!(text.as_text(), Some("hi"));
        let image = ContentBlock::Image(MediaContent {
            data: "aGk=".into(),
            mime_type: "image/png".into(),
            annotations: Some(Map::new()),
            meta: None,
        });
        assert_eq!(
            serde_json::to_string(&image).unwrap(),
            r#"{"type":"image","data":"aGk=","mimeType":"image/png","annotations":{}}"#
        );
        assert_eq!(image.as_text(), None);
        assert_eq!(image.kind(), Some("image"));
        assert_eq!(ContentBlock::Other(json!(5)).kind(), None);
        // Written and moved into JSON alike.
        let audio = ContentBlock::Audio(MediaContent {
            data: "AA==".into(),
            mime_type: "audio/wav".into(),
            annotations: None,
            meta: Some(Map::from_iter([("k".into(), json!(1))])),
        });
        for block in [text, image, audio] {
            assert_eq!(block.to_value(), serde_json::to_value(&block).unwrap());
        }
    }

    #[test]
    fn a_result_reads_its_blocks_in_order() {
        let result: crate::CallToolResult = serde_json::from_str(
            r#"{"content":[{"type":"text","text":"a"},{"type":"resource_link","uri":"u","name":"n"},{"type":"image","data":"d","mimeType":"m"}],"isError":true}"#,
        )
        .unwrap();
        assert!(result.is_error);
        assert_eq!(
            result.content,
            [
                ContentBlock::text("a"),
                ContentBlock::Other(json!({"type": "resource_link", "uri": "u", "name": "n"})),
                ContentBlock::Image(MediaContent {
                    data: "d".into(),
                    mime_type: "m".into(),
                    annotations: None,
                    meta: None,
                }),
            ]
        );
    }

    #[test]
    fn a_block_that_is_not_json_of_its_shape_fails_only_as_bad_json() {
        for text in [r#"{"type":"text","text":"x""#, r#"{"type":"text",}"#, "[1,"] {
            assert!(
                serde_json::from_str::<ContentBlock>(text).is_err(),
                "{text}"
            );
        }
    }

    /// Blocks near the typed shapes: members drawn from the names a typed
    /// block has and one it does not, each holding a value of any type,
    /// some given twice, in any order.
    fn near_block() -> impl Strategy<Value = String> {
        let name = prop::sample::select(vec![
            "type",
            "text",
            "data",
            "mimeType",
            "annotations",
            "_meta",
            "uri",
        ]);
        let value = prop::sample::select(vec![
            r#""text""#,
            r#""image""#,
            r#""audio""#,
            r#""resource_link""#,
            r#""""#,
            r#""x\u00e9""#,
            "5",
            "-0.5",
            "null",
            "true",
            "{}",
            r#"{"audience":["user"]}"#,
            "[]",
            r#"[{"a":[null]}]"#,
        ]);
        prop::collection::vec((name, value), 0..7).prop_map(|members| {
            let members: Vec<String> = members
                .into_iter()
                .map(|(name, value)| format!("\"{name}\":{value}"))
                .collect();
            format!("{{{}}}", members.join(","))
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]

        #[test]
        fn text_and_its_value_sort_a_block_the_same_and_lose_nothing(text in near_block()) {
            let from_text: ContentBlock = serde_json::from_str(&text).unwrap();
            let value: Value = serde_json::from_str(&text).unwrap();
            prop_assert_eq!(&ContentBlock::from(value.clone()), &from_text);
            prop_assert_eq!(from_text.to_value(), value.clone());
            prop_assert_eq!(serde_json::to_value(&from_text).unwrap(), value);
        }
    }
}
