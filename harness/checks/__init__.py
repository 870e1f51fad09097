"""The checks that compare what a backend computed with eager PyTorch: values, dtypes,
strides and aliasing (``compare``), accuracy against a float64 reference (``accuracy``),
AOTAutograd's graphs read back (``graphs``), one operator at a time (``opcheck``) and whole
models (``models``).
"""
