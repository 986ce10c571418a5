//! Server-sent events framing, with the message cap enforced as bytes
//! arrive.
//!
//! Follows the WHATWG event stream interpretation: lines end with CRLF, LF
//! or CR; a line starting with `:` is a comment; `field: value` (one space
//! after the colon dropped) or a bare `field`; `data` lines are joined with
//! LF; `event` names the event; `id` (without NUL) sets the last event id,
//! which stays until the next one; `retry` (ASCII digits only) sets the
//! reconnection delay; an empty line ends the event; a leading BOM is
//! dropped; an unfinished event at the end of the stream is discarded.
//!
//! Every line is looked at once, whatever the chunking (a decoder that
//! rescans its buffer on each chunk takes quadratic time on one big event).
//! An event whose field lines grow past the cap is not buffered further: the
//! decoder reports [`SseItem::TooLarge`] at once and skips the rest of the
//! event in bounded memory, still scanning its data ([`AnswerScan`]) for the
//! id of the request it answers, so that request can fail at once too.
//! Comment lines count only against the cap on one line.

use std::collections::VecDeque;
use std::time::Duration;

use crate::message::RequestId;
use crate::scan::AnswerScan;

/// One event (or a block of fields with no data, such as a priming event
/// that only sets `id` and `retry`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Event {
    /// The `event` field; empty when absent (a `message` event).
    pub event: String,
    /// The `data` lines joined with LF.
    pub data: String,
    /// The last event id seen on the stream so far.
    pub id: String,
    /// The `retry` delay this block set, if any.
    pub retry: Option<Duration>,
}

/// What the decoder yields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SseItem {
    /// A complete event.
    Event(Event),
    /// An event grew past the cap and is being skipped. Reported once when
    /// the cap is crossed, with the id of the request it answers when that
    /// is already known, and once more at the latest by the end of the
    /// event if answers are found later (then `answers` is never empty).
    TooLarge {
        /// The cap in bytes.
        max: usize,
        /// Requests the oversized event answers, as far as found.
        answers: Vec<RequestId>,
    },
}

/// The field a skipped line belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SkippedField {
    /// Still reading the field name.
    Name,
    /// A `data` line; `space` while its optional leading space may follow.
    Data { space: bool },
    /// Anything else.
    Other,
}

/// The rest of an event past the cap.
#[derive(Debug)]
struct Oversized {
    scan: Option<AnswerScan>,
    reported: bool,
    name: Vec<u8>,
    field: SkippedField,
    line_bytes: usize,
}

impl Oversized {
    fn take(&mut self, mut part: &[u8]) {
        self.line_bytes += part.len();
        while !part.is_empty() {
            match self.field {
                SkippedField::Name => {
                    let byte = part[0];
                    part = &part[1..];
                    if byte == b':' {
                        self.field = if self.name == b"data" {
                            SkippedField::Data { space: true }
                        } else {
                            SkippedField::Other
                        };
                    } else if self.name.len() < 8 {
                        self.name.push(byte);
                    } else {
                        self.field = SkippedField::Other;
                    }
                }
                SkippedField::Data { space } => {
                    if space && part[0] == b' ' {
                        part = &part[1..];
                    }
                    self.field = SkippedField::Data { space: false };
                    if let Some(scan) = &mut self.scan {
                        scan.feed(part);
                    }
                    return;
                }
                SkippedField::Other => return,
            }
        }
    }

    fn new_line(&mut self) {
        if let Some(scan) = &mut self.scan {
            // The LF that joins data lines.
            scan.feed(b"\n");
        }
        self.name.clear();
        self.field = SkippedField::Name;
        self.line_bytes = 0;
    }
}

#[derive(Debug)]
enum Mode {
    Normal,
    /// The rest of a comment line past the cap.
    SkipComment,
    Oversized(Box<Oversized>),
}

