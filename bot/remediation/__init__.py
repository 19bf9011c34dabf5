"""Changing a cluster behind an approval: the flow (policy at every step, state in the store) and the
mechanics (re-read, dry run, apply with a precondition, verify, undo)."""
