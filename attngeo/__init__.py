"""attngeo: certified exact computation of the geometry of self-attention networks.

Start with :class:`Architecture` and :func:`certify_dimension`; re-check any
certificate with :func:`check_certificate`.

Names are imported on first use, so ``import attngeo.check`` (the checker
kernel) loads none of the provers. The package is layered (docs/architecture.md):
``exact`` (arithmetic, engines, ideals) < ``model`` (architectures, the layer
formula) < ``geometry`` (the provers and their certificates) < ``theorems``
(registry, proof runner, report) < ``ui`` (command line); ``check`` (the
checker kernel), ``exceptions`` and ``latex`` sit at the bottom.
"""

from importlib import import_module

__version__ = "0.1.0"

#: public name -> module that defines it
_WHERE = {
    "Architecture": "model.architecture",
    "DimensionCertificate": "geometry.certificate",
    "CheckResult": "check",
    "check_certificate": "check",
    "check_file": "check",
    "check_folder": "check",
    "DeepFiber": "geometry.fibers.deep",
    "deep_fiber": "geometry.fibers.deep",
    "VirtualFiber": "geometry.fibers.virtual",
    "virtual_fiber": "geometry.fibers.virtual",
    "certify_dimension": "geometry.dimension.dense",
    "dimension": "geometry.dimension.dense",
    "AttngeoError": "exceptions",
    "CannotVerify": "exceptions",
    "CertificateFormatError": "exceptions",
    "CertificateRejected": "exceptions",
    "ExpansionTooLargeError": "exceptions",
    "InvalidArchitectureError": "exceptions",
    "InvalidInputError": "exceptions",
    "NotCertifiedError": "exceptions",
    "NotInNeuromanifoldError": "exceptions",
    "Fiber": "geometry.fibers.layer",
    "Recovery": "geometry.fibers.layer",
    "fiber": "geometry.fibers.layer",
    "recover_weights": "geometry.fibers.layer",
    "special_point": "geometry.fibers.layer",
    "hmk_formula": "model.formulas",
    "naive_count": "model.formulas",
    "LayerFunction": "model.layerfunction",
    "SingularityVerdict": "geometry.loci.singular",
    "is_singular": "geometry.loci.singular",
    "SymmetryGroup": "geometry.symmetry",
    "evaluate": "model.network",
    "expand": "model.network",
    "stratify": "geometry.loci.strata",
    "hmk_singular_ideal": "geometry.loci.strata",
    "implicit_equations": "geometry.loci.implicit",
    "is_boundary_point": "geometry.loci.boundary",
    "evaluate_ball": "geometry.dimension.ball",
    "load_weights": "model.weights",
    "load_checkpoint": "model.checkpoint",
    "Checkpoint": "model.checkpoint",
    "local_rank": "geometry.loci.regularity",
    "LocalRank": "geometry.loci.regularity",
    "BoundaryVerdict": "geometry.loci.boundary",
    "ImplicitEquations": "geometry.loci.implicit",
    "GradedEquations": "geometry.loci.graded",
    "graded_equations": "geometry.loci.graded",
    "Stratification": "geometry.loci.strata",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str):
    if name in _WHERE:
        value = getattr(import_module(f".{_WHERE[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'attngeo' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_WHERE))
