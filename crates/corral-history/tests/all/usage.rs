//! What a conversation's requests used and cost: summed with each entry
//! appended, kept across a restart, left behind by a fork, and summed by
//! day across every project.

use crate::common::{user, P};
use corral_history::{History, NewEntry, TokenUsage};
use corral_llm::Message;
use rusqlite::Connection;

fn reply(text: &str, usage: TokenUsage) -> NewEntry {
    NewEntry {
        message: Some(Message::assistant(text)),
        items: vec![],
        usage: Some(usage),
    }
}

fn used(input: i64, output: i64, cache_read: i64, cost: f64, unpriced: i64) -> TokenUsage {
    TokenUsage {
        input_tokens: input,
        output_tokens: output,
        cache_read_tokens: cache_read,
        cache_write_tokens: 0,
        cost_usd: cost,
        unpriced,
    }
}

#[test]
fn a_conversations_totals_add_up_and_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let history = History::new(dir.path());
    let id = history
        .append(P, None, &user("Hi"), "m")
        .unwrap()
        .conversation;
    history
        .append(
            P,
            Some(&id),
            &reply("One.", used(1000, 50, 800, 0.0012, 0)),
            "m",
        )
        .unwrap();
    history
        .append(
            P,
            Some(&id),
            &reply("Two.", used(2000, 70, 1500, 0.0025, 0)),
            "m",
        )
        .unwrap();
    // A request whose price was not known adds its tokens, not a cost.
    history
        .append(P, Some(&id), &reply("Three.", used(10, 5, 0, 0.0, 1)), "m")
        .unwrap();
    history.close();

    let again = History::new(dir.path());
    let summary = again.list(P).unwrap().remove(0);
    assert_eq!(
        (
            summary.input_tokens,
            summary.output_tokens,
            summary.cache_read_tokens,
            summary.cache_write_tokens,
            summary.unpriced
        ),
        (3010, 125, 2300, 0, 1)
    );
    assert!(
        (summary.cost_usd - 0.0037).abs() < 1e-12,
        "{}",
        summary.cost_usd
    );
    // Opened, it says the same.
    let opened = again.open(P, &id).unwrap().summary;
    assert_eq!(opened, summary);
}

#[test]
fn a_usage_that_is_not_a_count_is_refused_and_nothing_is_stored() {
    let dir = tempfile::tempdir().unwrap();
    let history = History::new(dir.path());
    let id = history
        .append(P, None, &user("Hi"), "m")
        .unwrap()
        .conversation;
    for bad in [
        used(-1, 0, 0, 0.0, 0),
        used(1, 1, 0, f64::NAN, 0),
        used(1, 1, 0, -0.5, 0),
    ] {
        assert!(history.append(P, Some(&id), &reply("x", bad), "m").is_err());
    }
    let summary = history.list(P).unwrap().remove(0);
    assert_eq!((summary.entries, summary.input_tokens), (1, 0));
}

#[test]
fn a_fork_starts_at_nothing_used_and_the_days_count_each_request_once() {
    let dir = tempfile::tempdir().unwrap();
    let history = History::new(dir.path());
    let id = history
        .append(P, None, &user("Hi"), "m")
        .unwrap()
        .conversation;
    history
        .append(P, Some(&id), &reply("One.", used(100, 10, 0, 0.5, 0)), "m")
        .unwrap();
    let fork = history.fork(P, &id, 10).unwrap();
    assert_eq!(
        (fork.input_tokens, fork.cost_usd, fork.unpriced),
        (0, 0.0, 0)
    );
    let days = history.usage_by_day(0, 30).unwrap();
    assert_eq!(days.len(), 1);
    assert_eq!(
        (days[0].usage.input_tokens, days[0].conversations),
        (100, 1)
    );
}

/// Sets when each stored entry of the history in `dir` was appended.
fn set_times(dir: &std::path::Path, times: &[(&str, i64, i64)]) {
    let conn = Connection::open(dir.join("history.db")).unwrap();
    for (conversation, seq, ms) in times {
        conn.execute(
            "UPDATE messages SET created_ms = ?3 WHERE conversation = ?1 AND seq = ?2",
            rusqlite::params![conversation, seq, ms],
        )
        .unwrap();
    }
}

#[test]
fn the_days_sum_every_projects_requests_in_the_time_zone_asked() {
    let dir = tempfile::tempdir().unwrap();
    let history = History::new(dir.path());
    let a = history
        .append(P, None, &user("Hi"), "m")
        .unwrap()
        .conversation;
    history
        .append(P, Some(&a), &reply("One.", used(100, 10, 40, 0.25, 0)), "m")
        .unwrap();
    history
        .append(P, Some(&a), &reply("Two.", used(200, 20, 0, 0.5, 0)), "m")
        .unwrap();
    let b = history
        .append("/q/other", None, &user("Hello"), "m")
        .unwrap()
        .conversation;
    history
        .append(
            "/q/other",
            Some(&b),
            &reply("Three.", used(1000, 100, 0, 0.0, 1)),
            "m",
        )
        .unwrap();
    let gone = history
        .append(P, None, &user("Bye"), "m")
        .unwrap()
        .conversation;
    history
        .append(P, Some(&gone), &reply("Four.", used(7, 7, 0, 7.0, 0)), "m")
        .unwrap();
    history.delete(P, &gone).unwrap();
    history.close();
    // 2025-03-01T23:30Z, 2025-03-02T00:30Z and 2025-03-02T10:00Z.
    let (late, after_midnight, morning) = (1_740_871_800_000, 1_740_875_400_000, 1_740_909_600_000);
    set_times(
        dir.path(),
        &[(&a, 1, late), (&a, 2, after_midnight), (&b, 1, morning)],
    );

    let history = History::new(dir.path());
    let utc = history.usage_by_day(0, 30).unwrap();
    let rows: Vec<_> = utc
        .iter()
        .map(|d| {
            (
                d.day.as_str(),
                d.usage.input_tokens,
                d.usage.output_tokens,
                d.usage.unpriced,
                d.conversations,
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("2025-03-02", 1200, 120, 1, 2),
            ("2025-03-01", 100, 10, 0, 1)
        ]
    );
    assert!((utc[0].usage.cost_usd - 0.5).abs() < 1e-12);
    assert_eq!(utc[1].usage.cache_read_tokens, 40);

    // An hour east of UTC, the first reply is already on the 2nd.
    let east = history.usage_by_day(60, 30).unwrap();
    assert_eq!(east.len(), 1);
    assert_eq!(
        (east[0].day.as_str(), east[0].usage.input_tokens),
        ("2025-03-02", 1300)
    );
    assert!((east[0].usage.cost_usd - 0.75).abs() < 1e-12);

    // Only the newest days asked for.
    assert_eq!(history.usage_by_day(0, 1).unwrap().len(), 1);
}
