//! Forwarding one request and relaying the answer: the exchange runs on
//! the worker's upstream pool; the answer's head is written as soon as it
//! is read and each part of the body as soon as it arrives (re-chunked
//! when the upstream did not give a length). Meanwhile the client socket
//! is watched: a client that goes away drops the upstream connection
//! (closing it), which is how the upstream learns the request is
//! cancelled.

use std::io::Write as _;
use std::panic::{AssertUnwindSafe, catch_unwind};

use bytes::Bytes;
use monoio::net::TcpStream;

use super::events::{Edit, EventEditor};
use super::parse::{ConnHeader, HeadMeta, has_body, reason};
use super::{Conn, ReadEnd};
use crate::http1::chunked;
use crate::server::{AnswerPlan, Forward, Response, Service, UpstreamFailure, WatchedAnswer};
use crate::sock::{self, Peek};
use crate::upstream::answer::BodyState;
use crate::upstream::pool::UpstreamConn;
use crate::upstream::{AnswerHead, BodyFraming};

/// An answer being relayed as it arrives: where its body stands, and the
/// copy the service watches.
struct Streamed {
    upstream: UpstreamConn,
    head: AnswerHead,
    body: BodyState,
    /// Body bytes read and not yet relayed.
    data: Vec<u8>,
    /// More of the body is still to come.
    more: bool,
    /// The watched copy (`Forward::watch`); dropped once over the limit.
    tee: Option<Vec<u8>>,
    /// The watched copy was completed before the relay started.
    teed: bool,
}

/// Who edits the events of a relayed event stream.
#[derive(Clone, Copy, PartialEq, Eq)]
enum EventEdits {
    /// [`Service::edit_answer`], each response event.
    Edit,
    /// [`Service::rewrite_answer`], every response event.
    Rewrite,
}

