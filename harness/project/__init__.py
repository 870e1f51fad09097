"""What a backend project brings to a run, and where the suite's own scenarios live.

* ``layout``: the suite's scenario tree, in a clone or in an installed wheel, and the
  command a user typed to start the run;
* ``config``: the ``[tool.dynamo-aot-suite]`` section of the project's ``pyproject.toml``;
* ``run_settings``: every run setting but the axes, declared once: its option, variable,
  project key, check, and where it reaches (the run record, repros, rerun commands);
* ``extensions``: the project's own scenario modules and models (configuration or entry
  points), collected beside the bundled ones.

Torch-free except ``extensions.models``, which imports what the project names. The library
rooms never import this one; the reports and the runner do.
"""
