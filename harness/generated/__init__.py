"""Generated programs: a seeded generator of view, write and aliasing programs
(``programs``) and the differential check that runs each eagerly and through the backend,
shrinking the ones that disagree (``differential``).
"""
