"""The checker accepts honest certificates and rejects each named tampering."""

import copy
import json

import pytest

from conftest import assert_rejected

from attngeo import CertificateFormatError, CertificateRejected, check_certificate, check_folder


def test_honest_certificates_verify(deep_certificate, gap_certificate):
    assert "dim M =" in check_certificate(deep_certificate).claim
    assert "<= dim M <=" in check_certificate(gap_certificate).claim


def _add_one(vector, k):
    vector[k] += 1


def _next_prime(p):
    from flint import fmpz

    q = p + 2
    while not fmpz(q).is_prime():
        q += 2
    return q


TAMPERINGS = {
    "changed rank (lower)": lambda c: c.update(lower=c["lower"] + 1),
    "changed rank (upper)": lambda c: c.update(upper=c["upper"] - 1),
    "changed witness rank": lambda c: c["lower_witness"].update(rank=c["lower_witness"]["rank"] + 1),
    "changed prime (lower)": lambda c: c["lower_witness"].update(prime=_next_prime(c["lower_witness"]["prime"])),
    "changed prime (upper)": lambda c: c["upper_witness"].update(prime=_next_prime(c["upper_witness"]["prime"])),
    "composite prime": lambda c: c["lower_witness"].update(prime=c["lower_witness"]["prime"] + 1),
    "altered point (lower)": lambda c: _add_one(c["lower_witness"]["point"], 0),
    # Q_1[0, 0] enters the field minor (the scaling family's pivot); an entry the
    # minor does not read (e.g. in V_l) leaves a still-valid proof of the same claim.
    "altered point (upper)": lambda c: _add_one(c["upper_witness"]["point"], 0),
    "altered input": lambda c: _add_one(c["lower_witness"]["inputs"][0][0], 0),
    "altered functional": lambda c: _add_one(c["lower_witness"]["functionals"][0][0][0], 0),
    "altered determinant": lambda c: c["lower_witness"].update(determinant=c["lower_witness"]["determinant"] // 2),
    "wrong minor rows": lambda c: c["lower_witness"]["rows"].__setitem__(0, c["lower_witness"]["rows"][1]),
    "wrong minor columns": lambda c: c["lower_witness"]["columns"].__setitem__(0, c["upper_witness"]["columns"][0]),
    "wrong field minor columns": lambda c: c["upper_witness"]["columns"].__setitem__(0, c["lower_witness"]["columns"][0]),
    "another architecture": lambda c: c["architecture"].update(widths=[3, 3, 3]),
    "another token count": lambda c: c["architecture"].update(tokens=3),
    "parameter count": lambda c: c.update(parameters=c["parameters"] + 1),
    "missing lower witness": lambda c: c.pop("lower_witness"),
    "missing field": lambda c: c["upper_witness"].pop("columns"),
    "missing architecture": lambda c: c.pop("architecture"),
    "unknown version": lambda c: c.update(version=99),
    "unknown kind": lambda c: c.update(kind="fiber-of-everything"),
    "dropped symmetry family": lambda c: c["upper_witness"]["families"].pop(),
    "invented symmetry family": lambda c: c["upper_witness"]["families"].append({"kind": "magic", "layer": 1, "size": 4}),
    "certified flag flipped": lambda c: c.update(certified=not c["certified"]),
    "dimension changed": lambda c: c.update(dimension=(c["dimension"] or 0) + 1),
    "boolean as integer": lambda c: c.update(parameters=True),
    "float entry": lambda c: c["lower_witness"]["point"].__setitem__(0, 1.5),
    "ragged inputs": lambda c: c["lower_witness"]["inputs"][0].pop(),
    "softmax claim": lambda c: c["architecture"].update(normalization="softmax"),
}


@pytest.mark.parametrize("name", list(TAMPERINGS))
def test_tampered_certificate_is_rejected(name, deep_certificate):
    assert_rejected(deep_certificate, TAMPERINGS[name])


def test_gap_certificate_cannot_claim_certified(gap_certificate):
    cert = copy.deepcopy(gap_certificate)
    cert["upper"] = cert["lower"]
    cert["certified"], cert["dimension"] = True, cert["lower"]
    with pytest.raises(CertificateRejected, match="upper"):
        check_certificate(cert)


def test_unusable_files_are_format_errors(tmp_path):
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(CertificateFormatError, match="not JSON"):
        check_certificate(tmp_path / "bad.json")
    (tmp_path / "other.json").write_text(json.dumps({"hello": 1}))
    with pytest.raises(CertificateFormatError, match="not an attngeo certificate"):
        check_certificate(tmp_path / "other.json")
    with pytest.raises(CertificateFormatError, match="cannot read"):
        check_certificate(tmp_path / "missing.json")


def test_folder_check_reports_each_file(tmp_path, deep_certificate):
    good = copy.deepcopy(deep_certificate)
    bad = copy.deepcopy(deep_certificate)
    bad["lower"] += 1
    (tmp_path / "good.json").write_text(json.dumps(good))
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    results = dict(check_folder(tmp_path))
    assert isinstance(results[str(tmp_path / "bad.json")], CertificateRejected)
    assert not isinstance(results[str(tmp_path / "good.json")], Exception)
