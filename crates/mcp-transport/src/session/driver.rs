//! The driver task: the only code that reads the transport (callers write
//! to the transport's own queue where it has one). It forwards outgoing
//! messages, dispatches incoming ones (answers to their callers,
//! progress to callbacks, server requests to the host's handler,
//! notifications to subscribers) and ends the session when the connection
//! does.

use std::sync::Arc;

use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::error::TransportError;
use crate::lock;
use crate::message::{ErrorObject, Incoming, JsonRpcMessage, Notification, RequestId, Response};
use crate::transport::{AnswerRoute, Transport};

use super::deadlines::Activity;
use super::pending::{Body, Reply};
use super::{Command, ListKind, Progress, ServerEvent, Shared};

/// The driver: owns the transport, forwards commands out and dispatches
/// messages in, until the connection ends or the session is closed.
pub(super) async fn drive(
    mut transport: Box<dyn Transport>,
    shared: Arc<Shared>,
    mut commands: mpsc::UnboundedReceiver<Command>,
) {
    // Server→client request handlers; dropping the set (when the driver ends
    // or is aborted) aborts them.
    let mut handlers = tokio::task::JoinSet::new();
    // What one wake-up read: every message the transport had at hand.
    let mut batch: Vec<Incoming> = Vec::new();
    let reason = loop {
        tokio::select! {
            command = commands.recv() => match command {
                Some(Command::Send(message, carried)) => {
                    if let Err(e) = super::observe::sent_in(carried, transport.send(message)).await {
                        break e;
                    }
                }
                Some(Command::Close(reply)) => {
                    shared.end(shared.closed_error());
                    handlers.abort_all();
                    let result = transport.close().await;
                    let _ = reply.send(result);
                    return;
                }
                None => break shared.closed_error(),
            },
            incoming = transport.receive(&mut batch) => match incoming {
                Ok(true) => {
                    if let Err(e) = dispatch_batch(&shared, &mut transport, &mut handlers, &mut batch).await {
                        break e;
                    }
                }
                Ok(false) => break shared.closed_error(),
                Err(e) => break e,
            },
            Some(_) = handlers.join_next(), if !handlers.is_empty() => {}
        }
    };
    tracing::debug!(server = %shared.server, reason = %reason, "connection ended");
    shared.end(reason);
    handlers.abort_all();
    // Reap the process / release the connection. Later `close()` calls find
    // the command channel gone and return at once.
    drop(commands);
    if let Err(e) = transport.close().await {
        tracing::debug!(server = %shared.server, error = %e, "close after the connection ended");
    }
}

/// Dispatches (and empties) one batch: answers straight to their callers'
/// oneshots, still raw, everything else as [`dispatch`] does.
async fn dispatch_batch(
    shared: &Arc<Shared>,
    transport: &mut Box<dyn Transport>,
    handlers: &mut tokio::task::JoinSet<()>,
    batch: &mut Vec<Incoming>,
) -> Result<(), TransportError> {
    let mut messages = batch.drain(..);
    while let Some(incoming) = messages.next() {
        let message = match incoming {
            Incoming::Answer(answer) => {
                deliver_to(shared, Some(&answer.id), Ok(Body::Raw(answer.result)));
                continue;
            }
            Incoming::Message(message) => message,
        };
        if let Err(e) = dispatch(shared, transport, handlers, message).await {
            // The rest of the batch is dropped with the connection.
            drop(messages);
            batch.clear();
            return Err(e);
        }
    }
    Ok(())
}

pub(super) async fn dispatch(
    shared: &Arc<Shared>,
    transport: &mut Box<dyn Transport>,
    handlers: &mut tokio::task::JoinSet<()>,
    message: JsonRpcMessage,
) -> Result<(), TransportError> {
    match message {
        JsonRpcMessage::Response(response) => deliver(shared, response),
        JsonRpcMessage::Notification(notification) => notify(shared, notification),
        JsonRpcMessage::Request(request) if request.method == "ping" => {
            transport
                .send(JsonRpcMessage::result(request.id, json!({})))
                .await?;
        }
        JsonRpcMessage::Request(request) => {
            let Some(handler) = shared.options.handler.clone() else {
                let error = ErrorObject::method_not_found(&request.method);
                transport
                    .send(JsonRpcMessage::error(Some(request.id), error))
                    .await?;
                return Ok(());
            };
            let task_shared = Arc::clone(shared);
            let id = request.id.clone();
            // Held across the spawn so the task cannot remove its entry
            // before it is inserted.
            let mut in_flight = lock(&shared.server_requests);
            let abort = handlers.spawn(async move {
                let outcome = handler
                    .handle_request(&request.method, request.params)
                    .await;
                lock(&task_shared.server_requests).remove(&request.id);
                let _ = task_shared.send(JsonRpcMessage::Response(Response {
                    id: Some(request.id),
                    outcome,
                }));
            });
            in_flight.insert(id, abort);
        }
    }
    Ok(())
}

