//! Ollama's native chat API (`POST /api/chat`): the request body and the
//! decoder of its newline-delimited JSON stream.
//!
//! Only this API takes the context size (`options.num_ctx`); the
//! OpenAI-compatible `/v1` runs every model at its default size and drops
//! the start of a longer prompt (the system prompt and the tools first)
//! without a word. Each line of the stream is one object:
//! `{"message": {"content", "thinking"?, "tool_calls"?}, "done": false}`,
//! then a last one with `"done": true`, `done_reason` and the token counts
//! (`prompt_eval_count`, `eval_count`); a failure mid-stream is a line
//! `{"error": "..."}`. Tool calls come whole, their arguments an object.

use crate::config::ProviderConfig;
use crate::decode::{tool_call_end, Decoder, Step, ToolInputBudget};
use crate::error::{LlmError, ProviderMessage};
use crate::model_info::OLLAMA_DEFAULT_CONTEXT;
use crate::openai::{self, joined_text};
use crate::sse::SseEvent;
use crate::types::{Block, ChatRequest, Role, StreamEvent};
use serde_json::{json, Value};
use std::collections::HashMap;

/// The request body.
///
/// The system prompt comes first; a user message's tool results become
/// `tool` messages, in order, each naming its tool (`tool_name`, found from
/// the call it answers) and call (`tool_call_id`), before its text and
/// images (`images`: base64, no `data:` prefix); an assistant message's
/// tool calls carry their arguments as an object. `options.num_ctx` is the
/// window the settings give (else [`OLLAMA_DEFAULT_CONTEXT`]), so the
/// window the agent plans for is the one the model runs with;
/// `options.num_predict` is the reply's limit.
pub(crate) fn body(
    config: &ProviderConfig,
    request: &ChatRequest,
    max_tokens: u32,
    stream: bool,
) -> Value {
    let tool_names: HashMap<&str, &str> = request
        .messages
        .iter()
        .flat_map(|m| &m.content)
        .filter_map(|block| match block {
            Block::ToolUse { id, name, .. } => Some((id.as_str(), name.as_str())),
            _ => None,
        })
        .collect();
    let mut messages = Vec::new();
    if !request.system.is_empty() {
        messages.push(json!({"role": "system", "content": request.system}));
    }
    for message in &request.messages {
        let text = joined_text(&message.content);
        match message.role {
            Role::User => {
                for block in &message.content {
                    if let Block::ToolResult {
                        tool_use_id,
                        content,
                        ..
                    } = block
                    {
                        let mut result = json!({"role": "tool", "content": content, "tool_call_id": tool_use_id});
                        if let Some(name) = tool_names.get(tool_use_id.as_str()) {
                            result["tool_name"] = json!(name);
                        }
                        messages.push(result);
                    }
                }
                let images: Vec<&str> = message
                    .content
                    .iter()
                    .filter_map(|block| match block {
                        Block::Image { data, .. } => Some(data.as_str()),
                        _ => None,
                    })
                    .collect();
                if text.is_empty() && images.is_empty() {
                    continue;
                }
                let mut out = json!({"role": "user", "content": text});
                if !images.is_empty() {
                    out["images"] = json!(images);
                }
                messages.push(out);
            }
            Role::Assistant => {
                let calls: Vec<Value> = message
                    .content
                    .iter()
                    .filter_map(|block| match block {
                        Block::ToolUse { id, name, input } => Some(json!({
                            "id": id,
                            "function": {"name": name, "arguments": input},
                        })),
                        _ => None,
                    })
                    .collect();
                if text.is_empty() && calls.is_empty() {
                    continue;
                }
                let mut out = json!({"role": "assistant", "content": text});
                if !calls.is_empty() {
                    out["tool_calls"] = json!(calls);
                }
                messages.push(out);
            }
        }
    }
    let num_ctx = config
        .context_window
        .filter(|w| *w > 0)
        .unwrap_or(OLLAMA_DEFAULT_CONTEXT);
    let mut body = json!({
        "model": config.model,
        "messages": messages,
        "stream": stream,
        "options": {"num_ctx": num_ctx, "num_predict": max_tokens},
    });
    if !request.tools.is_empty() {
        body["tools"] = openai::function_tools(request);
    }
    body
}

/// Decodes one `/api/chat` stream.
#[derive(Default)]
pub(crate) struct OllamaDecoder {
    /// Tool calls of this response so far (for ids and the stop reason).
    calls: usize,
    tool_input: ToolInputBudget,
}

