"""Test models for Loom, generated from their definitions (no downloaded weights).

`python -m loom_models.generate <name> <out.onnx>` writes one; `models.MODELS` lists them
with their input generators, which the model tests, `make demo` and bench/models share.
"""
