"""The HTTP edge: uvicorn (h11) serving Starlette routes, with what a public port needs on top.

- ``protocol``: uvicorn's h11 protocol with a connection limit per client address and in all, a
  deadline for each request to arrive whole, and one-line answers to malformed HTTP;
- ``slack``: ``POST /slack/events``, checked before Bolt sees it (headers, size, signature, replay);
- ``routes``: other POST endpoints beside Slack's (Alertmanager's webhook);
- ``probes``: ``/healthz`` and ``/readyz`` on a port of their own;
- ``server``: one uvicorn server on a socket bound up front, in a thread of its own.
"""
