"""Exact-length prompts and the shared-prefix dataset."""

from __future__ import annotations

import os
import random
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.workers.loadgen import tokenizer_files
from workers.loadgen.client import EndpointConfig
from workers.loadgen.prompts import (
    WORDS,
    CalibratedCounter,
    EndpointTokenizer,
    LocalTokenizer,
    PromptBuilder,
    PromptWorkload,
    WordPool,
    code_words,
    template_overhead,
    usage_probe,
    verify_lengths,
)
from workers.testing.processes import REPO_ROOT, free_port
from workers.testing.tiny_model import build_vocab, write_tokenizer_json


class WordCounter:
    name = "words"

    def count(self, text: str) -> int:
        return len(text.split())


def _common_words(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a.split(), b.split(), strict=False):
        if x != y:
            break
        n += 1
    return n


def test_code_words_are_unique_and_neighbours_differ_in_their_first_word():
    codes = [code_words(k) for k in range(5000)]
    assert len(set(codes)) == 5000
    assert all(a.split()[0] != b.split()[0] for a, b in zip(codes, codes[1:], strict=False))


def test_the_builder_fits_an_exact_token_count():
    builder = PromptBuilder(WordCounter())
    for n in (2, 7, 300):  # the lead alone is 2
        assert WordCounter().count(builder.fit(n, random.Random(n), lead="x y")) == n


def test_prefix_groups_share_exactly_the_prefix_and_suffixes_diverge_at_once():
    workload = PromptWorkload(
        PromptBuilder(WordCounter()),
        input_tokens=100,
        output_tokens=4,
        prefix_hit_rate=0.6,
        groups=2,
    )
    specs = [workload.spec(k) for k in range(6)]
    assert all(WordCounter().count(s.prompt) == 100 == s.target_n_in for s in specs)
    assert _common_words(specs[0].prompt, specs[2].prompt) == 60  # same group
    assert _common_words(specs[0].prompt, specs[1].prompt) == 0  # other group
    warmups = workload.warmup_specs(1)
    assert len(warmups) == 2 and all(w.max_tokens == 4 for w in warmups)
    assert _common_words(warmups[0].prompt, specs[4].prompt) == 60
    # One copy per concurrent request (up to 8): per-slot caches all get the prefix.
    assert len(workload.warmup_specs(3)) == 6
    assert len(workload.warmup_specs(100)) == 16
    assert len({w.prompt for w in workload.warmup_specs(3)}) == 6


def test_template_overhead_is_left_out_of_the_text():
    workload = PromptWorkload(
        PromptBuilder(WordCounter()), input_tokens=50, output_tokens=1, overhead=3
    )
    assert WordCounter().count(workload.spec(0).prompt) == 47


def test_length_spread_varies_targets_within_bounds():
    workload = PromptWorkload(
        PromptBuilder(WordCounter()), input_tokens=100, output_tokens=20, length_spread=0.2
    )
    specs = [workload.spec(k) for k in range(30)]
    assert all(80 <= s.target_n_in <= 120 and 16 <= s.max_tokens <= 24 for s in specs)
    assert len({s.target_n_in for s in specs}) > 1


def test_the_local_tokenizer_reads_byte_level_bpe(tmp_path):
    tokens, merges, _ = build_vocab()
    tokenizer = LocalTokenizer(write_tokenizer_json(tmp_path / "tokenizer.json", tokens, merges))
    assert tokenizer.count(" the city") == 2
    assert tokenizer.count(" thezz") == 3  # " the" then two single bytes
    assert tokenizer.count("") == 0


def test_the_local_tokenizer_refuses_a_file_that_is_not_a_tokenizer(tmp_path):
    path = tmp_path / "tokenizer.json"
    path.write_text('{"model": {"type": "Nonsense"}}')
    with pytest.raises(ValueError, match="not a Hugging Face tokenizer.json"):
        LocalTokenizer(path)


def test_qwen_style_files_split_digits_one_by_one_where_gpt2_style_files_merge_them(tmp_path):
    # Both files hold the same vocabulary and the merges "1 2" and "3 4"; only the split
    # rule differs. GPT-2's keeps " 12345" together, so the merges apply: Ġ 12 34 5.
    # Qwen's (and GLM's, Llama 3's) split digits apart first: Ġ 1 2 3 4 5.
    merges = ["1 2", "3 4"]
    gpt2 = LocalTokenizer(tokenizer_files.gpt2_style(tmp_path / "gpt2.json", merges=merges))
    qwen = LocalTokenizer(tokenizer_files.qwen_style(tmp_path / "qwen.json", merges=merges))
    assert gpt2.count(" the 12345") == 1 + 4
    assert qwen.count(" the 12345") == 1 + 6
    assert gpt2.count(" the city") == qwen.count(" the city") == 2


