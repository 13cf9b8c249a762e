//! `search_files`: a parallel walk, one `grep-searcher` per thread, matches
//! gathered per file and merged, sorted once at the end.

use super::index::{Candidates, IndexConfig, Listing};
use super::walk::{self, PathGlob};
use super::{line, SearchFilesInput, SearchFilesOutput, SearchMatch};
use super::{DEFAULT_MAX_RESULTS, MAX_RESULTS};
use corral_fs::error::{Error, ErrorCode, Result};
use corral_fs::root::ProjectRoot;
use corral_fs::secret::is_secret_like;
use grep_matcher::{LineTerminator, Matcher};
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkMatch};
use ignore::{DirEntry, WalkState};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// What the worker threads share.
struct Shared<'a> {
    root: &'a ProjectRoot,
    start: &'a Path,
    matcher: &'a RegexMatcher,
    filter: Option<&'a PathGlob>,
    /// With an index: only the files it cannot rule out are searched.
    index: Option<&'a Candidates>,
    cap: usize,
    /// Matches handed in so far, by all threads. Past `cap` the walk quits.
    seen: AtomicUsize,
    found: Mutex<Vec<SearchMatch>>,
}

pub(super) fn search(
    root: &ProjectRoot,
    input: &SearchFilesInput,
    index: Option<&IndexConfig>,
) -> Result<SearchFilesOutput> {
    let cap = input.max_results.unwrap_or(DEFAULT_MAX_RESULTS);
    if cap == 0 || cap > MAX_RESULTS {
        return Err(Error::invalid_input(format!(
            "max_results must be 1 to {MAX_RESULTS}, not {cap}"
        ))
        .detail("max_results", cap));
    }
    let matcher = matcher(input)?;
    let start = walk::start(root, input.path.as_deref())?;
    let filter = match input.glob.as_deref() {
        Some(glob) => Some(PathGlob::new(glob, &start.rel, "glob")?),
        None => None,
    };
    // A live index lists the files to search: no walk.
    let is_folder = std::fs::metadata(&start.abs).is_ok_and(|m| m.is_dir());
    let listed = index.filter(|_| is_folder).and_then(|config| {
        super::index::listed(
            root,
            &input.query,
            input.regex.unwrap_or(true),
            input.case_insensitive.unwrap_or(false),
            config,
            &start.rel,
        )
    });
    let candidates = index.filter(|_| listed.is_none()).and_then(|config| {
        super::index::prepare(
            root,
            &input.query,
            input.regex.unwrap_or(true),
            input.case_insensitive.unwrap_or(false),
            config,
        )
    });
    let shared = Shared {
        root,
        start: &start.abs,
        matcher: &matcher,
        filter: filter.as_ref(),
        index: candidates.as_ref(),
        cap,
        seen: AtomicUsize::new(0),
        found: Mutex::new(Vec::new()),
    };
    match &listed {
        Some(files) => search_listed(&shared, files),
        None => walk::walker(&start.abs).build_parallel().run(|| {
            let shared = &shared;
            let mut searcher = searcher();
            Box::new(move |entry| visit(shared, &mut searcher, entry))
        }),
    }
    let seen = shared.seen.load(Ordering::Acquire);
    let mut matches = shared
        .found
        .into_inner()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    matches.sort_unstable_by(|a, b| (&a.path, a.line).cmp(&(&b.path, b.line)));
    matches.truncate(cap);
    let indexed = listed.is_some() || candidates.is_some();
    if let Some(candidates) = candidates {
        candidates.finish(root);
    }
    Ok(SearchFilesOutput {
        matches,
        truncated: seen > cap,
        indexed,
    })
}

