"""The theorem registry, the proof-script runner and the certification report.

Imports geometry/ and below.
"""
