//! What a pattern needs of a file: an AND-OR of trigrams, read off the
//! pattern's syntax tree (`regex-syntax`, the parser `grep-regex` itself
//! uses, so both see the same pattern, case folding included).
//!
//! The plan is a *necessary* condition: every line the matcher can match
//! contains, in one of the alternatives, all of that alternative's trigrams.
//! Trigrams are taken with ASCII letters folded to lower case, in the pattern
//! and in the files alike, so a case-insensitive class `[Kk\u{212A}]` needs
//! `k` or the three bytes of the Kelvin sign, never a trigram it cannot see.

use regex_syntax::hir::{Class, Hir, HirKind};

/// Most strings a literal set may hold before it is given up.
const MAX_SET: usize = 32;
/// Most characters a class may have to be expanded into literals.
const MAX_CLASS: usize = 10;

/// What a file must contain for the pattern to match a line of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Query {
    /// No constraint: every file can match.
    All,
    /// Nothing can match (an empty class).
    Nothing,
    /// This trigram (ASCII folded), as `b0 << 16 | b1 << 8 | b2`.
    Gram(u32),
    /// This string (ASCII folded, at least 4 bytes, no line break): all
    /// its trigrams, each at the byte after the previous one's start.
    Phrase(Vec<u8>),
    And(Vec<Query>),
    Or(Vec<Query>),
}

/// The plan for a `search_files` query, or `None` when the pattern does not
/// parse here (the caller then scans every file).
pub(crate) fn plan(query: &str, regex: bool, case_insensitive: bool) -> Option<Query> {
    let pattern = if regex {
        query.to_string()
    } else {
        regex_syntax::escape(query)
    };
    let hir = regex_syntax::ParserBuilder::new()
        .case_insensitive(case_insensitive)
        .utf8(false)
        .build()
        .parse(&pattern)
        .ok()?;
    Some(into_query(analyze(&hir)))
}

/// A trigram of three bytes, ASCII folded.
pub(crate) fn gram(a: u8, b: u8, c: u8) -> u32 {
    u32::from(a.to_ascii_lowercase()) << 16
        | u32::from(b.to_ascii_lowercase()) << 8
        | u32::from(c.to_ascii_lowercase())
}

/// Whether a window of three bytes is indexed: matches are within one line,
/// so a trigram across a line break is never needed.
pub(crate) fn indexed_window(w: &[u8]) -> bool {
    !w.contains(&b'\n')
}

/// What is known of a sub-pattern.
struct Info {
    /// Exactly the strings it can match, when that set is small.
    exact: Option<Vec<Vec<u8>>>,
    /// What else any match needs (beyond `exact`).
    query: Query,
}

impl Info {
    fn exact(set: Vec<Vec<u8>>) -> Info {
        Info {
            exact: Some(set),
            query: Query::All,
        }
    }

    fn unknown(query: Query) -> Info {
        Info { exact: None, query }
    }
}

fn analyze(hir: &Hir) -> Info {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => Info::exact(vec![Vec::new()]),
        HirKind::Literal(lit) => Info::exact(vec![lit.0.to_ascii_lowercase()]),
        HirKind::Class(class) => match class_strings(class) {
            Some(set) => Info::exact(set),
            None => Info::unknown(Query::All),
        },
        HirKind::Capture(cap) => analyze(&cap.sub),
        HirKind::Repetition(rep) => {
            if rep.min == 0 {
                Info::unknown(Query::All)
            } else if rep.min == 1 && rep.max == Some(1) {
                analyze(&rep.sub)
            } else {
                Info::unknown(into_query(analyze(&rep.sub)))
            }
        }
        HirKind::Concat(subs) => concat(subs),
        HirKind::Alternation(subs) => {
            let infos: Vec<Info> = subs.iter().map(analyze).collect();
            let total: usize = infos
                .iter()
                .map(|i| i.exact.as_ref().map_or(usize::MAX / 2, Vec::len))
                .sum();
            if total <= MAX_SET && infos.iter().all(|i| i.query == Query::All) {
                let mut set = Vec::new();
                for info in infos {
                    set.extend(info.exact.unwrap_or_default());
                }
                Info::exact(set)
            } else {
                Info::unknown(or(infos.into_iter().map(into_query).collect()))
            }
        }
    }
}

