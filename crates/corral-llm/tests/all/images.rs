//! Images in user messages, against a local server: the request bodies of
//! both wire formats, the limits checked before anything is sent, and a
//! server that refuses images giving the clear error.

use crate::common::{collect, terminal_error, Reply, Server};
use corral_llm::{
    Block, ChatRequest, Message, Provider, Role, StreamEvent, IMAGES_PER_REQUEST, IMAGE_MAX_BYTES,
};
use corral_protocol::ErrorCode;
use pretty_assertions::assert_eq;
use serde_json::json;

/// A 1×1 transparent PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

const ANTHROPIC_STREAM: &str = concat!(
    "event: message_start\n",
    r#"data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"test-model","content":[],"stop_reason":null,"usage":{"input_tokens":20,"output_tokens":1}}}"#,
    "\n\n",
    "event: content_block_start\n",
    r#"data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
    "\n\n",
    "event: content_block_delta\n",
    r#"data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"A red dot."}}"#,
    "\n\n",
    "event: content_block_stop\n",
    r#"data: {"type":"content_block_stop","index":0}"#,
    "\n\n",
    "event: message_delta\n",
    r#"data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":4}}"#,
    "\n\n",
    "event: message_stop\n",
    r#"data: {"type":"message_stop"}"#,
    "\n\n",
);

const OPENAI_STREAM: &str = concat!(
    r#"data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"A red dot."},"finish_reason":null}]}"#,
    "\n\n",
    r#"data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
    "\n\n",
    "data: [DONE]\n\n",
);

fn image(media_type: &str, data: &str) -> Block {
    Block::Image {
        media_type: media_type.into(),
        data: data.into(),
    }
}

/// A question about two images, after an earlier text-only turn.
fn request() -> ChatRequest {
    ChatRequest {
        system: String::new(),
        messages: vec![
            Message::user("Hello"),
            Message::assistant("Hi."),
            Message {
                role: Role::User,
                content: vec![
                    Block::text("What is in these?"),
                    image("image/png", PNG),
                    image("image/jpeg", "/9j/4AAQ"),
                ],
            },
        ],
        tools: vec![],
        max_tokens: None,
    }
}

fn done() -> StreamEvent {
    StreamEvent::Done {
        stop_reason: "end_turn".into(),
    }
}

#[tokio::test]
async fn anthropic_gets_image_blocks_with_a_base64_source() {
    let server = Server::start(vec![Reply::sse(ANTHROPIC_STREAM)]).await;
    let events = collect(&server.config(Provider::Anthropic), &request()).await;
    assert_eq!(events.last(), Some(&done()));
    let body = server.received()[0].json();
    assert_eq!(
        body["messages"],
        json!([
            {"role": "user", "content": [{"type": "text", "text": "Hello"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "Hi."}]},
            {"role": "user", "content": [
                {"type": "text", "text": "What is in these?"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
                {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "/9j/4AAQ"}},
            ]},
        ])
    );
}

#[tokio::test]
async fn openai_compatible_servers_get_image_url_parts_with_data_urls() {
    let server = Server::start(vec![Reply::sse(OPENAI_STREAM)]).await;
    let events = collect(&server.config(Provider::OpenAi), &request()).await;
    assert_eq!(events.last(), Some(&done()));
    let received = &server.received()[0];
    assert_eq!(received.path, "/v1/chat/completions");
    assert_eq!(
        received.json()["messages"],
        json!([
            {"role": "user", "content": "Hello"},
            {"role": "assistant", "content": "Hi."},
            {"role": "user", "content": [
                {"type": "text", "text": "What is in these?"},
                {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{PNG}")}},
                {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,/9j/4AAQ"}},
            ]},
        ])
    );
}

#[tokio::test]
async fn an_image_alone_is_sent_without_a_text_part() {
    let server = Server::start(vec![Reply::sse(OPENAI_STREAM)]).await;
    let only = ChatRequest {
        messages: vec![Message {
            role: Role::User,
            content: vec![image("image/webp", "UklGRg==")],
        }],
        ..ChatRequest::default()
    };
    collect(&server.config(Provider::OpenAi), &only).await;
    assert_eq!(
        server.received()[0].json()["messages"],
        json!([{"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": "data:image/webp;base64,UklGRg=="}},
        ]}])
    );
}

/// Each server's way of saying the model takes no images.
#[tokio::test]
async fn a_server_refusing_images_gives_the_clear_error() {
    let refusals = [
        // llama.cpp's llama-server started without a multimodal projector.
        (
            Provider::OpenAi,
            500,
            r#"{"error":{"code":500,"message":"image input is not supported - hint: if this is unexpected, you may need to provide the mmproj","type":"server_error"}}"#,
        ),
        // LM Studio with a text-only model.
        (
            Provider::OpenAi,
            400,
            r#"{"error":"Model does not support images. Please use a model that does."}"#,
        ),
        // OpenAI with a model that takes no image parts: a plain 400.
        (
            Provider::OpenAi,
            400,
            r#"{"error":{"message":"Invalid content type. image_url is only supported by certain models.","type":"invalid_request_error","param":"messages.[2].content.[1].type","code":null}}"#,
        ),
        // An Anthropic-format server that says nothing about images.
        (
            Provider::Anthropic,
            400,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"unexpected content"}}"#,
        ),
    ];
    for (provider, status, body) in refusals {
        let server = Server::start(vec![Reply::json(status, body)]).await;
        let events = collect(&server.config(provider), &request()).await;
        let error = terminal_error(&events);
        assert_eq!(error.code, ErrorCode::InvalidInput, "{body}");
        assert!(!error.retryable, "{body}");
        assert!(
            error
                .message
                .starts_with(&format!("The server refused the message's images (HTTP {status}); the model may not accept images: ")),
            "{}",
            error.message
        );
        assert!(error.hint.contains("accepts images"), "{}", error.hint);
        assert_eq!(error.details["reason"], json!("images_unsupported"));
        assert_eq!(error.details["status"], json!(status));
        // Not retried: the server saw one request.
        assert_eq!(server.received().len(), 1, "{body}");
    }
}

