//! Spans for what a connection sends to Postgres: one per transaction (the
//! outermost; savepoints stay inside it) and one per statement, fed from
//! diesel's instrumentation events (crate::db installs the hook on every
//! connection).
//!
//! A statement's span starts at `StartQuery` and ends at `FinishQuery`.
//! Pipelined statements finish in the order they were sent, so the open
//! spans are a queue. A statement whose future was dropped before it finished
//! never reports; the queue is bounded so such spans cannot pile up (they end
//! when the connection, and this struct, is dropped or the queue overflows).

use std::collections::VecDeque;

use diesel::connection::InstrumentationEvent;

/// More open statements than this on one connection means some will never
/// finish: the oldest are ended.
const MAX_OPEN: usize = 32;
/// Statement text kept on a span; the rest is cut.
const MAX_STATEMENT_CHARS: usize = 2_000;

#[derive(Default)]
pub(crate) struct StatementSpans {
    transaction: Option<tracing::Span>,
    open: VecDeque<tracing::Span>,
}

impl StatementSpans {
    /// Called for every event of the connection; a no-op while tracing is off.
    pub(crate) fn on_event(&mut self, event: &InstrumentationEvent<'_>) {
        if !super::enabled() {
            if self.transaction.is_some() || !self.open.is_empty() {
                *self = Self::default();
            }
            return;
        }
        // Statements outside any request or job (the workers' polls, the
        // outbox, writers behind the answer) would each be a trace of one
        // span: noise, so they are left out.
        let traced = self.transaction.is_some() || !tracing::Span::current().is_none();
        match event {
            InstrumentationEvent::StartQuery { query, .. } => {
                // An untraced statement keeps its place in the queue (a
                // disabled span), so the finishes still pair up in order.
                let span = if traced {
                    let text = statement_text(&query.to_string());
                    statement_span(self.transaction.as_ref(), &text)
                } else {
                    tracing::Span::none()
                };
                if self.open.len() >= MAX_OPEN {
                    self.open.pop_front();
                }
                self.open.push_back(span);
            }
            InstrumentationEvent::FinishQuery { error, .. } => {
                if let Some(span) = self.open.pop_front()
                    && let Some(error) = error
                {
                    span.record("otel.status_code", "ERROR");
                    span.record("error.message", tracing::field::display(error));
                }
            }
            InstrumentationEvent::BeginTransaction { depth, .. } if depth.get() == 1 && traced => {
                self.transaction = Some(tracing::info_span!(
                    "db.transaction",
                    otel.name = "transaction",
                    otel.kind = "client",
                    db.system = "postgresql",
                    outcome = tracing::field::Empty,
                ));
            }
            InstrumentationEvent::CommitTransaction { depth, .. } if depth.get() == 1 => {
                if let Some(span) = self.transaction.take() {
                    span.record("outcome", "commit");
                }
            }
            InstrumentationEvent::RollbackTransaction { depth, .. } if depth.get() == 1 => {
                if let Some(span) = self.transaction.take() {
                    span.record("outcome", "rollback");
                }
            }
            _ => {}
        }
    }
}

fn statement_span(transaction: Option<&tracing::Span>, text: &str) -> tracing::Span {
    let name = text
        .split_whitespace()
        .next()
        .unwrap_or("statement")
        .to_ascii_uppercase();
    // Inside a transaction its span is the parent; otherwise the current
    // span (the request's or the job's).
    let parent = transaction.cloned().unwrap_or_else(tracing::Span::current);
    tracing::info_span!(
        parent: &parent,
        "db.statement",
        otel.name = %name,
        otel.kind = "client",
        otel.status_code = tracing::field::Empty,
        error.message = tracing::field::Empty,
        db.system = "postgresql",
        db.statement = %text,
    )
}

/// The SQL alone: diesel's rendering appends the bind values, which may be
/// secrets (password hashes, tokens) and never leave the process.
fn statement_text(rendered: &str) -> String {
    let sql = rendered
        .split_once(" -- binds: ")
        .map_or(rendered, |(sql, _)| sql)
        .trim();
    match sql.char_indices().nth(MAX_STATEMENT_CHARS) {
        Some((cut, _)) => format!("{}…", &sql[..cut]),
        None => sql.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::statement_text;

    #[test]
    fn bind_values_are_not_kept() {
        assert_eq!(
            statement_text(r#"SELECT 1 WHERE "a" = $1 -- binds: ["secret"]"#),
            r#"SELECT 1 WHERE "a" = $1"#
        );
    }

    #[test]
    fn long_statements_are_cut() {
        let long = "x".repeat(5_000);
        assert_eq!(statement_text(&long).chars().count(), 2_001);
    }
}
