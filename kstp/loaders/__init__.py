"""Files -> graph: standards, items with their concepts, learner response logs.

Every loader reads and validates its whole input before it writes anything, so a
refused file leaves the graph unchanged; every write is idempotent.
"""
