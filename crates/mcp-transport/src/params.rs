//! A request's parameters as the session holds them.
//!
//! Most are a `Value` (or none). A `tools/call`, the request a host makes
//! most, keeps the tool's name and its arguments apart: they are written
//! as `{"name":…,"arguments":…}` without that object being built (an
//! insertion-ordered map, hashed keys and three allocations per call, freed
//! again once written), and made into a `Value` only where one is needed
//! (a transport that takes messages by value, a progress token, an input
//! round).

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value};

/// A request's parameters.
#[derive(Debug, Clone)]
pub(crate) enum Params<'a> {
    /// Any parameters, or none.
    Value(Option<Value>),
    /// `tools/call`'s: `{"name": name, "arguments": arguments}`, the
    /// arguments left out when there are none.
    ToolCall {
        name: &'a str,
        arguments: Option<Value>,
    },
}

impl From<Option<Value>> for Params<'_> {
    fn from(params: Option<Value>) -> Self {
        Params::Value(params)
    }
}

impl Params<'_> {
    /// The parameters as a `Value`, written the same.
    pub(crate) fn into_value(self) -> Option<Value> {
        match self {
            Params::Value(params) => params,
            Params::ToolCall { name, arguments } => {
                let mut object = Map::with_capacity(2);
                object.insert("name".to_owned(), Value::String(name.to_owned()));
                if let Some(arguments) = arguments {
                    object.insert("arguments".to_owned(), arguments);
                }
                Some(Value::Object(object))
            }
        }
    }

    /// A borrowed view, to write or look into.
    pub(crate) fn view(&self) -> ParamsRef<'_> {
        match self {
            Params::Value(params) => ParamsRef::Value(params.as_ref()),
            Params::ToolCall { name, arguments } => ParamsRef::ToolCall {
                name,
                arguments: arguments.as_ref(),
            },
        }
    }
}

/// [`Params`] borrowed.
#[derive(Debug, Clone, Copy)]
pub(crate) enum ParamsRef<'a> {
    /// Any parameters, or none.
    Value(Option<&'a Value>),
    /// `tools/call`'s name and arguments.
    ToolCall {
        name: &'a str,
        arguments: Option<&'a Value>,
    },
}

impl<'a> From<Option<&'a Value>> for ParamsRef<'a> {
    fn from(params: Option<&'a Value>) -> Self {
        ParamsRef::Value(params)
    }
}

impl<'a> ParamsRef<'a> {
    /// Itself when there are parameters to write (`None` leaves the
    /// `params` member out).
    pub(crate) fn present(self) -> Option<Self> {
        match self {
            ParamsRef::Value(None) => None,
            present => Some(present),
        }
    }

    /// The member `key`, when the parameters are an object holding it.
    pub(crate) fn member(self, key: &str) -> Option<&'a Value> {
        match self {
            ParamsRef::Value(params) => params?.get(key),
            ParamsRef::ToolCall { arguments, .. } => arguments.filter(|_| key == "arguments"),
        }
    }

    /// The member `key` when it is a string.
    // Read by streamable HTTP alone, for its request headers.
    #[cfg_attr(not(feature = "streamable-http"), allow(dead_code))]
    pub(crate) fn str_member(self, key: &str) -> Option<&'a str> {
        match self {
            ParamsRef::ToolCall { name, .. } if key == "name" => Some(name),
            _ => self.member(key)?.as_str(),
        }
    }

    /// The members of the parameters when they are an object, in order;
    /// `_meta` among them.
    pub(crate) fn members(self) -> impl Iterator<Item = (&'a str, MemberRef<'a>)> {
        let (object, tool_call) = match self {
            ParamsRef::Value(params) => (params.and_then(Value::as_object), None),
            ParamsRef::ToolCall { name, arguments } => (None, Some((name, arguments))),
        };
        let object = object
            .into_iter()
            .flatten()
            .map(|(key, value)| (key.as_str(), MemberRef::Value(value)));
        let tool_call = tool_call.into_iter().flat_map(|(name, arguments)| {
            let name = ("name", MemberRef::Str(name));
            let arguments = arguments.map(|arguments| ("arguments", MemberRef::Value(arguments)));
            std::iter::once(name).chain(arguments)
        });
        object.chain(tool_call)
    }
}

/// One member's value, as [`ParamsRef::members`] yields it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum MemberRef<'a> {
    Value(&'a Value),
    Str(&'a str),
}

impl Serialize for MemberRef<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            MemberRef::Value(value) => value.serialize(serializer),
            MemberRef::Str(text) => serializer.serialize_str(text),
        }
    }
}

impl Serialize for ParamsRef<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ParamsRef::Value(Some(params)) => params.serialize(serializer),
            ParamsRef::Value(None) => serializer.serialize_unit(),
            ParamsRef::ToolCall { .. } => {
                let mut map = serializer.serialize_map(None)?;
                for (key, value) in self.members() {
                    map.serialize_entry(key, &value)?;
                }
                map.end()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Written as its `Value`, and read the same through the view.
    fn check(params: Params<'_>) {
        let view = params.view();
        let written = serde_json::to_string(&view).unwrap();
        let name = view.str_member("name").map(str::to_owned);
        let arguments = view.member("arguments").cloned();
        let value = params.clone().into_value();
        // (the same bytes where maps keep their order; the same value anyway)
        assert_eq!(
            serde_json::from_str::<Value>(&written).unwrap(),
            json!(value)
        );
        let value_view = ParamsRef::from(value.as_ref());
        assert_eq!(value_view.str_member("name"), name.as_deref());
        assert_eq!(value_view.member("arguments"), arguments.as_ref());
        let members = |view: ParamsRef<'_>| {
            let mut members: Vec<(String, String)> = view
                .members()
                .map(|(key, value)| (key.to_owned(), serde_json::to_string(&value).unwrap()))
                .collect();
            members.sort();
            members
        };
        assert_eq!(members(view), members(value_view));
    }

    #[test]
    fn a_tool_call_is_written_as_its_object() {
        check(Params::ToolCall {
            name: "echo \"quoted\"",
            arguments: Some(json!({"message": "hi", "n": [1, 2]})),
        });
        check(Params::ToolCall {
            name: "no-arguments",
            arguments: None,
        });
        check(Params::ToolCall {
            name: "odd",
            arguments: Some(json!("not an object")),
        });
        check(Params::Value(Some(
            json!({"uri": "file:///a", "_meta": {"k": 1}}),
        )));
        check(Params::Value(Some(json!([1]))));
    }
}
