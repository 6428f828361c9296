"""Progress phases: silent unless enabled; in order; one line per phase, or one rewritten line on a terminal."""

import io

from attngeo import Architecture, progress
from attngeo.geometry.dimension.identitypoint import certify_deep
from attngeo.geometry.dimension.plainpoint import certify_structured


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_library_calls_print_nothing_by_default(capsys):
    progress.disable()
    certify_deep(Architecture((5, 5, 5), (2, 2)), seed=0)
    assert capsys.readouterr().err == ""


def test_the_phases_come_in_order_with_elapsed_times():
    out = io.StringIO()
    progress.enable(out)
    certify_deep(Architecture((6, 6, 6), (2, 2)), seed=0)
    certify_structured(Architecture((6, 5), (3,)), seed=0)
    progress.done()
    lines = out.getvalue().splitlines()
    names = [line.split("] ", 1)[1].split(" (")[0] for line in lines]
    assert names[0] == "point" and names[-1] == "upper bound" and "Jacobian and elimination" in names
    assert names.index("Jacobian") < names.index("elimination") < len(names) - 1
    assert all(line.startswith("attngeo: [") for line in lines)
    progress.phase("after done")
    assert len(out.getvalue().splitlines()) == len(lines)  # done() turned it off


def test_a_terminal_gets_one_rewritten_line_and_its_end():
    out = Terminal()
    assert progress.wanted(False, out) and not progress.wanted(False, io.StringIO())
    progress.enable(out)
    progress.phase("point")
    progress.phase("Jacobian", "1 of 2")
    progress.done()
    text = out.getvalue()
    assert text.count("\r\x1b[K") == 2 and text.endswith("Jacobian (1 of 2)\n") and text.count("\n") == 1