pub(super) fn deliver(shared: &Shared, response: Response) {
    deliver_to(
        shared,
        response.id.as_ref(),
        response.outcome.map(Body::Value),
    );
}

/// An answer the transport routes past the driver (it came alone, so
/// nothing it came with is left to dispatch first).
impl AnswerRoute for Shared {
    fn answer(&self, answer: crate::message::RawAnswer) {
        deliver_to(self, Some(&answer.id), Ok(Body::Raw(answer.result)));
    }
}

/// Completes the waiting caller's oneshot with `outcome`, from the driver
/// or the transport's task (no further hand-off).
fn deliver_to(shared: &Shared, id: Option<&RequestId>, outcome: Result<Body, ErrorObject>) {
    let key = match id {
        Some(RequestId::Number(n)) => Some(*n),
        // Some bridges turn numeric ids into strings.
        Some(RequestId::String(s)) => s.parse::<i64>().ok(),
        None => None,
    };
    let Some(key) = key else {
        match outcome {
            Err(error) => tracing::warn!(
                server = %shared.server,
                code = error.code,
                message = %error.message,
                "server sent an error for no request"
            ),
            Ok(_) => tracing::debug!(server = %shared.server, "response with an unknown id"),
        }
        return;
    };
    let pending = lock(&shared.pending).entries.remove(&key);
    match pending {
        Some(pending) => {
            let _ = pending.reply.send(Reply::Answer(outcome));
        }
        None => {
            tracing::debug!(server = %shared.server, id = key, "response for no pending request")
        }
    }
}

pub(super) fn notify(shared: &Shared, notification: Notification) {
    let event = match notification.method.as_str() {
        "notifications/progress" => {
            deliver_progress(shared, notification.params.as_ref());
            return;
        }
        "notifications/cancelled" => {
            let id = notification
                .params
                .as_ref()
                .and_then(|p| p.get("requestId"))
                .and_then(|id| serde_json::from_value::<RequestId>(id.clone()).ok());
            if let Some(abort) = id.and_then(|id| lock(&shared.server_requests).remove(&id)) {
                abort.abort();
            }
            return;
        }
        "notifications/tools/list_changed" => ServerEvent::ListChanged(ListKind::Tools),
        "notifications/resources/list_changed" => ServerEvent::ListChanged(ListKind::Resources),
        "notifications/prompts/list_changed" => ServerEvent::ListChanged(ListKind::Prompts),
        _ => {
            // The handler hears it in the order the server sent it, before
            // any answer that came after it is handed on.
            if let Some(handler) = &shared.options.handler {
                handler.notification(&notification);
            }
            ServerEvent::Notification(notification)
        }
    };
    // No subscriber is fine: events are optional for the host.
    if let Some(events) = lock(&shared.events).as_ref() {
        let _ = events.send(event);
    }
}

pub(super) fn deliver_progress(shared: &Shared, params: Option<&Value>) {
    let Some(params) = params else { return };
    let token = match params.get("progressToken") {
        Some(Value::Number(n)) => n.as_i64(),
        Some(Value::String(s)) => s.parse::<i64>().ok(),
        _ => None,
    };
    let Some(token) = token else { return };
    let progress = Progress {
        progress: params
            .get("progress")
            .and_then(Value::as_f64)
            .unwrap_or(0.0),
        total: params.get("total").and_then(Value::as_f64),
        message: params
            .get("message")
            .and_then(Value::as_str)
            .map(str::to_string),
    };
    let mut table = lock(&shared.pending);
    if let Some(pending) = table.entries.get_mut(&token)
        && let Some(sender) = &pending.progress
    {
        // A later deadline needs no wake-up: the deadline task finds it
        // when it wakes for the earlier one.
        pending
            .deadline
            .observe(Instant::now(), Activity::Progress(progress.progress));
        let _ = sender.send(progress);
    }
}