/// An incremental SSE decoder; feed it chunks, take items.
#[derive(Debug)]
pub(crate) struct SseDecoder {
    max: usize,
    mode: Mode,
    line: Vec<u8>,
    after_cr: bool,
    /// How many bytes of a leading BOM have matched (3 once decided).
    bom: usize,
    data: Vec<u8>,
    event: Vec<u8>,
    last_id: String,
    retry: Option<Duration>,
    has_field: bool,
    /// Bytes of the field lines of the event so far.
    event_bytes: usize,
    out: VecDeque<SseItem>,
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

impl SseDecoder {
    /// A decoder that refuses events whose field lines exceed `max` bytes.
    pub(crate) fn new(max: usize) -> Self {
        SseDecoder {
            max,
            mode: Mode::Normal,
            line: Vec::new(),
            after_cr: false,
            bom: 0,
            data: Vec::new(),
            event: Vec::new(),
            last_id: String::new(),
            retry: None,
            has_field: false,
            event_bytes: 0,
            out: VecDeque::new(),
        }
    }

    /// The next decoded item, if any is ready.
    pub(crate) fn next_item(&mut self) -> Option<SseItem> {
        self.out.pop_front()
    }

    /// Takes the next bytes of the stream.
    pub(crate) fn feed(&mut self, mut chunk: &[u8]) {
        while self.bom < BOM.len() && !chunk.is_empty() {
            if chunk[0] == BOM[self.bom] {
                self.bom += 1;
                chunk = &chunk[1..];
            } else {
                // Not a BOM: give back the bytes that looked like one.
                let matched = &BOM[..self.bom];
                self.bom = BOM.len();
                self.take(matched);
            }
        }
        while !chunk.is_empty() {
            if self.after_cr {
                self.after_cr = false;
                if chunk[0] == b'\n' {
                    chunk = &chunk[1..];
                    continue;
                }
            }
            match chunk.iter().position(|&b| b == b'\n' || b == b'\r') {
                Some(end) => {
                    self.take(&chunk[..end]);
                    self.end_line();
                    self.after_cr = chunk[end] == b'\r';
                    chunk = &chunk[end + 1..];
                }
                None => {
                    self.take(chunk);
                    return;
                }
            }
        }
    }

    /// The stream ended: an unfinished event is discarded, but the answers
    /// of an oversized one are still reported.
    pub(crate) fn end(&mut self) {
        if let Mode::Oversized(oversized) = std::mem::replace(&mut self.mode, Mode::Normal) {
            self.report_rest(*oversized);
        }
        self.line = Vec::new();
        self.data = Vec::new();
    }

    /// Bytes of the line being read.
    fn take(&mut self, part: &[u8]) {
        match &mut self.mode {
            Mode::Normal => {
                let line = self.line.len() + part.len();
                let comment = self.line.first().or(part.first()) == Some(&b':');
                if comment {
                    if line > self.max {
                        self.line.clear();
                        self.mode = Mode::SkipComment;
                    } else {
                        self.line.extend_from_slice(part);
                    }
                } else if line > self.max || self.event_bytes + line > self.max {
                    self.overflow(part);
                } else {
                    self.line.extend_from_slice(part);
                }
            }
            Mode::SkipComment => {}
            Mode::Oversized(oversized) => {
                oversized.take(part);
                if !oversized.reported
                    && let Some(scan) = &oversized.scan
                {
                    if let Some(id) = scan.early_answer() {
                        let answers = vec![id.clone()];
                        oversized.reported = true;
                        oversized.scan = None;
                        self.out.push_back(SseItem::TooLarge {
                            max: self.max,
                            answers,
                        });
                    } else if scan.settled_without_answer() {
                        oversized.scan = None;
                    }
                }
            }
        }
    }

