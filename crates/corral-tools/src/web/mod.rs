//! `web_fetch`'s parts: the GET through the egress proxy's rules
//! (`fetch`), what a response becomes for the model (`page`), and the
//! pages kept per conversation (`cache`).

pub mod cache;
pub mod fetch;
pub mod page;

pub use cache::{CacheScope, Page, WebCache};
