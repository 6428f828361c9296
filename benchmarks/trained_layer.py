"""`attngeo inspect` at GPT-2 size: a synthetic BF16 layer read, its local rank certified, and re-checked.

Writes a random GPT-2-layout layer (``h.0.attn.c_attn.weight`` ``d x 3d``, ``c_proj``
``d x d``, BF16 ``.safetensors``, std 0.02 as GPT-2's initialization) for each width
``d`` (``h = d / 64`` heads of 64), then, each step in a fresh process so peaks do
not mix: the inspection (head ranks, Theorem S of docs/math.md §7.5, which here
also certifies ``dim M``; certificate written), the independent check, and as the
baseline the head-point dimension certificate of ``attngeo dim`` (the
elimination the inspection no longer needs), with the ratio of the two times.

    python3 benchmarks/trained_layer.py                       # d = 192, 384, 768
    python3 benchmarks/trained_layer.py --sizes 768 --no-baseline

Times are wall-clock on whatever else the machine runs: read them with its load (printed).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

CHILD = r"""
import json, resource, sys, time
from attngeo.check import check_certificate
from attngeo.geometry.dimension.headpoint import certify_heads
from attngeo.geometry.loci.regularity import local_rank
from attngeo.model.checkpoint import load_checkpoint
what, weights, heads, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
start = time.perf_counter()
if what == "inspect":
    ck = load_checkpoint(weights, "gpt2", heads)
    loaded = time.perf_counter() - start
    res = local_rank(ck.arch, ck.point, seed=0)
    res.save(out)
    result = {"loaded": loaded, "lower": res.lower, "upper": res.upper, "generic": list(res.generic),
              "regular": res.regular, "P": ck.arch.parameter_count}
elif what == "check":
    result = {"claim": check_certificate(out).claim}
else:
    ck = load_checkpoint(weights, "gpt2", heads)
    result = {"dimension": certify_heads(ck.arch, seed=0).dimension}
print(json.dumps({"seconds": time.perf_counter() - start,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, **result}))
"""


def run(what: str, weights: str, heads: int, out: str) -> dict:
    done = subprocess.run([sys.executable, "-c", CHILD, what, weights, str(heads), out], capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{what} failed: {done.stderr.strip()[-400:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    import numpy as np

    from attngeo.model.weights import save_safetensors

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="192,384,768", help="widths d (h = d / 64 heads of 64)")
    parser.add_argument("--no-baseline", action="store_true", help="skip the head-point dimension certificate")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"{'d':>5} {'h':>3} {'P':>9} {'local rank':>10} {'dim M':>9} {'regular':>7} {'read s':>7} {'inspect s':>9} "
          f"{'MB':>6} {'cert MB':>7} {'check s':>8} {'MB':>6}" + ("" if args.no_baseline else f" {'dim s':>7} {'ratio':>6}"))
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        for d in (int(x) for x in args.sizes.split(",") if x):
            h = max(1, d // 64)
            weights = os.path.join(tmp, f"gpt2-{d}.safetensors")
            save_safetensors(weights, {"h.0.attn.c_attn.weight": rng.standard_normal((d, 3 * d)) * 0.02,
                                       "h.0.attn.c_proj.weight": rng.standard_normal((d, d)) * 0.02}, dtype="BF16")
            cert = os.path.join(tmp, f"local-{d}.json")
            i = run("inspect", weights, h, cert)
            k = run("check", weights, h, cert)
            assert k["claim"].startswith(f"local rank {i['lower']} = dim M"), k["claim"]
            line = (f"{d:>5} {h:>3} {i['P']:>9} {i['lower']:>10} {i['generic'][0]:>9} {str(i['regular']):>7} "
                    f"{i['loaded']:>7.1f} {i['seconds']:>9.1f} {i['peak_mb']:>6.0f} {os.path.getsize(cert) / 2**20:>7.1f} "
                    f"{k['seconds']:>8.1f} {k['peak_mb']:>6.0f}")
            if not args.no_baseline:
                b = run("dimension", weights, h, cert)
                assert b["dimension"] == i["generic"][0], (b["dimension"], i["generic"])
                line += f" {b['seconds']:>7.1f} {b['seconds'] / max(i['seconds'], 1e-3):>6.1f}"
            print(line, flush=True)
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
