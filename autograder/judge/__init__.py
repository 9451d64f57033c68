"""The trusted judge: decode what jobs send back, compare it with the reference, diagnose and score."""
