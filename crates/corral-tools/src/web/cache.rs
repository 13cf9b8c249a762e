//! The pages fetched in each conversation, so that the same URL in the
//! same conversation is fetched once: a second call (another part of a
//! long page, by `offset`) reads what the first one kept.
//!
//! Keyed by the conversation (the window's key of it) and the URL as
//! asked, parsed and without its `#fragment`. Bounded in all, for every
//! conversation of the session together: at most [`MAX_PAGES`] pages and
//! [`MAX_BYTES`] of their text, the page used longest ago dropped first. A
//! conversation's pages go when it ends; failures are not kept.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// The most pages kept.
pub const MAX_PAGES: usize = 64;
/// The most bytes of text kept.
pub const MAX_BYTES: usize = 32 * 1024 * 1024;

/// A page as fetched and made text, kept whole.
#[derive(Debug, Clone, PartialEq)]
pub struct Page {
    /// Where it came from, after redirects.
    pub final_url: String,
    pub status: u16,
    pub content_type: String,
    pub format: super::page::Format,
    /// The text the model reads (Markdown for HTML), not yet wrapped.
    pub text: String,
    /// The bytes of the body read.
    pub received_bytes: usize,
    /// The whole body was read (else it was cut at the cap).
    pub complete: bool,
    /// The body's length as the server declared it.
    pub declared_bytes: Option<u64>,
}

/// The session's pages, by conversation and URL.
#[derive(Default)]
pub struct WebCache {
    /// Oldest use first.
    pages: Mutex<VecDeque<Entry>>,
}

struct Entry {
    conversation: String,
    url: String,
    page: Arc<Page>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl WebCache {
    /// The page kept for `url` in `conversation`, now the newest used.
    pub fn get(&self, conversation: &str, url: &str) -> Option<Arc<Page>> {
        let mut pages = lock(&self.pages);
        let at = pages
            .iter()
            .position(|e| e.conversation == conversation && e.url == url)?;
        let entry = pages.remove(at)?;
        let page = entry.page.clone();
        pages.push_back(entry);
        Some(page)
    }

    /// Keeps `page` for `url` in `conversation`, dropping the pages used
    /// longest ago past the bounds. A page over [`MAX_BYTES`] alone is
    /// not kept.
    pub fn put(&self, conversation: &str, url: &str, page: Arc<Page>) {
        if page.text.len() > MAX_BYTES {
            return;
        }
        let mut pages = lock(&self.pages);
        pages.retain(|e| !(e.conversation == conversation && e.url == url));
        pages.push_back(Entry {
            conversation: conversation.to_string(),
            url: url.to_string(),
            page,
        });
        let mut bytes: usize = pages.iter().map(|e| e.page.text.len()).sum();
        while pages.len() > MAX_PAGES || bytes > MAX_BYTES {
            match pages.pop_front() {
                Some(old) => bytes -= old.page.text.len(),
                None => break,
            }
        }
    }

    /// The conversation ended: its pages go.
    pub fn end(&self, conversation: &str) {
        lock(&self.pages).retain(|e| e.conversation != conversation);
    }

    /// How many pages are kept (for tests and the bounds).
    pub fn len(&self) -> usize {
        lock(&self.pages).len()
    }

    /// Whether no page is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Where one call keeps and finds its pages: the session's cache and the
/// conversation the call was made in.
#[derive(Clone)]
pub struct CacheScope {
    pub cache: Arc<WebCache>,
    pub conversation: String,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::web::page::Format;

    fn page(text: &str) -> Arc<Page> {
        Arc::new(Page {
            final_url: "http://x.test/".into(),
            status: 200,
            content_type: "text/plain".into(),
            format: Format::Text,
            text: text.into(),
            received_bytes: text.len(),
            complete: true,
            declared_bytes: None,
        })
    }

    #[test]
    fn pages_are_kept_per_conversation_and_url_and_go_with_it() {
        let cache = WebCache::default();
        cache.put("c1", "http://x.test/", page("one"));
        assert_eq!(cache.get("c1", "http://x.test/").unwrap().text, "one");
        assert!(cache.get("c2", "http://x.test/").is_none());
        assert!(cache.get("c1", "http://x.test/other").is_none());
        cache.put("c1", "http://x.test/", page("again"));
        assert_eq!(cache.len(), 1);
        assert_eq!(cache.get("c1", "http://x.test/").unwrap().text, "again");
        cache.end("c1");
        assert!(cache.is_empty());
    }

    #[test]
    fn the_page_used_longest_ago_goes_first_past_the_bounds() {
        let cache = WebCache::default();
        for i in 0..MAX_PAGES {
            cache.put("c", &format!("u{i}"), page("x"));
        }
        // Used now: it stays when the next one pushes the oldest out.
        assert!(cache.get("c", "u0").is_some());
        cache.put("c", "new", page("x"));
        assert_eq!(cache.len(), MAX_PAGES);
        assert!(cache.get("c", "u0").is_some());
        assert!(cache.get("c", "u1").is_none());

        let big = "y".repeat(MAX_BYTES / 2 + 1);
        cache.put("c", "big1", page(&big));
        cache.put("c", "big2", page(&big));
        assert!(cache.get("c", "big1").is_none());
        assert!(cache.get("c", "big2").is_some());
        cache.put("c", "huge", page(&"z".repeat(MAX_BYTES + 1)));
        assert!(cache.get("c", "huge").is_none());
    }
}
