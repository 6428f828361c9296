import json

import pytest

from attngeo import Architecture, certify_dimension
from attngeo.geometry.certificate import FORMAT, VERSION, read_json, write_json


def test_round_trip_through_a_file(tmp_path):
    cert = certify_dimension(Architecture((2, 2), (1,), 2), seed=0)
    (tmp_path / "sub").mkdir()  # writers never create folders on their own (a typo would scatter files)
    path = cert.save(tmp_path / "sub" / "c.json")
    data = read_json(path)
    assert data["format"] == FORMAT and data["version"] == VERSION
    assert data["dimension"] == cert.dimension and data["lower_witness"]["rows"] == cert.lower_witness["rows"]


def test_failed_write_leaves_the_existing_file_intact(tmp_path):
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"format": FORMAT, "keep": 1}))
    with pytest.raises(TypeError):
        write_json(path, {"format": FORMAT, "bad": object()})  # not serializable
    assert json.loads(path.read_text())["keep"] == 1
    assert [p.name for p in tmp_path.iterdir()] == ["c.json"]  # no temporary left behind


def test_latex_display_says_certified_or_bounds(gap_certificate):
    from attngeo.geometry.certificate import DimensionCertificate

    ok = certify_dimension(Architecture((3, 3), (2,), 2), seed=0)
    g = gap_certificate
    gap = DimensionCertificate(Architecture((3, 3), (2,), 1), g["lower"], g["upper"], g["lower_witness"],
                               g["upper_witness"], {}, 0.0, 1)
    assert "certified" in ok._repr_latex_() and str(ok.dimension) in ok._repr_latex_()
    assert r"\le" in gap._repr_latex_() and "bounds" in gap._repr_latex_()
    assert gap._repr_latex_().count("{") == gap._repr_latex_().count("}")
