//! Unified diffs of an edit. Edits change a few lines of large files, so the
//! identical head and tail are cut before diffing (a 1 MiB file diffs in
//! microseconds instead of tens of milliseconds) and the hunk line numbers
//! are shifted back.

/// Lines of context around each change, as `diff -u`.
const CONTEXT: usize = 3;

/// A unified diff from `a/{path}` to `b/{path}`.
pub(crate) fn unified(path: &str, old: &str, new: &str) -> String {
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
    let skip_head = same_head.saturating_sub(CONTEXT);
    let skip_tail = same_tail.saturating_sub(CONTEXT);
    let old_mid: String = old_lines[skip_head..old_lines.len() - skip_tail].concat();
    let new_mid: String = new_lines[skip_head..new_lines.len() - skip_tail].concat();
    let body = similar::TextDiff::from_lines(&old_mid, &new_mid)
        .unified_diff()
        .context_radius(CONTEXT)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .to_string();
    if skip_head == 0 {
        return body;
    }
    body.split_inclusive('\n')
        .map(|line| match line.strip_prefix("@@ ") {
            Some(rest) => shift_hunk_header(rest, skip_head).unwrap_or_else(|| line.to_string()),
            None => line.to_string(),
        })
        .collect()
}

/// `-A,B +C,D @@...` with A and C moved down by `by` lines.
fn shift_hunk_header(rest: &str, by: usize) -> Option<String> {
    let (ranges, tail) = rest.split_once(" @@")?;
    let (old, new) = ranges.split_once(' ')?;
    let shift = |range: &str, sign: char| -> Option<String> {
        let range = range.strip_prefix(sign)?;
        let (start, len) = match range.split_once(',') {
            Some((s, l)) => (s.parse::<usize>().ok()?, Some(l)),
            None => (range.parse::<usize>().ok()?, None),
        };
        Some(match len {
            Some(len) => format!("{sign}{},{len}", start + by),
            None => format!("{sign}{}", start + by),
        })
    };
    Some(format!(
        "@@ {} {} @@{tail}",
        shift(old, '-')?,
        shift(new, '+')?
    ))
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
    }
}
