"""Renderers turn a Diagnosis into terminal text, JSON or Slack blocks; playbooks never format."""
