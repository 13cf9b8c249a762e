//! Anthropic Messages: the request body and the stream decoder.
//!
//! The stream is `message_start`, then per content block
//! `content_block_start` / `content_block_delta`* / `content_block_stop`,
//! then `message_delta` (stop reason, output tokens) and `message_stop`;
//! `ping` and `error` may come at any point.

use crate::config::ProviderConfig;
use crate::decode::{tool_call_end, Decoder, Step, ToolInputBudget};
use crate::error::{LlmError, ProviderMessage};
use crate::sse::SseEvent;
use crate::types::{Block, ChatRequest, StreamEvent};
use serde_json::{json, Map, Value};
use std::collections::HashMap;

/// The request body. Empty text blocks and messages left empty are dropped
/// (the API refuses them; a cancelled turn can leave one behind), as are an
/// empty system prompt and an empty tool list.
pub(crate) fn body(
    config: &ProviderConfig,
    request: &ChatRequest,
    max_tokens: u32,
    stream: bool,
) -> Value {
    let messages: Vec<Value> = request
        .messages
        .iter()
        .map(|m| {
            let content: Vec<Value> = m
                .content
                .iter()
                .filter(|b| !matches!(b, Block::Text { text } if text.is_empty()))
                .map(block)
                .collect();
            (m.role, content)
        })
        .filter(|(_, content)| !content.is_empty())
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect();
    let mut body = json!({
        "model": config.model,
        "max_tokens": max_tokens,
        "messages": messages,
        "stream": stream,
    });
    if !request.system.is_empty() {
        body["system"] = json!(request.system);
    }
    if !request.tools.is_empty() {
        body["tools"] = json!(request.tools);
    }
    if config.provider.is_own_api(&config.base_url) {
        mark_cache_breakpoints(&mut body);
    }
    body
}

/// One content block as the Messages API takes it: ours are its shapes,
/// except an image, whose data goes in a `base64` source.
fn block(block: &Block) -> Value {
    match block {
        Block::Image { media_type, data } => json!({
            "type": "image",
            "source": {"type": "base64", "media_type": media_type, "data": data},
        }),
        Block::Text { .. } | Block::ToolUse { .. } | Block::ToolResult { .. } => json!(block),
    }
}

/// Anthropic's prompt caching: the system prompt, the tool list and the
/// conversation so far are a prefix each request repeats, so each ends in a
/// `cache_control` breakpoint (three of the four allowed) and the next
/// request reads them from the cache. Only on Anthropic's own API: other
/// servers speaking the format may refuse the field.
fn mark_cache_breakpoints(body: &mut Value) {
    let ephemeral = json!({"type": "ephemeral"});
    if let Some(Value::String(system)) = body.get("system") {
        body["system"] = json!([{"type": "text", "text": system, "cache_control": ephemeral}]);
    }
    if let Some(Value::Object(last)) = body
        .get_mut("tools")
        .and_then(|t| t.as_array_mut()?.last_mut())
    {
        last.insert("cache_control".into(), ephemeral.clone());
    }
    let last_block = body
        .get_mut("messages")
        .and_then(|m| m.as_array_mut()?.last_mut())
        .and_then(|m| m.get_mut("content")?.as_array_mut()?.last_mut());
    if let Some(Value::Object(block)) = last_block {
        block.insert("cache_control".into(), ephemeral);
    }
}

/// A content block being streamed.
enum Open {
    Text,
    /// The model's thinking: shown, not sent back (its signature is not kept).
    Thinking,
    Tool {
        id: String,
        name: String,
        json: String,
        initial: Map<String, Value>,
    },
    /// Redacted thinking, server tools and whatever comes next: not forwarded.
    Other,
}

/// Decodes one Messages stream.
#[derive(Default)]
pub(crate) struct AnthropicDecoder {
    blocks: HashMap<u64, Open>,
    /// Tool input received so far, all calls together.
    tool_input: ToolInputBudget,
    input_tokens: u64,
    /// The prompt's cache reads and writes, from `message_start`.
    cache: (u64, u64),
    stop_reason: Option<String>,
}

