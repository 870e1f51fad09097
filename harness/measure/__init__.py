"""What ran, measured while a scenario runs: the graphs each backend received
(``counters``), the guard failures that caused recompiles (``guards``), the share of a
compiled call that ran through PyTorch's eager kernels (``eager_share``, with its limit in
``share_limit``), the graphs a failing test leaves for its repro (``repro``), the stage
a failure came from (``stages``), and the perf tier's timing (``speed``) and peak memory of
a call (``peak_memory``).
"""
