"""Proactive alerts: problems from sweeps and Alertmanager told in Slack, one message per problem."""
