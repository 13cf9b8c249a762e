//! OpenAI-compatible Chat Completions: the request body and the stream
//! decoder, tolerant of the many servers that speak it (OpenAI, OpenRouter,
//! Ollama's `/v1`, LM Studio, llama.cpp's llama-server, vLLM).

use crate::config::ProviderConfig;
use crate::decode::{tool_call_end, Decoder, Step, ToolInputBudget};
use crate::error::{LlmError, ProviderMessage};
use crate::sse::SseEvent;
use crate::types::{Block, ChatRequest, Role, StreamEvent};
use serde_json::{json, Value};
use std::collections::HashMap;

/// The request body.
///
/// Our blocks become Chat Completions messages: the system prompt comes
/// first; an assistant message's text and tool calls become one message
/// (`content` null when it has no text); a user message's tool results
/// become `tool` messages, in order, before its text; with images, its
/// text and images are one message of content parts (`text`, then an
/// `image_url` part with a `data:` URL per image). `is_error` has no
/// place in this protocol: the result's content (our standardized error
/// JSON) says it. OpenAI's own API gets `max_completion_tokens` (its newer
/// models refuse `max_tokens`); other servers get `max_tokens`.
pub(crate) fn body(
    config: &ProviderConfig,
    request: &ChatRequest,
    max_tokens: u32,
    stream: bool,
) -> Value {
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
                        messages.push(json!({"role": "tool", "tool_call_id": tool_use_id, "content": content}));
                    }
                }
                let images: Vec<Value> = message
                    .content
                    .iter()
                    .filter_map(|block| match block {
                        Block::Image { media_type, data } => Some(json!({
                            "type": "image_url",
                            "image_url": {"url": format!("data:{media_type};base64,{data}")},
                        })),
                        _ => None,
                    })
                    .collect();
                if !images.is_empty() {
                    let mut parts = Vec::new();
                    if !text.is_empty() {
                        parts.push(json!({"type": "text", "text": text}));
                    }
                    parts.extend(images);
                    messages.push(json!({"role": "user", "content": parts}));
                } else if !text.is_empty() {
                    messages.push(json!({"role": "user", "content": text}));
                }
            }
            Role::Assistant => {
                let calls: Vec<Value> = message
                    .content
                    .iter()
                    .filter_map(|block| match block {
                        Block::ToolUse { id, name, input } => Some(json!({
                            "id": id,
                            "type": "function",
                            "function": {"name": name, "arguments": Value::Object(input.clone()).to_string()},
                        })),
                        _ => None,
                    })
                    .collect();
                if text.is_empty() && calls.is_empty() {
                    continue;
                }
                let mut out = json!({"role": "assistant", "content": if text.is_empty() { Value::Null } else { json!(text) }});
                if !calls.is_empty() {
                    out["tool_calls"] = json!(calls);
                }
                messages.push(out);
            }
        }
    }
    let mut body = json!({"model": config.model, "messages": messages, "stream": stream});
    let is_openai = reqwest::Url::parse(config.base())
        .ok()
        .and_then(|u| u.host_str().map(str::to_owned))
        == Some("api.openai.com".to_string());
    body[if is_openai {
        "max_completion_tokens"
    } else {
        "max_tokens"
    }] = json!(max_tokens);
    if stream {
        body["stream_options"] = json!({"include_usage": true});
        // llama.cpp then streams how far it is in reading the prompt (a
        // 4k-token prompt takes tens of seconds on a CPU). Only servers on
        // this machine are asked: a hosted API may refuse a field it does
        // not know.
        if crate::http::is_loopback(config.base()) {
            body["return_progress"] = json!(true);
        }
    }
    if !request.tools.is_empty() {
        body["tools"] = function_tools(request);
    }
    body
}

/// The request's tools in OpenAI's function shape (Ollama takes it too).
pub(crate) fn function_tools(request: &ChatRequest) -> Value {
    let tools: Vec<Value> = request
        .tools
        .iter()
        .map(|t| json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.input_schema}}))
        .collect();
    json!(tools)
}

/// A message's text blocks, joined as one string.
pub(crate) fn joined_text(blocks: &[Block]) -> String {
    let texts: Vec<&str> = blocks
        .iter()
        .filter_map(|b| match b {
            Block::Text { text } if !text.is_empty() => Some(text.as_str()),
            _ => None,
        })
        .collect();
    texts.join("\n\n")
}

/// A tool call being streamed.
struct Call {
    id: String,
    name: String,
    args: String,
    /// How much of `args` went out as deltas.
    sent: usize,
    started: bool,
    ended: bool,
}