impl<S: Service, IO: super::ClientIo> Conn<'_, S, IO> {
    /// Forwards `request` (already encoded for the upstream) and relays the
    /// answer as `forward.plan` says; or answers the failure through the
    /// service.
    pub(super) async fn forward(
        &mut self,
        forward: Forward<S::Pending>,
        request: Bytes,
        meta: HeadMeta,
    ) -> Result<(), ReadEnd> {
        // Answers to earlier pipelined requests go first.
        self.flush().await?;
        let worker = self.worker;
        let exchanged = match &self.pool {
            None => Some(Err(UpstreamFailure::Unreachable)),
            Some(pool) => {
                monoio::select! {
                    r = pool.exchange(request) => Some(r),
                    () = client_gone(self.stream.socket()) => None,
                }
            }
        };
        let (upstream, mut head) = match exchanged {
            // The exchange (and its connection) was dropped with the select.
            None => return Err(ReadEnd::Closed),
            Some(Err(failure)) => return self.fail(&forward, failure, meta).await,
            Some(Ok(exchanged)) => exchanged,
        };
        if forward.seal_session
            && !seal_session_ids(&*worker.service, &forward.pending, &mut head.headers)
        {
            // Nothing of the answer is out yet; its connection is dropped
            // with its body unread.
            return self.fail(&forward, UpstreamFailure::BadAnswer, meta).await;
        }
        let service = &*worker.service;
        if catch_unwind(AssertUnwindSafe(|| {
            service.answer_headers(&forward.pending, &mut head.headers)
        }))
        .is_err()
        {
            return self.fail(&forward, UpstreamFailure::BadAnswer, meta).await;
        }
        let success = (200..300).contains(&head.status);
        let plan = match forward.plan {
            AnswerPlan::RewriteEvents if head.event_stream && success => AnswerPlan::RewriteEvents,
            // Every answer to rewrite is rewritten, whatever its status (a
            // client reads any 2xx body, and may show an error's): held
            // whole.
            AnswerPlan::Rewrite | AnswerPlan::RewriteEvents if has_body(head.status) => {
                return self.relay_rewritten(forward, upstream, head, meta).await;
            }
            // Nothing to rewrite.
            AnswerPlan::Rewrite | AnswerPlan::RewriteEvents => AnswerPlan::Relay,
            plan => plan,
        };
        let Some(answer) = start_body(upstream, head, forward.watch) else {
            return self.cut().await;
        };
        match plan {
            AnswerPlan::Edit => self.relay_edited(forward, answer, meta).await,
            AnswerPlan::RewriteEvents => self.relay_events_rewritten(forward, answer, meta).await,
            AnswerPlan::Relay | AnswerPlan::Rewrite => {
                self.relay_stream(forward, answer, meta, None).await
            }
        }
    }

    /// Answers the client through the service: nothing of the upstream's
    /// answer is out yet.
    async fn fail(
        &mut self,
        forward: &Forward<S::Pending>,
        failure: UpstreamFailure,
        meta: HeadMeta,
    ) -> Result<(), ReadEnd> {
        let resp = failure_answer(&*self.worker.service, &forward.pending, failure);
        self.answer(resp, meta.keep_alive, false, meta).await
    }

    /// [`AnswerPlan::Edit`]: a JSON answer held whole, within the body
    /// limit, and an event stream's response events, each handed to
    /// [`Service::edit_answer`].
    async fn relay_edited(
        &mut self,
        forward: Forward<S::Pending>,
        mut answer: Streamed,
        meta: HeadMeta,
    ) -> Result<(), ReadEnd> {
        let limit = self.worker.limits.body_limit;
        if answer.head.event_stream {
            // An event stream of unknown length: its response event edited.
            let edits = matches!(
                answer.head.framing,
                BodyFraming::Chunked | BodyFraming::UntilClose
            )
            .then_some((EventEditor::new(limit), EventEdits::Edit));
            return self.relay_stream(forward, answer, meta, edits).await;
        }
        if answer.head.status != 200 {
            return self.relay_stream(forward, answer, meta, None).await;
        }
        let Streamed {
            upstream,
            body,
            data,
            more,
            ..
        } = &mut answer;
        let Some(rest) = self.hold(upstream, body, data, *more, limit).await? else {
            // Nothing of the answer is out yet: the client is answered.
            return self.fail(&forward, UpstreamFailure::BadAnswer, meta).await;
        };
        answer.more = rest;
        let whole = (!answer.more && answer.data.len() <= limit).then_some(answer.data.as_slice());
        let service = &*self.worker.service;
        let edited = catch_unwind(AssertUnwindSafe(|| {
            service.edit_answer(&forward.pending, &answer.head.headers, whole)
        }))
        .ok()
        .flatten();
        if let Some(edited) = edited {
            if let Some(copy) = &mut answer.tee {
                // What is watched is the upstream's own answer.
                copy.extend_from_slice(&answer.data);
                answer.teed = true;
            }
            answer.data = edited;
            answer.head.framing = BodyFraming::Length(answer.data.len() as u64);
        }
        self.relay_stream(forward, answer, meta, None).await
    }

    /// [`AnswerPlan::RewriteEvents`] on a 2xx event stream: each response
    /// event handed to [`Service::rewrite_answer`] as it arrives.
    async fn relay_events_rewritten(
        &mut self,
        forward: Forward<S::Pending>,
        mut answer: Streamed,
        meta: HeadMeta,
    ) -> Result<(), ReadEnd> {
        // Every response in the stream is edited: a length the upstream
        // gave no longer holds.
        if matches!(answer.head.framing, BodyFraming::Length(_)) {
            answer.head.framing = BodyFraming::UntilClose;
        }
        let editor = EventEditor::every_response(self.worker.limits.body_limit);
        let edits = Some((editor, EventEdits::Rewrite));
        self.relay_stream(forward, answer, meta, edits).await
    }

    /// [`AnswerPlan::Relay`], and the step the other plans but a whole
    /// rewrite end with: writes the answer's head, then its body as it
    /// arrives (through the event editor when there is one), re-chunked
    /// when its length is not known; puts the upstream connection back and
    /// hands the watched copy over at the end.
    async fn relay_stream(
        &mut self,
        forward: Forward<S::Pending>,
        answer: Streamed,
        meta: HeadMeta,
        mut events: Option<(EventEditor, EventEdits)>,
    ) -> Result<(), ReadEnd> {
        let worker = self.worker;
        let idle = idle_timeout(&self.pool);
        let limit = worker.limits.body_limit;
        let Streamed {
            mut upstream,
            head,
            mut body,
            mut data,
            mut more,
            mut tee,
            teed,
        } = answer;
        let close = !meta.keep_alive
            || worker.shutting_down.get()
            || worker.signal.is_triggered()
            // An HTTP/1.0 client learns where a body of unknown length
            // ends from the close.
            || (meta.http10 && matches!(head.framing, BodyFraming::Chunked | BodyFraming::UntilClose));
        let rechunk = !meta.http10
            && has_body(head.status)
            && matches!(head.framing, BodyFraming::Chunked | BodyFraming::UntilClose);
        let conn = ConnHeader::of(close, meta.http10);
        encode_answer_head(&mut self.out, &head, conn, rechunk);
        let mut relayed = Vec::new();

        loop {
            if !data.is_empty() {
                if !teed && let Some(copy) = &mut tee {
                    if copy.len() + data.len() <= limit {
                        copy.extend_from_slice(&data);
                    } else {
                        // Too large to watch; the relay goes on untouched.
                        tee = None;
                    }
                }
                match &mut events {
                    Some((editor, edits)) => {
                        let service = &*worker.service;
                        let pending = &forward.pending;
                        let headers = &head.headers;
                        let status = head.status;
                        let edits = *edits;
                        editor.feed(&data, &mut relayed, &mut |json| {
                            if edits == EventEdits::Rewrite {
                                return rewrite_event(service, pending, status, json);
                            }
                            catch_unwind(AssertUnwindSafe(|| {
                                service.edit_answer(pending, headers, json)
                            }))
                            .ok()
                            .flatten()
                            .map_or(Edit::Unchanged, Edit::Edited)
                        });
                        self.write_piece(&relayed, rechunk);
                        relayed.clear();
                    }
                    None => self.write_piece(&data, rechunk),
                }
                data.clear();
            }
            if !more && let Some((editor, _)) = &mut events {
                editor.finish(&mut relayed);
                self.write_piece(&relayed, rechunk);
            }
            if !more && rechunk {
                self.out.extend_from_slice(chunked::LAST_CHUNK);
            }
            self.flush().await?;
            if !more {
                break;
            }
            more = self
                .next_piece(&mut upstream, &mut body, &mut data, idle)
                .await?;
        }
        if head.keep_alive
            && let Some(pool) = &self.pool
        {
            pool.put_back(upstream);
        }
        if let Some(copy) = tee {
            let answer = WatchedAnswer {
                status: head.status,
                event_stream: head.event_stream,
                body: &copy,
            };
            hand_watched(&*worker.service, forward.pending, answer);
        }
        if close {
            return Err(ReadEnd::Closed);
        }
        Ok(())
    }

    /// Reads a whole answer (at most the body limit), and sends what the
    /// service makes of it with its own length; the service watches the
    /// answer as the upstream sent it. An empty body is sent as it is. One
    /// the service refuses (or too large to hold) is never sent: a 2xx
    /// answer is answered 502, another keeps its status and loses its
    /// body.
    async fn relay_rewritten(
        &mut self,
        forward: Forward<S::Pending>,
        mut upstream: UpstreamConn,
        head: AnswerHead,
        meta: HeadMeta,
    ) -> Result<(), ReadEnd> {
        let worker = self.worker;
        let service = &*worker.service;
        let limit = worker.limits.body_limit;
        let mut state = BodyState::new(head.framing);
        let mut body = Vec::new();
        let held = match upstream.take_buffered(&mut state, &mut body) {
            Ok(()) => {
                let more = !state.is_done();
                self.hold(&mut upstream, &mut state, &mut body, more, limit)
                    .await?
            }
            Err(_) => None,
        };
        // Whole: nothing more to come, and within the limit.
        let whole = held == Some(false) && body.len() <= limit;
        let answer = WatchedAnswer {
            status: head.status,
            event_stream: head.event_stream,
            body: &body,
        };
        let rewritten = whole
            .then(|| {
                if body.is_empty() {
                    return Some(Vec::new());
                }
                catch_unwind(AssertUnwindSafe(|| {
                    service.rewrite_answer(&forward.pending, answer)
                }))
                .ok()
                .flatten()
            })
            .flatten();
        let rewritten = match rewritten {
            Some(rewritten) => rewritten,
            // The status of an answer that is no success still tells.
            None if held.is_some() && !(200..300).contains(&head.status) => Vec::new(),
            None => {
                return self.fail(&forward, UpstreamFailure::BadAnswer, meta).await;
            }
        };
        // Only a connection whose answer was read to its end serves again.
        if head.keep_alive
            && held == Some(false)
            && let Some(pool) = &self.pool
        {
            pool.put_back(upstream);
        }
        let close = !meta.keep_alive || worker.shutting_down.get() || worker.signal.is_triggered();
        let conn = ConnHeader::of(close, meta.http10);
        let sent = AnswerHead {
            framing: BodyFraming::Length(rewritten.len() as u64),
            ..head
        };
        encode_answer_head(&mut self.out, &sent, conn, false);
        self.out.extend_from_slice(&rewritten);
        self.flush().await?;
        if forward.watch {
            hand_watched(service, forward.pending, answer);
        }
        if close {
            return Err(ReadEnd::Closed);
        }
        Ok(())
    }

    /// Queues a part of the answer's body (a chunk of its own when
    /// `rechunk`).
    fn write_piece(&mut self, piece: &[u8], rechunk: bool) {
        if piece.is_empty() {
            return;
        }
        if rechunk {
            chunked::encode_chunk(&mut self.out, piece);
        } else {
            self.out.extend_from_slice(piece);
        }
    }

    /// Reads the answer's body into `data` until it is whole or past
    /// `limit`, the client watched meanwhile: whether more is still to
    /// come, or `None` when the upstream stopped before the end (nothing of
    /// the answer has been sent, so the client can still be answered).
    async fn hold(
        &mut self,
        upstream: &mut UpstreamConn,
        body: &mut BodyState,
        data: &mut Vec<u8>,
        mut more: bool,
        limit: usize,
    ) -> Result<Option<bool>, ReadEnd> {
        let idle = idle_timeout(&self.pool);
        while more && data.len() <= limit {
            let next = monoio::select! {
                r = upstream.next_piece(body, data, idle) => Some(r),
                () = client_gone(self.stream.socket()) => None,
            };
            match next {
                None => return Err(ReadEnd::Closed),
                Some(Ok(m)) => more = m,
                Some(Err(_)) => return Ok(None),
            }
        }
        Ok(Some(more))
    }

    /// Appends the next part of the answer's body to `data` while the
    /// client is watched: whether more may come, or the end of the relay
    /// (the client gone, or the upstream idle too long or broken: once the
    /// head is out, the client learns that from the close).
    async fn next_piece(
        &mut self,
        upstream: &mut UpstreamConn,
        body: &mut BodyState,
        data: &mut Vec<u8>,
        idle: std::time::Duration,
    ) -> Result<bool, ReadEnd> {
        let next = monoio::select! {
            r = upstream.next_piece(body, data, idle) => Some(r),
            () = client_gone(self.stream.socket()) => None,
        };
        match next {
            Some(Ok(more)) => Ok(more),
            Some(Err(_)) => {
                tracing::warn!("the upstream's answer stopped before its end; closing");
                self.cut().await.map(|()| false)
            }
            None => Err(ReadEnd::Closed),
        }
    }

    /// Ends a relay that cannot be completed: writes what is queued and
    /// closes.
    async fn cut(&mut self) -> Result<(), ReadEnd> {
        let _ = self.flush().await;
        Err(ReadEnd::Closed)
    }
}

