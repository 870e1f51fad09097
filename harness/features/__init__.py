"""Features: the conditions a backend's input can meet, read from the graphs it receives and
the calls it serves, as one catalogue (``catalogue``, each entry with its own rule). The
rules read views of a graph, its operator calls and its calls (``views``), each call's kernel
family named from its operator (``families``); ``recorder`` reads them while a test runs,
which is what coverage reports; ``scope`` is the part a backend project may declare
unsupported (its capabilities, and the refusal contract). Only ``views`` and ``recorder``
import torch.
"""
