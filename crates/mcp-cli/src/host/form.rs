//! Form-mode elicitation on a terminal: the requested schema (the
//! restricted, flat one of the MCP elicitation spec) read into fields, each
//! asked for on its own line, every answer checked against its field, and a
//! review before the answer is sent. Input and output are injected, so the
//! whole conversation is tested with in-memory lines.
//!
//! Conventions the prompts state: an empty answer takes the default (or
//! leaves an optional field out), `:decline` declines the whole request,
//! `:cancel` or the end of input (Ctrl-D) cancels it, as closing a dialog
//! would.

use std::io::{self, BufRead, Write};

use serde_json::{Map, Value};

use crate::output::{shown, shown_lines};

/// What the user chose.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Filled {
    /// Sent with these values.
    Accept(Map<String, Value>),
    /// Explicitly declined.
    Decline,
    /// Dismissed.
    Cancel,
}

/// A requested schema this client cannot ask for (not a flat object of the
/// spec's primitive kinds).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unsupported(pub(crate) String);

/// One property of the requested schema.
#[derive(Debug, Clone, PartialEq)]
struct Field {
    name: String,
    title: Option<String>,
    description: Option<String>,
    required: bool,
    default: Option<Value>,
    kind: Kind,
}

#[derive(Debug, Clone, PartialEq)]
enum Kind {
    Text {
        min: Option<u64>,
        max: Option<u64>,
        format: Option<Format>,
    },
    /// A single-select string enum (`enum`, `enum` + `enumNames`, or
    /// `oneOf` of `const`/`title`).
    Choice(Vec<Choice>),
    Number {
        integer: bool,
        min: Option<f64>,
        max: Option<f64>,
    },
    Boolean,
    /// A multi-select array of string choices.
    Many {
        choices: Vec<Choice>,
        min: Option<u64>,
        max: Option<u64>,
    },
}

#[derive(Debug, Clone, PartialEq)]
struct Choice {
    value: String,
    title: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Email,
    Uri,
    Date,
    DateTime,
}

/// Reads `schema` into its fields, in the order the server listed them.
fn fields(schema: &Value) -> Result<Vec<Field>, Unsupported> {
    let unsupported = |why: String| Unsupported(why);
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return Err(unsupported(
            "requestedSchema is not an object schema".into(),
        ));
    }
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = schema.get("properties") else {
        return Ok(Vec::new());
    };
    let Some(properties) = properties.as_object() else {
        return Err(unsupported(
            "requestedSchema.properties is not an object".into(),
        ));
    };
    let mut fields = Vec::with_capacity(properties.len());
    for (name, property) in properties {
        let kind = kind(property).map_err(|why| unsupported(format!("field {name:?}: {why}")))?;
        let text = |key: &str| property.get(key).and_then(Value::as_str).map(str::to_owned);
        fields.push(Field {
            name: name.clone(),
            title: text("title"),
            description: text("description"),
            required: required.contains(&name.as_str()),
            default: property.get("default").cloned(),
            kind,
        });
    }
    Ok(fields)
}

fn kind(property: &Value) -> Result<Kind, String> {
    let count = |key: &str| property.get(key).and_then(Value::as_u64);
    let bound = |key: &str| property.get(key).and_then(Value::as_f64);
    match property.get("type").and_then(Value::as_str) {
        Some("string") => {
            if let Some(choices) = choices(property)? {
                return Ok(Kind::Choice(choices));
            }
            let format = match property.get("format").and_then(Value::as_str) {
                Some("email") => Some(Format::Email),
                Some("uri") => Some(Format::Uri),
                Some("date") => Some(Format::Date),
                Some("date-time") => Some(Format::DateTime),
                // Another format is not one the spec allows; the text is
                // still a string, so it is asked for as one.
                _ => None,
            };
            Ok(Kind::Text {
                min: count("minLength"),
                max: count("maxLength"),
                format,
            })
        }
        Some(kind @ ("number" | "integer")) => Ok(Kind::Number {
            integer: kind == "integer",
            min: bound("minimum"),
            max: bound("maximum"),
        }),
        Some("boolean") => Ok(Kind::Boolean),
        Some("array") => {
            let items = property.get("items").unwrap_or(&Value::Null);
            let choices = choices(items)?.ok_or("an array whose items are not string choices")?;
            Ok(Kind::Many {
                choices,
                min: count("minItems"),
                max: count("maxItems"),
            })
        }
        Some(other) => Err(format!("type {other:?} is not a form field type")),
        None => Err("no type".into()),
    }
}

