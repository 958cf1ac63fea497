use diesel::pg::Pg;
use time::OffsetDateTime;

use super::rows::Rows;
use super::*;

#[test]
fn batches_are_powers_of_two_up_to_the_cap() {
    assert_eq!(batch_len(0), 0);
    assert_eq!(batch_len(1), 1);
    assert_eq!(batch_len(3), 2);
    assert_eq!(batch_len(9), 8);
    assert_eq!(batch_len(16), 16);
    assert_eq!(batch_len(5000), 16);
}

fn log() -> Arc<ReadLog> {
    Arc::new(ReadLog {
        actor: Default::default(),
        resource_kind: "test.thing",
        ids: vec!["a".into(), "b".into()],
        by_id: false,
        fields: &["id"],
        path: "/api/things",
    })
}

#[test]
fn a_batch_is_one_idempotent_statement_with_a_row_per_entry() {
    let batch = [
        Row::new(&Pending::now(&log())),
        Row::new(&Pending::now(&log())),
    ];
    let sql = diesel::debug_query::<Pg, _>(&Rows::new(&batch, true)).to_string();
    assert_eq!(sql.matches("jsonb_build_object").count(), 2, "{sql}");
    assert!(
        sql.contains("ON CONFLICT (id, created_at) DO NOTHING"),
        "{sql}"
    );
    assert!(sql.contains("set_config('synchronous_commit', 'off', true)"));
    let sql = diesel::debug_query::<Pg, _>(&Rows::new(&batch, false)).to_string();
    assert!(!sql.contains("set_config"), "{sql}");
}

/// A read of `log` queued `ms` milliseconds after `start`.
fn read_at(log: &Arc<ReadLog>, start: OffsetDateTime, ms: i64) -> Pending {
    Pending {
        at: start + time::Duration::milliseconds(ms),
        ..Pending::now(log)
    }
}

fn shape(batch: &Batch) -> (Vec<usize>, usize) {
    (batch.rows.iter().map(Row::reads).collect(), batch.taken)
}

#[test]
fn repeated_reads_of_one_answer_share_a_row_within_the_span() {
    let (a, b) = (log(), log());
    let t = OffsetDateTime::now_utc();
    // Interleaved answers each keep their row; a read past the span, or
    // dated before its row (a clock set back), starts another.
    let queue: VecDeque<_> = [
        read_at(&a, t, 0),
        read_at(&b, t, 1),
        read_at(&a, t, 2),
        read_at(&a, t, 10),
        read_at(&b, t, 12),
        read_at(&a, t, 11),
        read_at(&a, t, 8),
    ]
    .into();
    let batch = cut(&queue);
    // Rows a(0, 2, 10), b(1), b(12), a(11); a(8) would be a fifth row,
    // so the batch is cut back to four and that read waits.
    assert_eq!(shape(&batch), (vec![3, 1, 1, 1], 6));
    let first = &batch.rows[0];
    assert_eq!(
        (first.first.at, first.first.base),
        (queue[0].at, queue[0].base),
        "a row is its first read's"
    );
    assert_eq!(first.repeat_bases, vec![queue[2].base, queue[3].base]);
    assert_eq!(first.repeat_ats, vec![queue[2].at, queue[3].at]);
}

#[test]
fn a_row_holds_at_most_max_repeats_and_a_batch_at_most_max_batch_rows() {
    let a = log();
    let t = OffsetDateTime::now_utc();
    let queue: VecDeque<_> = (0..2000).map(|_| read_at(&a, t, 0)).collect();
    let batch = cut(&queue);
    assert_eq!(batch.rows.len(), MAX_BATCH);
    assert!(batch.rows.iter().all(|row| row.reads() == MAX_REPEATS + 1));
    assert_eq!(batch.taken, MAX_BATCH * (MAX_REPEATS + 1));
    // Distinct answers: one row each, a power of two of them.
    let logs: Vec<_> = (0..5).map(|_| log()).collect();
    let queue: VecDeque<_> = logs.iter().map(|l| read_at(l, t, 0)).collect();
    assert_eq!(shape(&cut(&queue)), (vec![1; 4], 4));
}

#[test]
fn without_a_runtime_nothing_is_queued() {
    let db = Db::from_url("postgres://x@127.0.0.1:1/none", 1, Duration::from_millis(1));
    let Ok(db) = db else {
        panic!("a pool is built without connecting");
    };
    assert!(!log_behind(&db, &log()));
    assert_eq!(db.access_queue().pending(), 0);
}
