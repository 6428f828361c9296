"""The model: architectures, the layer formula over every domain, Jacobians, single-layer functions, [HMK]'s closed forms.

Imports exact/ and the base modules.
"""
