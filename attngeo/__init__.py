"""attngeo: certified exact computation of the geometry of self-attention networks.

Start with :class:`Architecture` and :func:`certify_dimension`; re-check any
certificate with :func:`check_certificate`.
"""

from .architecture import Architecture
from .certificate import DimensionCertificate
from .checker import check_certificate, check_folder
from .deepfiber import DeepFiber, deep_fiber
from .dimension import certify_dimension, dimension
from .exceptions import (
    AttngeoError,
    CannotVerify,
    CertificateFormatError,
    CertificateRejected,
    ExpansionTooLargeError,
    InvalidArchitectureError,
    InvalidInputError,
    NotCertifiedError,
    NotInNeuromanifoldError,
)
from .fiber import Fiber, Recovery, fiber, recover_weights
from .formulas import hmk_formula, naive_count
from .layerfunction import LayerFunction
from .singular import SingularityVerdict, is_singular
from .symmetry import SymmetryGroup
from .network import evaluate, expand

__version__ = "0.1.0"

__all__ = [
    "Architecture",
    "AttngeoError",
    "CannotVerify",
    "CertificateFormatError",
    "CertificateRejected",
    "DeepFiber",
    "DimensionCertificate",
    "Fiber",
    "LayerFunction",
    "NotInNeuromanifoldError",
    "Recovery",
    "SingularityVerdict",
    "SymmetryGroup",
    "ExpansionTooLargeError",
    "InvalidArchitectureError",
    "InvalidInputError",
    "NotCertifiedError",
    "certify_dimension",
    "check_certificate",
    "check_folder",
    "deep_fiber",
    "dimension",
    "evaluate",
    "expand",
    "fiber",
    "hmk_formula",
    "is_singular",
    "naive_count",
    "recover_weights",
]
