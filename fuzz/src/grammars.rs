//! The grammars of the `*_hostile` targets, kept in the library so the
//! committed seeds are checked on stable (`cargo test --lib`).

use crate::Grammar;

/// Config files: each frame puts the value where a loader looks (a server
/// entry, its `args`, `env`, `cwd`, `headers` or `url`, a project's
/// servers, the approval lists, plugin switches, a second `mcpServers`);
/// chains nest `mcpServers`, `args`, `projects` and `env`.
pub const CONFIG: Grammar = Grammar {
    frames: &[
        "$",
        r#"{"mcpServers": $}"#,
        r#"{"mcpServers": {"s": $}}"#,
        r#"{"mcpServers": {"s": {"command": "/bin/echo", "args": $}}}"#,
        r#"{"mcpServers": {"s": {"command": "/bin/echo", "env": $, "cwd": $}}}"#,
        r#"{"mcpServers": {"s": {"type": "http", "url": "https://example.invalid/mcp", "headers": $}}}"#,
        r#"{"mcpServers": {"s": {"type": "ws", "url": $, "oauth": $}}}"#,
        r#"{"projects": {"@PROJECT@": {"hasTrustDialogAccepted": true, "mcpServers": $}}}"#,
        r#"{"enableAllProjectMcpServers": true, "enabledMcpjsonServers": $, "disabledMcpjsonServers": $}"#,
        r#"{"enabledPlugins": $, "mcpServers": {"t": {"command": "/bin/echo"}}}"#,
        r#"{"name": "p", "version": "1", "mcpServers": $}"#,
        r#"{"mcp": {"servers": $}}"#,
        r#"{"mcpServers": {"a": {"command": "/bin/echo"}}, "mcpServers": $}"#,
        r#"{"mcpServers": {"s": {"command": "/bin/echo", "toolFilter": $, "timeout": $}}}"#,
    ],
    keys: &[
        "mcpServers",
        "command",
        "args",
        "env",
        "cwd",
        "url",
        "type",
        "headers",
        "headersHelper",
        "enabled",
        "oauth",
        "clientId",
        "callbackPort",
        "timeout",
        "required",
        "toolFilter",
        "include",
        "exclude",
        "projects",
        "@PROJECT@",
        "hasTrustDialogAccepted",
        "enabledPlugins",
        "enableAllProjectMcpServers",
        "disabledMcpjsonServers",
        "enabledMcpjsonServers",
        "name",
        "mcp",
        "servers",
        "transport",
        "stdio",
        "http",
        "sse",
        "ws",
        "PATH",
        "PYTHONPATH",
    ],
    chains: &[
        r#"{"mcpServers": $}"#,
        r#"{"s": {"command": "/bin/echo", "args": [$]}}"#,
        r#"{"projects": {"@PROJECT@": $}}"#,
        r#"{"env": {"A": $}}"#,
    ],
};

/// JSON-RPC lines: responses, notifications, errors and batches with the
/// value in a result, a schema, `params` or an id. The frames in
/// [`ALWAYS_A_MESSAGE`] are a message whatever JSON value fills them.
pub const MESSAGE: Grammar = Grammar {
    frames: &[
        "$",
        r#"{"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "t", "inputSchema": $}]}}"#,
        r#"{"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "x"}], "structuredContent": {"a": $}}}"#,
        r#"{"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": $}}"#,
        r#"{"jsonrpc": "2.0", "id": 1, "error": {"code": -1, "message": "m", "data": $}}"#,
        r#"[{"jsonrpc": "2.0", "id": 1, "result": {"v": $}}, {"jsonrpc": "2.0", "method": "n", "params": {"v": $}}]"#,
        r#"{"jsonrpc": "2.0", "id": 1, "method": "roots/list", "params": {"_meta": $}}"#,
        r#"{"jsonrpc": "2.0", "id": $, "result": {}}"#,
        r#"{"jsonrpc": "2.0", "id": 1, "method": $, "params": $}"#,
        "[$, $, $]",
        r#"{"jsonrpc": $, "id": 1, "result": {}}"#,
        r#"{"jsonrpc": "2.0", "id": 1, "id": $, "result": $}"#,
    ],
    keys: &[
        "jsonrpc",
        "id",
        "method",
        "params",
        "result",
        "error",
        "code",
        "message",
        "data",
        "tools",
        "name",
        "inputSchema",
        "properties",
        "items",
        "_meta",
        "progressToken",
        "content",
        "type",
        "text",
        "nextCursor",
        "isError",
    ],
    chains: &[
        r#"{"type": "object", "properties": {"a": $}}"#,
        r#"{"jsonrpc": "2.0", "method": "n", "params": {"v": [$]}}"#,
        r#"[{"a": $}]"#,
    ],
};

/// The frames of [`MESSAGE`] that are a message whatever fills them.
pub const ALWAYS_A_MESSAGE: std::ops::RangeInclusive<usize> = 1..=6;

/// Tool input schemas: `$ref` cycles, combinators, properties and items
/// chains, duplicate keys.
pub const SCHEMA: Grammar = Grammar {
    frames: &[
        "$",
        r#"{"type": "object", "properties": {"a": $}, "required": ["a"]}"#,
        r##"{"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}, "$defs": {"A": $}}"##,
        r#"{"type": "object", "anyOf": [$, $]}"#,
        r#"{"type": "object", "properties": {"a": {"type": "array", "items": $}}}"#,
        r##"{"$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}}, "type": "object", "properties": {"a": {"$ref": "#/$defs/A"}, "b": $}}"##,
        r#"{"type": "object", "not": $, "oneOf": [$]}"#,
        r#"{"type": "object", "properties": {"a": $}, "definitions": {"A": $}, "additionalProperties": $}"#,
        r#"{"type": "object", "properties": {"a": {"type": "string"}, "a": $}}"#,
    ],
    keys: &[
        "type",
        "properties",
        "items",
        "$ref",
        "$defs",
        "definitions",
        "anyOf",
        "oneOf",
        "allOf",
        "not",
        "required",
        "enum",
        "const",
        "additionalProperties",
        "format",
        "description",
        "default",
        "patternProperties",
        "prefixItems",
        "nullable",
        "minimum",
        "maxLength",
        "title",
        "$schema",
        "$id",
        "if",
        "then",
        "else",
        "object",
        "string",
        "array",
        "null",
        "a",
        "b",
    ],
    chains: &[
        r#"{"type": "object", "properties": {"a": $}, "required": ["a"]}"#,
        r#"{"type": "array", "items": $}"#,
        r#"{"anyOf": [$, {"type": "null"}]}"#,
        r#"{"not": $}"#,
        r#"{"allOf": [$]}"#,
        r##"{"$defs": {"A": $}, "$ref": "#/$defs/A"}"##,
        r#"{"oneOf": [$, {"type": "string"}]}"#,
        r#"{"type": "object", "additionalProperties": $}"#,
    ],
};

/// A call's arguments.
pub const ARGUMENTS: Grammar = Grammar {
    frames: &["$", r#"{"a": $}"#, r#"{"a": $, "b": $}"#],
    keys: &["a", "b", "c", "type"],
    chains: &[r#"{"a": $}"#, "[$]"],
};
