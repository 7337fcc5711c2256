"""Adapters that let agent runtimes reach Palimpsest through their own interfaces; each is an
optional extra of the client distribution (``pip install './client[langgraph]'``)."""