def test_a_sentencepiece_style_file_counts_marked_pieces(tmp_path):
    tokenizer = LocalTokenizer(tokenizer_files.sentencepiece_style(tmp_path / "sp.json"))
    # "▁the" and "▁of" are pieces; "mountain" is not, so it falls to its characters.
    assert tokenizer.count("the of") == 2
    assert tokenizer.count("the mountain") == 1 + 1 + len("mountain")


def test_the_word_pool_keeps_only_single_token_words_when_the_vocabulary_has_them(tmp_path):
    counter = LocalTokenizer(tokenizer_files.foreign_byte_level(tmp_path / "f.json"))
    pool = WordPool.for_counter(counter)
    assert set(pool.costs) == {1}
    assert not set(pool.words) & set(WORDS)  # none of the English words is one token here
    assert all(counter.count("x " + w) - counter.count("x") == 1 for w in pool.words)


def test_the_word_pool_falls_back_to_the_cheapest_words_when_none_is_one_token(tmp_path):
    counter = LocalTokenizer(tokenizer_files.bytes_only(tmp_path / "b.json"))
    pool = WordPool.for_counter(counter)
    assert min(pool.costs) == 3  # " of": the space and two letters
    assert list(pool.costs) == sorted(pool.costs)


@pytest.fixture(scope="module")
def built_tokenizers(tmp_path_factory) -> dict[str, tuple[LocalTokenizer, WordPool]]:
    folder = tmp_path_factory.mktemp("tokenizers")
    built = {}
    for name, build in tokenizer_files.BUILDERS.items():
        counter = LocalTokenizer(build(folder / f"{name}.json"))
        built[name] = counter, WordPool.for_counter(counter)
    return built


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    kind=st.sampled_from(sorted(tokenizer_files.BUILDERS)),
    n=st.integers(min_value=1, max_value=1500),
    seed=st.integers(min_value=0, max_value=2**16),
    lead=st.sampled_from(["", "the city .", " of the map ."]),
)
def test_fitting_is_exact_on_any_tokenizer_whatever_its_tokens_per_word(
    built_tokenizers, kind, n, seed, lead
):
    counter, pool = built_tokenizers[kind]
    builder = PromptBuilder(counter, pool=pool)
    text = builder.fit(n, random.Random(seed), lead=lead)
    assert text.startswith(lead)
    if counter.count(lead) <= n:
        assert counter.count(text) == n
    else:
        assert text == lead  # a lead longer than the target is all there is


def test_the_verification_pass_reports_prompts_that_miss(tmp_path):
    counter = WordCounter()
    workload = PromptWorkload(PromptBuilder(counter), input_tokens=50, output_tokens=1)
    specs = workload.build(4)
    assert verify_lengths(specs, counter, overhead=0).missed == 0
    # Counted with an overhead the prompts were not built for: every one misses by 3.
    check = verify_lengths(specs, counter, overhead=3)
    assert (check.checked, check.missed, check.worst[0]) == (4, 4, (50, 53))
    assert "4 of 4 prompts miss" in check.message()
    # ±1 token is within tolerance.
    assert verify_lengths(specs, counter, overhead=1).missed == 0


def test_built_prompts_are_the_ones_later_sent():
    workload = PromptWorkload(PromptBuilder(WordCounter()), input_tokens=20, output_tokens=1)
    built = workload.build(3)
    assert [workload.spec(k) for k in range(3)] == built
    fresh = PromptWorkload(PromptBuilder(WordCounter()), input_tokens=20, output_tokens=1)
    assert fresh.spec(1) == built[1]


def test_the_endpoint_tokenizer_is_found_only_where_it_answers(start_fault_server):
    cfg = EndpointConfig(base_url=start_fault_server(), model="m")
    tokenizer = EndpointTokenizer.probe(cfg)
    assert tokenizer is not None and tokenizer.count("a b c") == 3
    nobody = EndpointConfig(base_url=f"http://127.0.0.1:{free_port()}", model="m")
    assert EndpointTokenizer.probe(nobody) is None


def test_calibration_from_usage_learns_tokens_per_word(start_fault_server):
    cfg = EndpointConfig(base_url=start_fault_server(), model="m")
    counter = CalibratedCounter(usage_probe(cfg))
    assert counter.per_word == pytest.approx(1.0)
    assert counter.overhead == pytest.approx(0.0)
    assert template_overhead(counter, usage_probe(cfg)) == 0


def test_prompts_are_the_same_in_every_process():
    # String hashing is salted per process; the dataset must depend on the seed only.
    script = (
        "from workers.loadgen.prompts import PromptBuilder, PromptWorkload\n"
        "class C:\n    name = 'w'\n    def count(self, t): return len(t.split())\n"
        "w = PromptWorkload(PromptBuilder(C()), input_tokens=30, output_tokens=1,"
        " prefix_hit_rate=0.5, seed=5)\n"
        "print(w.spec(3).prompt)"
    )
    outputs = set()
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(REPO_ROOT)}
        done = subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
        )
        outputs.add(done.stdout)
    assert len(outputs) == 1
