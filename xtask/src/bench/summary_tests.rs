//! Unit tests of `summary`.

use super::*;

#[test]
fn numbers_are_read_from_the_notes() {
    assert_eq!(
        number_before("8.6 s end to end (11,661 deals/s)", " s end to end"),
        Some(8.6)
    );
    assert_eq!(number_after("p50 +7.9% against", "p50 "), Some(7.9));
    assert_eq!(number_after("p50 -0.4% against", "p50 "), Some(-0.4));
    assert_eq!(number_before("11,241 req/s (87%)", " req/s"), Some(11241.0));
    assert_eq!(leading_number("15,569 req/s; pgbench -"), Some(15569.0));
    assert_eq!(thousands(Some(1234567.4)), "1,234,567");
    assert_eq!(thousands(Some(999.0)), "999");
}

#[test]
fn a_run_keeps_the_rows_it_did_not_measure() {
    let doc = format!(
        "# B\n\n{BEGIN}\n\n{HEAD}| roles list (tenant admin) | ≥ 50% of `/auth/profile` | 15,425 req/s (114% of `/auth/profile`) | met | 13,546 req/s; pgbench - | stop 39, `c617198`, 2026-11-28 | 15 |\n{END}\n"
    );
    let yard = Yardstick {
        profile_rps: Some(10_000.0),
        pgbench_tps: Some(20_000.0),
        commit: "abc1234".into(),
        date: "2026-12-01".into(),
    };
    let (block, lines) = block(&doc, &[], &yard);
    assert!(block.contains("| roles list (tenant admin) | ≥ 50% of `/auth/profile` | 15,425"));
    assert!(block.contains(
        "| bulk stage update of 100,000 deals | ≤ 10 s; peak ≤ 76.3 MiB | not measured yet"
    ));
    let (throughput, p99) = bars(&lines);
    assert_eq!(throughput.len(), 1);
    assert_eq!(throughput[0].target, Some(0.5 * 13_546.0));
    assert!(p99.is_empty());
    let updated = replace(&doc, &block);
    assert_eq!(updated.matches(BEGIN).count(), 1);
}

#[test]
fn a_share_is_taken_of_the_profile_read_beside_its_row() {
    let mut row = Row::measured("GET /api/api_keys/keys", 8_000.0, 5.0);
    row.add_note("profile beside it 10,000 req/s");
    // 8,000 of the run's first 20,000 misses; of the 10,000 beside it, meets.
    let (figure, met) =
        measure(Goal::ShareOfProfile(0.75), &row, Some(20_000.0)).expect("a figure");
    assert!(met, "{figure}");
    assert_eq!(
        figure,
        "8,000 req/s (80% of `/auth/profile`, profile beside it 10,000 req/s)"
    );
    let (throughput, _) = bars(&[format!(
        "| API keys list | ≥ 75% of `/auth/profile` | {figure} | met | 20,000 req/s; pgbench - | `abc`, d | 52 |"
    )]);
    assert_eq!(throughput[0].target, Some(0.75 * 10_000.0));
}