/// How long an answer's body may stay silent: its upstream's setting.
fn idle_timeout(pool: &Option<std::rc::Rc<crate::upstream::Pool>>) -> std::time::Duration {
    pool.as_ref()
        .map(|pool| pool.config().idle_timeout)
        .unwrap_or_default()
}

/// The service's answer to a forward that got nothing to relay.
fn failure_answer<S: Service>(
    service: &S,
    pending: &S::Pending,
    failure: UpstreamFailure,
) -> Response {
    catch_unwind(AssertUnwindSafe(|| {
        service.on_upstream_failure(pending, failure)
    }))
    .unwrap_or_else(|_| Response::empty(500))
}

/// Hands a relayed answer to the service's watch.
fn hand_watched<S: Service>(service: &S, pending: S::Pending, answer: WatchedAnswer<'_>) {
    if catch_unwind(AssertUnwindSafe(|| service.on_answer(pending, answer))).is_err() {
        tracing::error!("the service panicked watching an answer");
    }
}

/// The start of an answer's body: what the upstream connection already
/// holds of it taken; `None` when that is malformed.
fn start_body(mut upstream: UpstreamConn, head: AnswerHead, watch: bool) -> Option<Streamed> {
    let mut body = BodyState::new(head.framing);
    let mut data = Vec::new();
    upstream.take_buffered(&mut body, &mut data).ok()?;
    Some(Streamed {
        more: !body.is_done(),
        upstream,
        head,
        body,
        data,
        tee: watch.then(Vec::new),
        teed: false,
    })
}

