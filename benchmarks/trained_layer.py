"""Trained layers as they compute (issue 33): `attngeo inspect` and `attngeo check --weights` on real families' shapes.

Writes synthetic checkpoints with random weights (std 0.02, as the families initialise) under
the families' own tensor names, with a config.json beside them, then runs each step as the
user would (`attngeo inspect ... --certificate`, then `attngeo check CERT --weights FILE`),
each in a fresh process so that peaks do not mix, and prints wall-clock and CPU seconds and
the peak resident memory against the issue's targets:

* BERT-base (768, 12 heads of 64, F32, biases, softmax with 1/8): local rank certified and
  regularity decided in <= 2 min and <= 4 GB; `--layer all` over 12 such layers in <= 15 min;
* GPT-2 small (BF16, causal, biases, softmax): <= 2 min;
* LLaMA-shaped grouped-query attention (512, 8 heads of 64, 2 key-value heads): the local rank;
* stretch (`--stretch`): LLaMA-7B (4096, 32 heads of 128, 8 key-value heads, BF16, 42M
  parameters) in <= 5 min and <= 8 GB, and checked against its file.

    python3 benchmarks/trained_layer.py              # every target but the stretch
    python3 benchmarks/trained_layer.py --stretch    # and LLaMA-7B
    python3 benchmarks/trained_layer.py --small      # the same steps at toy sizes (tests/test_benchmarks.py)

Times are wall-clock on whatever else the machine runs (the load average is printed), and CPU
seconds of the step's processes beside them (the checker's isolated worker included).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

CHILD = r"""
import contextlib, io, json, resource, sys, time
from attngeo.ui.cli import main
argv = json.loads(sys.argv[1])

def cpu():  # this process and the checker's isolated worker (a child it waited for)
    return sum(getattr(resource.getrusage(who), f) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
               for f in ("ru_utime", "ru_stime"))

start, cpu0 = time.perf_counter(), cpu()
out = io.StringIO()
with contextlib.redirect_stdout(out):
    code = main(argv)