/// Decodes one Chat Completions stream.
#[derive(Default)]
pub(crate) struct OpenAiDecoder {
    calls: Vec<Call>,
    /// The server's `index` of a call to its place in `calls`.
    by_index: HashMap<u64, usize>,
    /// Tool input received so far, all calls together.
    tool_input: ToolInputBudget,
    finish_reason: Option<String>,
}

impl Decoder for OpenAiDecoder {
    fn event(&mut self, event: &SseEvent, out: &mut Vec<StreamEvent>) -> Result<Step, LlmError> {
        let data = event.data.trim();
        if data == "[DONE]" {
            self.close_calls(out)?;
            return Ok(Step::Finished(self.stop_reason()));
        }
        let chunk: Value = serde_json::from_str(data).map_err(|e| LlmError::BadEvent {
            cause: e.to_string(),
            data: event.data.clone(),
        })?;
        if chunk.get("error").is_some_and(|e| !e.is_null()) {
            return Err(LlmError::Event(ProviderMessage::from_json(&chunk)));
        }
        let choice = chunk
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|c| c.first());
        if let Some(choice) = choice {
            let delta = choice
                .get("delta")
                .or_else(|| choice.get("message"))
                .unwrap_or(&Value::Null);
            // llama-server and DeepSeek send the reasoning as
            // `reasoning_content`, some other servers as `reasoning`.
            if let Some(text) = ["reasoning_content", "reasoning"]
                .iter()
                .find_map(|key| delta.get(*key).and_then(Value::as_str))
                .filter(|t| !t.is_empty())
            {
                out.push(StreamEvent::ReasoningDelta {
                    text: text.to_string(),
                });
            }
            if let Some(text) = delta
                .get("content")
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty())
            {
                out.push(StreamEvent::TextDelta {
                    text: text.to_string(),
                });
            }
            for call in delta
                .get("tool_calls")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                self.on_tool_call(call, out)?;
            }
            // Some servers send `""` instead of null while still generating.
            let reason = choice
                .get("finish_reason")
                .and_then(Value::as_str)
                .filter(|r| !r.is_empty());
            if let Some(reason) = reason {
                self.finish_reason = Some(reason.to_string());
                self.close_calls(out)?;
            }
        }
        if let Some(progress) = chunk.get("prompt_progress").filter(|p| p.is_object()) {
            let count = |k: &str| progress.get(k).and_then(Value::as_u64).unwrap_or(0);
            let total = count("total");
            if total > 0 {
                out.push(StreamEvent::PromptProgress {
                    processed: count("processed").min(total),
                    total,
                });
            }
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            let count = |k: &str| usage.get(k).and_then(Value::as_u64).unwrap_or(0);
            out.push(StreamEvent::Usage {
                input_tokens: count("prompt_tokens"),
                output_tokens: count("completion_tokens"),
                cache_read_tokens: usage
                    .pointer("/prompt_tokens_details/cached_tokens")
                    .and_then(Value::as_u64)
                    .unwrap_or(0),
                cache_write_tokens: 0,
            });
        }
        Ok(Step::More)
    }

    fn end(&mut self, out: &mut Vec<StreamEvent>) -> Result<String, LlmError> {
        // Without `[DONE]`, only a finish reason says nothing was cut off.
        if self.finish_reason.is_none() {
            return Err(LlmError::EndedEarly);
        }
        self.close_calls(out)?;
        Ok(self.stop_reason())
    }
}

