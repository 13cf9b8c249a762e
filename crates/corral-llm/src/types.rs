//! The provider-neutral request and event types, with the JSON shapes of
//! `docs/ipc.md` (`LlmRequest`, `Message`, `Block`, `LlmEvent`).

use corral_protocol::{Error, ErrorCode};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Who wrote a [`Message`]. The system prompt is not a message: it lives in
/// [`ChatRequest::system`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The person, or tool results sent back for the model.
    User,
    /// The model.
    Assistant,
}

/// One piece of a message's content, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Block {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// A tool call the assistant made.
    ToolUse {
        /// The provider's call id; [`Block::ToolResult::tool_use_id`] refers to it.
        id: String,
        /// The tool's name.
        name: String,
        /// The tool's input object.
        #[ts(type = "Record<string, unknown>")]
        input: Map<String, Value>,
    },
    /// The result of a tool call, sent back in a user message.
    ToolResult {
        /// The id of the [`Block::ToolUse`] this answers.
        tool_use_id: String,
        /// The result as text (tool output or the standardized error's JSON).
        content: String,
        /// Whether the call failed.
        #[serde(default, skip_serializing_if = "is_false")]
        #[ts(as = "Option<bool>", optional)]
        is_error: bool,
    },
    /// An image the person attached to a user message, base64-encoded.
    /// Anthropic gets it as an `image` block with a `base64` source,
    /// OpenAI-compatible servers as an `image_url` part with a `data:` URL.
    /// The window checks the limits ([`IMAGE_TYPES`], [`IMAGE_MAX_BYTES`],
    /// [`IMAGES_PER_MESSAGE`], [`IMAGES_PER_REQUEST`]) before it sends one.
    Image {
        /// The image's MIME type: one of [`IMAGE_TYPES`].
        media_type: String,
        /// The image's bytes, base64 (standard alphabet, padded).
        data: String,
    },
}

