"""A small MeasurementSet simulator (data/simulate_ms.py is its command line)."""
