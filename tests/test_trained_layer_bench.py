"""benchmarks/trained_layer.py at toy sizes: every step the targets time runs and reports (nothing here is timed)."""

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "trained_layer.py"


def test_the_benchmark_runs_every_step_at_toy_sizes():
    done = subprocess.run([sys.executable, str(SCRIPT), "--small"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = {line.split("  ")[0].strip(): line.split() for line in done.stdout.splitlines()[2:-1]}
    assert list(rows) == ["bert-small", "bert-small x3 (--layer all)", "gpt2-small-toy", "llama GQA toy"]
    # the local ranks of Theorem C (docs/math.md §8.3): P - g (a^2 + b^2 (+ a + b with biases))
    assert rows["bert-small"][1:4] == ["1088", "800", "True"]  # 2 groups of a = b = 8, biases
    assert rows["llama GQA toy"][3:6] == ["768", "704", "True"]  # 2 groups of a = b = 4, no biases: 768 - 2 * 32