/// The image types a message may carry: those every provider that takes
/// images accepts.
pub const IMAGE_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];
/// The largest image a message may carry, in bytes before base64 (Anthropic's
/// limit per image).
pub const IMAGE_MAX_BYTES: usize = 5 * 1024 * 1024;
/// The most images the person may attach to one message. The window keeps
/// to it; the bridge does not check it, because a message sent after a
/// failed request is merged into the one before (roles must alternate), so
/// one user message of the transcript may hold the images of several.
pub const IMAGES_PER_MESSAGE: usize = 4;
/// The most images one request may carry, all messages together
/// (Anthropic's limit per request).
pub const IMAGES_PER_REQUEST: usize = 100;

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if passes a reference
fn is_false(value: &bool) -> bool {
    !*value
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if passes a reference
fn is_zero(value: &u64) -> bool {
    *value == 0
}

impl Block {
    /// A [`Block::Text`].
    pub fn text(text: impl Into<String>) -> Self {
        Block::Text { text: text.into() }
    }
}

/// One turn of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
pub struct Message {
    /// Who wrote it.
    pub role: Role,
    /// What it says, in order.
    pub content: Vec<Block>,
}

impl Message {
    /// A user message with one text block.
    pub fn user(text: impl Into<String>) -> Self {
        Message {
            role: Role::User,
            content: vec![Block::text(text)],
        }
    }

    /// An assistant message with one text block.
    pub fn assistant(text: impl Into<String>) -> Self {
        Message {
            role: Role::Assistant,
            content: vec![Block::text(text)],
        }
    }
}

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[ts(rename = "LlmTool")]
pub struct ToolDef {
    /// The tool's name (what the model calls).
    pub name: String,
    /// What the tool does, for the model.
    pub description: String,
    /// The JSON Schema of the tool's input object.
    #[ts(type = "object")]
    pub input_schema: Value,
}

/// One request to the model: `LlmRequest` on the wire.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[ts(rename = "LlmRequest")]
pub struct ChatRequest {
    /// The system prompt; empty for none.
    #[serde(default)]
    pub system: String,
    /// The conversation so far, oldest first.
    pub messages: Vec<Message>,
    /// The tools the model may call; empty for none.
    #[serde(default)]
    pub tools: Vec<ToolDef>,
    /// The most tokens this reply may use when that is less than the
    /// settings' max tokens (the caller keeps request and reply inside the
    /// context window); `None` for the settings' value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub max_tokens: Option<u32>,
}

impl ChatRequest {
    /// Whether any message carries an image.
    pub fn has_images(&self) -> bool {
        self.messages
            .iter()
            .flat_map(|m| &m.content)
            .any(|b| matches!(b, Block::Image { .. }))
    }

    /// Whether the newest user message carries an image (after a tool round
    /// that message holds the tool results, not the person's images).
    pub fn newest_user_has_images(&self) -> bool {
        self.messages
            .iter()
            .rev()
            .find(|m| m.role == Role::User)
            .is_some_and(|m| m.content.iter().any(|b| matches!(b, Block::Image { .. })))
    }

    /// Checks the images against the limits so a request the window should
    /// not have sent fails before it leaves: each image's type
    /// ([`IMAGE_TYPES`]) and size ([`IMAGE_MAX_BYTES`]), and the images of
    /// the whole request ([`IMAGES_PER_REQUEST`]). How they are spread over
    /// the messages is not checked: merging a message into the one before
    /// cannot make a conversation unusable.
    pub fn check_images(&self) -> Result<(), Error> {
        let mut count = 0;
        for block in self.messages.iter().flat_map(|m| &m.content) {
            let Block::Image { media_type, data } = block else {
                continue;
            };
            count += 1;
            if !IMAGE_TYPES.contains(&media_type.as_str()) {
                return Err(Error::new(
                    ErrorCode::InvalidInput,
                    format!("an image of type `{media_type}` cannot be sent"),
                )
                .hint("Attach PNG, JPEG, GIF or WebP images."));
            }
            let bytes = data.len() / 4 * 3;
            if bytes > IMAGE_MAX_BYTES + 2 {
                return Err(Error::new(
                    ErrorCode::TooLarge,
                    format!("an image of about {bytes} bytes is over the limit of {IMAGE_MAX_BYTES} bytes"),
                )
                .hint("Attach a smaller image (5 MiB at most).")
                .detail("limit_bytes", IMAGE_MAX_BYTES));
            }
        }
        if count > IMAGES_PER_REQUEST {
            return Err(Error::new(
                ErrorCode::InvalidInput,
                format!("the conversation carries {count} images; at most {IMAGES_PER_REQUEST} can be sent in one request"),
            )
            .hint("Start a new conversation for more images."));
        }
        Ok(())
    }

    /// The reply's token limit: `max_tokens` when set, never more than
    /// `configured` and never less than 1.
    pub fn reply_limit(&self, configured: u32) -> u32 {
        self.max_tokens
            .map_or(configured, |limit| limit.clamp(1, configured.max(1)))
    }
}

/// One normalized event of a streamed answer: `LlmEvent` on the wire.
///
/// Every stream ends with exactly one terminal event, [`StreamEvent::Done`]
/// or [`StreamEvent::Error`], and sends nothing after it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[serde(tag = "type", rename_all = "snake_case")]
#[ts(rename = "LlmEvent")]
pub enum StreamEvent {
    /// More text of the answer.
    TextDelta {
        /// The new text.
        text: String,
    },
    /// More of the model's reasoning before its answer (llama.cpp's and
    /// DeepSeek's `reasoning_content`, Ollama's `thinking`, Anthropic's
    /// thinking blocks): shown to the user, never sent back to the model.
    ReasoningDelta {
        /// The new text.
        text: String,
    },
    /// The model started a tool call.
    ToolCallStart {
        /// The call id (the provider's, or `call_<n>` when it gave none).
        id: String,
        /// The tool's name.
        name: String,
    },
    /// More of a tool call's input, as a fragment of JSON text.
    ToolCallDelta {
        /// The call id.
        id: String,
        /// The fragment; the fragments of one call concatenate to its input.
        json: String,
    },
    /// A tool call is complete.
    ToolCallEnd {
        /// The call id.
        id: String,
        /// The tool's name.
        name: String,
        /// The parsed input (`{}` when the model sent none, or sent text
        /// that is not a JSON object).
        #[ts(type = "Record<string, unknown>")]
        input: Map<String, Value>,
        /// Set when the model's input text is not a JSON object: an
        /// `invalid_input` error to give back to the model as the call's
        /// result (the call is not run). The stream goes on.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        input_error: Option<Error>,
    },
    /// Token counts of this response (input includes cached prompt tokens).
    Usage {
        /// Prompt tokens.
        #[ts(type = "number")]
        input_tokens: u64,
        /// Generated tokens.
        #[ts(type = "number")]
        output_tokens: u64,
        /// Of `input_tokens`, those read from the provider's prompt cache
        /// (Anthropic's `cache_read_input_tokens`, OpenAI's
        /// `prompt_tokens_details.cached_tokens`); 0 when it says none.
        #[serde(default, skip_serializing_if = "is_zero")]
        #[ts(as = "Option<u32>", optional)]
        cache_read_tokens: u64,
        /// Of `input_tokens`, those written to the prompt cache (Anthropic's
        /// `cache_creation_input_tokens`); 0 when it says none.
        #[serde(default, skip_serializing_if = "is_zero")]
        #[ts(as = "Option<u32>", optional)]
        cache_write_tokens: u64,
    },
    /// How far the server is in reading the prompt, before the first token
    /// (llama.cpp's `prompt_progress`, streamed when asked with
    /// `return_progress`).
    PromptProgress {
        /// Prompt tokens read so far (those taken from its cache included).
        #[ts(type = "number")]
        processed: u64,
        /// Prompt tokens in all.
        #[ts(type = "number")]
        total: u64,
    },
    /// The request failed before anything was streamed and will be sent again.
    Retrying {
        /// Which retry this is, from 1.
        attempt: u32,
        /// How long the bridge waits before it.
        #[ts(type = "number")]
        delay_ms: u64,
        /// Why the previous attempt failed.
        error: corral_protocol::Error,
    },
    /// Terminal: the answer is complete. `stop_reason` is `end_turn`,
    /// `tool_use`, `max_tokens`, `cancelled` (the caller cancelled), or
    /// another reason the provider gave, passed through.
    Done {
        /// Why the model stopped.
        stop_reason: String,
    },
    /// Terminal: the answer failed.
    Error {
        /// What went wrong, as the standardized error.
        error: corral_protocol::Error,
    },
}

impl StreamEvent {
    /// Whether this event ends the stream.
    pub fn is_terminal(&self) -> bool {
        matches!(self, StreamEvent::Done { .. } | StreamEvent::Error { .. })
    }
}
