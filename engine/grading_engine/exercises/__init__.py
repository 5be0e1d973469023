"""Exercise harnesses: one module per gradable exercise (see base.py)."""
