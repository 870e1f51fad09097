"""The checks that compare what a backend computed with eager PyTorch: values, dtypes,
strides and aliasing (``compare``), accuracy against a float64 reference (``accuracy``),
AOTAutograd's graphs read back (``graphs``), operators: the one checker every operator check
goes through (``opcheck``), whole models (``models``), an exported program's own contract
(``exported``), a reference against a compiled callable on fresh inputs (``replay``), the
values real programs feed an operator, a catalogue the operator checker runs (``value_domains``),
the edges eager defines that no domain holds, calls written out for it (``value_semantics``),
a training step judged by what it changed (``updates``), and the clause of the backend
contract a failed check enforces (``clauses``); in ``observations``, what every scenario's
compiled calls are watched for, whatever the scenario compares itself.
"""
