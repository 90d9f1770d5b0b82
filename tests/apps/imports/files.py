"""Real peer files and a facts file for the import tests."""

from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "peer-results"

H200_FACTS = """
deployment:
  accelerator: H200
  gpus: 8
  engine: {name: vllm}
  quantization: {weights: FP8}
  parallelism: {tp: 8}
"""
