"""Triton Inference Server model repositories of deployed engines (``tensoracle deploy
triton``)."""