impl Decoder for AnthropicDecoder {
    fn event(&mut self, event: &SseEvent, out: &mut Vec<StreamEvent>) -> Result<Step, LlmError> {
        let data: Value = serde_json::from_str(&event.data).map_err(|e| LlmError::BadEvent {
            cause: e.to_string(),
            data: event.data.clone(),
        })?;
        let kind = data
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or(&event.event);
        let index = data.get("index").and_then(Value::as_u64).unwrap_or(0);
        match kind {
            "message_start" => {
                if let Some(usage) = data.pointer("/message/usage") {
                    self.input_tokens = input_tokens(usage);
                    self.cache = cache_tokens(usage);
                }
            }
            "content_block_start" => {
                let block = data.get("content_block").unwrap_or(&Value::Null);
                let open = match block.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        push_text(out, block.get("text"));
                        Open::Text
                    }
                    Some("thinking") => {
                        push_reasoning(out, block.get("thinking"));
                        Open::Thinking
                    }
                    Some("tool_use") => {
                        let id = text(block, "id");
                        let name = text(block, "name");
                        out.push(StreamEvent::ToolCallStart {
                            id: id.clone(),
                            name: name.clone(),
                        });
                        let initial = block
                            .get("input")
                            .and_then(Value::as_object)
                            .cloned()
                            .unwrap_or_default();
                        Open::Tool {
                            id,
                            name,
                            json: String::new(),
                            initial,
                        }
                    }
                    _ => Open::Other,
                };
                self.blocks.insert(index, open);
            }
            "content_block_delta" => {
                let delta = data.get("delta").unwrap_or(&Value::Null);
                match (
                    self.blocks.get_mut(&index),
                    delta.get("type").and_then(Value::as_str),
                ) {
                    (Some(Open::Text), Some("text_delta")) => push_text(out, delta.get("text")),
                    (Some(Open::Thinking), Some("thinking_delta")) => {
                        push_reasoning(out, delta.get("thinking"))
                    }
                    (Some(Open::Tool { id, json, .. }), Some("input_json_delta")) => {
                        let fragment = delta
                            .get("partial_json")
                            .and_then(Value::as_str)
                            .unwrap_or("");
                        if !fragment.is_empty() {
                            self.tool_input.spend(fragment.len())?;
                            json.push_str(fragment);
                            out.push(StreamEvent::ToolCallDelta {
                                id: id.clone(),
                                json: fragment.to_string(),
                            });
                        }
                    }
                    _ => {} // signatures, citations
                }
            }
            "content_block_stop" => {
                if let Some(open) = self.blocks.remove(&index) {
                    out.extend(close(open));
                }
            }
            "message_delta" => {
                if let Some(reason) = data.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(reason.to_string());
                }
                if let Some(usage) = data.get("usage") {
                    // Counts here are cumulative; newer responses repeat the input.
                    let input = input_tokens(usage);
                    let (cache_read_tokens, cache_write_tokens) = if input > 0 {
                        cache_tokens(usage)
                    } else {
                        self.cache
                    };
                    out.push(StreamEvent::Usage {
                        input_tokens: if input > 0 { input } else { self.input_tokens },
                        output_tokens: usage
                            .get("output_tokens")
                            .and_then(Value::as_u64)
                            .unwrap_or(0),
                        cache_read_tokens,
                        cache_write_tokens,
                    });
                }
            }
            "message_stop" => {
                // The message is over, whether or not each block got its
                // `content_block_stop` (some compatible servers skip it):
                // tool calls still open end as they are, as in OpenAI's
                // protocol, with an `input_error` if their input is cut.
                let mut open: Vec<_> = self.blocks.drain().collect();
                open.sort_unstable_by_key(|(index, _)| *index);
                out.extend(open.into_iter().filter_map(|(_, block)| close(block)));
                return Ok(Step::Finished(self.stop_reason()));
            }
            "error" => return Err(LlmError::Event(ProviderMessage::from_json(&data))),
            _ => {} // ping, and event types added later
        }
        Ok(Step::More)
    }

    fn end(&mut self, _out: &mut Vec<StreamEvent>) -> Result<String, LlmError> {
        // A stream cut after the stop reason lost nothing but `message_stop`.
        match self.stop_reason {
            Some(_) if self.blocks.is_empty() => Ok(self.stop_reason()),
            _ => Err(LlmError::EndedEarly),
        }
    }
}

impl AnthropicDecoder {
    fn stop_reason(&self) -> String {
        self.stop_reason
            .clone()
            .unwrap_or_else(|| "end_turn".to_string())
    }
}