/// Every `Mcp-Session-Id` of an answer's `headers` (each `Name: value\r\n`)
/// sealed in place by the service; `false` when one cannot be (the answer
/// is not relayed).
fn seal_session_ids<S: Service>(service: &S, pending: &S::Pending, headers: &mut Vec<u8>) -> bool {
    const NAME: &[u8] = b"mcp-session-id: ";
    let mut at = 0;
    while let Some(eol) = headers[at..].iter().position(|&b| b == b'\n') {
        let end = at + eol + 1;
        if !headers[at..end]
            .get(..NAME.len())
            .is_some_and(|n| n.eq_ignore_ascii_case(NAME))
        {
            at = end;
            continue;
        }
        let start = at + NAME.len();
        let value = start..end.saturating_sub(2).max(start);
        let before = headers.len();
        let sealed = catch_unwind(AssertUnwindSafe(|| {
            service.seal_session(pending, headers, value)
        }));
        if !matches!(sealed, Ok(true)) {
            return false;
        }
        at = end + headers.len() - before;
    }
    true
}

/// What the service makes of one response event's data on a stream whose
/// every response it rewrites: the event is left out when it refuses it,
/// panics, or the event was too long to hold (`None`).
fn rewrite_event<S: Service>(
    service: &S,
    pending: &S::Pending,
    status: u16,
    json: Option<&[u8]>,
) -> Edit {
    let Some(json) = json else {
        return Edit::Dropped;
    };
    let answer = WatchedAnswer {
        status,
        event_stream: false,
        body: json,
    };
    match catch_unwind(AssertUnwindSafe(|| service.rewrite_answer(pending, answer))) {
        Ok(Some(rewritten)) if rewritten == json => Edit::Unchanged,
        Ok(Some(rewritten)) => Edit::Edited(rewritten),
        _ => Edit::Dropped,
    }
}

