"""mycc: a toy torch.compile backend (see backend.py)."""
