"""Documents: Markdown chunks, revisions, mention places and conversation documents."""
