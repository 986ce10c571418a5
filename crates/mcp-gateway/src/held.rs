//! An older server's own question to a 2026-07-28 client. A server before
//! 2026-07-28 asks its client (elicitation, sampling, roots) with a
//! request of its own in the middle of a call and waits for the answer;
//! a 2026-07-28 client takes questions only as an `input_required` result
//! and answers them by sending the request again. So the gateway holds
//! the call: it runs on in its own task, the question goes to the client
//! as an input round under a `requestState` the gateway makes (random,
//! so no other client can answer it), and the retry that carries it
//! hands the client's answer to the waiting server and takes up the call
//! where it was, until it ends or asks again.
//!
//! A held call lives in the process that holds it, so this needs the
//! retry to reach the same gateway (over HTTP: affinity by
//! `requestState`, or one replica); a retry that reaches another is
//! refused, naming why. A held call whose client never comes back is
//! cancelled after [`HELD_TTL`]; at most [`MAX_HELD`] are held at once
//! (past that, the server's question is refused and the call goes on).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use mcp_transport::error_codes::{INTERNAL_ERROR, INVALID_PARAMS};
use mcp_transport::{ErrorObject, Notification};
use rand::RngCore as _;
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use crate::relay::Asker;

/// A call's answer: its result, or the JSON-RPC error that refuses it.
type Answer = Result<Value, ErrorObject>;

/// How long a held call waits for its client's retry.
pub const HELD_TTL: Duration = Duration::from_secs(10 * 60);

/// Calls held at once, across every client.
pub const MAX_HELD: usize = 1_000;

/// The one key of the input round a held call's question goes under.
const INPUT_KEY: &str = "input";

/// The prefix of the `requestState` of a held call, so a retry can be
/// told from one whose state the server made.
const STATE_PREFIX: &str = "mcp-gateway-held:";

/// A question of the server's, and where its answer goes.
struct Question {
    method: String,
    params: Option<Value>,
    answer: oneshot::Sender<Result<Value, ErrorObject>>,
}

/// A call running in its own task, and the questions it asks.
pub(crate) struct Running {
    task: JoinHandle<Answer>,
    questions: mpsc::Receiver<Question>,
}

struct Held {
    /// Taken when the client's retry takes the call up again; still here
    /// when the held call is dropped, which cancels it.
    running: Option<Running>,
    answer: Option<oneshot::Sender<Result<Value, ErrorObject>>>,
    since: Instant,
}

/// The calls held for their clients' retries, by `requestState`.
#[derive(Default)]
pub(crate) struct HeldCalls {
    calls: Mutex<HashMap<String, Held>>,
}

impl std::fmt::Debug for HeldCalls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HeldCalls")
            .field("held", &self.lock().len())
            .finish()
    }
}

/// The client of a running call as the relay sees it: a question goes to
/// the gateway, which holds the call and hands it to the client as an
/// input round; anything else goes to the client itself.
struct Holding {
    client: Arc<dyn Asker>,
    questions: mpsc::Sender<Question>,
}

#[async_trait]
impl Asker for Holding {
    async fn ask(&self, method: &str, params: Option<Value>) -> Result<Value, ErrorObject> {
        let (answer, answered) = oneshot::channel();
        let question = Question {
            method: method.to_owned(),
            params,
            answer,
        };
        if self.questions.send(question).await.is_err() {
            return Err(ErrorObject::new(
                INTERNAL_ERROR,
                format!("{method}: the client's call has ended"),
            ));
        }
        answered.await.unwrap_or_else(|_| {
            Err(ErrorObject::new(
                INTERNAL_ERROR,
                format!("{method}: the client did not come back with an answer"),
            ))
        })
    }

    fn takes_input_rounds(&self) -> bool {
        self.client.takes_input_rounds()
    }

    fn notify(&self, notification: &Notification) {
        self.client.notify(notification);
    }
}