fn concat(subs: &[Hir]) -> Info {
    let mut query = Query::All;
    let mut run: Vec<Vec<u8>> = vec![Vec::new()];
    let mut whole = true;
    for sub in subs {
        let info = analyze(sub);
        if info.query != Query::All {
            whole = false;
            query = and(vec![query, info.query]);
        }
        match info.exact {
            Some(set) if run.len().saturating_mul(set.len()) <= MAX_SET => {
                run = cross(&run, &set);
            }
            Some(set) => {
                whole = false;
                query = and(vec![query, flush(&run)]);
                run = set;
            }
            None => {
                whole = false;
                query = and(vec![query, flush(&run)]);
                run = vec![Vec::new()];
            }
        }
    }
    if whole {
        Info::exact(run)
    } else {
        Info::unknown(and(vec![query, flush(&run)]))
    }
}

fn cross(left: &[Vec<u8>], right: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let mut out = Vec::with_capacity(left.len() * right.len());
    for a in left {
        for b in right {
            let mut s = a.clone();
            s.extend_from_slice(b);
            out.push(s);
        }
    }
    out
}

/// The strings of a small class, each character as its UTF-8 bytes, ASCII
/// folded (trigrams and phrases are), so `[Dd]` is one string: a
/// case-insensitive literal stays one run instead of doubling at each
/// letter until the set is given up.
fn class_strings(class: &Class) -> Option<Vec<Vec<u8>>> {
    let mut out = class_bytes(class)?;
    for s in &mut out {
        s.make_ascii_lowercase();
    }
    out.sort_unstable();
    out.dedup();
    Some(out)
}

fn class_bytes(class: &Class) -> Option<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    match class {
        Class::Unicode(class) => {
            for range in class.ranges() {
                let (start, end) = (u32::from(range.start()), u32::from(range.end()));
                if (end - start) as usize >= MAX_CLASS
                    || out.len() + (end - start) as usize >= MAX_CLASS
                {
                    return None;
                }
                for c in (start..=end).filter_map(char::from_u32) {
                    out.push(c.to_string().into_bytes());
                }
            }
        }
        Class::Bytes(class) => {
            for range in class.ranges() {
                let (start, end) = (range.start(), range.end());
                if usize::from(end - start) >= MAX_CLASS
                    || out.len() + usize::from(end - start) >= MAX_CLASS
                {
                    return None;
                }
                for b in start..=end {
                    out.push(vec![b]);
                }
            }
        }
    }
    Some(out)
}

fn into_query(info: Info) -> Query {
    match info.exact {
        Some(set) => and(vec![info.query, flush(&set)]),
        None => info.query,
    }
}

/// Any of the strings: an OR over each string's pieces between line breaks
/// (ANDed), each a phrase (or the trigram of a 3-byte piece). A string too
/// short to have a trigram leaves no constraint.
fn flush(set: &[Vec<u8>]) -> Query {
    let mut alternatives = Vec::with_capacity(set.len());
    for s in set {
        let pieces: Vec<Query> = s
            .split(|&b| b == b'\n')
            .filter_map(|piece| match piece {
                [a, b, c] => Some(Query::Gram(gram(*a, *b, *c))),
                [_, _, _, ..] => Some(Query::Phrase(piece.to_ascii_lowercase())),
                _ => None,
            })
            .collect();
        if pieces.is_empty() {
            return Query::All;
        }
        alternatives.push(and(pieces));
    }
    or(alternatives)
}

/// The trigrams of a phrase, in order (one per byte offset).
pub(crate) fn phrase_grams(phrase: &[u8]) -> impl Iterator<Item = u32> + '_ {
    phrase.windows(3).map(|w| gram(w[0], w[1], w[2]))
}

/// The bit standing for a byte (ASCII folded) in a posting's mask of the
/// bytes that follow the trigram.
pub(crate) fn next_bit(b: u8) -> u8 {
    1 << (u32::from(b.to_ascii_lowercase()).wrapping_mul(0x9E37_79B1) >> 29)
}

