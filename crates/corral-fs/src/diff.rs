//! Unified diffs of an edit. Edits change a few lines of large files, so the
//! identical head and tail are cut before diffing (a 1 MiB file diffs in
//! microseconds instead of tens of milliseconds).
//!
//! Lines are split at `\n` only, and the diff is written here rather than
//! by `similar`'s formatter: `similar` also ends a line at a lone `\r` and
//! then writes it without a `\n`, gluing the next diff line onto it, so the
//! diff of a file with a stray CR did not apply.

use similar::{capture_diff_slices_deadline, group_diff_ops, Algorithm, DiffTag};
use std::fmt::Write;

/// Lines of context around each change, as `diff -u`.
const CONTEXT: usize = 3;

/// A unified diff from `a/{path}` to `b/{path}` (empty when nothing changed).
pub fn unified(path: &str, old: &str, new: &str) -> String {
    unified_until(path, old, new, None)
}

/// The same, giving up on the smallest diff at `deadline` (a correct but
/// longer diff then): two unrelated 4000-line files take Myers seconds.
pub fn unified_until(
    path: &str,
    old: &str,
    new: &str,
    deadline: Option<std::time::Instant>,
) -> String {
    let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
    let new_lines: Vec<&str> = new.split_inclusive('\n').collect();
    let same_head = old_lines
        .iter()
        .zip(&new_lines)
        .take_while(|(a, b)| a == b)
        .count();
    let same_tail = old_lines[same_head..]
        .iter()
        .rev()
        .zip(new_lines[same_head..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let skip = same_head.saturating_sub(CONTEXT);
    let skip_tail = same_tail.saturating_sub(CONTEXT);
    let old_mid = &old_lines[skip..old_lines.len() - skip_tail];
    let new_mid = &new_lines[skip..new_lines.len() - skip_tail];
    let ops = capture_diff_slices_deadline(Algorithm::Myers, old_mid, new_mid, deadline);
    let hunks = group_diff_ops(ops, CONTEXT);
    if hunks.is_empty() {
        return String::new();
    }
    let mut out = format!("--- a/{path}\n+++ b/{path}\n");
    for hunk in hunks {
        let (Some(first), Some(last)) = (hunk.first(), hunk.last()) else {
            continue;
        };
        let old_range = first.old_range().start..last.old_range().end;
        let new_range = first.new_range().start..last.new_range().end;
        let _ = writeln!(
            out,
            "@@ -{} +{} @@",
            range(skip + old_range.start, old_range.len()),
            range(skip + new_range.start, new_range.len())
        );
        for op in &hunk {
            let (tag, old_at, new_at) = op.as_tag_tuple();
            let (mark, lines) = match tag {
                DiffTag::Equal => (' ', &old_mid[old_at]),
                DiffTag::Delete => ('-', &old_mid[old_at]),
                DiffTag::Insert => ('+', &new_mid[new_at]),
                DiffTag::Replace => {
                    push_lines(&mut out, '-', &old_mid[old_at]);
                    ('+', &new_mid[new_at])
                }
            };
            push_lines(&mut out, mark, lines);
        }
    }
    out
}

fn push_lines(out: &mut String, mark: char, lines: &[&str]) {
    for line in lines {
        out.push(mark);
        out.push_str(line);
        if !line.ends_with('\n') {
            out.push_str("\n\\ No newline at end of file\n");
        }
    }
}

/// A hunk range as `diff -u` writes it: `start,len`, `start` alone for one
/// line, and an empty range starting at the line before it.
fn range(start: usize, len: usize) -> String {
    match len {
        1 => format!("{}", start + 1),
        0 => format!("{start},0"),
        _ => format!("{},{len}", start + 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(path: &str, old: &str, new: &str) -> String {
        similar::TextDiff::from_lines(old, new)
            .unified_diff()
            .context_radius(CONTEXT)
            .header(&format!("a/{path}"), &format!("b/{path}"))
            .to_string()
    }

    #[test]
    fn trimmed_diff_equals_the_full_diff() {
        let old: String = (1..=200).map(|i| format!("line {i}\n")).collect();
        let cases = [
            old.replace("line 100\n", "line hundred\n"),
            old.replace("line 1\n", "first\n"),
            old.replace("line 200\n", "last\n"),
            old.replace("line 50\n", "").replace("line 150\n", "a\nb\n"),
            format!("{old}appended\n"),
            old.replace("line 2\n", ""),
            String::new(),
        ];
        for new in cases {
            assert_eq!(
                unified("f.txt", &old, &new),
                plain("f.txt", &old, &new),
                "{new:?}"
            );
        }
        assert_eq!(unified("f", "a\nb", "a\nc"), plain("f", "a\nb", "a\nc"));
        assert_eq!(unified("f", "a\n", "a\n"), "");
    }

    #[test]
    fn a_lone_cr_stays_inside_its_line() {
        assert_eq!(
            unified("f", "a\rb\nc\r", "a\rB\nc\r"),
            "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-a\rb\n+a\rB\n c\r\n\\ No newline at end of file\n"
        );
    }
}