fn matcher(input: &SearchFilesInput) -> Result<RegexMatcher> {
    let query = &input.query;
    if query.is_empty() {
        return Err(Error::invalid_input("the query is empty")
            .hint("Give a regular expression, or a literal string with regex set to false."));
    }
    if query.contains('\n') {
        return Err(Error::invalid_input(
            "the query contains a line break; matches are within one line",
        )
        .hint("Search for one line at a time.")
        .detail("query", query.as_str()));
    }
    RegexMatcherBuilder::new()
        .case_insensitive(input.case_insensitive.unwrap_or(false))
        .fixed_strings(!input.regex.unwrap_or(true))
        // `$` matches before `\r\n` too; lines never include their ending.
        .crlf(true)
        .build(query)
        .map_err(|e| {
            Error::new(
                ErrorCode::InvalidRegex,
                format!("`{query}` is not a valid regular expression: {e}"),
            )
            .detail("query", query.as_str())
            .detail("error", e.to_string())
        })
}

fn searcher() -> Searcher {
    SearcherBuilder::new()
        .line_number(true)
        .line_terminator(LineTerminator::crlf())
        // A NUL byte makes a file binary: it is skipped (see `FileSink`).
        .binary_detection(BinaryDetection::quit(b'\0'))
        .build()
}

fn visit(
    shared: &Shared<'_>,
    searcher: &mut Searcher,
    entry: std::result::Result<DirEntry, ignore::Error>,
) -> WalkState {
    if shared.seen.load(Ordering::Acquire) > shared.cap {
        return WalkState::Quit;
    }
    // Unreadable entries are skipped, as ripgrep does (it only warns).
    let Ok(entry) = entry else {
        return WalkState::Continue;
    };
    if !entry.file_type().is_some_and(|t| t.is_file()) {
        return WalkState::Continue;
    }
    let Some(rel) = walk::relative(shared.root, entry.path()) else {
        return WalkState::Continue;
    };
    // A secret-like file (`config/secrets.yaml`, `server.key`) is read only
    // with the user's approval: a search skips it unless it was asked to
    // search that very file (the policy then asked, as for `read_file`).
    if entry.path() != shared.start && is_secret_like(&rel.to_string_lossy()) {
        return WalkState::Continue;
    }
    if let Some(filter) = shared.filter {
        let under_start = entry.path().strip_prefix(shared.start).unwrap_or(rel);
        if !filter.is_match(under_start, entry.file_name()) {
            return WalkState::Continue;
        }
    }
    if let Some(index) = shared.index {
        if !index.must_search(rel, &entry) {
            return WalkState::Continue;
        }
    }
    search_file(shared, searcher, rel)
}

/// Searches the files a live index listed (beneath the start folder,
/// secrets left out), on a few threads.
fn search_listed(shared: &Shared<'_>, files: &Listing) {
    let wanted = |rel: &Path| {
        let Some(filter) = shared.filter else {
            return true;
        };
        let abs = shared.root.path().join(rel);
        let under_start = abs.strip_prefix(shared.start).unwrap_or(rel);
        filter.is_match(under_start, rel.file_name().unwrap_or_default())
    };
    let next = AtomicUsize::new(0);
    let work = || {
        let mut searcher = searcher();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= files.len() {
                break;
            }
            let Some(rel) = files.file(i) else {
                continue;
            };
            if wanted(rel) && search_file(shared, &mut searcher, rel) == WalkState::Quit {
                break;
            }
        }
    };
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(files.len() / 16)
        .max(1);
    if threads == 1 {
        work();
    } else {
        std::thread::scope(|scope| {
            for _ in 0..threads {
                scope.spawn(work);
            }
        });
    }
}

/// Searches one file (relative to the root) and hands in its matches;
/// `Quit` once all threads together have more than the cap.
fn search_file(shared: &Shared<'_>, searcher: &mut Searcher, rel: &Path) -> WalkState {
    if shared.seen.load(Ordering::Acquire) > shared.cap {
        return WalkState::Quit;
    }
    // Opened through the root handle: even if the file was swapped for a
    // symlink since the walk saw it, the kernel refuses to leave the root.
    let Some(file) = walk::open_regular(shared.root, rel) else {
        return WalkState::Continue;
    };
    let mut sink = FileSink {
        shared,
        rel,
        path: None,
        found: Vec::new(),
        binary: false,
        stopped: false,
    };
    let searched = searcher.search_file(shared.matcher, &file, &mut sink);
    if searched.is_err() || sink.binary || sink.found.is_empty() {
        return WalkState::Continue;
    }
    // Stopped at the cap before its end, the search may not have reached
    // a NUL byte further on: the file is text only if there is none.
    if sink.stopped && !is_text(&file) {
        return WalkState::Continue;
    }
    let count = sink.found.len();
    shared
        .found
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .append(&mut sink.found);
    if shared.seen.fetch_add(count, Ordering::AcqRel) + count > shared.cap {
        WalkState::Quit
    } else {
        WalkState::Continue
    }
}

