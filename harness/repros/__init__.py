"""A problem's repro, for its backend's tracker: the generic file a run writes per problem
(``generic``: the graphs the backend received, or the suite's scenario run), the short
plain-torch script of one graph (``plain``: ``def f``, inputs, ``torch.compile`` beside eager),
its reduction while it still shows the problem (``reduce``: PyTorch's FX minifier, then inputs
and arguments; it imports torch and runs beside the backend), and the choice between them when
issues are written (``prepare``).

Layering: above the reports (it reads a run's problems and results), below the runner, which
calls it; it never imports the runner or the workers' side.
"""
