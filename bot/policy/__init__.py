"""Who may see and do what: the policy file, typed, and the access it grants one person in one channel."""
from bot.policy.load import PolicyError, load_policy, parse_policy
from bot.policy.model import (
    ANY, Access, Approvers, Grant, Policy, RemediationPolicy, RemediationScope, like_pattern, matches,
)
from bot.policy.source import PolicySource, describe

__all__ = ["ANY", "Access", "Approvers", "Grant", "Policy", "PolicyError", "PolicySource", "RemediationPolicy",
           "RemediationScope", "describe", "like_pattern", "load_policy", "matches", "parse_policy"]