/// Whether a file holds no NUL byte (read from its start); one that
/// cannot be read is taken for binary, as it could not be checked.
fn is_text(mut file: &std::fs::File) -> bool {
    use std::io::{Read, Seek, SeekFrom};
    if file.seek(SeekFrom::Start(0)).is_err() {
        return false;
    }
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match file.read(&mut buf) {
            Ok(0) => return true,
            Ok(n) if buf[..n].contains(&0) => return false,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
}

/// Collects one file's matches; they are handed in only if the whole file
/// turned out to be text.
struct FileSink<'s, 'a> {
    shared: &'s Shared<'a>,
    rel: &'s Path,
    /// Display path, made on the first match only.
    path: Option<String>,
    found: Vec<SearchMatch>,
    binary: bool,
    /// The search stopped at the cap, before the file's end.
    stopped: bool,
}

impl Sink for FileSink<'_, '_> {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> std::io::Result<bool> {
        let text = line::strip_ending(mat.bytes());
        let at = match self.shared.matcher.find(text) {
            Ok(Some(m)) => m.start(),
            _ => 0,
        };
        let (column, text) = line::excerpt(text, at);
        let path = self
            .path
            .get_or_insert_with(|| walk::display(self.rel))
            .clone();
        self.found.push(SearchMatch {
            path,
            line: mat.line_number().unwrap_or(0),
            column,
            text,
        });
        // Stop this file once all threads together have one more than the cap.
        let more = self.shared.seen.load(Ordering::Acquire) + self.found.len() <= self.shared.cap;
        self.stopped = !more;
        Ok(more)
    }

    fn binary_data(&mut self, _: &Searcher, _: u64) -> std::io::Result<bool> {
        self.binary = true;
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::disallowed_methods)]
    use super::*;

    /// Searches `rel` in `root` for `query` as [`search_file`] does when
    /// other threads have already handed in `seen` matches of `cap`.
    fn search_after(
        root: &ProjectRoot,
        rel: &str,
        query: &str,
        seen: usize,
        cap: usize,
    ) -> Vec<SearchMatch> {
        let input = SearchFilesInput {
            query: query.into(),
            regex: Some(false),
            case_insensitive: None,
            glob: None,
            path: None,
            max_results: Some(cap),
        };
        let matcher = matcher(&input).unwrap();
        let shared = Shared {
            root,
            start: root.path(),
            matcher: &matcher,
            filter: None,
            index: None,
            cap,
            seen: AtomicUsize::new(seen),
            found: Mutex::new(Vec::new()),
        };
        search_file(&shared, &mut searcher(), Path::new(rel));
        shared.found.into_inner().unwrap()
    }

    #[test]
    fn a_binary_file_stopped_at_the_cap_is_still_skipped() {
        let dir = tempfile::tempdir().unwrap();
        // A match, then a NUL byte past the first line.
        std::fs::write(dir.path().join("bin.dat"), b"ab\nbin\0foo\n").unwrap();
        std::fs::write(dir.path().join("text.txt"), b"ab\nbin foo\n").unwrap();
        let root = ProjectRoot::open(dir.path()).unwrap();
        // Another thread filled the cap: the file's search stops at its
        // first match, before the NUL byte.
        assert!(search_after(&root, "bin.dat", "ab", 1, 1).is_empty());
        assert!(search_after(&root, "bin.dat", "ab", 0, 100).is_empty());
        // A text file stopped the same way keeps its match.
        assert_eq!(search_after(&root, "text.txt", "ab", 1, 1).len(), 1);
    }
}
