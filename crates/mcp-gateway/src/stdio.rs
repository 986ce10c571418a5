//! The gateway over stdio: one JSON-RPC message per line in, one per
//! line out, as a host runs any stdio server (`{"command": "mcp-cli",
//! "args": ["serve"]}`). Lines are decoded by the transport's codec,
//! with its size cap and depth ceiling; a line that is not JSON (or too
//! large, or too deep) is answered with a parse error, JSON that is not
//! a message with an invalid-request error, and the connection goes on.

use std::sync::Arc;

use mcp_transport::error_codes::{INVALID_REQUEST, PARSE_ERROR};
use mcp_transport::wire::{Codec, DEFAULT_MAX_MESSAGE_BYTES};
use mcp_transport::{ErrorObject, JsonRpcMessage};
use serde_json::value::RawValue;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use crate::downstream::serve_connection;
use crate::error::{GatewayError, GatewayErrorKind};
use crate::gateway::Gateway;

/// Messages waiting to be written to the client, at most.
const OUTGOING_CAPACITY: usize = 256;

/// Serves one client over `input` and `output` until the client closes
/// its side (end of input). Fails only when reading or writing fails.
pub async fn serve_stdio<R, W>(
    gateway: Arc<Gateway>,
    input: R,
    output: W,
) -> Result<(), GatewayError>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let codec = Codec::new(DEFAULT_MAX_MESSAGE_BYTES);
    let (to_connection, incoming) = mpsc::channel(OUTGOING_CAPACITY);
    let (outgoing, mut to_client) = mpsc::channel::<JsonRpcMessage>(OUTGOING_CAPACITY);
    let connection = tokio::spawn(serve_connection(gateway, incoming, outgoing.clone()));
    let writer = tokio::spawn(async move {
        let mut output = output;
        let mut line = Vec::new();
        while let Some(message) = to_client.recv().await {
            line.clear();
            codec.encode_into(&message, &mut line);
            line.push(b'\n');
            output
                .write_all(&line)
                .await
                .map_err(|error| GatewayError::io(GatewayErrorKind::Write, error))?;
            if to_client.is_empty() {
                output
                    .flush()
                    .await
                    .map_err(|error| GatewayError::io(GatewayErrorKind::Write, error))?;
            }
        }
        Ok::<(), GatewayError>(())
    });
    let read = read_lines(input, codec, &to_connection, &outgoing).await;
    // The client is gone: its requests stop, then what is queued is written.
    drop(to_connection);
    let _ = connection.await;
    drop(outgoing);
    let written = writer.await.unwrap_or(Ok(()));
    read.and(written)
}

async fn read_lines<R: AsyncRead + Unpin>(
    input: R,
    codec: Codec,
    to_connection: &mpsc::Sender<JsonRpcMessage>,
    outgoing: &mpsc::Sender<JsonRpcMessage>,
) -> Result<(), GatewayError> {
    let mut input = BufReader::new(input);
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = (&mut input)
            .take(codec.max_message_bytes() as u64 + 1)
            .read_until(b'\n', &mut line)
            .await
            .map_err(|error| GatewayError::io(GatewayErrorKind::Read, error))?;
        if read == 0 {
            return Ok(());
        }
        if line.len() > codec.max_message_bytes() && line.last() != Some(&b'\n') {
            // Past the cap: skip the rest of the line, answer, go on.
            skip_line(&mut input).await?;
            let error = ErrorObject::new(
                PARSE_ERROR,
                format!("message larger than {} bytes", codec.max_message_bytes()),
            );
            if outgoing
                .send(JsonRpcMessage::error(None, error))
                .await
                .is_err()
            {
                return Ok(());
            }
            continue;
        }
        let frame = line.trim_ascii();
        if frame.is_empty() {
            continue;
        }
        match codec.decode_salvaging(frame) {
            Ok(decoded) => {
                for message in decoded {
                    if to_connection.send(message).await.is_err() {
                        return Ok(());
                    }
                }
            }
            Err(undecodable) => {
                // JSON that is not a message is an invalid request; only
                // text that is not JSON at all is a parse error.
                let code = match serde_json::from_slice::<&RawValue>(frame) {
                    Ok(_) => INVALID_REQUEST,
                    Err(_) => PARSE_ERROR,
                };
                let error = ErrorObject::new(code, undecodable.error.to_string());
                if outgoing
                    .send(JsonRpcMessage::error(None, error))
                    .await
                    .is_err()
                {
                    return Ok(());
                }
            }
        }
    }
}

async fn skip_line<R: AsyncRead + Unpin>(input: &mut BufReader<R>) -> Result<(), GatewayError> {
    loop {
        let buffer = input
            .fill_buf()
            .await
            .map_err(|error| GatewayError::io(GatewayErrorKind::Read, error))?;
        if buffer.is_empty() {
            return Ok(());
        }
        match buffer.iter().position(|byte| *byte == b'\n') {
            Some(end) => {
                input.consume(end + 1);
                return Ok(());
            }
            None => {
                let all = buffer.len();
                input.consume(all);
            }
        }
    }
}
