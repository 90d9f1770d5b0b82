"""Tokenizer files of several families, built here with the `tokenizers` library itself.

No hub download: each is a small vocabulary written in the shape a real model's file has
(byte-level BPE with GPT-2's or Qwen's split rule, SentencePiece-style Unigram).
"""

from __future__ import annotations

from pathlib import Path

from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers

from workers.loadgen.prompts import WORDS
from workers.testing.tiny_model import build_vocab, foreign_words

# Qwen2's split rule (GLM-4's differs only in grouping digits by up to three).
QWEN_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)


def _byte_level_bpe(words: tuple[str, ...], extra_merges: list[str] = ()) -> models.BPE:
    tokens, merges, _ = build_vocab(words)
    tokens = tokens[:-1]  # the EOS token is not part of the BPE model
    for merge in extra_merges:
        merged = merge.replace(" ", "")
        if merged not in tokens:
            tokens.append(merged)
    vocab = {token: i for i, token in enumerate(tokens)}
    return models.BPE(vocab, [tuple(m.split(" ")) for m in [*merges, *extra_merges]])


def gpt2_style(path: Path, words: tuple[str, ...] = WORDS, merges: list[str] = ()) -> Path:
    tokenizer = Tokenizer(_byte_level_bpe(words, list(merges)))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.save(str(path))
    return path


def qwen_style(path: Path, words: tuple[str, ...] = WORDS, merges: list[str] = ()) -> Path:
    tokenizer = Tokenizer(_byte_level_bpe(words, list(merges)))
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(QWEN_SPLIT), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.save(str(path))
    return path


def foreign_byte_level(path: Path) -> Path:
    """Byte-level BPE whose whole words are made up: every English word is several tokens."""
    return gpt2_style(path, foreign_words())


def bytes_only(path: Path) -> Path:
    """Byte-level BPE without a single merge: every word costs its length plus one."""
    return gpt2_style(path, ())


def sentencepiece_style(path: Path, words: tuple[str, ...] = WORDS[:40]) -> Path:
    """Unigram over "▁"-marked pieces, as Llama 2, T5 and Gemma files are."""
    chars = sorted({c for w in WORDS for c in w} | set(".,;:!?-'0123456789"))
    vocab = [("<unk>", 0.0), ("▁", -2.0)]
    vocab += [(c, -5.0) for c in chars]
    vocab += [("▁" + w, -1.0) for w in words]
    tokenizer = Tokenizer(models.Unigram(vocab, unk_id=0, byte_fallback=False))
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    tokenizer.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    tokenizer.save(str(path))
    return path


BUILDERS = {
    "gpt2": gpt2_style,
    "qwen": qwen_style,
    "foreign": foreign_byte_level,
    "bytes_only": bytes_only,
    "sentencepiece": sentencepiece_style,
}
