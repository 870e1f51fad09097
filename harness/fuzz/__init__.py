"""Fuzzing a backend with programs no one wrote: the program, its kind and the builder every
generator shares (``generator``), a seeded generator of view, write and aliasing programs
(``programs``), seeded compute programs over the sweep's operator vocabulary (``compute``),
and the differential check that runs each eagerly and through the backend,
shrinking the ones that disagree (``differential``).
"""
