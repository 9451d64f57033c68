"""Assignment 2: attention from scratch, from soft attention in NumPy to multi-head attention in PyTorch."""