fn and(parts: Vec<Query>) -> Query {
    let mut out = Vec::new();
    for part in parts {
        match part {
            Query::All => {}
            Query::Nothing => return Query::Nothing,
            Query::And(inner) => out.extend(inner),
            other => out.push(other),
        }
    }
    out.sort_unstable_by_key(order);
    out.dedup();
    match out.len() {
        0 => Query::All,
        1 => out.pop().unwrap_or(Query::All),
        _ => Query::And(out),
    }
}

fn or(parts: Vec<Query>) -> Query {
    let mut out = Vec::new();
    for part in parts {
        match part {
            Query::All => return Query::All,
            Query::Nothing => {}
            Query::Or(inner) => out.extend(inner),
            other => out.push(other),
        }
    }
    out.dedup();
    match out.len() {
        0 => Query::Nothing,
        1 => out.pop().unwrap_or(Query::Nothing),
        _ => Query::Or(out),
    }
}

/// Grams first (in order), so equal ones sit together for `dedup`.
fn order(q: &Query) -> (u8, u32) {
    match q {
        Query::Gram(g) => (0, *g),
        _ => (1, 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A literal's plan: its trigram, or a phrase of all of them.
    fn grams(s: &str) -> Query {
        match s.as_bytes() {
            [a, b, c] => Query::Gram(gram(*a, *b, *c)),
            b => Query::Phrase(b.to_ascii_lowercase()),
        }
    }

    #[test]
    fn a_literal_needs_all_its_trigrams_in_a_row() {
        assert_eq!(plan("Hello", false, false), Some(grams("hello")));
        assert_eq!(plan("a.b(", false, false), Some(grams("a.b(")));
        assert_eq!(plan("abc", false, false), Some(grams("abc")));
    }

    #[test]
    fn a_case_insensitive_literal_stays_one_phrase() {
        // Each letter is a class of two cases; folded, they are one string,
        // not a set that doubles per letter and is cut every five.
        assert_eq!(
            plan("Deprecated since", false, true),
            Some(or(vec![
                grams("deprecated since"),
                grams("deprecated \u{17F}ince")
            ]))
        );
    }

    #[test]
    fn a_regex_keeps_the_literal_runs_around_wildcards() {
        let q = plan(r"fn [a-z_]+_utf8_lossy\(", true, false);
        assert_eq!(q, Some(and(vec![grams("fn "), grams("_utf8_lossy(")])));
    }

    #[test]
    fn a_line_break_splits_a_phrase() {
        assert_eq!(
            plan(r"abcd\nefgh", true, false),
            Some(and(vec![grams("abcd"), grams("efgh")]))
        );
    }

    #[test]
    fn alternations_become_ors_and_short_pieces_no_constraint() {
        assert_eq!(
            plan("(foo|barx)", true, false),
            Some(or(vec![grams("foo"), grams("barx")]))
        );
        assert_eq!(plan("foo|ba", true, false), Some(Query::All));
        assert_eq!(plan(".", true, false), Some(Query::All));
        assert_eq!(plan("a.*b", true, false), Some(Query::All));
    }

    #[test]
    fn small_classes_expand_and_case_folding_keeps_non_ascii_forms() {
        assert_eq!(
            plan("ba[rz]x", true, false),
            Some(or(vec![grams("barx"), grams("bazx")]))
        );
        // `k` folds to the Kelvin sign too: the plan must allow it.
        let q = plan("kit", true, true).unwrap_or(Query::All);
        assert_ne!(q, grams("kit"));
        assert!(matches!(q, Query::Or(_)), "{q:?}");
    }

    #[test]
    fn an_empty_class_matches_nothing() {
        assert_eq!(
            plan(r"abc[^\x00-\x{10FFFF}]", true, false),
            Some(Query::Nothing)
        );
    }

    #[test]
    fn a_pattern_that_does_not_parse_has_no_plan() {
        assert_eq!(plan("(", true, false), None);
    }
}
