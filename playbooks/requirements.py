"""Kept for the modules that import ``is_auto_mode`` from here: the model lives in playbooks/karpenter/."""
from playbooks.karpenter.labels import AUTO_PREFIX, OSS_PREFIX
from playbooks.karpenter.requirements import is_auto_mode, label_prefix

__all__ = ["AUTO_PREFIX", "OSS_PREFIX", "is_auto_mode", "label_prefix"]
