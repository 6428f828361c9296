"""All-sizes dimension certificates (attngeo prove): proved, checked, tampered, and tested against instances."""

import copy
import json

import numpy as np
import pytest
import sympy

from attngeo import Architecture, CertificateRejected, certify_dimension, check_certificate
from attngeo.check.dimension import patternpoint as pattern
from attngeo.check.dimension.allsizes import _Sizes
from attngeo.exact.rank import rank_mod_p
from attngeo.exceptions import CertificateFormatError, InvalidInputError
from attngeo.geometry.dimension.patternpoint import Design, Model, Template
from attngeo.model.jacobian import jacobian_mod_p
from attngeo.theorems.allsizes import piece_at, prove
from attngeo.ui.cli import main

P_ = 67108859


@pytest.fixture(scope="module")
def single():
    return prove("single-layer-dimension")


@pytest.fixture(scope="module")
def multi():
    return prove("multihead-layer-dimension")


def _design(cert, k):
    piece = cert["pieces"][k]
    point = {fam: tuple(Template(tuple(t["vars"].items()), tuple(tuple(i) for i in t["index"]), t["value"])
                        for t in ts) for fam, ts in piece["point"].items()}
    factored = "U" in point
    return Design(piece["cells"], {s: tuple(tuple(x) for x in v) for s, v in piece["sorts"].items()}, point,
                  factored, tuple(cert["parameters"]))


def _value(text, sizes):
    return int(sympy.sympify(text, locals={p: sympy.Symbol(p) for p in sizes}).subs(sizes))


SINGLE = [(1, 1, 1), (2, 1, 1), (4, 1, 1), (3, 2, 2), (5, 3, 2), (4, 4, 4), (3, 5, 2), (2, 3, 4), (3, 2, 5),
          (5, 2, 3), (4, 6, 6), (4, 2, 1), (3, 3, 1)]
MULTI = [(4, 2, 2, 2), (6, 2, 3, 1), (5, 3, 1, 1), (6, 3, 2, 2), (7, 2, 3, 2), (3, 3, 1, 1), (4, 1, 4, 2),
         (8, 2, 4, 3), (6, 2, 1, 3), (2, 2, 1, 1)]


def _single_sizes(d, dd, a):
    return {"d": d, "dd": dd, "a": a}, Architecture((d, dd), (a,), tokens=2)


def _multi_sizes(d, h, a, b):
    return {"d": d, "h": h, "a": a, "b": b}, Architecture((d, d), (a,), tokens=2, heads=h, value_ranks=b)


def test_both_statements_are_proved_and_checked(single, multi):
    assert check_certificate(single).claim.startswith("for all sizes: dim M = 2*d*a + d*dd - a^2 - 1 if a <= d; "
                                                      "d^2 + d*dd - 1 if a >= d + 1")
    assert "h*a <= d, h*b <= d" in check_certificate(multi).claim
    assert single["scope"] == multi["scope"] == "all sizes"


@pytest.mark.parametrize("which,sizes", [("single", s) for s in SINGLE] + [("multi", s) for s in MULTI])
def test_the_type_sum_at_a_size_is_the_instance_certified_dimension(single, multi, which, sizes):
    """Σ count x side of the piece's lower blocks, evaluated at the sizes, against the dense/structured prover."""
    cert = single if which == "single" else multi
    values, arch = (_single_sizes if which == "single" else _multi_sizes)(*sizes)
    piece = cert["pieces"][piece_at(cert, values)]
    lower = sum(_value(b["count"], values) * len(b["columns"]) for b in piece["lower"]["blocks"])
    upper = arch.parameter_count - sum(_value(b["count"], values) * len(b["columns"]) for b in piece["upper"]["blocks"])
    instance = certify_dimension(arch, seed=3)
    assert instance.certified and lower == upper == instance.dimension


