"""The checks that compare what a backend computed with eager PyTorch: values, dtypes,
strides and aliasing (``compare``), accuracy against a float64 reference (``accuracy``),
AOTAutograd's graphs read back (``graphs``), operators: the one checker every operator check
goes through (``opcheck``), whole models (``models``), an exported program's own contract
(``exported``), a reference against a compiled callable on fresh inputs (``replay``), the
values real programs feed an operator, a catalogue the operator checker runs (``value_domains``),
a training step judged by what it changed (``updates``), every call of a compiled function told
to the observations every scenario goes through (``watched_calls``), the Python world a call reaches
compared with eager's (``python_world``), results kept from earlier calls and backward passes
left as they were (``kept_results``), and the clause of the backend
contract a failed check enforces (``clauses``).
"""
