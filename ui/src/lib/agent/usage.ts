// What model requests used and cost: each request's tokens as its server
// counted them (the `usage` event), priced by the model's price per
// million tokens (Rust's, from the user's prices.json or the built-in
// list; none when unknown), and summed per conversation, per run and per
// day. A request whose price is not known adds its tokens and counts as
// `unpriced`; its cost is never guessed.
import type { Price, TokenUsage } from "../types";

/** Tokens (in, out, of the input those read from and written to the cache), the cost of those priced, and how many requests had no price. */
export type Usage = TokenUsage;

export const noUsage = (): Usage => ({ input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0, unpriced: 0 });

/** One request's counts, as the `usage` event gives them. */
export type Counted = { input_tokens: number; output_tokens: number; cache_read_tokens?: number; cache_write_tokens?: number };

/**
 * What `counted` costs at `price`, in US dollars, or null when that is not
 * known: no price, or cache tokens the price has no rate for.
 */
export function costOf(counted: Counted, price: Price | null): number | null {
  if (!price) return null;
  const read = counted.cache_read_tokens ?? 0;
  const written = counted.cache_write_tokens ?? 0;
  if ((read > 0 && price.cache_read == null) || (written > 0 && price.cache_write == null)) return null;
  const plain = Math.max(0, counted.input_tokens - read - written);
  const dollars = plain * price.input + read * (price.cache_read ?? 0) + written * (price.cache_write ?? 0) + counted.output_tokens * price.output;
  return dollars / 1_000_000;
}

/** One request as it adds to a sum: its tokens, and its cost or one unpriced request. */
export function requestUsage(counted: Counted, price: Price | null): Usage {
  const cost = costOf(counted, price);
  return {
    input_tokens: counted.input_tokens,
    output_tokens: counted.output_tokens,
    cache_read_tokens: counted.cache_read_tokens ?? 0,
    cache_write_tokens: counted.cache_write_tokens ?? 0,
    cost_usd: cost ?? 0,
    unpriced: cost === null ? 1 : 0,
  };
}

export function addUsage(a: Usage, b: Usage): Usage {
  return {
    input_tokens: a.input_tokens + b.input_tokens,
    output_tokens: a.output_tokens + b.output_tokens,
    cache_read_tokens: a.cache_read_tokens + b.cache_read_tokens,
    cache_write_tokens: a.cache_write_tokens + b.cache_write_tokens,
    cost_usd: a.cost_usd + b.cost_usd,
    unpriced: a.unpriced + b.unpriced,
  };
}

/** What was used from `before` to `after` (a turn's, a round's, a run's). */
export function usageSince(after: Usage, before: Usage): Usage {
  return {
    input_tokens: after.input_tokens - before.input_tokens,
    output_tokens: after.output_tokens - before.output_tokens,
    cache_read_tokens: after.cache_read_tokens - before.cache_read_tokens,
    cache_write_tokens: after.cache_write_tokens - before.cache_write_tokens,
    // Sums of floats: a difference of nothing must stay nothing.
    cost_usd: Math.max(0, Math.round((after.cost_usd - before.cost_usd) * 1e12) / 1e12),
    unpriced: after.unpriced - before.unpriced,
  };
}

/** Whether anything was used. */
export function isUsed(usage: Usage): boolean {
  return usage.input_tokens > 0 || usage.output_tokens > 0 || usage.unpriced > 0;
}

/** The usage stored with a conversation (its summary), read as a sum. */
export function usageOfSummary(summary: Partial<Usage>): Usage {
  return {
    input_tokens: summary.input_tokens ?? 0,
    output_tokens: summary.output_tokens ?? 0,
    cache_read_tokens: summary.cache_read_tokens ?? 0,
    cache_write_tokens: summary.cache_write_tokens ?? 0,
    cost_usd: summary.cost_usd ?? 0,
    unpriced: summary.unpriced ?? 0,
  };
}

/** A count of tokens, short: 950, 12.3k, 4.5M. */
export function tokens(n: number): string {
  if (n >= 1_000_000) return `${(n / 1_000_000).toFixed(1)}M`;
  if (n >= 1000) return `${(n / 1000).toFixed(1)}k`;
  return String(n);
}

/** Dollars: to the cent, below a dollar to a tenth of a cent. */
export function dollars(amount: number): string {
  return `$${amount.toFixed(amount < 1 ? 3 : 2)}`;
}

/**
 * The cost as shown: "$0.042"; "$0.042 + unknown" when some requests had no
 * price; "cost unknown" when none had one; "" when nothing was used.
 */
export function costText(usage: Usage): string {
  if (!isUsed(usage)) return "";
  if (usage.unpriced === 0) return dollars(usage.cost_usd);
  if (usage.cost_usd > 0) return `${dollars(usage.cost_usd)} + unknown`;
  return "cost unknown";
}

/** Why a cost is unknown, for its tooltip. */
export function costNote(usage: Usage): string {
  if (usage.unpriced === 0) return "At the model's price per million tokens (prices.json in the app's config folder, else the provider's list price; 0 on this machine)";
  const requests = usage.unpriced === 1 ? "1 request" : `${usage.unpriced} requests`;
  return `${requests} had no known price (a model prices.json does not name, or a conversation from before costs were kept). Add the model to prices.json in the app's config folder to price it.`;
}

/** The tokens as shown: "12.3k in (8.0k cached), 1.2k out". */
export function tokensText(usage: Usage): string {
  const cached = usage.cache_read_tokens + usage.cache_write_tokens;
  const from = cached > 0 ? ` (${tokens(usage.cache_read_tokens)} cache read${usage.cache_write_tokens > 0 ? `, ${tokens(usage.cache_write_tokens)} written` : ""})` : "";
  return `${tokens(usage.input_tokens)} in${from}, ${tokens(usage.output_tokens)} out`;
}
