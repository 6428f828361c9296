"""The checker's proof of a discovered kernel field: the derivative of the network along ``C W`` is zero over ℚ.

A ``discovered`` family lists integer matrices ``C``; each is a field only if
``Σ_j (C W)_j ∂φ/∂W_j`` is the zero polynomial in the weights and the inputs.
The checker expands ``φ`` with its own network code (check/network.py) and
decides that exactly; sampling, which proposed the field, plays no part.
"""

from __future__ import annotations

import numpy as np

from ...exceptions import CertificateFormatError
from ..network import phi
from ..poly import ring
from ..values import integer, reject, seq

#: Sizes beyond which the checker will not expand a network symbolically: the expansion's degree
#: grows like 3^depth, so a 40-parameter network of 5 layers would not finish (measured: 2 layers, t = 3, 2 s).
MAX_PARAMETERS, MAX_DEPTH, MAX_TOKENS = 40, 2, 3


def verified(arch, family: dict) -> list[np.ndarray]:
    """The family's matrices, each proved to be a kernel field (else the certificate is rejected).

    >>> from attngeo.check.arch import Arch
    >>> arch = Arch((1, 1), (1,), 2)                    # the scaling: delta Q = Q, delta V = -V
    >>> [M.tolist() for M in verified(arch, {"kind": "discovered", "layer": 0, "size": 1,
    ...                                      "fields": [[[1, 0, 0], [0, 0, 0], [0, 0, -1]]]})]
    [[[1, 0, 0], [0, 0, 0], [0, 0, -1]]]
    >>> verified(arch, {"kind": "discovered", "layer": 0, "size": 1, "fields": [[[1, 0, 0], [0, 0, 0], [0, 0, 0]]]})
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: discovered field 0 is not in the kernel: the network changes along it
    """
    P = arch.parameters
    if arch.normalization != "lightning":
        reject("discovered fields are for lightning networks (a polynomial network to expand)")
    if P > MAX_PARAMETERS or len(arch.ranks) > MAX_DEPTH or arch.tokens > MAX_TOKENS:
        raise CertificateFormatError(f"discovered fields are checked by expanding the network: at most {MAX_PARAMETERS} "
                                     f"parameters, {MAX_DEPTH} layers and {MAX_TOKENS} tokens")
    if set(family) != {"kind", "layer", "size", "fields"} or family["layer"] != 0:
        reject("a discovered family holds kind, layer = 0, size and fields")
    fields = seq(family["fields"], "discovered fields")
    if integer(family["size"], "discovered size", 1) != len(fields):
        reject("the discovered family's size must count its fields")
    names = [f"{n}{i}.{j}_{r}_{c}" for i, j, n, rows, cols, _ in arch.blocks() for r in range(rows) for c in range(cols)]
    d, t = arch.widths[0], arch.tokens
    ctx = ring(tuple(names) + tuple(f"x{r}_{c}" for r in range(d) for c in range(t)))
    W, gens = list(ctx.gens()[:P]), ctx.gens()
    X = [list(gens[P + r * t: P + (r + 1) * t]) for r in range(d)]
    outputs = [y for row in phi(arch, W, X) for y in row]
    out = []
    for k, C in enumerate(fields):
        seq(C, f"discovered field {k}", P)
        M = np.array([[integer(x, f"discovered field {k} entry", -1000, 1000) for x in seq(row, "a row", P)]
                      for row in C], dtype=object)
        v = [sum((int(M[i, j]) * W[j] for j in range(P) if M[i, j]), ctx.from_dict({})) for i in range(P)]
        if not any(v):
            reject(f"discovered field {k} is zero")
        for y in outputs:
            if sum((v[i] * y.derivative(i) for i in range(P) if v[i] != 0), ctx.from_dict({})) != 0:
                reject(f"discovered field {k} is not in the kernel: the network changes along it")
        out.append(M)
    return out