# this process's own peak (VmHWM: its address space's, not the spawning parent's that ru_maxrss keeps across exec)
# and the checker's worker's
own = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
peak = max(own, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
print(json.dumps({"code": code, "seconds": time.perf_counter() - start, "cpu": cpu() - cpu0, "peak_mb": peak / 1024,
                  "out": out.getvalue()}))
"""

#: name, family, width, heads, key-value heads, head size, dtype, layers in the file, targets (seconds, GB)
TARGETS = [
    ("bert-base", "bert", 768, 12, 12, 64, "F32", 1, (120, 4)),
    ("bert-base x12 (--layer all)", "bert", 768, 12, 12, 64, "F32", 12, (900, 4)),
    ("gpt2-small", "gpt2", 768, 12, 12, 64, "BF16", 1, (120, 4)),
    ("llama GQA 512", "llama", 512, 8, 2, 64, "BF16", 1, (None, None)),
]
STRETCH = ("llama-7b", "llama", 4096, 32, 8, 128, "BF16", 1, (300, 8))
SMALL = [("bert-small", "bert", 16, 2, 2, 8, "F32", 1, (None, None)),
         ("bert-small x3 (--layer all)", "bert", 16, 2, 2, 8, "F32", 3, (None, None)),
         ("gpt2-small-toy", "gpt2", 16, 2, 2, 8, "BF16", 1, (None, None)),
         ("llama GQA toy", "llama", 16, 4, 2, 4, "BF16", 1, (None, None))]


def checkpoint(folder: str, family: str, d: int, h: int, g: int, a: int, dtype: str, layers: int, rng) -> str:
    """A synthetic checkpoint in the family's tensor names (one or several layers) and its config.json."""
    from attngeo.model.weights import save_safetensors

    def r(*shape):
        return (rng.standard_normal(shape) * 0.02).astype("float32")

    tensors, config = {}, {}
    for i in range(layers):
        if family == "bert":
            pre = f"bert.encoder.layer.{i}.attention."
            for n in ("self.query", "self.key", "self.value", "output.dense"):
                tensors.update({pre + n + ".weight": r(d, d), pre + n + ".bias": r(d)})
            tensors[f"bert.encoder.layer.{i}.output.dense.weight"] = r(d, 4 * d)[:, :8]  # the feed-forward's, unread
            config = {"model_type": "bert", "hidden_size": d, "num_attention_heads": h}
        elif family == "gpt2":
            pre = f"transformer.h.{i}.attn."
            tensors.update({pre + "c_attn.weight": r(d, 3 * d), pre + "c_attn.bias": r(3 * d),
                            pre + "c_proj.weight": r(d, d), pre + "c_proj.bias": r(d)})
            config = {"model_type": "gpt2", "n_embd": d, "n_head": h}
        else:
            pre = f"model.layers.{i}.self_attn."
            tensors.update({pre + "q_proj.weight": r(h * a, d), pre + "k_proj.weight": r(g * a, d),
                            pre + "v_proj.weight": r(g * a, d), pre + "o_proj.weight": r(d, h * a)})
            config = {"model_type": "llama", "hidden_size": d, "num_attention_heads": h, "num_key_value_heads": g,
                      "head_dim": a}
    path = os.path.join(folder, "model.safetensors")
    save_safetensors(path, tensors, dtype=dtype)
    with open(os.path.join(folder, "config.json"), "w") as fh:
        json.dump(config, fh)
    return path


def run(argv: list[str]) -> dict:
    done = subprocess.run([sys.executable, "-c", CHILD, json.dumps(argv)], capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{argv[0]} failed: {done.stderr.strip()[-600:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure(target, folder: str, seed: int) -> dict:
    name, family, d, h, g, a, dtype, layers, _ = target
    # written by another process: this one stays small, and the steps it spawns do not start from its peak
    subprocess.run([sys.executable, __file__, "--write", folder, json.dumps([family, d, h, g, a, dtype, layers, seed])],
                   check=True)
    weights = os.path.join(folder, "model.safetensors")
    every = layers > 1
    cert = os.path.join(folder, "certs" if every else "cert.json")
    inspect = run(["inspect", "--weights", weights, "--certificate", cert, "--json"]
                  + (["--layer", "all"] if every else []))
    assert inspect["code"] == 0, inspect
    reports = json.loads(inspect["out"])
    reports = reports if every else [reports]
    check = run(["check", cert, "--weights", weights])
    assert check["code"] == 0, check["out"]
    first = reports[0]
    return {"name": name, "P": first["parameters"], "layers": len(reports),
            "local_rank": first["local_rank"], "regular": all(r["regular"] for r in reports),
            "inspect": inspect, "check": check, "cert_kb": _size(cert) / 1024,
            "arch": first["architecture"]}


def _size(path: str) -> int:
    if os.path.isdir(path):
        return sum(os.path.getsize(os.path.join(path, f)) for f in os.listdir(path))
    return os.path.getsize(path)


def _verdict(seconds: float, mb: float, limits) -> str:
    limit_s, limit_gb = limits
    if limit_s is None:
        return "(no target)"
    ok = seconds <= limit_s and mb <= limit_gb * 1024
    return f"{'met' if ok else 'MISSED'} (<= {limit_s} s, <= {limit_gb} GB)"


def main() -> None:
    import numpy as np

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stretch", action="store_true", help="also the LLaMA-7B-shaped layer (42M parameters)")
    parser.add_argument("--small", action="store_true", help="toy sizes: the same steps in seconds")
    parser.add_argument("--only", help="comma-separated target names (prefixes) to run")
    parser.add_argument("--write", nargs=2, metavar=("FOLDER", "JSON"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.write:
        family, d, h, g, a, dtype, layers, seed = json.loads(args.write[1])
        checkpoint(args.write[0], family, d, h, g, a, dtype, layers, np.random.default_rng(seed))
        return
    targets = SMALL if args.small else TARGETS + ([STRETCH] if args.stretch else [])
    if args.only:
        targets = [t for t in targets if any(t[0].startswith(x) for x in args.only.split(","))]
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"{'target':<28} {'P':>10} {'local rank':>10} {'regular':>7} {'inspect s':>10} {'(CPU)':>7} {'MB':>6} "
          f"{'check s':>8} {'(CPU)':>7} {'MB':>6} {'cert kB':>8}  verdict")
    for seed, target in enumerate(targets):
        with tempfile.TemporaryDirectory() as folder:
            m = measure(target, folder, seed)
        i, k = m["inspect"], m["check"]
        P = f"{m['P']}" + (f" x{m['layers']}" if m["layers"] > 1 else "")
        print(f"{m['name']:<28} {P:>10} {m['local_rank']:>10} {str(m['regular']):>7} {i['seconds']:>10.1f} "
              f"{i['cpu']:>7.1f} {i['peak_mb']:>6.0f} {k['seconds']:>8.1f} {k['cpu']:>7.1f} {k['peak_mb']:>6.0f} "
              f"{m['cert_kb']:>8.1f}  inspect {_verdict(i['seconds'], i['peak_mb'], target[-1])}", flush=True)
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