/// The end of a tool call's block; other blocks end silently. Input sent
/// whole in `content_block_start` stands when no deltas followed.
fn close(block: Open) -> Option<StreamEvent> {
    match block {
        Open::Tool {
            id,
            name,
            json,
            initial,
        } => Some(if json.trim().is_empty() {
            StreamEvent::ToolCallEnd {
                id,
                name,
                input: initial,
                input_error: None,
            }
        } else {
            tool_call_end(id, name, &json)
        }),
        Open::Text | Open::Thinking | Open::Other => None,
    }
}

/// Prompt tokens read from the cache and written to it.
fn cache_tokens(usage: &Value) -> (u64, u64) {
    let count = |k: &str| usage.get(k).and_then(Value::as_u64).unwrap_or(0);
    (
        count("cache_read_input_tokens"),
        count("cache_creation_input_tokens"),
    )
}

/// Prompt tokens, cached ones included.
fn input_tokens(usage: &Value) -> u64 {
    [
        "input_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
    ]
    .iter()
    .filter_map(|k| usage.get(*k).and_then(Value::as_u64))
    .sum()
}

fn push_text(out: &mut Vec<StreamEvent>, text: Option<&Value>) {
    if let Some(text) = text.and_then(Value::as_str).filter(|t| !t.is_empty()) {
        out.push(StreamEvent::TextDelta {
            text: text.to_string(),
        });
    }
}

fn push_reasoning(out: &mut Vec<StreamEvent>, text: Option<&Value>) {
    if let Some(text) = text.and_then(Value::as_str).filter(|t| !t.is_empty()) {
        out.push(StreamEvent::ReasoningDelta {
            text: text.to_string(),
        });
    }
}

fn text(value: &Value, key: &str) -> String {
    value
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Provider;
    use crate::types::{Message, Role, ToolDef};

    #[test]
    fn anthropics_own_api_gets_cache_breakpoints_and_other_servers_do_not() {
        let request = ChatRequest {
            system: "You are Corral.".into(),
            messages: vec![
                Message::user("first"),
                Message::assistant("ok"),
                Message {
                    role: Role::User,
                    content: vec![Block::text("a"), Block::text("b")],
                },
            ],
            tools: vec![ToolDef {
                name: "read_file".into(),
                description: "Read.".into(),
                input_schema: json!({"type": "object"}),
            }],
            max_tokens: None,
        };
        let mut config = ProviderConfig::new(Provider::Anthropic, "claude-sonnet-4-5");
        config.base_url = "https://api.anthropic.com".into();
        let cached = body(&config, &request, 100, true);
        let ephemeral = json!({"type": "ephemeral"});
        assert_eq!(
            cached["system"],
            json!([{"type": "text", "text": "You are Corral.", "cache_control": ephemeral}])
        );
        assert_eq!(cached["tools"][0]["cache_control"], ephemeral);
        assert_eq!(
            cached["messages"][2]["content"][1]["cache_control"],
            ephemeral
        );
        assert!(cached["messages"][2]["content"][0]
            .get("cache_control")
            .is_none());
        assert!(cached["messages"][0]["content"][0]
            .get("cache_control")
            .is_none());

        config.base_url = "http://127.0.0.1:8080".into();
        let local = body(&config, &request, 100, true);
        assert_eq!(local["system"], "You are Corral.");
        assert!(!local.to_string().contains("cache_control"));
    }

    #[test]
    fn tool_input_past_the_limit_fails() {
        let mut decoder = AnthropicDecoder {
            tool_input: ToolInputBudget::with_limit(8),
            ..AnthropicDecoder::default()
        };
        let mut feed = |data: Value| {
            let event = SseEvent {
                event: String::new(),
                data: data.to_string(),
            };
            let step = decoder.event(&event, &mut Vec::new());
            step.map(|_| ()).map_err(|e| e.to_string())
        };
        let delta = |json: &str| {
            json!({"type": "content_block_delta", "index": 0,
                   "delta": {"type": "input_json_delta", "partial_json": json}})
        };
        let tool = json!({"type": "tool_use", "id": "t1", "name": "t", "input": {}});
        let start = json!({"type": "content_block_start", "index": 0, "content_block": tool});
        assert_eq!(feed(start), Ok(()));
        assert_eq!(feed(delta(r#"{"a":"#)), Ok(()));
        assert_eq!(feed(delta("12}")), Ok(()));
        assert_eq!(feed(delta(" ")), Err("tool call input over 8 bytes".into()));
    }
}
