"""Adapters that let agent runtimes reach Palimpsest through their own interfaces; each is an
optional extra (``pip install palimpsest[langgraph]``)."""