impl Running {
    /// Starts `call` in its own task on behalf of `client`; `call` is
    /// given the client the relay should ask (made with `asker`).
    pub(crate) fn start<F, Fut>(client: Arc<dyn Asker>, call: F) -> Running
    where
        F: FnOnce(Arc<dyn Asker>) -> Fut,
        Fut: std::future::Future<Output = Answer> + Send + 'static,
    {
        let (questions, asked) = mpsc::channel(1);
        let holding: Arc<dyn Asker> = Arc::new(Holding { client, questions });
        Running {
            // The call's own task goes on in the request's trace.
            task: tokio::spawn(crate::observe::in_current_trace(call(holding))),
            questions: asked,
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        // No one will retry: the server's call is cancelled.
        if let Some(running) = &self.running {
            running.task.abort();
        }
    }
}

impl Held {
    /// Whether its client waited too long to come back (a call that ended
    /// meanwhile is kept until then: its retry gets the result).
    fn is_over(&self, now: Instant) -> bool {
        now.duration_since(self.since) >= HELD_TTL
    }
}

impl HeldCalls {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Held>> {
        self.calls.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether `params` retry a call this gateway holds (its
    /// `requestState` is one of ours).
    pub(crate) fn is_retry(params: &Value) -> bool {
        params
            .get("requestState")
            .and_then(Value::as_str)
            .is_some_and(|state| state.starts_with(STATE_PREFIX))
    }

    /// Takes up the held call `params` retry, handing it the client's
    /// answer, and runs it on ([`HeldCalls::drive`]).
    pub(crate) async fn resume(&self, params: &Value) -> Answer {
        let state = params
            .get("requestState")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let held = self.lock().remove(state);
        let Some(mut held) = held.filter(|held| !held.is_over(Instant::now())) else {
            return Err(ErrorObject::new(
                INVALID_PARAMS,
                "requestState names no call this gateway holds (it ended, waited too long, or another gateway holds it)",
            ));
        };
        let response = params
            .get("inputResponses")
            .and_then(|responses| responses.get(INPUT_KEY))
            .cloned()
            .ok_or_else(|| {
                ErrorObject::new(
                    INVALID_PARAMS,
                    format!("the retry has no inputResponses.{INPUT_KEY}"),
                )
            });
        if let Some(answer) = held.answer.take() {
            let _ = answer.send(response);
        }
        match held.running.take() {
            Some(running) => self.drive(running).await,
            None => Err(ErrorObject::new(INTERNAL_ERROR, "the held call is gone")),
        }
    }

    /// Waits for `running` to end, or to ask its client something: then
    /// the call is held and the question is the answer, as an input round.
    pub(crate) async fn drive(&self, mut running: Running) -> Answer {
        tokio::select! {
            ended = &mut running.task => ended.unwrap_or_else(|error| {
                Err(ErrorObject::new(INTERNAL_ERROR, format!("the call failed: {error}")))
            }),
            Some(question) = running.questions.recv() => {
                let Question { method, params, answer } = question;
                let Some(state) = self.hold(running, answer) else {
                    // The gateway holds all it may: the server hears no.
                    return Err(ErrorObject::new(
                        INTERNAL_ERROR,
                        format!("{method}: too many calls wait for their clients' answers"),
                    ));
                };
                let mut request = json!({ "method": method });
                if let Some(params) = params {
                    request["params"] = params;
                }
                Ok(json!({
                    "resultType": "input_required",
                    "inputRequests": { INPUT_KEY: request },
                    "requestState": state,
                }))
            }
        }
    }

    /// Holds `running` until its client's retry; its `requestState`, or
    /// `None` when [`MAX_HELD`] calls are held already (the question is
    /// then refused and the call runs on).
    fn hold(
        &self,
        running: Running,
        answer: oneshot::Sender<Result<Value, ErrorObject>>,
    ) -> Option<String> {
        let mut calls = self.lock();
        let now = Instant::now();
        calls.retain(|_, held| !held.is_over(now));
        if calls.len() >= MAX_HELD {
            let _ = answer.send(Err(ErrorObject::new(
                INTERNAL_ERROR,
                "the gateway holds too many calls waiting for their clients",
            )));
            // The call goes on without this question (its task is let go,
            // not cancelled), and no answer reaches the client.
            drop(running);
            return None;
        }
        let mut bytes = [0u8; 24];
        rand::rngs::OsRng.fill_bytes(&mut bytes);
        let state = format!("{STATE_PREFIX}{}", hex(&bytes));
        calls.insert(
            state.clone(),
            Held {
                running: Some(running),
                answer: Some(answer),
                since: now,
            },
        );
        Some(state)
    }
}

/// Lower-case hexadecimal of `bytes`.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 2026-07-28 client as the relay sees it.
    struct Modern;

    #[async_trait]
    impl Asker for Modern {
        async fn ask(&self, method: &str, _params: Option<Value>) -> Result<Value, ErrorObject> {
            Err(ErrorObject::method_not_found(method))
        }

        fn takes_input_rounds(&self) -> bool {
            true
        }
    }

    /// A call that asks its client once and ends with the answer.
    fn asking() -> Running {
        Running::start(Arc::new(Modern), |client| async move {
            let answer = client
                .ask("elicitation/create", Some(json!({"m": 1})))
                .await?;
            Ok(json!({ "answered": answer }))
        })
    }

    #[tokio::test]
    async fn a_question_holds_the_call_until_its_retry_and_no_more_than_the_cap() {
        let held = HeldCalls::default();
        let round = held.drive(asking()).await.unwrap();
        assert_eq!(round["resultType"], "input_required");
        assert_eq!(
            round["inputRequests"][INPUT_KEY]["method"],
            "elicitation/create"
        );
        assert_eq!(round["inputRequests"][INPUT_KEY]["params"], json!({"m": 1}));
        let state = round["requestState"].as_str().unwrap().to_owned();
        assert!(HeldCalls::is_retry(&json!({ "requestState": state })));
        assert!(!HeldCalls::is_retry(
            &json!({"requestState": "the server's"})
        ));

        // Up to the cap, each call is held under a state of its own.
        let mut states = std::collections::HashSet::from([state.clone()]);
        for _ in 1..MAX_HELD {
            let round = held.drive(asking()).await.unwrap();
            states.insert(round["requestState"].as_str().unwrap().to_owned());
        }
        assert_eq!(states.len(), MAX_HELD);
        let refused = held.drive(asking()).await.unwrap_err();
        assert!(refused.message.contains("too many"), "{}", refused.message);

        // The retry hands the answer over and the call ends with it.
        let retry =
            json!({"requestState": state, "inputResponses": {INPUT_KEY: {"action": "decline"}}});
        let done = held.resume(&retry).await.unwrap();
        assert_eq!(done, json!({"answered": {"action": "decline"}}));
        // A state is used once; a made-up one names nothing.
        for state in [state.as_str(), "mcp-gateway-held:00"] {
            let gone = held
                .resume(&json!({ "requestState": state }))
                .await
                .unwrap_err();
            assert_eq!(gone.code, INVALID_PARAMS);
        }
    }
}