impl OpenAiDecoder {
    /// One entry of `delta.tool_calls`. The first fragment of a call has its
    /// `index` and usually its `id` and name; later ones carry argument text.
    /// Servers differ: ids may be missing (we make `call_<n>`), repeated on
    /// every fragment, or new at a reused index (a new call).
    fn on_tool_call(&mut self, call: &Value, out: &mut Vec<StreamEvent>) -> Result<(), LlmError> {
        let index = call.get("index").and_then(Value::as_u64);
        let id = call
            .get("id")
            .and_then(Value::as_str)
            .filter(|id| !id.is_empty());
        let known_id = id.and_then(|id| self.calls.iter().position(|c| c.id == id));
        let at_index = index.and_then(|i| self.by_index.get(&i).copied());
        let place = match (known_id, id, index, at_index) {
            (Some(place), ..) => place,
            (None, Some(_), ..) | (None, None, Some(_), None) => self.new_call(id, index),
            (None, None, Some(_), Some(place)) => place,
            (None, None, None, _) if !self.calls.is_empty() => self.calls.len() - 1,
            (None, None, None, _) => self.new_call(None, None),
        };
        let Some(entry) = self.calls.get_mut(place) else {
            return Ok(());
        };
        if entry.ended {
            return Ok(());
        }
        let function = call.get("function").unwrap_or(&Value::Null);
        if let Some(name) = function.get("name").and_then(Value::as_str) {
            if !entry.started {
                entry.name.push_str(name);
            }
        }
        match function.get("arguments") {
            Some(Value::String(fragment)) => {
                self.tool_input.spend(fragment.len())?;
                entry.args.push_str(fragment);
            }
            Some(object @ Value::Object(_)) if entry.args.is_empty() => {
                entry.args = object.to_string();
                self.tool_input.spend(entry.args.len())?;
            }
            _ => {}
        }
        if !entry.started && !entry.name.is_empty() {
            entry.started = true;
            out.push(StreamEvent::ToolCallStart {
                id: entry.id.clone(),
                name: entry.name.clone(),
            });
        }
        if entry.started && entry.args.len() > entry.sent {
            out.push(StreamEvent::ToolCallDelta {
                id: entry.id.clone(),
                json: entry.args[entry.sent..].to_string(),
            });
            entry.sent = entry.args.len();
        }
        Ok(())
    }

    fn new_call(&mut self, id: Option<&str>, index: Option<u64>) -> usize {
        let place = self.calls.len();
        self.calls.push(Call {
            id: id.map_or_else(|| format!("call_{place}"), str::to_owned),
            name: String::new(),
            args: String::new(),
            sent: 0,
            started: false,
            ended: false,
        });
        if let Some(index) = index {
            self.by_index.insert(index, place);
        }
        place
    }

    /// Ends every open call, in order.
    fn close_calls(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), LlmError> {
        for call in self.calls.iter_mut().filter(|c| !c.ended) {
            call.ended = true;
            if !call.started {
                return Err(LlmError::BadToolCall(format!(
                    "tool call `{}` names no tool",
                    call.id
                )));
            }
            let args = if call.args.trim().is_empty() {
                "{}"
            } else {
                &call.args
            };
            out.push(tool_call_end(call.id.clone(), call.name.clone(), args));
        }
        Ok(())
    }

    /// The finish reason in our terms. Some servers say `stop` after tool
    /// calls; the calls decide then.
    fn stop_reason(&self) -> String {
        let called = !self.calls.is_empty();
        match self.finish_reason.as_deref() {
            Some("tool_calls" | "function_call") => "tool_use".into(),
            Some("length") => "max_tokens".into(),
            Some("stop") | None if called => "tool_use".into(),
            Some("stop") | None => "end_turn".into(),
            Some(other) => other.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_server_on_this_machine_is_asked_for_prompt_progress() {
        let request = ChatRequest {
            system: String::new(),
            messages: vec![],
            tools: vec![],
            max_tokens: None,
        };
        for (base, asked) in [
            ("http://127.0.0.1:8080/v1", true),
            ("http://localhost:11434/v1", true),
            ("https://api.openai.com/v1", false),
            ("https://openrouter.ai/api/v1", false),
        ] {
            let mut config = ProviderConfig::new(crate::Provider::OpenAi, "m");
            config.base_url = base.into();
            let sent = body(&config, &request, 256, true);
            assert_eq!(sent.get("return_progress").is_some(), asked, "{base}");
            assert!(body(&config, &request, 256, false)
                .get("return_progress")
                .is_none());
        }
    }

    #[test]
    fn tool_input_past_the_limit_fails() {
        let mut decoder = OpenAiDecoder {
            tool_input: ToolInputBudget::with_limit(8),
            ..OpenAiDecoder::default()
        };
        let mut feed = |calls: Value| {
            let data = json!({"choices": [{"index": 0, "delta": {"tool_calls": calls}}]});
            let event = SseEvent {
                event: String::new(),
                data: data.to_string(),
            };
            let step = decoder.event(&event, &mut Vec::new());
            step.map(|_| ()).map_err(|e| e.to_string())
        };
        let start = |index: u64, id: &str, args: &str| json!([{"index": index, "id": id, "function": {"name": "t", "arguments": args}}]);
        assert_eq!(feed(start(0, "a", r#"{"a":"#)), Ok(()));
        assert_eq!(
            feed(json!([{"index": 0, "function": {"arguments": "1}"}}])),
            Ok(())
        );
        // All calls count together: 7 bytes, then 2 more.
        assert_eq!(
            feed(start(1, "b", "{}")),
            Err("tool call input over 8 bytes".into())
        );
    }
}
