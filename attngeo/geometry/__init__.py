"""The provers: symmetry, dimension (lightning and normalized), fibers, singular points, strata, implicit equations, boundary points, and their certificates.

Imports model/, exact/ and the base modules.
"""
