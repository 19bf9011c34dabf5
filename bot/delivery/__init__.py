"""Outbound Slack delivery: Slack's published limits and the pacer that keeps the bot inside them."""
