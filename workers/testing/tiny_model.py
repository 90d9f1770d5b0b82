"""A tiny random-weight llama-architecture GGUF for tests against a real llama-server.

No hub, no download: the model is written here with the `gguf` package.

Tokenizer: GPT-2-style byte-level BPE. All 256 byte symbols are tokens; merges build every
word of `WORDS` with a leading space ("Ġword") into one token, and every merge that
involves "Ġ" ranks before all others, so " word" always becomes exactly that one token.

Weights: every layer's output projections are zero, so the last hidden state is the
current token's embedding, whose first dimension is a constant 1. The output norm keeps it
positive, and the output matrix gives word tokens +B and every other token -B on that
dimension: greedy decoding can only pick " word" tokens (never EOS), so outputs always run
to max_tokens and re-tokenize to exactly as many tokens. Small random parts make the next
word depend on the current one, so outputs are not one repeated word.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from workers.loadgen.prompts import WORDS


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's reversible map from bytes to printable characters."""
    printable = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    chars = printable[:]
    extra = 0
    for b in range(256):
        if b not in printable:
            printable.append(b)
            chars.append(256 + extra)
            extra += 1
    return dict(zip(printable, map(chr, chars), strict=True))


def foreign_words(count: int = 200, seed: int = 0) -> tuple[str, ...]:
    """Made-up words from letters English words rarely start with (q, x, z, j, v, k): a
    vocabulary built from them makes no word of `WORDS` one token, as in many small and
    non-English models."""
    rng = np.random.default_rng(seed)
    starts, vowels, others = "qxzjvk", "aeiouy", "bcdfghlmnprstw"
    words: dict[str, None] = {}
    while len(words) < count:
        word = str(rng.choice(list(starts))) + "".join(
            str(rng.choice(list(vowels if k % 2 == 0 else others)))
            for k in range(int(rng.integers(3, 7)))
        )
        words[str(word)] = None
    return tuple(words)


SPACE = "Ġ"  # GPT-2's symbol for the byte 0x20
EOS = "<|endoftext|>"


def build_vocab(words: tuple[str, ...] = WORDS) -> tuple[list[str], list[str], list[int]]:
    """(tokens, merges, ids of the " word" tokens)."""
    byte_symbols = list(_bytes_to_unicode().values())
    tokens: list[str] = list(byte_symbols)
    known = set(tokens)
    merges: list[str] = []
    word_ids: list[int] = []
    for word in words:
        piece = SPACE
        for char in word:
            merged = piece + char
            if merged not in known:
                merges.append(f"{piece} {char}")
                tokens.append(merged)
                known.add(merged)
            piece = merged
        word_ids.append(tokens.index(piece))
    tokens.append(EOS)
    return tokens, merges, word_ids


def write_tokenizer_json(path: Path, tokens: list[str], merges: list[str]) -> Path:
    """The same tokenizer as a Hugging Face tokenizer.json (for `LocalTokenizer`), written
    by the `tokenizers` library so the file is exactly what the library reads."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

    vocab = {token: i for i, token in enumerate(tokens) if token != EOS}
    pairs = [(left, right) for left, _, right in (m.partition(" ") for m in merges)]
    tokenizer = Tokenizer(models.BPE(vocab, pairs))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.add_special_tokens([AddedToken(EOS, special=True)])
    tokenizer.save(str(path))
    return path


def write_tiny_model(
    path: Path,
    *,
    n_embd: int = 64,
    n_layer: int = 1,
    n_head: int = 4,
    n_ff: int = 128,
    context: int = 32768,
    seed: int = 0,
    words: tuple[str, ...] = WORDS,
) -> Path:
    """Write the GGUF to `path` and tokenizer.json beside it; return the GGUF path.

    `words` are the vocabulary's whole-word tokens and the only tokens it generates;
    `foreign_words()` gives a vocabulary in which the load generator's own words are not.
    """
    import gguf  # the writer is only needed here, not by the load generator

    rng = np.random.default_rng(seed)
    tokens, merges, word_ids = build_vocab(words)
    n_vocab = len(tokens)
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name("inferboard-tiny-test")
    writer.add_context_length(context)
    writer.add_embedding_length(n_embd)
    writer.add_block_count(n_layer)
    writer.add_feed_forward_length(n_ff)
    writer.add_head_count(n_head)
    writer.add_head_count_kv(n_head)
    writer.add_rope_dimension_count(n_embd // n_head)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("gpt-2")
    writer.add_token_list(tokens)
    types = [gguf.TokenType.NORMAL] * (n_vocab - 1) + [gguf.TokenType.CONTROL]
    writer.add_token_types(types)
    writer.add_token_merges(merges)
    writer.add_bos_token_id(n_vocab - 1)
    writer.add_eos_token_id(n_vocab - 1)
    writer.add_add_bos_token(False)

    def random(*shape: int, scale: float = 0.1) -> np.ndarray:
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    embedding = random(n_vocab, n_embd, scale=1.0)
    embedding[:, 0] = 1.0
    output = random(n_vocab, n_embd, scale=0.1)
    output[:, 0] = -100.0
    output[word_ids, 0] = 100.0
    writer.add_tensor("token_embd.weight", embedding)
    writer.add_tensor("output_norm.weight", np.ones(n_embd, dtype=np.float32))
    writer.add_tensor("output.weight", output)
    for layer in range(n_layer):
        prefix = f"blk.{layer}."
        writer.add_tensor(prefix + "attn_norm.weight", np.ones(n_embd, dtype=np.float32))
        writer.add_tensor(prefix + "attn_q.weight", random(n_embd, n_embd))
        writer.add_tensor(prefix + "attn_k.weight", random(n_embd, n_embd))
        writer.add_tensor(prefix + "attn_v.weight", random(n_embd, n_embd))
        writer.add_tensor(prefix + "attn_output.weight", np.zeros((n_embd, n_embd), np.float32))
        writer.add_tensor(prefix + "ffn_norm.weight", np.ones(n_embd, dtype=np.float32))
        writer.add_tensor(prefix + "ffn_gate.weight", random(n_ff, n_embd))
        writer.add_tensor(prefix + "ffn_up.weight", random(n_ff, n_embd))
        writer.add_tensor(prefix + "ffn_down.weight", np.zeros((n_embd, n_ff), np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    write_tokenizer_json(path.with_name("tokenizer.json"), tokens, merges)
    return path
