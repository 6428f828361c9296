"""Time to refusal and peak memory of commands beyond what they can do (issue 34), measured as the user runs them.

Each command runs in a fresh process (``python -m attngeo``); its wall-clock time and the peak resident memory of
the command and every process it waited for (``os.wait4``) are printed, with its exit code and the first words of
its one line. The targets: a refusal in well under 60 s and below 1 GB (tests/test_command_limits.py asserts them);
the issue's numbers before the limits are in docs/trust.md.

    python3 benchmarks/refusals.py            # the oversize commands
    python3 benchmarks/refusals.py --lifted   # + the deep fiber of widths 8,8,8,8 with its prices lifted, at budgets
                                              #   of 300 and 4,000 MiB: the child stops at the budget (about 10 s)

Run it under a ulimit on a shared machine (``ulimit -v 16000000``): a regression would otherwise take the machine.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

COMMANDS = [
    "dim --widths 64,64,64,64,64,64,64,64 --ranks 64,64,64,64,64,64,64",
    "fiber --widths 500,500 --ranks 50 --random 1",
    "fiber --widths 8,8,8,8 --ranks 3,3,3 --random 1 --max-memory 4000",
    "fiber --widths 8,8 --ranks 2 --heads 4 --random 1",
    "singular --widths 64,64 --ranks 8",
    "singular --widths 8,8 --ranks 2",
    "implicit --widths 8,8 --ranks 2",
    "implicit --widths 4,2 --ranks 2",
    "implicit --widths 64,64 --ranks 4 --max-degree 2",
    "implicit --widths 40,40 --ranks 4 --max-degree 3",
    "implicit --widths 4,1 --ranks 2 --max-degree 5 --timeout 2",
]
LIFTED = ("import sys; from attngeo.geometry.fibers import deep; from attngeo.ui import estimate; "
          "deep.MAX_REBUILD_WORK = deep.MAX_REPLAY_SECONDS = float('inf'); estimate.require = lambda *a: None; "
          "from attngeo.ui.cli import main; sys.exit(main(sys.argv[1:]))")


def measure(argv: list[str], timeout: float = 600) -> tuple[int, float, int, str]:
    """``(exit code, seconds, peak MiB, stderr)`` of one command and everything it waited for."""
    with tempfile.TemporaryFile() as err:
        start = time.monotonic()
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, stdin=subprocess.DEVNULL)
        while not (found := os.wait4(proc.pid, os.WNOHANG))[0]:
            if time.monotonic() - start > timeout:
                proc.kill()
            time.sleep(0.02)
        _, status, usage = found
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        return proc.returncode, time.monotonic() - start, usage.ru_maxrss // 1024, err.read().decode()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lifted", action="store_true", help="also the deep fiber with its prices lifted")
    args = parser.parse_args()
    runs = [([sys.executable, "-m", "attngeo", *c.split()], c) for c in COMMANDS]
    if args.lifted:
        deep = "fiber --widths 8,8,8,8 --ranks 3,3,3 --random 1 --max-memory "
        runs += [([sys.executable, "-c", LIFTED, *(deep + mb).split()], f"(prices lifted) {deep}{mb}")
                 for mb in ("300", "4000")]
    print(f"{'command':<72} {'exit':>4} {'seconds':>8} {'peak MiB':>9}  says")
    for argv, label in runs:
        code, seconds, peak, err = measure(argv)
        print(f"{label:<72} {code:>4} {seconds:>8.2f} {peak:>9}  {err.strip()[16:96]}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
