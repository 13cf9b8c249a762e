//! What a model's tokens cost: US dollars per million tokens, from the
//! user's own table (`prices.json` in the app's config folder, read by
//! corral-config) first, then the list prices built in here for the
//! providers' own APIs, then nothing for a model on this machine (it
//! costs 0). Any other model's price is unknown, and the window says so
//! rather than guess.
//!
//! A rule names models by a pattern: the model's name, case aside, where
//! `*` stands for any run of characters (`claude-sonnet-4-5*`, `*qwen*`).
//! The first rule that matches wins.

use crate::config::{Provider, ProviderConfig};
use crate::http;
use serde::{Deserialize, Serialize};

/// US dollars per million tokens. A cache rate the provider has none for
/// is absent: tokens it reports read from or written to its cache then
/// have no known cost.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, ts_rs::TS)]
pub struct Price {
    /// Prompt tokens not read from or written to the cache.
    pub input: f64,
    /// Generated tokens.
    pub output: f64,
    /// Prompt tokens read from the provider's cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub cache_read: Option<f64>,
    /// Prompt tokens written to the provider's cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub cache_write: Option<f64>,
}

impl Price {
    /// Nothing to pay: a model on this machine.
    pub const FREE: Price = Price {
        input: 0.0,
        output: 0.0,
        cache_read: Some(0.0),
        cache_write: Some(0.0),
    };

    /// Whether every rate is a real, non-negative number.
    fn is_valid(&self) -> bool {
        [
            Some(self.input),
            Some(self.output),
            self.cache_read,
            self.cache_write,
        ]
        .into_iter()
        .flatten()
        .all(|rate| rate.is_finite() && rate >= 0.0)
    }
}

/// One rule of the user's table: the models it prices, and their price.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PriceRule {
    /// The models' names, `*` for any run of characters.
    pub model: String,
    #[serde(flatten)]
    pub price: Price,
}

impl PriceRule {
    /// Whether the rule can be used: a pattern, and rates that are numbers
    /// of dollars (not negative, not infinite).
    pub fn is_valid(&self) -> bool {
        !self.model.trim().is_empty() && self.price.is_valid()
    }
}

