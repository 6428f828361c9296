"""The command line.

Imports everything below it; nothing imports it.
"""