    /// The event crossed the cap with `part`, the next bytes of its line.
    fn overflow(&mut self, part: &[u8]) {
        let mut scan = AnswerScan::new();
        scan.feed(&self.data);
        let mut oversized = Box::new(Oversized {
            scan: Some(scan),
            reported: false,
            name: Vec::new(),
            field: SkippedField::Name,
            line_bytes: 0,
        });
        let line = std::mem::take(&mut self.line);
        oversized.take(&line);
        oversized.take(part);
        let answers: Vec<RequestId> = oversized
            .scan
            .as_ref()
            .and_then(AnswerScan::early_answer)
            .cloned()
            .into_iter()
            .collect();
        if !answers.is_empty()
            || oversized
                .scan
                .as_ref()
                .is_some_and(AnswerScan::settled_without_answer)
        {
            oversized.reported = !answers.is_empty();
            oversized.scan = None;
        }
        self.out.push_back(SseItem::TooLarge {
            max: self.max,
            answers,
        });
        // Give the memory back now: the rest of the event is skipped.
        self.data = Vec::new();
        self.line = Vec::new();
        self.event.clear();
        self.has_field = false;
        self.event_bytes = 0;
        self.mode = Mode::Oversized(oversized);
    }

    fn report_rest(&mut self, oversized: Oversized) {
        if oversized.reported {
            return;
        }
        if let Some(scan) = oversized.scan {
            let answers = scan.finish();
            if !answers.is_empty() {
                self.out.push_back(SseItem::TooLarge {
                    max: self.max,
                    answers,
                });
            }
        }
    }

    fn end_line(&mut self) {
        match std::mem::replace(&mut self.mode, Mode::Normal) {
            Mode::Normal => {
                let line = std::mem::take(&mut self.line);
                self.line_done(&line);
                self.line = line;
                self.line.clear();
            }
            Mode::SkipComment => {}
            Mode::Oversized(mut oversized) => {
                if oversized.line_bytes == 0 {
                    // The empty line that ends the skipped event.
                    self.report_rest(*oversized);
                } else {
                    oversized.new_line();
                    self.mode = Mode::Oversized(oversized);
                }
            }
        }
    }