/// The choices of a string enum schema, or `None` for free text.
fn choices(schema: &Value) -> Result<Option<Vec<Choice>>, String> {
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        // `enumNames` is the older spelling of titled choices.
        let names = schema.get("enumNames").and_then(Value::as_array);
        let choices = values
            .iter()
            .enumerate()
            .map(|(index, value)| {
                let value = value.as_str().ok_or("an enum value that is not a string")?;
                let title = names
                    .and_then(|names| names.get(index))
                    .and_then(Value::as_str);
                Ok(Choice {
                    value: value.to_owned(),
                    title: title.map(str::to_owned),
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        return Ok(Some(choices));
    }
    let titled = schema
        .get("oneOf")
        .or_else(|| schema.get("anyOf"))
        .and_then(Value::as_array);
    let Some(titled) = titled else {
        return Ok(None);
    };
    titled
        .iter()
        .map(|option| {
            let value = option
                .get("const")
                .and_then(Value::as_str)
                .ok_or("a choice without a string const")?;
            Ok(Choice {
                value: value.to_owned(),
                title: option
                    .get("title")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            })
        })
        .collect::<Result<Vec<_>, String>>()
        .map(Some)
}

/// Asks for every field of `schema` on `output`, reading answers from
/// `input` until each is valid, then shows the answer for review.
pub(crate) fn fill(
    server: &str,
    message: &str,
    schema: &Value,
    input: &mut dyn BufRead,
    output: &mut dyn Write,
) -> Result<io::Result<Filled>, Unsupported> {
    let fields = fields(schema)?;
    Ok(Form { input, output }.run(server, message, &fields))
}

struct Form<'a> {
    input: &'a mut dyn BufRead,
    output: &'a mut dyn Write,
}

/// One line the user typed, read into what it means.
enum Line {
    Text(String),
    Decline,
    Cancel,
}

impl Form<'_> {
    fn run(&mut self, server: &str, message: &str, fields: &[Field]) -> io::Result<Filled> {
        writeln!(
            self.output,
            "Server \"{}\" asks for input:\n  {}",
            shown(server).as_ref(),
            shown_lines(message).replace('\n', "\n  ")
        )?;
        writeln!(
            self.output,
            "(Enter takes the [default]; :decline declines, :cancel or Ctrl-D cancels)"
        )?;
        let mut answers = Map::new();
        loop {
            for field in fields {
                let current = answers.get(&field.name).or(field.default.as_ref()).cloned();
                match self.ask(field, current.as_ref())? {
                    Asked::Value(Some(value)) => {
                        answers.insert(field.name.clone(), value);
                    }
                    Asked::Value(None) => {
                        answers.remove(&field.name);
                    }
                    Asked::Decline => return Ok(Filled::Decline),
                    Asked::Cancel => return Ok(Filled::Cancel),
                }
            }
            writeln!(self.output, "Answer to \"{}\":", shown(server).as_ref())?;
            for field in fields {
                if let Some(value) = answers.get(&field.name) {
                    writeln!(self.output, "  {}: {}", label(field), display(value))?;
                }
            }
            loop {
                write!(self.output, "Send it? [Y/n] (n asks again) ")?;
                self.output.flush()?;
                match self.line()? {
                    Line::Decline => return Ok(Filled::Decline),
                    Line::Cancel => return Ok(Filled::Cancel),
                    Line::Text(text) => match text.to_ascii_lowercase().as_str() {
                        "" | "y" | "yes" => return Ok(Filled::Accept(answers)),
                        "n" | "no" => break,
                        _ => writeln!(self.output, "  answer y or n")?,
                    },
                }
            }
        }
    }

    /// Asks for one field until the answer is valid.
    fn ask(&mut self, field: &Field, current: Option<&Value>) -> io::Result<Asked> {
        writeln!(
            self.output,
            "{}{}{}",
            label(field),
            if field.required { " (required)" } else { "" },
            field
                .description
                .as_deref()
                .map(|text| format!(": {}", shown(text)))
                .unwrap_or_default()
        )?;
        if let Kind::Choice(choices) | Kind::Many { choices, .. } = &field.kind {
            for (index, choice) in choices.iter().enumerate() {
                writeln!(self.output, "  {}) {}", index + 1, choice_label(choice))?;
            }
        }
        let hint = hint(&field.kind);
        let shown_default = current.map(|value| format!(" [{}]", display(value)));
        loop {
            write!(
                self.output,
                "  {hint}{}> ",
                shown_default.as_deref().unwrap_or_default()
            )?;
            self.output.flush()?;
            let text = match self.line()? {
                Line::Decline => return Ok(Asked::Decline),
                Line::Cancel => return Ok(Asked::Cancel),
                Line::Text(text) => text,
            };
            if text.is_empty() {
                if let Some(current) = current {
                    return Ok(Asked::Value(Some(current.clone())));
                }
                if !field.required {
                    return Ok(Asked::Value(None));
                }
                writeln!(self.output, "  an answer is required")?;
                continue;
            }
            match parse(&field.kind, &text) {
                Ok(value) => return Ok(Asked::Value(Some(value))),
                Err(why) => writeln!(self.output, "  {why}; try again")?,
            }
        }
    }

    fn line(&mut self) -> io::Result<Line> {
        let mut line = String::new();
        if self.input.read_line(&mut line)? == 0 {
            // The end of input: a closed dialog.
            writeln!(self.output)?;
            return Ok(Line::Cancel);
        }
        let text = line.trim();
        Ok(match text {
            ":decline" => Line::Decline,
            ":cancel" => Line::Cancel,
            _ => Line::Text(text.to_owned()),
        })
    }
}

enum Asked {
    /// The field's value, or `None` to leave it out.
    Value(Option<Value>),
    Decline,
    Cancel,
}

fn label(field: &Field) -> String {
    shown(field.title.as_deref().unwrap_or(&field.name)).into_owned()
}

fn choice_label(choice: &Choice) -> String {
    match &choice.title {
        Some(title) if *title != choice.value => {
            format!("{} ({})", shown(title), shown(&choice.value))
        }
        _ => shown(&choice.value).into_owned(),
    }
}

/// A value as the review and the `[default]` show it.
fn display(value: &Value) -> String {
    match value {
        Value::String(text) => shown(text).into_owned(),
        Value::Array(items) => items.iter().map(display).collect::<Vec<_>>().join(", "),
        other => shown(&other.to_string()).into_owned(),
    }
}

/// What the prompt says the answer must look like.
fn hint(kind: &Kind) -> String {
    let range = |min: Option<String>, max: Option<String>| match (min, max) {
        (Some(min), Some(max)) => format!(" {min}..{max}"),
        (Some(min), None) => format!(" ≥ {min}"),
        (None, Some(max)) => format!(" ≤ {max}"),
        (None, None) => String::new(),
    };
    match kind {
        Kind::Text { min, max, format } => {
            let what = match format {
                Some(Format::Email) => "email address",
                Some(Format::Uri) => "URI",
                Some(Format::Date) => "date YYYY-MM-DD",
                Some(Format::DateTime) => "date-time YYYY-MM-DDTHH:MM:SSZ",
                None => "text",
            };
            let length = range(min.map(|n| n.to_string()), max.map(|n| n.to_string()));
            if length.is_empty() {
                what.to_owned()
            } else {
                format!("{what}, length{length}")
            }
        }
        Kind::Choice(_) => "number or value".to_owned(),
        Kind::Number { integer, min, max } => format!(
            "{}{}",
            if *integer { "integer" } else { "number" },
            range(min.map(|n| n.to_string()), max.map(|n| n.to_string()))
        ),
        Kind::Boolean => "y/n".to_owned(),
        Kind::Many { min, max, .. } => {
            let count = range(min.map(|n| n.to_string()), max.map(|n| n.to_string()));
            if count.is_empty() {
                "numbers or values, comma-separated".to_owned()
            } else {
                format!("numbers or values, comma-separated, count{count}")
            }
        }
    }
}

/// `text` as a value of `kind`, or why it is not one.
fn parse(kind: &Kind, text: &str) -> Result<Value, String> {
    match kind {
        Kind::Text { min, max, format } => {
            let length = u64::try_from(text.chars().count()).unwrap_or(u64::MAX);
            if let Some(min) = min
                && length < *min
            {
                return Err(format!("at least {min} characters"));
            }
            if let Some(max) = max
                && length > *max
            {
                return Err(format!("at most {max} characters"));
            }
            match format {
                Some(Format::Email) if !is_email(text) => Err("not an email address".into()),
                Some(Format::Uri) if url::Url::parse(text).is_err() => {
                    Err("not a URI (scheme:rest, such as https://example.com)".into())
                }
                Some(Format::Date) if !is_date(text) => Err("not a date YYYY-MM-DD".into()),
                Some(Format::DateTime) if !is_date_time(text) => {
                    Err("not a date-time such as 2026-07-28T09:30:00Z".into())
                }
                _ => Ok(Value::from(text)),
            }
        }
        Kind::Choice(choices) => pick(choices, text).map(Value::from),
        Kind::Number { integer, min, max } => {
            let number: f64 = text
                .parse()
                .ok()
                .filter(|n: &f64| n.is_finite())
                .ok_or("not a number")?;
            if *integer && number.fract() != 0.0 {
                return Err("not a whole number".into());
            }
            if let Some(min) = min
                && number < *min
            {
                return Err(format!("at least {min}"));
            }
            if let Some(max) = max
                && number > *max
            {
                return Err(format!("at most {max}"));
            }
            // Whole numbers go out as JSON integers (`3`, not `3.0`).
            match text.parse::<i64>() {
                Ok(whole) => Ok(Value::from(whole)),
                Err(_) if *integer => Err("too large a whole number".into()),
                Err(_) => serde_json::Number::from_f64(number)
                    .map(Value::Number)
                    .ok_or_else(|| "not a number".into()),
            }
        }
        Kind::Boolean => match text.to_ascii_lowercase().as_str() {
            "y" | "yes" | "true" => Ok(Value::Bool(true)),
            "n" | "no" | "false" => Ok(Value::Bool(false)),
            _ => Err("answer y or n".into()),
        },
        Kind::Many { choices, min, max } => {
            let mut picked: Vec<Value> = Vec::new();
            for part in text
                .split(',')
                .map(str::trim)
                .filter(|part| !part.is_empty())
            {
                let value = Value::from(pick(choices, part)?);
                if !picked.contains(&value) {
                    picked.push(value);
                }
            }
            let count = u64::try_from(picked.len()).unwrap_or(u64::MAX);
            if let Some(min) = min
                && count < *min
            {
                return Err(format!("choose at least {min}"));
            }
            if let Some(max) = max
                && count > *max
            {
                return Err(format!("choose at most {max}"));
            }
            Ok(Value::Array(picked))
        }
    }
}

/// The choice `text` names: its number in the list, its value, or its
/// title (in any case).
fn pick(choices: &[Choice], text: &str) -> Result<String, String> {
    if let Ok(number) = text.parse::<usize>()
        && let Some(choice) = number.checked_sub(1).and_then(|index| choices.get(index))
    {
        return Ok(choice.value.clone());
    }
    choices
        .iter()
        .find(|choice| choice.value == text)
        .or_else(|| {
            choices.iter().find(|choice| {
                choice
                    .title
                    .as_deref()
                    .is_some_and(|title| title.eq_ignore_ascii_case(text))
            })
        })
        .map(|choice| choice.value.clone())
        .ok_or_else(|| format!("\"{}\" is not one of the choices", shown(text).as_ref()))
}

/// A plausible address: one `@`, something before it, a dotted domain
/// after it, no spaces. The server does the real check.
fn is_email(text: &str) -> bool {
    let Some((local, domain)) = text.split_once('@') else {
        return false;
    };
    !local.is_empty()
        && !domain.contains('@')
        && domain.split('.').count() >= 2
        && domain.split('.').all(|part| !part.is_empty())
        && !text.chars().any(char::is_whitespace)
}

/// `YYYY-MM-DD`, a day that exists (RFC 3339 `full-date`).
fn is_date(text: &str) -> bool {
    let parts: Vec<&str> = text.split('-').collect();
    let [year, month, day] = parts.as_slice() else {
        return false;
    };
    let digits =
        |part: &str, len: usize| part.len() == len && part.bytes().all(|b| b.is_ascii_digit());
    if !(digits(year, 4) && digits(month, 2) && digits(day, 2)) {
        return false;
    }
    let (Ok(year), Ok(month), Ok(day)) = (
        year.parse::<u32>(),
        month.parse::<u32>(),
        day.parse::<u32>(),
    ) else {
        return false;
    };
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// RFC 3339 `date-time`: a date, `T`, `HH:MM:SS`, optional fraction, and
/// `Z` or an offset `±HH:MM`.
fn is_date_time(text: &str) -> bool {
    let Some((date, time)) = text.split_once(['T', 't']) else {
        return false;
    };
    if !is_date(date) {
        return false;
    }
    let (clock, zone) = if let Some(clock) = time.strip_suffix(['Z', 'z']) {
        (clock, None)
    } else if let Some(at) = time.rfind(['+', '-']) {
        (&time[..at], Some(&time[at + 1..]))
    } else {
        return false;
    };
    let clock = clock.split_once('.').map_or(clock, |(whole, fraction)| {
        if !fraction.is_empty() && fraction.bytes().all(|b| b.is_ascii_digit()) {
            whole
        } else {
            ""
        }
    });
    let hms = |text: &str, parts: usize, limits: &[u32]| {
        let fields: Vec<&str> = text.split(':').collect();
        fields.len() == parts
            && fields.iter().zip(limits).all(|(field, limit)| {
                field.len() == 2
                    && field.bytes().all(|b| b.is_ascii_digit())
                    && field.parse::<u32>().is_ok_and(|n| n <= *limit)
            })
    };
    // 60 seconds allows a leap second, as RFC 3339 does.
    hms(clock, 3, &[23, 59, 60]) && zone.is_none_or(|zone| hms(zone, 2, &[23, 59]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Fills a form with one field `f` of `property` (required when
    /// `required`) from `lines`, and compares the outcome with `expect`
    /// (`{"f": value}` for accept, `"decline"`, `"cancel"`, `{}` for an
    /// accepted form without `f`); `said` must appear in what was shown.
    #[track_caller]
    fn check(property: Value, required: bool, lines: &[&str], expect: Value, said: &str) {
        let schema = json!({
            "type": "object",
            "properties": {"f": property},
            "required": if required { json!(["f"]) } else { json!([]) },
        });
        let typed = lines
            .iter()
            .map(|line| format!("{line}\n"))
            .collect::<String>();
        let mut input = io::Cursor::new(typed.into_bytes());
        let mut output = Vec::new();
        let filled = fill("srv", "Tell me", &schema, &mut input, &mut output)
            .expect("supported schema")
            .expect("in-memory io");
        let shown = String::from_utf8(output).expect("utf-8");
        let got = match filled {
            Filled::Accept(map) => Value::Object(map),
            Filled::Decline => json!("decline"),
            Filled::Cancel => json!("cancel"),
        };
        assert_eq!(got, expect, "lines {lines:?}; shown:\n{shown}");
        assert!(shown.contains(said), "{said:?} not in:\n{shown}");
    }

    #[test]
    fn each_kind_of_field_is_asked_checked_and_answered() {
        let text = json!({"type": "string", "title": "Name", "description": "Your name"});
        check(
            text.clone(),
            true,
            &["octocat", ""],
            json!({"f": "octocat"}),
            "Name (required): Your name",
        );
        check(
            text.clone(),
            true,
            &["", "  ada  ", "y"],
            json!({"f": "ada"}),
            "an answer is required",
        );
        check(text, false, &["", ""], json!({}), "Send it?");

        let bounded = json!({"type": "string", "minLength": 3, "maxLength": 5});
        check(
            bounded.clone(),
            true,
            &["ab", "abcdef", "abcd", ""],
            json!({"f": "abcd"}),
            "at least 3 characters",
        );
        check(
            bounded,
            true,
            &["abcdef", "abc", ""],
            json!({"f": "abc"}),
            "at most 5 characters",
        );

        let email = json!({"type": "string", "format": "email"});
        check(
            email.clone(),
            true,
            &["nobody", "a@b", "a b@c.d", "a@b.c", ""],
            json!({"f": "a@b.c"}),
            "not an email address",
        );
        let uri = json!({"type": "string", "format": "uri"});
        check(
            uri,
            true,
            &["not a uri", "https://example.com/x", ""],
            json!({"f": "https://example.com/x"}),
            "not a URI",
        );
        let date = json!({"type": "string", "format": "date"});
        check(
            date.clone(),
            true,
            &["2025-02-29", "2024-13-01", "2024-02-29", ""],
            json!({"f": "2024-02-29"}),
            "not a date",
        );
        let date_time = json!({"type": "string", "format": "date-time"});
        check(
            date_time,
            true,
            &[
                "2026-07-28",
                "2026-07-28T25:00:00Z",
                "2026-07-28T09:30:00.5+02:00",
                "",
            ],
            json!({"f": "2026-07-28T09:30:00.5+02:00"}),
            "not a date-time",
        );

        let integer = json!({"type": "integer", "minimum": 1, "maximum": 100, "default": 42});
        check(integer.clone(), true, &["", ""], json!({"f": 42}), "[42]");
        check(
            integer.clone(),
            true,
            &["x", "2.5", "0", "101", "7", ""],
            json!({"f": 7}),
            "not a whole number",
        );
        check(
            integer,
            true,
            &["0", "100", ""],
            json!({"f": 100}),
            "at least 1",
        );
        let number = json!({"type": "number", "maximum": 1000});
        check(
            number.clone(),
            true,
            &["2.5", ""],
            json!({"f": 2.5}),
            "number ≤ 1000",
        );
        check(
            number,
            true,
            &["1e9", "3", ""],
            json!({"f": 3}),
            "at most 1000",
        );

        let boolean = json!({"type": "boolean", "default": false});
        check(
            boolean.clone(),
            true,
            &["maybe", "yes", ""],
            json!({"f": true}),
            "answer y or n",
        );
        check(boolean, true, &["", ""], json!({"f": false}), "[false]");

        let plain = json!({"type": "string", "enum": ["Red", "Green", "Blue"], "default": "Red"});
        check(
            plain.clone(),
            true,
            &["", ""],
            json!({"f": "Red"}),
            "  3) Blue",
        );
        check(
            plain.clone(),
            true,
            &["4", "Purple", "2", ""],
            json!({"f": "Green"}),
            "\"Purple\" is not one of the choices",
        );
        check(plain, true, &["Blue", ""], json!({"f": "Blue"}), "[Red]");
        let titled = json!({"type": "string", "oneOf": [
            {"const": "#FF0000", "title": "Red"}, {"const": "#00FF00", "title": "Green"}]});
        check(
            titled.clone(),
            true,
            &["green", ""],
            json!({"f": "#00FF00"}),
            "2) Green (#00FF00)",
        );
        check(
            titled,
            true,
            &["#FF0000", ""],
            json!({"f": "#FF0000"}),
            "1) Red (#FF0000)",
        );
        let legacy =
            json!({"type": "string", "enum": ["pet-1", "pet-2"], "enumNames": ["Cats", "Dogs"]});
        check(
            legacy,
            true,
            &["dogs", ""],
            json!({"f": "pet-2"}),
            "1) Cats (pet-1)",
        );

        let many = json!({"type": "array", "minItems": 1, "maxItems": 2,
            "items": {"type": "string", "enum": ["Guitar", "Piano", "Drums"]}, "default": ["Guitar"]});
        check(
            many.clone(),
            true,
            &["", ""],
            json!({"f": ["Guitar"]}),
            "[Guitar]",
        );
        check(
            many.clone(),
            true,
            &["1,2,3", "9", "2, Drums", ""],
            json!({"f": ["Piano", "Drums"]}),
            "choose at most 2",
        );
        check(
            many,
            true,
            &[" , ", "1", ""],
            json!({"f": ["Guitar"]}),
            "choose at least 1",
        );
        let titled_many = json!({"type": "array",
            "items": {"anyOf": [{"const": "fish-1", "title": "Tuna"}, {"const": "fish-2", "title": "Salmon"}]}});
        check(
            titled_many,
            false,
            &["salmon,1", ""],
            json!({"f": ["fish-2", "fish-1"]}),
            "2) Salmon (fish-2)",
        );
    }

    #[test]
    fn the_user_can_decline_cancel_or_answer_again() {
        let text = json!({"type": "string"});
        check(
            text.clone(),
            true,
            &[":decline"],
            json!("decline"),
            "asks for input",
        );
        check(
            text.clone(),
            true,
            &[":cancel"],
            json!("cancel"),
            ":cancel or Ctrl-D cancels",
        );
        // The end of input (Ctrl-D) is a dismissal.
        check(text.clone(), true, &[], json!("cancel"), "Tell me");
        check(
            text.clone(),
            true,
            &["a", ":decline"],
            json!("decline"),
            "Send it?",
        );
        // `n` at the review asks every field again, the last answer as the default.
        check(
            text.clone(),
            true,
            &["a", "n", "", "y"],
            json!({"f": "a"}),
            "[a]",
        );
        check(
            text.clone(),
            true,
            &["a", "n", "b", "maybe", "Y"],
            json!({"f": "b"}),
            "answer y or n",
        );
        check(
            text,
            true,
            &["a", "n", ":cancel"],
            json!("cancel"),
            "  f: a",
        );
    }

    #[test]
    fn server_text_is_shown_escaped() {
        let property = json!({"type": "string", "enum": ["\u{1b}[2J"], "title": "T\u{202e}"});
        let schema = json!({"type": "object", "properties": {"f": property}});
        let mut input = io::Cursor::new(b"1\n\n".to_vec());
        let mut output = Vec::new();
        let filled = fill(
            "s\u{1b}]0;x\u{7}",
            "line one\nline\u{1b}[31m two",
            &schema,
            &mut input,
            &mut output,
        )
        .expect("supported")
        .expect("io");
        assert_eq!(
            filled,
            Filled::Accept(
                json!({"f": "\u{1b}[2J"})
                    .as_object()
                    .cloned()
                    .unwrap_or_default()
            )
        );
        let shown = String::from_utf8(output).expect("utf-8");
        assert!(
            !shown.contains('\u{1b}') && !shown.contains('\u{202e}'),
            "{shown:?}"
        );
        assert!(shown.contains("line one\n  line\\x1b[31m two"), "{shown}");
        assert!(shown.contains(r#"Server "s\x1b]0;x\x07" asks"#), "{shown}");
    }

    #[test]
    fn a_schema_outside_the_restricted_subset_is_refused() {
        let check = |schema: Value, why: &str| {
            let mut input = io::Cursor::new(Vec::new());
            let error =
                fill("s", "m", &schema, &mut input, &mut Vec::new()).expect_err("unsupported");
            assert!(error.0.contains(why), "{error:?}");
        };
        check(json!({"type": "string"}), "not an object schema");
        check(
            json!({"type": "object", "properties": {"x": {"type": "object"}}}),
            "field \"x\": type \"object\"",
        );
        check(
            json!({"type": "object", "properties": {"x": {"type": "array", "items": {"type": "number"}}}}),
            "not string choices",
        );
        check(
            json!({"type": "object", "properties": {"x": {}}}),
            "no type",
        );
    }

    #[test]
    fn an_empty_form_is_a_confirmation() {
        let schema = json!({"type": "object", "properties": {}});
        let mut input = io::Cursor::new(b"\n".to_vec());
        let filled = fill("s", "Go on?", &schema, &mut input, &mut Vec::new())
            .expect("ok")
            .expect("io");
        assert_eq!(filled, Filled::Accept(Map::new()));
    }
}
