"""Assignment 3: attention, transformer blocks, positions, KV caching and a tiny GPT."""