impl Decoder for OllamaDecoder {
    fn event(&mut self, event: &SseEvent, out: &mut Vec<StreamEvent>) -> Result<Step, LlmError> {
        let line: Value = serde_json::from_str(&event.data).map_err(|e| LlmError::BadEvent {
            cause: e.to_string(),
            data: event.data.clone(),
        })?;
        if line.get("error").is_some_and(|e| !e.is_null()) {
            return Err(LlmError::Event(ProviderMessage::from_json(&line)));
        }
        let message = line.get("message").unwrap_or(&Value::Null);
        if let Some(text) = message
            .get("thinking")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
        {
            out.push(StreamEvent::ReasoningDelta {
                text: text.to_string(),
            });
        }
        if let Some(text) = message
            .get("content")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
        {
            out.push(StreamEvent::TextDelta {
                text: text.to_string(),
            });
        }
        for call in message
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            self.on_tool_call(call, out)?;
        }
        if line.get("done").and_then(Value::as_bool) != Some(true) {
            return Ok(Step::More);
        }
        let count = |k: &str| line.get(k).and_then(Value::as_u64).unwrap_or(0);
        out.push(StreamEvent::Usage {
            input_tokens: count("prompt_eval_count"),
            output_tokens: count("eval_count"),
            cache_read_tokens: 0,
            cache_write_tokens: 0,
        });
        let reason = line.get("done_reason").and_then(Value::as_str);
        Ok(Step::Finished(self.stop_reason(reason)))
    }

    fn end(&mut self, _out: &mut Vec<StreamEvent>) -> Result<String, LlmError> {
        // Only the line with `"done": true` says nothing was cut off.
        Err(LlmError::EndedEarly)
    }
}

impl OllamaDecoder {
    /// One whole tool call: `{"id"?, "function": {"name", "arguments": {...}}}`.
    /// Ollama gives ids only in newer versions; `call_<n>` otherwise.
    fn on_tool_call(&mut self, call: &Value, out: &mut Vec<StreamEvent>) -> Result<(), LlmError> {
        let place = self.calls;
        self.calls += 1;
        let id = call
            .get("id")
            .and_then(Value::as_str)
            .filter(|id| !id.is_empty())
            .map_or_else(|| format!("call_{place}"), str::to_owned);
        let function = call.get("function").unwrap_or(&Value::Null);
        let name = function
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        if name.is_empty() {
            return Err(LlmError::BadToolCall(format!(
                "tool call `{id}` names no tool"
            )));
        }
        // An object as documented; text is read as some servers send it.
        let args = match function.get("arguments") {
            None | Some(Value::Null) => "{}".to_string(),
            Some(Value::String(text)) => text.clone(),
            Some(other) => other.to_string(),
        };
        self.tool_input.spend(args.len())?;
        out.push(StreamEvent::ToolCallStart {
            id: id.clone(),
            name: name.clone(),
        });
        out.push(StreamEvent::ToolCallDelta {
            id: id.clone(),
            json: args.clone(),
        });
        out.push(tool_call_end(id, name, &args));
        Ok(())
    }

    /// `done_reason` in our terms: `stop` after tool calls is `tool_use`.
    fn stop_reason(&self, reason: Option<&str>) -> String {
        match reason {
            Some("length") => "max_tokens".into(),
            Some("stop") | None if self.calls > 0 => "tool_use".into(),
            Some("stop") | None => "end_turn".into(),
            Some(other) => other.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{Message, ToolDef};

    fn decode(lines: &[Value]) -> (Vec<StreamEvent>, Result<String, String>) {
        let mut decoder = OllamaDecoder::default();
        let mut out = Vec::new();
        for line in lines {
            let event = SseEvent {
                event: String::new(),
                data: line.to_string(),
            };
            match decoder.event(&event, &mut out) {
                Ok(Step::More) => {}
                Ok(Step::Finished(reason)) => return (out, Ok(reason)),
                Err(e) => return (out, Err(e.to_string())),
            }
        }
        let end = decoder.end(&mut out).map_err(|e| e.to_string());
        (out, end)
    }

    #[test]
    fn a_call_without_a_name_or_an_end_fails() {
        let nameless = json!({"message": {"role": "assistant", "content": "", "tool_calls": [{"function": {"arguments": {}}}]}, "done": false});
        assert_eq!(
            decode(&[nameless]).1,
            Err("bad tool call: tool call `call_0` names no tool".into())
        );
        let cut = json!({"message": {"role": "assistant", "content": "Hi"}, "done": false});
        assert_eq!(decode(&[cut]).1, Err("ended early".into()));
    }

    #[test]
    fn done_reasons_become_stop_reasons() {
        let done = |reason: &str| json!({"message": {"role": "assistant", "content": ""}, "done": true, "done_reason": reason});
        assert_eq!(decode(&[done("stop")]).1, Ok("end_turn".into()));
        assert_eq!(decode(&[done("length")]).1, Ok("max_tokens".into()));
        assert_eq!(decode(&[done("unload")]).1, Ok("unload".into()));
    }

    #[test]
    fn the_window_goes_as_num_ctx() {
        let request = ChatRequest {
            system: "S".into(),
            messages: vec![Message::user("hi")],
            tools: vec![ToolDef {
                name: "t".into(),
                description: "d".into(),
                input_schema: json!({"type": "object"}),
            }],
            max_tokens: None,
        };
        let mut config = ProviderConfig::new(crate::Provider::Ollama, "qwen3:8b");
        let sent = body(&config, &request, 512, true);
        assert_eq!(
            sent["options"],
            json!({"num_ctx": OLLAMA_DEFAULT_CONTEXT, "num_predict": 512})
        );
        config.context_window = Some(16_384);
        let sent = body(&config, &request, 512, true);
        assert_eq!(sent["options"]["num_ctx"], json!(16_384));
        assert_eq!(
            sent["tools"][0]["function"]["parameters"],
            json!({"type": "object"})
        );
        assert_eq!(
            sent["messages"],
            json!([{"role": "system", "content": "S"}, {"role": "user", "content": "hi"}])
        );
    }
}
