//! Pagination: following `nextCursor` through every page of a list, within
//! the session's [`ListLimits`], and counting a page's size without
//! serialising it again.

use super::*;

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
                    tracing::warn!(server = %self.shared.server, tool = %tool.name, %reason, "tool left out");
                    rejected.push(RejectedTool {
                        name: tool.name.clone(),
                        reason,
                    });
                    false
                }
            }
        });
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
            return Ok(Listing {
                items: Vec::new(),
                ttl: None,
                scope: CacheScope::Private,
            });
        }
        let mut ttl: Option<Duration> = None;
        let mut public = true;
        let mut said_scope = false;
        let limits = self.shared.options.list_limits;
        let mut items = Vec::new();
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
            let mut result = self.request(method, params).await?;
            bytes += json_size(&result);
            if bytes > limits.max_bytes {
                return Err(self.limit_error(
                    method,
                    format!("more than {} bytes of results", limits.max_bytes),
                ));
            }
            if let Some(ms) = result.get("ttlMs").and_then(Value::as_u64) {
                let page = Duration::from_millis(ms);
                ttl = Some(ttl.map_or(page, |t| t.min(page)));
            }
            match result.get("cacheScope").and_then(Value::as_str) {
                Some("public") => said_scope = true,
                Some(_) => {
                    said_scope = true;
                    public = false;
                }
                None => public = false,
            }
            let Some(Value::Array(entries)) = result.get_mut(field).map(Value::take) else {
                return Err(self.limit_error(method, format!("result has no {field:?} array")));
            };
            for entry in entries {
                match crate::codec::from_value::<T>(entry) {
                    Ok(item) => items.push(item),
                    Err(e) => tracing::warn!(
                        server = %self.shared.server,
                        method,
                        error = %e,
                        "skipping an invalid list entry"
                    ),
                }
            }
            if items.len() > limits.max_items {
                return Err(
                    self.limit_error(method, format!("more than {} items", limits.max_items))
                );
            }
            match result.get("nextCursor") {
                Some(Value::String(next)) if !next.is_empty() => {
                    if !seen.insert(next.clone()) {
                        return Err(self
                            .limit_error(method, format!("server repeated the cursor {next:?}")));
                    }
                    cursor = Some(next.clone());
                }
                _ => break,
            }
        }
        let scope = if public && said_scope {
            CacheScope::Public
        } else {
            CacheScope::Private
        };
        Ok(Listing { items, ttl, scope })
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
