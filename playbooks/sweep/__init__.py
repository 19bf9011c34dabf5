"""What a sweep looks for, as pure detectors: plain objects in their REST shape in, Problems out.

One module per concern (pending GPU pods, GPU nodes, GPU NodePools, training pods exposed to
consolidation, NodeClaims that fail to launch or register); the reads and the diagnoses of pending
pods live in bot/alerts/sweep.py. Nothing here does I/O.
"""
