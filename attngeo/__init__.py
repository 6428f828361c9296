"""attngeo: certified exact computation of the geometry of self-attention networks.

Start with :class:`Architecture` and :func:`certify_dimension`; re-check any
certificate with :func:`check_certificate`.

Names are imported on first use, so ``import attngeo.check`` (the checker
kernel) loads none of the provers.
"""

import sys
import types
from importlib import import_module

__version__ = "0.1.0"

#: public name -> module that defines it
_WHERE = {
    "Architecture": "architecture",
    "DimensionCertificate": "certificate",
    "CheckResult": "check",
    "check_certificate": "check",
    "check_file": "check",
    "check_folder": "check",
    "DeepFiber": "deepfiber",
    "deep_fiber": "deepfiber",
    "certify_dimension": "dimension",
    "dimension": "dimension",
    "AttngeoError": "exceptions",
    "CannotVerify": "exceptions",
    "CertificateFormatError": "exceptions",
    "CertificateRejected": "exceptions",
    "ExpansionTooLargeError": "exceptions",
    "InvalidArchitectureError": "exceptions",
    "InvalidInputError": "exceptions",
    "NotCertifiedError": "exceptions",
    "NotInNeuromanifoldError": "exceptions",
    "Fiber": "fiber",
    "Recovery": "fiber",
    "fiber": "fiber",
    "recover_weights": "fiber",
    "special_point": "fiber",
    "hmk_formula": "formulas",
    "naive_count": "formulas",
    "LayerFunction": "layerfunction",
    "SingularityVerdict": "singular",
    "is_singular": "singular",
    "SymmetryGroup": "symmetry",
    "evaluate": "network",
    "expand": "network",
    "stratify": "strata",
    "hmk_singular_ideal": "strata",
    "implicit_equations": "implicit",
    "is_boundary_point": "boundary",
}

__all__ = sorted(_WHERE)


class _Package(types.ModuleType):
    """``attngeo.dimension`` and ``attngeo.fiber`` are functions named like their modules.

    Importing a submodule binds it on the package; for these two names the
    function is kept (the module stays reachable through ``sys.modules`` and
    ``from attngeo.dimension import ...``), as when they were imported eagerly.
    """

    def __setattr__(self, name, value):
        if name in ("dimension", "fiber") and isinstance(value, types.ModuleType):
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def __getattr__(name: str):
    if name in _WHERE:
        value = getattr(import_module(f".{_WHERE[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'attngeo' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_WHERE))
