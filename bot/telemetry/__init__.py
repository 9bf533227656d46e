"""What an operator reads of a running Steward: structured logs and Prometheus metrics. Imports nothing
else of Steward's: every room may use it.
"""
