//! `subscriptions/listen` (2026-07-28): the one long-lived request that
//! replaces the GET stream and `resources/subscribe`. A modern session
//! opens it for every change the server advertises (`listChanged` of
//! tools, prompts and resources, plus the resources the host subscribed
//! to); the notifications it carries reach the driver like any other, so
//! [`ServerEvent::ListChanged`] works the same at every revision. Changing
//! the resource set re-opens the subscription; the old one is cancelled.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::error::TransportErrorKind;

use super::{CallOptions, Shared};

/// Long enough to never fire: a subscription lasts as long as the session.
const FOREVER: Duration = Duration::from_secs(10 * 365 * 24 * 3600);

/// The longest pause before a broken subscription is opened again.
const MAX_PAUSE: Duration = Duration::from_secs(60);

/// The filter of a `subscriptions/listen` request for what `capabilities`
/// advertises, or `None` when there is nothing to listen to.
pub(super) fn filter(capabilities: &Value, resources: &[String]) -> Option<Value> {
    let list_changed = |kind: &str| {
        capabilities
            .get(kind)
            .and_then(|c| c.get("listChanged"))
            .and_then(Value::as_bool)
            .unwrap_or(false)
    };
    let mut notifications = Map::new();
    for (kind, field) in [
        ("tools", "toolsListChanged"),
        ("prompts", "promptsListChanged"),
        ("resources", "resourcesListChanged"),
    ] {
        if list_changed(kind) {
            notifications.insert(field.to_owned(), Value::Bool(true));
        }
    }
    if !resources.is_empty() {
        notifications.insert("resourceSubscriptions".to_owned(), json!(resources));
    }
    (!notifications.is_empty()).then(|| json!({ "notifications": notifications }))
}

/// The running subscription; dropping it cancels the request.
pub(super) struct Listener {
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Listener {
    pub(super) fn open(shared: &Arc<Shared>, params: Value) -> Listener {
        let shared = Arc::clone(shared);
        // The listen is part of the trace that opened it (a connect's).
        let task = tokio::spawn(super::observe::in_current_trace(async move {
            let call = CallOptions {
                timeout: Some(FOREVER),
                ..CallOptions::default()
            };
            let mut pause = Duration::from_secs(1);
            loop {
                let outcome = shared
                    .request("subscriptions/listen", Some(params.clone()), &call)
                    .await;
                match outcome {
                    Ok(_) => {
                        tracing::debug!(server = %shared.server, "the server ended the subscription");
                        return;
                    }
                    // A stream that broke (after the transport's own one
                    // re-issue) lost the subscription, not the session:
                    // open it again, pausing longer each time.
                    Err(error)
                        if matches!(error.kind(), TransportErrorKind::StreamBroken { .. }) =>
                    {
                        tracing::debug!(server = %shared.server, error = %error, "subscription stream broke; listening again");
                        tokio::time::sleep(pause).await;
                        pause = pause.saturating_mul(2).min(MAX_PAUSE);
                    }
                    Err(error) => {
                        tracing::debug!(server = %shared.server, error = %error, "subscriptions/listen ended");
                        return;
                    }
                }
            }
        }));
        Listener { task }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filter_asks_for_what_the_server_advertises() {
        let capabilities = json!({
            "tools": {"listChanged": true},
            "prompts": {"listChanged": false},
            "resources": {"listChanged": true, "subscribe": true}
        });
        assert_eq!(
            filter(&capabilities, &[]),
            Some(
                json!({"notifications": {"toolsListChanged": true, "resourcesListChanged": true}})
            )
        );
        assert_eq!(filter(&json!({"tools": {}}), &[]), None);
        assert_eq!(
            filter(&json!({}), &["file:///a".to_owned()]),
            Some(json!({"notifications": {"resourceSubscriptions": ["file:///a"]}}))
        );
    }
}
