"""Exact arithmetic: F_p matrices and ranks, the free algebra of size-free identities, Groebner engines and ideals.

Imports only the base modules (exceptions, latex) and the checker's msolve locator.
"""
