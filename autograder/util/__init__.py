"""Small shared tools: text safety, TOML reading, atomic writes, paths."""