/// Whether `name` matches `pattern`, case aside, `*` matching any run of
/// characters (none included).
pub fn matches(pattern: &str, name: &str) -> bool {
    let pattern = pattern.trim().to_lowercase();
    let name = name.trim().to_lowercase();
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        // No `*`: the whole name.
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// Anthropic's cache rates: reads at a tenth of the input price, writes
/// (the 5-minute cache) at a quarter more.
const fn anthropic(input: f64, output: f64) -> Price {
    Price {
        input,
        output,
        cache_read: Some(input / 10.0),
        cache_write: Some(input * 1.25),
    }
}

/// OpenAI's: cached input at its own rate, no charge for writing the cache
/// (which it does not report).
const fn openai(input: f64, output: f64, cached: f64) -> Price {
    Price {
        input,
        output,
        cache_read: Some(cached),
        cache_write: Some(0.0),
    }
}

/// List prices of hosted models, by pattern: only models whose price is
/// sure (a dated snapshot priced otherwise, or a family whose later
/// versions changed price, is named exactly). First match wins.
const BUILT_IN: [(&str, Price); 25] = [
    ("claude-opus-4-5*", anthropic(5.0, 25.0)),
    ("claude-opus-4-1*", anthropic(15.0, 75.0)),
    ("claude-opus-4-0", anthropic(15.0, 75.0)),
    ("claude-opus-4-20250514", anthropic(15.0, 75.0)),
    ("claude-sonnet-4-5*", anthropic(3.0, 15.0)),
    ("claude-sonnet-4-0", anthropic(3.0, 15.0)),
    ("claude-sonnet-4-20250514", anthropic(3.0, 15.0)),
    ("claude-3-7-sonnet*", anthropic(3.0, 15.0)),
    ("claude-haiku-4-5*", anthropic(1.0, 5.0)),
    ("claude-3-5-haiku*", anthropic(0.8, 4.0)),
    ("gpt-4o", openai(2.5, 10.0, 1.25)),
    ("gpt-4o-2024-08-06", openai(2.5, 10.0, 1.25)),
    ("gpt-4o-2024-11-20", openai(2.5, 10.0, 1.25)),
    ("gpt-4o-mini", openai(0.15, 0.6, 0.075)),
    ("gpt-4o-mini-2024-07-18", openai(0.15, 0.6, 0.075)),
    ("gpt-4.1", openai(2.0, 8.0, 0.5)),
    ("gpt-4.1-2025-04-14", openai(2.0, 8.0, 0.5)),
    ("gpt-4.1-mini", openai(0.4, 1.6, 0.1)),
    ("gpt-4.1-mini-2025-04-14", openai(0.4, 1.6, 0.1)),
    ("gpt-4.1-nano", openai(0.1, 0.4, 0.025)),
    ("gpt-4.1-nano-2025-04-14", openai(0.1, 0.4, 0.025)),
    ("gpt-5", openai(1.25, 10.0, 0.125)),
    ("gpt-5-2025-08-07", openai(1.25, 10.0, 0.125)),
    ("gpt-5-mini*", openai(0.25, 2.0, 0.025)),
    ("gpt-5-nano*", openai(0.05, 0.4, 0.005)),
];

/// The built-in list price of a hosted model, by its name as the
/// provider's own API knows it.
pub fn known_price(model: &str) -> Option<Price> {
    BUILT_IN
        .iter()
        .find(|(pattern, _)| matches(pattern, model))
        .map(|&(_, price)| price)
}

/// The price of `config`'s model: the first of the user's `rules` that
/// matches its name; else, on the provider's own API, the built-in list
/// price; else nothing for a server on this machine (or an Ollama server
/// of one's own); else unknown (`None`).
pub fn price_for(rules: &[PriceRule], config: &ProviderConfig) -> Option<Price> {
    if let Some(rule) = rules
        .iter()
        .find(|rule| rule.is_valid() && matches(&rule.model, &config.model))
    {
        return Some(rule.price);
    }
    let base = config.base_url.trim_end_matches('/');
    if config.provider.is_own_api(base) {
        return known_price(&config.model);
    }
    if http::is_loopback(base) || config.provider == Provider::Ollama {
        return Some(Price::FREE);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_star_matches_any_run_and_nothing_else_does() {
        assert!(matches("gpt-4o", "GPT-4o"));
        assert!(!matches("gpt-4o", "gpt-4o-mini"));
        assert!(matches("gpt-4o*", "gpt-4o-mini"));
        assert!(matches("*qwen*", "unsloth/Qwen3-8B-GGUF"));
        assert!(matches("a*b*c", "a-b-c"));
        assert!(matches("a*b*c", "abc"));
        assert!(!matches("a*b*c", "a-c-b"));
        assert!(!matches("ab*ba", "aba"));
        assert!(matches("*", "anything"));
    }

    #[test]
    fn a_dated_or_later_model_is_not_priced_by_a_family_guess() {
        assert_eq!(
            known_price("claude-opus-4-5-20251101").map(|p| p.input),
            Some(5.0)
        );
        assert_eq!(
            known_price("claude-opus-4-1-20250805").map(|p| p.input),
            Some(15.0)
        );
        // A later Opus 4.x is not taken for Opus 4's price.
        assert_eq!(known_price("claude-opus-4-7"), None);
        // The first gpt-4o snapshot had another price.
        assert_eq!(known_price("gpt-4o-2024-05-13"), None);
        assert_eq!(known_price("gpt-5-pro"), None);
        assert_eq!(
            known_price("gpt-5-mini-2025-08-07").map(|p| p.output),
            Some(2.0)
        );
        assert_eq!(known_price("qwen3:8b"), None);
    }

    fn config(provider: Provider, base_url: &str, model: &str) -> ProviderConfig {
        ProviderConfig {
            base_url: base_url.into(),
            ..ProviderConfig::new(provider, model)
        }
    }

    fn rule(model: &str, input: f64, output: f64) -> PriceRule {
        PriceRule {
            model: model.into(),
            price: Price {
                input,
                output,
                cache_read: None,
                cache_write: None,
            },
        }
    }

    #[test]
    fn the_users_rule_wins_then_the_list_then_this_machine_then_unknown() {
        let hosted = config(
            Provider::Anthropic,
            "https://api.anthropic.com",
            "claude-sonnet-4-5",
        );
        let local = config(Provider::OpenAi, "http://127.0.0.1:8080/v1", "qwen3-8b");
        let elsewhere = config(Provider::OpenAi, "https://llm.example.net/v1", "qwen3-8b");
        let ollama = config(Provider::Ollama, "http://gpu-box:11434", "qwen3:8b");
        assert_eq!(price_for(&[], &hosted).map(|p| p.input), Some(3.0));
        assert_eq!(price_for(&[], &local), Some(Price::FREE));
        assert_eq!(price_for(&[], &ollama), Some(Price::FREE));
        assert_eq!(price_for(&[], &elsewhere), None);
        // An unknown model on a provider's own API is not guessed.
        let unknown = config(Provider::OpenAi, "https://api.openai.com/v1", "o9-preview");
        assert_eq!(price_for(&[], &unknown), None);

        let rules = [
            rule("claude-sonnet-4*", 2.0, 10.0),
            rule("*QWEN3*", 0.1, 0.2),
        ];
        assert_eq!(
            price_for(&rules, &hosted).map(|p| (p.input, p.output)),
            Some((2.0, 10.0))
        );
        assert_eq!(price_for(&rules, &local).map(|p| p.output), Some(0.2));
        assert_eq!(price_for(&rules, &elsewhere).map(|p| p.input), Some(0.1));
        // The first match wins.
        let both = [rule("qwen3-8b", 1.0, 1.0), rule("*", 9.0, 9.0)];
        assert_eq!(price_for(&both, &elsewhere).map(|p| p.input), Some(1.0));
    }

    #[test]
    fn a_rule_that_is_no_price_is_passed_over() {
        let elsewhere = config(Provider::OpenAi, "https://llm.example.net/v1", "qwen3-8b");
        let bad = [
            rule("qwen3-8b", -1.0, 1.0),
            rule("", 1.0, 1.0),
            rule("*", f64::NAN, 1.0),
        ];
        assert_eq!(price_for(&bad, &elsewhere), None);
    }

    #[test]
    fn a_rule_reads_as_the_file_writes_it() {
        let rules: Vec<PriceRule> = serde_json::from_str(
            r#"[{"model": "my-model*", "input": 0.5, "output": 1.5, "cache_read": 0.05}]"#,
        )
        .unwrap();
        assert_eq!(
            rules[0].price,
            Price {
                input: 0.5,
                output: 1.5,
                cache_read: Some(0.05),
                cache_write: None
            }
        );
        assert!(matches(&rules[0].model, "My-Model-7B"));
    }

    #[test]
    fn anthropic_prices_its_cache() {
        let price = known_price("claude-sonnet-4-5").unwrap();
        assert_eq!((price.input, price.output), (3.0, 15.0));
        assert!((price.cache_read.unwrap() - 0.3).abs() < 1e-9);
        assert!((price.cache_write.unwrap() - 3.75).abs() < 1e-9);
    }
}
