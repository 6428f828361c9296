"""The upper bound of a structured dimension witness: the symmetry groups' fields alone, at a point the checker knows.

The plain, head, identity and stack points (plainpoint.py, headpoint.py, identitypoint.py, stackpoint.py) bound
``dim M`` from above by ``P`` minus the rank of the group fields (docs/invariance.md: they are tangent to the
fibers at every point, so their rank at one point is at most the generic one, docs/math.md §5.2). Each module
recomputes its minor of the fields on the recorded columns; what they share is read and compared here: the
witness's keys, its prime, its families (the architecture's, groups only: no kernel field is evaluated by
these witnesses), the field rank, the recorded determinant and the bound.
"""

from __future__ import annotations

import json

from ..values import field, integer, prime, reject

#: The symmetry groups' families (docs/invariance.md); every other family is a kernel family.
GROUPS = {"intra", "scaling", "value", "inter"}


def witness(uw: dict, name: str, keys: set, expected: list, fields: int) -> int:
    """The prime of a ``name`` upper witness holding exactly ``keys``, whose families are ``expected`` (the
    checker's list for the architecture) and are groups only, and whose field rank is ``fields``.

    >>> witness({"structured": "x", "prime": 7, "families": [], "field_rank": 0}, "x",
    ...         {"structured", "prime", "families", "field_rank"}, [], 0)
    7
    """
    if set(uw) != keys or uw["structured"] != name:
        reject(f"a '{name}' upper witness holds exactly {', '.join(sorted(keys))}")
    p = prime(uw["prime"], "upper_witness.prime")
    if json.dumps(uw["families"]) != json.dumps(expected) or {f["kind"] for f in expected} - GROUPS:
        reject("upper_witness.families must be exactly the symmetry groups of this architecture, in canonical order "
               f"(a '{name}' witness is for architectures without kernel families)")
    if integer(uw["field_rank"], "upper_witness.field_rank", 0) != fields:
        reject(f"upper_witness.field_rank must be the {fields} group fields")
    return p


def bound(cert: dict, uw: dict, parameters: int, fields: int, det: int | None, p: int, name: str) -> int:
    """``P - fields``, once the minor the checker recomputed (``det`` mod ``p``; None: not block lower triangular
    in the families' order) is nonsingular and the one recorded, and ``upper`` says so.

    >>> bound({"upper": 5}, {"determinant": 3}, 7, 2, 3, 11, "x")
    5
    >>> bound({"upper": 5}, {"determinant": 3}, 7, 2, 4, 11, "x")
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: the field minor at the x has determinant 4 mod 11, the certificate records 3
    """
    if det is None:
        reject(f"the field minor at the {name} on upper_witness.columns must be block lower triangular in the "
               "families' order")
    recorded = integer(uw["determinant"], "upper_witness.determinant", 0, p - 1)
    if det == 0 or det != recorded:
        reject(f"the field minor at the {name} has determinant {det} mod {p}, the certificate records {recorded}")
    if integer(field(cert, "upper"), "upper") != parameters - fields:
        reject(f"upper must be parameters - field rank = {parameters - fields}")
    return parameters - fields
