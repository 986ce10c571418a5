//! A JSON value read specially when it is a string or an object, and kept
//! as a `Value` otherwise: how the `jsonrpc` member is recognised without
//! allocating, and how a content block is typed without a map, while
//! anything unexpected stays whole for an error or for the caller.

use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// How a visited value becomes `Self`: a string or a map may be read
/// specially; anything else is kept as JSON.
pub(crate) trait ReadAs: Sized {
    const EXPECTING: &'static str;

    fn from_value(value: Value) -> Self;

    fn from_str(_text: &str) -> Option<Self> {
        None
    }

    fn from_map<'de, A: MapAccess<'de>>(map: A) -> Result<Self, A::Error> {
        Value::deserialize(MapAccessDeserializer::new(map)).map(Self::from_value)
    }
}

pub(crate) struct ReadVisitor<T>(pub(crate) PhantomData<T>);

impl<'de, T: ReadAs> Visitor<'de> for ReadVisitor<T> {
    type Value = T;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str(T::EXPECTING)
    }

    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<T, E> {
        Ok(T::from_value(Value::Bool(v)))
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<T, E> {
        Ok(T::from_value(Value::from(v)))
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<T, E> {
        Ok(T::from_value(Value::from(v)))
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<T, E> {
        Ok(T::from_value(Value::from(v)))
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<T, E> {
        Ok(T::from_str(v).unwrap_or_else(|| T::from_value(Value::String(v.to_owned()))))
    }

    fn visit_string<E: serde::de::Error>(self, v: String) -> Result<T, E> {
        Ok(match T::from_str(&v) {
            Some(read) => read,
            None => T::from_value(Value::String(v)),
        })
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<T, E> {
        Ok(T::from_value(Value::Null))
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<T, E> {
        Ok(T::from_value(Value::Null))
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<T, D::Error> {
        Value::deserialize(deserializer).map(T::from_value)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<T, A::Error> {
        Value::deserialize(SeqAccessDeserializer::new(seq)).map(T::from_value)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        T::from_map(map)
    }
}