/// The status line and headers of a relayed answer, with its framing for
/// the client and the connection header.
fn encode_answer_head(out: &mut Vec<u8>, head: &AnswerHead, conn: ConnHeader, rechunk: bool) {
    let _ = write!(out, "HTTP/1.1 {} {}\r\n", head.status, reason(head.status));
    out.extend_from_slice(&head.headers);
    if has_body(head.status) {
        match head.framing {
            BodyFraming::None => out.extend_from_slice(b"Content-Length: 0\r\n"),
            BodyFraming::Length(n) => {
                let _ = write!(out, "Content-Length: {n}\r\n");
            }
            BodyFraming::Chunked | BodyFraming::UntilClose if rechunk => {
                out.extend_from_slice(b"Transfer-Encoding: chunked\r\n");
            }
            BodyFraming::Chunked | BodyFraming::UntilClose => {}
        }
    }
    match conn {
        ConnHeader::Close => out.extend_from_slice(b"Connection: close\r\n"),
        ConnHeader::KeepAlive => out.extend_from_slice(b"Connection: keep-alive\r\n"),
        ConnHeader::None => {}
    }
    out.extend_from_slice(b"\r\n");
}

/// Completes when the client has closed its side (or its socket failed).
/// Bytes waiting to be read (a pipelined request) are left for later, and
/// the watch then never completes: the request waits its turn.
///
/// Armed from the start of each wait: arming it only a few ms in saved its
/// probe but no CPU a run could show.
async fn client_gone(stream: &TcpStream) {
    loop {
        if stream.readable(false).await.is_err() {
            return;
        }
        match sock::peek(stream) {
            Peek::Closed => return,
            Peek::Data => std::future::pending::<()>().await,
            Peek::Nothing => {}
        }
    }
}
