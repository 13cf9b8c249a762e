#!/usr/bin/env python3
"""A tiny model around a real vocabulary, for a llama-server that only counts.

llama-server cannot start from one of llama.cpp's vocab-only files
(`models/ggml-vocab-*.gguf`): it always loads weights, and `vocab_only` is a
flag of the C API (used by `llama-tokenize`), not of the server. This writes
a one-layer model with random weights around the vocabulary, so the server
starts and its `/tokenize` and `/apply-template` answer with the vocabulary's
real tokenizer. Its replies are noise; only its counts are used.

    vocab-model.py GGUF_PY_DIR VOCAB.gguf OUT.gguf [--qwen3]

`--qwen3` adds the tokens Qwen3 adds to the Qwen2 vocabulary (tool-call
tags among them), at the ids Qwen3's tokenizer gives them.
"""
import sys

sys.path.insert(0, sys.argv[1])
import gguf  # noqa: E402  (from llama.cpp's own gguf-py, given above)
import numpy as np  # noqa: E402

# Qwen3's added tokens (its tokenizer.json): id, text, special. Special ones
# are control tokens; the others are matched whole in text, as Qwen3 does.
QWEN3_ADDED = [
    (151646, "<|object_ref_start|>", True), (151647, "<|object_ref_end|>", True),
    (151648, "<|box_start|>", True), (151649, "<|box_end|>", True),
    (151650, "<|quad_start|>", True), (151651, "<|quad_end|>", True),
    (151652, "<|vision_start|>", True), (151653, "<|vision_end|>", True),
    (151654, "<|vision_pad|>", True), (151655, "<|image_pad|>", True),
    (151656, "<|video_pad|>", True), (151657, "<tool_call>", False),
    (151658, "</tool_call>", False), (151659, "<|fim_prefix|>", False),
    (151660, "<|fim_middle|>", False), (151661, "<|fim_suffix|>", False),
    (151662, "<|fim_pad|>", False), (151663, "<|repo_name|>", False),
    (151664, "<|file_sep|>", False), (151665, "<tool_response>", False),
    (151666, "</tool_response>", False), (151667, "<think>", False),
    (151668, "</think>", False),
]

EMBD, FF, HEADS = 64, 128, 4


def main() -> None:
    _, _, vocab_path, out_path, *flags = sys.argv
    vocab = gguf.GGUFReader(vocab_path)
    field = lambda key: vocab.fields[key].contents()  # noqa: E731
    arch = field("general.architecture")
    tokens = list(field("tokenizer.ggml.tokens"))
    types = list(field("tokenizer.ggml.token_type"))
    if "--qwen3" in flags:
        for token_id, text, special in QWEN3_ADDED:
            tokens[token_id] = text
            types[token_id] = gguf.TokenType.CONTROL if special else gguf.TokenType.USER_DEFINED

    out = gguf.GGUFWriter(out_path, arch)
    out.add_name(f"vocab of {vocab_path.rsplit('/', 1)[-1]}, random weights")
    out.add_context_length(32_768)
    out.add_embedding_length(EMBD)
    out.add_block_count(1)
    out.add_feed_forward_length(FF)
    out.add_head_count(HEADS)
    out.add_head_count_kv(HEADS)
    out.add_layer_norm_rms_eps(1e-6)
    out.add_rope_freq_base(10_000.0)
    out.add_tokenizer_model(field("tokenizer.ggml.model"))
    if "tokenizer.ggml.pre" in vocab.fields:
        out.add_tokenizer_pre(field("tokenizer.ggml.pre"))
    out.add_token_list(tokens)
    out.add_token_types(types)
    if "tokenizer.ggml.merges" in vocab.fields:
        out.add_token_merges(list(field("tokenizer.ggml.merges")))
    for key in ("bos", "eos", "padding", "unknown"):
        name = f"tokenizer.ggml.{key}_token_id"
        if name in vocab.fields:
            out.add_uint32(name, int(field(name)))
    for key in ("add_bos_token", "add_eos_token"):
        name = f"tokenizer.ggml.{key}"
        if name in vocab.fields:
            out.add_bool(name, bool(field(name)))

    rng = np.random.default_rng(0)
    weights = lambda *shape: (rng.standard_normal(shape) * 0.02).astype(np.float16)  # noqa: E731
    # numpy's shape is ggml's reversed: token_embd is {n_embd, n_vocab}.
    out.add_tensor("token_embd.weight", weights(len(tokens), EMBD))
    out.add_tensor("output_norm.weight", np.ones(EMBD, dtype=np.float32))
    out.add_tensor("blk.0.attn_norm.weight", np.ones(EMBD, dtype=np.float32))
    for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
        out.add_tensor(f"blk.0.{name}.weight", weights(EMBD, EMBD))
    out.add_tensor("blk.0.ffn_norm.weight", np.ones(EMBD, dtype=np.float32))
    out.add_tensor("blk.0.ffn_gate.weight", weights(FF, EMBD))
    out.add_tensor("blk.0.ffn_up.weight", weights(FF, EMBD))
    out.add_tensor("blk.0.ffn_down.weight", weights(EMBD, FF))

    out.write_header_to_file()
    out.write_kv_data_to_file()
    out.write_tensors_to_file()
    out.close()


if __name__ == "__main__":
    main()