#[tokio::test]
async fn without_images_a_400_is_the_usual_refusal() {
    let server = Server::start(vec![Reply::json(
        400,
        r#"{"error":{"message":"Model does not support images.","type":"invalid_request_error"}}"#,
    )])
    .await;
    let events = collect(
        &server.config(Provider::OpenAi),
        &ChatRequest {
            messages: vec![Message::user("Hello")],
            ..ChatRequest::default()
        },
    )
    .await;
    let error = terminal_error(&events);
    assert_eq!(error.code, ErrorCode::InvalidInput);
    assert!(error.details.get("reason").is_none(), "{error:?}");
}

#[tokio::test]
async fn images_over_the_limits_are_refused_before_anything_is_sent() {
    let big = "A".repeat((IMAGE_MAX_BYTES / 3 + 8) * 4);
    let cases = [
        (
            vec![image("image/svg+xml", "PHN2Zz4=")],
            ErrorCode::InvalidInput,
            "an image of type `image/svg+xml` cannot be sent",
        ),
        (
            vec![image("image/png", &big)],
            ErrorCode::TooLarge,
            "an image of about 5242902 bytes is over the limit of 5242880 bytes",
        ),
        (
            vec![image("image/png", PNG); IMAGES_PER_REQUEST + 1],
            ErrorCode::InvalidInput,
            "the conversation carries 101 images; at most 100 can be sent in one request",
        ),
    ];
    for (content, code, message) in cases {
        let server = Server::start(vec![Reply::sse(OPENAI_STREAM)]).await;
        let request = ChatRequest {
            messages: vec![Message {
                role: Role::User,
                content,
            }],
            ..ChatRequest::default()
        };
        let events = collect(&server.config(Provider::OpenAi), &request).await;
        let error = terminal_error(&events);
        assert_eq!((error.code, error.message.as_str()), (code, message));
        assert!(server.received().is_empty());
    }
}

/// A message sent after a failed request is merged into the one before:
/// 3 + 2 images in one user message, and images in earlier messages too,
/// still go out.
#[tokio::test]
async fn a_merged_message_of_more_than_four_images_is_sent() {
    let server = Server::start(vec![Reply::sse(OPENAI_STREAM)]).await;
    let mut merged = vec![Block::text("These three?")];
    merged.extend(vec![image("image/png", PNG); 3]);
    merged.push(Block::text("And these two?"));
    merged.extend(vec![image("image/png", PNG); 2]);
    let request = ChatRequest {
        messages: vec![
            Message {
                role: Role::User,
                content: vec![image("image/png", PNG); 4],
            },
            Message::assistant("Four dots."),
            Message {
                role: Role::User,
                content: merged,
            },
        ],
        ..ChatRequest::default()
    };
    let events = collect(&server.config(Provider::OpenAi), &request).await;
    assert_eq!(events.last(), Some(&done()));
    assert_eq!(server.received().len(), 1);
}

/// Images earlier in the conversation do not make every 400 an images
/// refusal: a bare status is one only when the newest user message carries
/// images; otherwise the server must name images.
#[tokio::test]
async fn with_images_only_earlier_a_bare_400_keeps_its_own_error() {
    let mut history = request().messages;
    history.push(Message::assistant("Two dots."));
    history.push(Message::user("Now list the files."));
    let later = ChatRequest {
        messages: history,
        ..ChatRequest::default()
    };
    let schema = r#"{"error":{"message":"Invalid schema for function 'glob': 'pattern' is not valid","type":"invalid_request_error"}}"#;
    let server = Server::start(vec![Reply::json(400, schema)]).await;
    let error = terminal_error(&collect(&server.config(Provider::OpenAi), &later).await);
    assert_eq!(error.code, ErrorCode::InvalidInput);
    assert!(error.details.get("reason").is_none(), "{error:?}");
    assert!(
        error.message.contains("Invalid schema for function 'glob'"),
        "{}",
        error.message
    );

    // A server that names images is still a refusal.
    let images = r#"{"error":"Model does not support images. Please use a model that does."}"#;
    let server = Server::start(vec![Reply::json(400, images)]).await;
    let error = terminal_error(&collect(&server.config(Provider::OpenAi), &later).await);
    assert_eq!(error.details["reason"], json!("images_unsupported"));
    assert_eq!(
        error.details["server_message"],
        json!("Model does not support images. Please use a model that does.")
    );

    // With the images in the newest message, a bare 400 is their refusal,
    // and the server's words are kept.
    let server = Server::start(vec![Reply::json(400, schema)]).await;
    let error = terminal_error(&collect(&server.config(Provider::OpenAi), &request()).await);
    assert_eq!(error.details["reason"], json!("images_unsupported"));
    assert_eq!(
        error.details["server_message"],
        json!("Invalid schema for function 'glob': 'pattern' is not valid")
    );
}