    fn line_done(&mut self, line: &[u8]) {
        if line.is_empty() {
            self.dispatch();
            return;
        }
        if line[0] == b':' {
            return;
        }
        self.event_bytes += line.len();
        let (name, value) = match line.iter().position(|&b| b == b':') {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        match name {
            b"data" => {
                self.data.extend_from_slice(value);
                self.data.push(b'\n');
                self.has_field = true;
            }
            b"event" => {
                self.event.clear();
                self.event.extend_from_slice(value);
                self.has_field = true;
            }
            b"id" => {
                if !value.contains(&0) {
                    self.last_id = String::from_utf8_lossy(value).into_owned();
                }
                self.has_field = true;
            }
            b"retry" => {
                if !value.is_empty() && value.iter().all(u8::is_ascii_digit) {
                    // All digits: only too many of them fail to parse.
                    let millis = std::str::from_utf8(value)
                        .ok()
                        .and_then(|v| v.parse::<u64>().ok())
                        .unwrap_or(u64::MAX);
                    self.retry = Some(Duration::from_millis(millis));
                }
                self.has_field = true;
            }
            _ => {}
        }
    }

    fn dispatch(&mut self) {
        if !self.has_field {
            return;
        }
        if self.data.last() == Some(&b'\n') {
            self.data.pop();
        }
        let data = std::mem::take(&mut self.data);
        let data = String::from_utf8(data)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        self.out.push_back(SseItem::Event(Event {
            event: String::from_utf8_lossy(&self.event).into_owned(),
            data,
            id: self.last_id.clone(),
            retry: self.retry.take(),
        }));
        self.event.clear();
        self.has_field = false;
        self.event_bytes = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(item: &SseItem) -> String {
        match item {
            SseItem::Event(e) => {
                let mut out = format!("{}|{}|{}", e.event, e.data.replace('\n', "\\n"), e.id);
                if let Some(retry) = e.retry {
                    out.push_str(&format!("|retry={}", retry.as_millis()));
                }
                out
            }
            SseItem::TooLarge { max, answers } => {
                let ids: Vec<String> = answers.iter().map(ToString::to_string).collect();
                format!("too large {max} [{}]", ids.join(","))
            }
        }
    }

    fn decode(max: usize, chunks: &[&[u8]]) -> Vec<String> {
        let mut decoder = SseDecoder::new(max);
        let mut out = Vec::new();
        for chunk in chunks {
            decoder.feed(chunk);
            while let Some(item) = decoder.next_item() {
                out.push(render(&item));
            }
        }
        decoder.end();
        while let Some(item) = decoder.next_item() {
            out.push(render(&item));
        }
        out
    }

    /// Decodes `input` whole, split at every position, and byte by byte;
    /// each must give `expect`.
    #[track_caller]
    fn check(max: usize, input: &str, expect: &[&str]) {
        let bytes = input.as_bytes();
        assert_eq!(decode(max, &[bytes]), expect, "whole: {input:?}");
        for at in 0..=bytes.len() {
            let (a, b) = bytes.split_at(at);
            assert_eq!(decode(max, &[a, b]), expect, "split at {at}: {input:?}");
        }
        let singles: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_eq!(decode(max, &singles), expect, "byte by byte: {input:?}");
    }

    #[test]
    fn fields_follow_the_whatwg_rules() {
        let max = 1 << 20;
        check(max, "data: a\n\n", &["|a|"]);
        // Every line ending, mixed.
        check(max, "data: a\r\ndata: b\rdata:c\n\r\n", &["|a\\nb\\nc|"]);
        // Only one leading space is dropped; a bare field has an empty value.
        check(max, "data:  a\ndata\n\n", &["| a\\n|"]);
        check(max, "event: ping\ndata: x\n\n", &["ping|x|"]);
        // Comments, unknown fields and a field name with a space are ignored.
        check(max, ": hi\nfoo: bar\ndata : x\ndata: y\n\n", &["|y|"]);
        // The id stays until the next one; NUL makes an id ignored.
        check(
            max,
            "id: 1\ndata: a\n\ndata: b\n\nid: 2\0\ndata: c\n\nid\ndata: d\n\n",
            &["|a|1", "|b|1", "|c|1", "|d|"],
        );
        // retry: digits only.
        check(
            max,
            "retry: 500\nid: 7\n\nretry: 5x\ndata: a\n\nretry: 99999999999999999999999\n\n",
            &["||7|retry=500", "|a|7", &format!("||7|retry={}", u64::MAX)],
        );
        // Blank lines alone dispatch nothing; an unfinished event is dropped.
        check(max, "\n\n\ndata: a\n\ndata: cut", &["|a|"]);
        // A leading BOM is dropped, and only a leading one.
        check(max, "\u{feff}data: a\n\n", &["|a|"]);
        check(max, "data: \u{feff}a\n\n", &["|\u{feff}a|"]);
        check(max, "\u{ef}data: a\n\n", &[]);
    }

    #[test]
    fn the_cap_counts_one_event_and_skips_the_rest_of_an_oversized_one() {
        // Events under the cap, however many, pass.
        let event = "event: message\ndata: 0123456789\n\n";
        let many = event.repeat(50);
        assert_eq!(decode(40, &[many.as_bytes()]).len(), 50);
        // One event past the cap is reported once, and the stream goes on.
        check(
            40,
            "data: 0123456789\ndata: 0123456789\ndata: 0123456789\n\ndata: next\n\n",
            &["too large 40 []", "|next|"],
        );
        // The answer's id is reported at once when it comes first, ...
        let big = "x".repeat(100);
        check(
            40,
            &format!(
                "data: {{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":\"{big}\"}}\n\ndata: after\n\n"
            ),
            &["too large 40 [3]", "|after|"],
        );
        // ... or once found while skipping, across data lines, ...
        check(
            40,
            &format!("data: {{\"result\":\"{big}\",\ndata: \"id\":\"s1\"}}\n\n"),
            &["too large 40 []", "too large 40 [\"s1\"]"],
        );
        // ... and not for a server request or notification.
        check(
            40,
            &format!("data: {{\"id\":3,\"method\":\"x\",\"params\":\"{big}\"}}\n\n"),
            &["too large 40 []"],
        );
        // Comments only count against the cap on one line.
        check(40, &format!(": {big}\n: short\ndata: a\n\n"), &["|a|"]);
        // An oversized event cut off by the end of the stream still reports.
        check(
            40,
            &format!("data: {{\"result\":\"{big}\",\"id\":9"),
            &["too large 40 []", "too large 40 [9]"],
        );
    }
}