@pytest.mark.parametrize("which,sizes", [("single", s) for s in SINGLE[:9]] + [("multi", s) for s in MULTI[:6]])
def test_the_blocks_at_a_size_form_a_nonsingular_minor_of_the_network_jacobian(single, multi, which, sizes):
    """Every instance of every lower block, at these sizes, is a nonsingular minor of the coefficient Jacobian; and
    the network's own Jacobian (random inputs, no coefficient coordinates) has that rank at the design's point."""
    cert = single if which == "single" else multi
    values, arch = (_single_sizes if which == "single" else _multi_sizes)(*sizes)
    k = piece_at(cert, values)
    model = Model(_design(cert, k), sizes=values)
    rows, cols = [], []
    for block in cert["pieces"][k]["lower"]["blocks"]:
        for r, c in model.instances(block):
            rows += [(x[1], x[2]) + tuple(sorted(x[3:])) for x in r]
            cols += [(x[0],) + x[1:] for x in c]
    assert len(set(rows)) == len(rows) and len(set(cols)) == len(cols)
    M = np.array([[model.row(r).get(c, 0) for c in cols] for r in rows], dtype=np.int64).reshape(len(rows), len(cols))
    assert rank_mod_p(M % P_, P_) == len(cols)
    X = np.random.default_rng(0).integers(-6, 7, (arch.parameter_count // 4 + 8, arch.widths[0], 2))
    J = jacobian_mod_p(arch, np.array(model.flat_point(), dtype=np.int64), X, P_)
    assert rank_mod_p(J, P_) == len(cols)


@pytest.mark.parametrize("which", ["single", "multi"])
def test_checker_supports_agree_with_the_provers_concrete_jacobian(single, multi, which):
    """Two implementations of the layer formula: the checker's symbolic support of each block's rows, expanded on
    the prover's concrete model, is the prover's row of the coefficient Jacobian there."""
    cert = single if which == "single" else multi
    sizes = _Sizes(cert["parameters"])
    for k, raw in enumerate(cert["pieces"]):
        design = _design(cert, k)
        model = Model(design, bulk=4)
        piece = pattern.Piece(raw, design.factored, lambda t, w: sizes.poly(t, w))
        for i, b in enumerate(raw["lower"]["blocks"][:40]):
            block = pattern.Block(piece, b, "lower", "b", i)
            inst = {}
            for v, c in block.vars.items():
                used = [e for e in inst.values() if e[0] == c]
                inst[block.x[v]] = model.elements[c][len(used)]
            for c in piece.singleton:
                inst[f"@{c}"] = model.elements[c][0]
            fam, terms = block.rows[0]
            row = tuple(tuple(inst[s] for s in t) for t in terms)
            expanded = {}
            for (cfam, cterms), val in pattern.coefficient_support(piece, terms):
                free = sorted({s for t in cterms for s in t if s.startswith("~")})
                for choice in __import__("itertools").product(*(model.elements[piece.cell_of[s]] for s in free)):
                    env = {**inst, **dict(zip(free, choice))}
                    col = (cfam,) + tuple(tuple(env[s] for s in t) for t in cterms)
                    expanded[col] = expanded.get(col, 0) + val
            concrete = model.row((row[0], row[1]) + tuple(sorted(row[2:])))
            assert {c: v for c, v in expanded.items() if v} == concrete, (k, i)


# -- tampered certificates ----------------------------------------------------------------------------


def _first_block_with_equal_count(blocks):
    seen = {}
    for i, b in enumerate(blocks):
        if b["count"] in seen:
            return seen[b["count"]], i
        seen[b["count"]] = i
    raise AssertionError("no two blocks with the same count")


def _swap_piece(c):
    return next(i for i, p in enumerate(c["pieces"]) if set(p["cells"]) == {"o0", "q0", "R"})


def _tamper_count(c):
    b = c["pieces"][0]["lower"]["blocks"][3]
    b["count"] = f"{b['count']} + 1"


def _tamper_rank_and_count(c):  # a consistent lie: one block's count and the piece's rank both raised
    _tamper_count(c)
    c["pieces"][0]["lower"]["rank"] += " + 1"


def _tamper_matrix(c):
    c["pieces"][0]["lower"]["blocks"][3]["matrix"] = [[2]]


def _tamper_matrix_type(c):
    c["pieces"][0]["lower"]["blocks"][3]["matrix"] = [[True]]


def _drop_block(c):
    c["pieces"][0]["lower"]["blocks"].pop(3)


def _duplicate_block(c):  # same rank claimed: one block replaced by a copy of another with the same count
    blocks = c["pieces"][0]["lower"]["blocks"]
    i, j = _first_block_with_equal_count(blocks)
    blocks[j] = copy.deepcopy(blocks[i])


def _duplicate_field_block(c):
    blocks = c["pieces"][0]["upper"]["blocks"]
    i, j = _first_block_with_equal_count(blocks)
    blocks[j] = copy.deepcopy(blocks[i])


def _reverse_blocks(c):
    c["pieces"][0]["lower"]["blocks"].reverse()


def _swap_rows(c):  # two blocks exchange their pivot rows (their variables renamed to fit)
    blocks = c["pieces"][0]["lower"]["blocks"]
    i, j = _first_block_with_equal_count(blocks)
    if blocks[i]["vars"] == blocks[j]["vars"]:
        blocks[i]["rows"], blocks[j]["rows"] = blocks[j]["rows"], blocks[i]["rows"]
    else:
        blocks[i]["rows"] = copy.deepcopy(blocks[j]["rows"])
        blocks[i]["vars"] = copy.deepcopy(blocks[j]["vars"])


def _parallel_point(c):  # V reads Q's coordinate: a rank-1 parallel point, where the Jacobian drops rank
    p = c["pieces"][_swap_piece(c)]
    p["point"]["V"] = [{"vars": {"k": "q0", "i": "o0"}, "index": [[], ["k"], ["i"]], "value": 1}]


def _cell_size(c):
    cells = c["pieces"][0]["cells"]
    bulk = next(k for k, v in cells.items() if v != "1")
    cells[bulk] += " + 1"


def _formula(c):
    c["formula"][0]["value"] = "2*d*a + d*dd - a^2"


def _hypotheses(c):
    c["hypotheses"][0] = "d >= 0"


def _scope(c):
    c["scope"] = "d <= 6"


def _theorem(c):
    c["theorem"] = "deep-dimension"


def _piece_twice(c):
    c["cases"]["lt"] = c["cases"]["ge"]


def _empty_leaf(c):
    c["cases"]["lt"] = {"empty": True}


def _equality(c):
    c["pieces"][_swap_piece(c)]["equalities"] = ["dd = 1", "a = 2"]


def _unknown_field(c):
    c["pieces"][0]["lower"]["note"] = "trust me"


def _var_twice_in_singleton(c):
    b = c["pieces"][0]["lower"]["blocks"][0]
    cell = next(k for k, v in c["pieces"][0]["cells"].items() if v == "1")
    b["vars"].update({"y0": cell, "y1": cell})


TAMPERS = [_tamper_count, _tamper_rank_and_count, _tamper_matrix, _tamper_matrix_type, _drop_block, _duplicate_block,
           _duplicate_field_block, _reverse_blocks, _swap_rows, _parallel_point, _cell_size, _formula, _hypotheses,
           _scope, _theorem, _piece_twice, _empty_leaf, _equality, _unknown_field, _var_twice_in_singleton]


@pytest.mark.parametrize("tamper", TAMPERS, ids=lambda f: f.__name__.strip("_"))
def test_tampered_certificates_are_rejected(single, tamper):
    cert = copy.deepcopy(single)
    tamper(cert)
    with pytest.raises(CertificateRejected):
        check_certificate(cert)


def test_a_parallel_point_cannot_be_certified_even_with_the_matrices_it_gives(single):
    """An adversary who recomputes every block's matrix at the degenerate point still fails: its Jacobian has too
    small a rank, so some block is singular or some row meets a later column."""
    cert = copy.deepcopy(single)
    _parallel_point(cert)
    k = _swap_piece(cert)
    sizes = _Sizes(cert["parameters"])
    piece = pattern.Piece(cert["pieces"][k], False, lambda t, w: sizes.poly(t, w))
    for side in ("lower", "upper"):
        for i, raw in enumerate(cert["pieces"][k][side]["blocks"]):
            block = pattern.Block(piece, raw, side, "b", i)
            raw["matrix"] = [[sum(v for t, v in piece.row_support(r) if pattern._match_own(piece, t, col))
                              for col in block.columns] for r in block.rows]
    with pytest.raises(CertificateRejected, match="singular|meets a column"):
        check_certificate(cert)


def test_the_multihead_certificate_refuses_a_dropped_head_template(multi):
    cert = copy.deepcopy(multi)
    cert["pieces"][0]["point"]["U"].pop()
    with pytest.raises(CertificateRejected):
        check_certificate(cert)


def test_hostile_work_is_refused_before_it_runs(single):
    cert = copy.deepcopy(single)
    cert["pieces"][0]["point"]["Q"] = cert["pieces"][0]["point"]["Q"] * 1000
    with pytest.raises(CertificateFormatError, match="templates"):
        check_certificate(cert)


# -- the command line ------------------------------------------------------------------------------


def test_prove_command_writes_a_certificate_check_accepts(tmp_path, capsys):
    path = tmp_path / "single.json"
    assert main(["prove", "single-layer-dimension", "--json", "--certificate", str(path)]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["scope"] == "every d, dd, a" and summary["pieces"] == 8 and summary["certificate"] == str(path)
    assert check_certificate(str(path)).kind == "dimension-all-sizes"


def test_prove_prints_the_scope_that_was_proved_not_all_sizes(capsys):
    """The scope is the one proved, in words, beside the hypotheses the checker verified: every depth for the
    deep theorem now (docs/math.md §7.7), l <= 3 and a <= 3 only for its superseded pattern certificate."""
    from attngeo.theorems.allsizes import SUPERSEDED, scope

    assert main(["prove", "deep-dimension"]) == 0
    rows = dict(line.split(None, 1) for line in capsys.readouterr().out.splitlines())
    assert rows["scope"].startswith("every l, d, a, with a <= d (") and "<= 3" not in rows["scope"]
    assert rows["hypotheses"] == "l >= 1, a >= 1, a <= d, t >= 2" and "for all l >= 1, a >= 1, a <= d" in rows["checked"]
    old = SUPERSEDED["deep-dimension"]
    assert scope(old.parameters, old.hypotheses) == "l <= 3 and a <= 3 only; every d, with a <= d"
    assert main(["prove", "multihead-layer-dimension", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["scope"] == "every d, h, a, b, with h*a <= d, h*b <= d"


@pytest.mark.parametrize("name,message", [("softmax-single-layer", "not proved for all sizes"),
                                          ("fibres", "not a statement proved for all sizes")])
def test_prove_refuses_what_it_cannot_prove_in_one_line(capsys, name, message):
    assert main(["prove", name]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_piece_at_refuses_sizes_outside_the_hypotheses(single):
    with pytest.raises(InvalidInputError, match="violate"):
        piece_at(single, {"d": 0, "dd": 1, "a": 1})


# -- deep networks, the superseded pattern certificate: fixed depth and rank, every width ----------------
# (the induction on depth that replaced it for every l and a: tests/test_depthinduction.py)


@pytest.fixture(scope="module")
def deep():
    return prove("deep-dimension", superseded=True)


def test_deep_statement_is_proved_for_the_stated_depths_and_ranks(deep):
    """An earlier certificate still verifies, with its own narrower claim."""
    claim = check_certificate(deep).claim
    assert "2*l*a*d - l*a^2 + d^2 - l" in claim and "l <= 3" in claim and "a <= 3" in claim


@pytest.mark.parametrize("l,d,a", [(1, 1, 1), (2, 1, 1), (2, 2, 1), (2, 3, 2), (3, 3, 3), (2, 5, 3), (3, 4, 2),
                                   (1, 4, 3), (3, 2, 1)])
def test_deep_type_sum_at_a_size_is_the_instance_certified_dimension(deep, l, d, a):
    values = {"l": l, "d": d, "a": a}
    piece = deep["pieces"][piece_at(deep, values)]
    lower = sum(_value(b["count"], values) * len(b["columns"]) for b in piece["lower"]["blocks"])
    arch = Architecture((d,) * (l + 1), (a,) * l, tokens=2)
    upper = arch.parameter_count - sum(_value(b["count"], values) * len(b["columns"])
                                       for b in piece["upper"]["blocks"])
    instance = certify_dimension(arch, seed=5)
    assert instance.certified and lower == upper == instance.dimension


def test_the_restriction_lemma_against_the_full_width_network(deep):
    """The checker computes each deep row on the small network of the row's own features; at width k + 3 the full
    network's Jacobian row (all parameters) is that support, and zero on every other parameter."""
    from attngeo.check.dimension.deeppattern import DeepPiece
    from attngeo.model.jacobian import jacobian_over_q
    from flint import fmpq

    values = {"l": 2, "d": 5, "a": 2}
    k_piece = piece_at(deep, values)
    raw = deep["pieces"][k_piece]
    sizes = _Sizes(deep["parameters"])
    piece = DeepPiece(raw, lambda t, w: sizes.poly(t, w))
    k = len(piece.core)
    width = k + 3
    arch = Architecture((width,) * 3, (2, 2), tokens=2)
    point = []
    for layer in raw["layers"]:
        for M in (layer["Q"], layer["K"]):
            point += [v for row in M for v in (row + [0] * (width - k))]
        point += np.eye(width, dtype=int).ravel().tolist()
    offsets = {(b.name, b.layer): b.offset for b in arch.blocks()}
    features = {f"@c{j}": j for j in range(k)}
    for b, block_raw in enumerate(raw["lower"]["blocks"]):
        block = pattern.Block(piece, block_raw, "lower", "b", b)
        rest = iter(range(k, width))
        feature_of = dict(features)
        for v, c in block.vars.items():
            if c == "R":
                feature_of[block.x[v]] = next(rest)
        for fam, terms in block.rows:
            p, tau = (int(x) for x in fam[1:].split("."))
            core, vars_ = piece.inputs[p]
            X = np.zeros((width, 2), dtype=int)
            X[:k] = core
            for t, vals in zip(terms[:-1], vars_):
                X[feature_of[t[0]]] += vals
            J = jacobian_over_q(arch, [fmpq(v) for v in point], X[None])
            full = {j: int(x) for j, x in enumerate(J[feature_of[terms[-1][0]] * 2 + tau]) if x != 0}
            expected = {}
            for (cfam, (r, c)), v in piece.row_support((fam, terms)):
                name, layer = cfam[0], int(cfam[1:])
                row = int(r[0][2:]) if name in "QK" else feature_of[r[0]]
                expected[offsets[(name, layer)] + row * width + feature_of[c[0]]] = v
            assert full == expected


def test_deep_tampering_is_rejected(deep):
    k = next(i for i, p in enumerate(deep["pieces"]) if len(p["lower"]["blocks"]) == 3)
    for tamper in (lambda p: p["layers"][0]["Q"][0].__setitem__(0, p["layers"][0]["Q"][0][0] + 1),
                   lambda p: p["inputs"][0]["core"][0].__setitem__(0, p["inputs"][0]["core"][0][0] + 1),
                   lambda p: p["layers"].pop(),
                   lambda p: p["lower"]["blocks"].reverse(),
                   lambda p: p["upper"]["blocks"].append(p["upper"]["blocks"].pop(0)),
                   lambda p: p["lower"]["blocks"][2]["rows"][0][1].__setitem__(0, ["m"])):
        cert = copy.deepcopy(deep)
        tamper(cert["pieces"][k])
        with pytest.raises(CertificateRejected):
            check_certificate(cert)


def test_the_report_separates_theorems_from_instances(tmp_path):
    """Issue 36: theorems (all sizes, with every hypothesis) in a section of their own, before the claims on ranges
    of sizes; a range of instances is never labelled a theorem, and a theorem never "instances"."""
    import contextlib
    import io

    from attngeo.theorems.proof import Claim, Entry, print_summary
    from attngeo.theorems.registry import OUTCOMES, get
    from attngeo.theorems.report import Outcome, latex, markdown

    out = io.StringIO()
    with contextlib.redirect_stdout(out):  # a range that is a list of sizes: instances certified
        print_summary([Claim("deep", "dim formula")], [Entry("deep", {"l": l, "d": d, "a": 1, "t": 2}, "certified")
                                                       for l, d in ((1, 2), (3, 5))])
    claim = "for all sizes: dim M = f; l layers, for all l >= 1, a >= 1, a <= d (3 pieces)"
    proved = Outcome(get("deep-dimension"), 0, 1.0, out.getvalue(), proved=claim)
    failed = Outcome(get("single-layer-dimension"), 0, 1.0, "", proof_failure="the checker refused it")
    assert (proved.label, proved.verdict, failed.label) == ("proved", "instances", "failed")
    text = markdown([proved, failed], tmp_path, 2.0)
    theorems, instances = text.split("## Instances (claims on ranges of sizes)")
    assert "## Theorems (all sizes, with hypotheses)" in theorems and "1 theorem proved for all sizes" in theorems
    row = next(ln for ln in theorems.splitlines() if "`deep-dimension`" in ln)
    assert r"$\dim \mathcal{M} = 2 l a d - l a^{2} + d^{2} - l$" in row and r"$l \geq 1$" in row and "3" not in row
    assert r"$a \leq d$" in row and r"$t \geq 2$" in row and f"**{OUTCOMES['proved']}**" in row
    assert "**FAILED**: the checker refused it" in theorems and proved.ok and not failed.ok
    table = instances.split("\n## ")[0]
    assert f"**{OUTCOMES['instances']}**" in table and OUTCOMES["proved"] not in table  # the range is a range
    tex = latex([proved], tmp_path, 2.0)
    head, rest = tex.split(r"\section{Theorems proved for all sizes}")
    section, ranges = rest.split(r"\section{Instances: claims on ranges of sizes}")
    assert rf"\textbf{{{OUTCOMES['proved']}}}" in section and r"$l \geq 1$" in section and r"l \leq" not in section
    assert r"\textbf{instances certified}" in ranges.split(r"\section")[0] and OUTCOMES["proved"] not in \
        ranges.split(r"\begin{figure}")[0]
    alone = latex([Outcome(get("deep-fibers"), 0, 1.0, "")], tmp_path, 2.0)  # no theorem run: no such section
    assert r"\section{Theorems" not in alone and r"\section{Results}" in alone
    assert get("single-layer-dimension").all_sizes and not get("softmax-single-layer").all_sizes


def test_a_case_tree_of_many_empty_leaves_is_refused_before_it_is_decided(single):
    """Each empty leaf costs an elimination: a hostile tree of thousands is refused by its size, not run."""
    cert = copy.deepcopy(single)
    node = {"empty": True}
    for _ in range(12):  # a full binary tree of 4,096 empty leaves under the first split's "ge"
        node = {"split": "d - 1", "ge": node, "lt": copy.deepcopy(node)}
    cert["cases"]["ge"] = node
    with pytest.raises(CertificateFormatError, match="nodes"):
        check_certificate(cert)
